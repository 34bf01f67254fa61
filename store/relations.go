package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// Declared relations. A relation is one record (relations: uuid → JSON) and, written with
// it through txw, its entries in reladj under each end (out under from, in under to, the
// tuple under from, and each end's counter), its entry in reltypes, the type's counter in
// relcounts and the total in meta. Index keys end in the uuid, so a prefix scan lists a
// node's relations sorted by id; a node's entries sit together, so a write dirties few
// pages.

func relLocal(id string) string { return strings.TrimPrefix(id, "rel:") }

func relTupleKey(r *graph.Relation) []byte {
	return joinKey(r.From, "t", graph.PortKey(r.FromPort), r.Type, r.To, graph.PortKey(r.ToPort))
}

func relNodeCountKey(node string) []byte { return joinKey(node, "n") }

// relCounter names one counter: bucket and key.
type relCounter struct{ bucket, key string }

func getRelation(tx *bolt.Tx, local string) (*graph.Relation, error) {
	b := tx.Bucket(m.BucketRelations)
	if b == nil {
		return nil, nil
	}
	v := b.Get([]byte(local))
	if v == nil {
		return nil, nil
	}
	r, err := decodeRelation(v)
	if err != nil {
		return nil, internal("decode relation "+local, err)
	}
	return r, nil
}

// relCount reads a counter (0 when absent, or in a fixture file at an older version).
func relCount(tx *bolt.Tx, bucket, key []byte) int {
	b := tx.Bucket(bucket)
	if b == nil {
		return 0
	}
	return int(m.ReadU64(b.Get(key)))
}

func nodeRelCount(tx *bolt.Tx, node string) int {
	return relCount(tx, m.BucketRelAdj, relNodeCountKey(node))
}

func typeRelCount(tx *bolt.Tx, t string) int { return relCount(tx, m.BucketRelCounts, []byte(t)) }

// relIDsOf lists the uuids of the relations touching node in one direction (out: from
// node, in: to node), sorted.
func relIDsOf(tx *bolt.Tx, node string, out bool) []string {
	b := tx.Bucket(m.BucketRelAdj)
	if b == nil {
		return nil
	}
	dir := "i"
	if out {
		dir = "o"
	}
	var ids []string
	p := prefixKey(node, dir)
	c := b.Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		ids = append(ids, string(k[len(p):]))
	}
	return ids
}

// relIDsBoth merges a node's outgoing and incoming relation uuids, sorted (a relation is
// never both: self-loops are refused).
func relIDsBoth(tx *bolt.Tx, node string) []string {
	a, b := relIDsOf(tx, node, false), relIDsOf(tx, node, true)
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && a[i] < b[j]) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

func (w *wtx) bumpRel(bucket, key []byte, d int64) error {
	n := int64(m.ReadU64(w.b(bucket).Get(key))) + d
	if n <= 0 {
		return w.delete(bucket, key)
	}
	return w.put(bucket, key, m.U64(uint64(n)))
}

// relCounts applies d to the counters of r: its type, both its nodes, and the total.
func (w *wtx) relCounts(r *graph.Relation, d int64) error {
	cs := []relCounter{
		{string(m.BucketRelCounts), r.Type},
		{string(m.BucketRelAdj), string(relNodeCountKey(r.From))},
		{string(m.BucketRelAdj), string(relNodeCountKey(r.To))},
	}
	w.count(m.CountRelations, d)
	for _, c := range cs {
		if w.relDelta != nil { // bulk import: counted in memory, written at flushPending
			w.relDelta[c] += d
			continue
		}
		if err := w.bumpRel([]byte(c.bucket), []byte(c.key), d); err != nil {
			return err
		}
	}
	return nil
}

// putRelation writes r's record and every index entry and counts it.
func (w *wtx) putRelation(r *graph.Relation) error {
	if err := w.put(m.BucketRelations, []byte(relLocal(r.ID)), encodeRelation(r)); err != nil {
		return err
	}
	if err := w.indexRelation(r); err != nil {
		return err
	}
	return w.relCounts(r, 1)
}

func (w *wtx) indexRelation(r *graph.Relation) error {
	local := relLocal(r.ID)
	for _, p := range []struct {
		b []byte
		k []byte
		v []byte
	}{
		{m.BucketRelAdj, joinKey(r.From, "o", local), nil},
		{m.BucketRelAdj, joinKey(r.To, "i", local), nil},
		{m.BucketRelAdj, relTupleKey(r), []byte(local)},
		{m.BucketRelTypes, joinKey(r.Type, local), nil},
	} {
		if err := w.put(p.b, p.k, p.v); err != nil {
			return err
		}
	}
	return nil
}

func (w *wtx) unindexRelation(r *graph.Relation) error {
	local := relLocal(r.ID)
	for _, p := range []struct{ b, k []byte }{
		{m.BucketRelAdj, joinKey(r.From, "o", local)},
		{m.BucketRelAdj, joinKey(r.To, "i", local)},
		{m.BucketRelAdj, relTupleKey(r)},
		{m.BucketRelTypes, joinKey(r.Type, local)},
	} {
		if err := w.delete(p.b, p.k); err != nil {
			return err
		}
	}
	return nil
}

// relRelated are the ids a relation event is indexed under besides the relation: both
// nodes, and the identity a device end is bound to.
func relRelated(tx *bolt.Tx, r *graph.Relation) []string {
	rel := []string{r.From, r.To}
	for _, n := range []string{r.From, r.To} {
		if o := ownerOf(tx, n); o != "" {
			rel = append(rel, o)
		}
	}
	return rel
}

// removeRelation deletes r with its indexes and counts, recording relation.remove.
func (w *wtx) removeRelation(r *graph.Relation) error {
	if err := w.delete(m.BucketRelations, []byte(relLocal(r.ID))); err != nil {
		return err
	}
	if err := w.unindexRelation(r); err != nil {
		return err
	}
	if err := w.relCounts(r, -1); err != nil {
		return err
	}
	return w.emit(graph.ActRelationRemove, r.ID, r, nil, relRelated(w.tx, r)...)
}

// relEndpoint resolves one end of a declared relation to an identity or device id.
func (w *wtx) relEndpoint(field, text string) (string, error) {
	if err := graph.ValidateRelationEndpoint(field, text); err != nil {
		return "", err
	}
	full, err := w.db.resolve(w.tx, text, graph.KindIdentity, graph.KindDevice)
	if err != nil {
		var u *unknownID
		if errors.As(err, &u) {
			u.err.Field = field
			return "", err
		}
		var ge *graph.Error
		if errors.As(err, &ge) && ge.Code == graph.EINVALID {
			return "", graph.FieldErrorf(graph.EINVALID, field, "%s %q: %s; relate identities, devices or robots", field, text, ge.Message)
		}
		return "", err
	}
	return full, nil
}

// checkRelCap refuses a relation on a node that already holds MaxRelationsPerNode.
func (w *wtx) checkRelCap(field, node string, adding int) error {
	if n := nodeRelCount(w.tx, node); n+adding > graph.MaxRelationsPerNode {
		return graph.FieldErrorf(graph.ELIMIT, field, "%s already has %d relations, the most a node may hold (%d); remove some first", node, n, graph.MaxRelationsPerNode).Next(
			graph.ListStep(graph.ListRelations, node), graph.Step{Do: graph.StepRemove})
	}
	return nil
}

// typeKnown reports whether t is seeded or in use.
func typeKnown(tx *bolt.Tx, t string) bool {
	return graph.IsSeedRelationType(t) || typeRelCount(tx, t) > 0
}

func unknownTypeErr(t string) error {
	return graph.FieldErrorf(graph.EINVALID, "type", "relation type %q is neither seeded nor in use; check the spelling (the seeded ones: %s), or ask for a new type to start using it", t, strings.Join(graph.SeedRelationTypes, ", ")).Next(
		graph.ListStep(graph.ListRelationTypes, ""), graph.PassStep("new_type", "true"))
}

func attrsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	return maps.Equal(a, b)
}

// tupleRelation returns the relation holding r's tuple, if any.
func tupleRelation(tx *bolt.Tx, r *graph.Relation) (*graph.Relation, error) {
	b := tx.Bucket(m.BucketRelAdj)
	if b == nil {
		return nil, nil
	}
	v := b.Get(relTupleKey(r))
	if v == nil {
		return nil, nil
	}
	return getRelation(tx, string(v))
}

// run runs fn as a write, or for a dry run in a transaction that is rolled back.
func (db *DB) writeOrDry(ctx context.Context, dry bool, fn func(w *wtx) error) ([]*graph.Event, error) {
	if dry {
		return nil, db.dryRun(ctx, fn)
	}
	return db.update(ctx, fn)
}

// Relate: see graph.RelationService.
func (db *DB) Relate(ctx context.Context, c graph.RelationCreate) (*graph.RelationChange, error) {
	c, err := graph.NormalizeRelationCreate(c)
	if err != nil {
		return nil, err
	}
	var out *graph.RelationChange
	_, err = db.writeOrDry(ctx, c.DryRun, func(w *wtx) error {
		out = nil
		from, err := w.relEndpoint("from", c.From)
		if err != nil {
			return err
		}
		to, err := w.relEndpoint("to", c.To)
		if err != nil {
			return err
		}
		if from == to {
			return graph.FieldErrorf(graph.EINVALID, "to", "%s and %s are the same node (%s): a self-loop; relate two different nodes", c.From, c.To, from)
		}
		if !c.NewType && !typeKnown(w.tx, c.Type) {
			return unknownTypeErr(c.Type)
		}
		r := &graph.Relation{Type: c.Type, From: from, FromPort: c.FromPort, To: to, ToPort: c.ToPort, Attrs: c.Attrs, Author: w.actor, Created: w.now}
		old, err := tupleRelation(w.tx, r)
		if err != nil {
			return err
		}
		if old != nil {
			if !attrsEqual(old.Attrs, r.Attrs) {
				return graph.FieldErrorf(graph.ECONFLICT, "attrs", "%s already relates %s to %s as %s with other attrs; update it instead", old.ID, from, to, r.Type).Next(
					graph.Step{Do: graph.StepUpdate, ID: old.ID}, graph.Step{Do: graph.StepRemove, ID: old.ID})
			}
			out = &graph.RelationChange{Relation: old, Action: "none", DryRun: c.DryRun}
			return nil
		}
		if err := w.checkRelCap("from", from, 1); err != nil {
			return err
		}
		if err := w.checkRelCap("to", to, 1); err != nil {
			return err
		}
		r.ID = graph.NewRelationID()
		if err := w.putRelation(r); err != nil {
			return err
		}
		if err := w.emit(graph.ActRelationAdd, r.ID, nil, r, relRelated(w.tx, r)...); err != nil {
			return err
		}
		out = &graph.RelationChange{Relation: r, Action: "add", DryRun: c.DryRun, Events: 1}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// relationID checks and completes a declared relation id (rel:<uuid> or the bare uuid).
func relationID(field, id string) (string, error) {
	t := strings.TrimSpace(id)
	if t == "" {
		return "", graph.FieldErrorf(graph.EINVALID, field, "no relation id given; want rel:<uuid>").Next(graph.ListStep(graph.ListRelations, ""))
	}
	if err := graph.ValidateText(field, t, 1, 1024); err != nil {
		return "", err
	}
	if graph.KindOf(t) == "" {
		t = "rel:" + t
	}
	switch graph.KindOf(t) {
	case graph.KindRelation:
		return t, nil
	case graph.KindObserved:
		return "", graph.FieldErrorf(graph.EINVALID, field, "%s is an observed relation: a source sees it, nobody declared it, so it cannot be changed or removed here; change the hardware or the patch", t)
	}
	return "", graph.FieldErrorf(graph.EINVALID, field, "%q is not a relation id; want rel:<uuid>", id).Next(graph.ListStep(graph.ListRelations, ""))
}

// mustRelation reads the declared relation id inside a transaction; ENOTFOUND with a
// suggestion when it does not exist.
func mustRelation(tx *bolt.Tx, id string) (*graph.Relation, error) {
	r, err := getRelation(tx, relLocal(id))
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, notFound(id, graph.KindRelation, relLocal(id))
	}
	return r, nil
}

// UpdateRelation: see graph.RelationService.
func (db *DB) UpdateRelation(ctx context.Context, id string, u graph.RelationUpdate) (*graph.RelationChange, error) {
	full, err := relationID("id", id)
	if err != nil {
		return nil, err
	}
	u, err = graph.NormalizeRelationUpdate(u)
	if err != nil {
		return nil, err
	}
	var out *graph.RelationChange
	_, err = db.writeOrDry(ctx, u.DryRun, func(w *wtx) error {
		out = nil
		old, err := mustRelation(w.tx, full)
		if err != nil {
			return err
		}
		r := *old
		if u.Attrs != nil {
			r.Attrs = maps.Clone(u.Attrs)
			if len(r.Attrs) == 0 {
				r.Attrs = nil
			}
		}
		if u.FromPort != nil {
			r.FromPort = *u.FromPort
		}
		if u.ToPort != nil {
			r.ToPort = *u.ToPort
		}
		if err := graph.CheckCableKind(r.Type, r.Attrs); err != nil {
			return err
		}
		if attrsEqual(r.Attrs, old.Attrs) && r.FromPort == old.FromPort && r.ToPort == old.ToPort {
			out = &graph.RelationChange{Relation: old, Action: "none", DryRun: u.DryRun}
			return nil
		}
		if !bytes.Equal(relTupleKey(&r), relTupleKey(old)) {
			other, err := tupleRelation(w.tx, &r)
			if err != nil {
				return err
			}
			if other != nil && other.ID != old.ID {
				return graph.FieldErrorf(graph.ECONFLICT, "from_port", "%s already relates %s to %s as %s with those ports; remove one of the two", other.ID, r.From, r.To, r.Type).Next(
					graph.Step{Do: graph.StepRemove, ID: other.ID})
			}
		}
		r.Updated = w.now
		if err := w.replaceRelation(old, &r); err != nil {
			return err
		}
		out = &graph.RelationChange{Relation: &r, Action: "update", DryRun: u.DryRun, Events: 1}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replaceRelation rewrites old as r (same id), moving its index entries and counts, and
// records relation.update.
func (w *wtx) replaceRelation(old, r *graph.Relation) error {
	if err := w.unindexRelation(old); err != nil {
		return err
	}
	if err := w.relCounts(old, -1); err != nil {
		return err
	}
	if err := w.putRelation(r); err != nil {
		return err
	}
	related := append(relRelated(w.tx, old), relRelated(w.tx, r)...)
	return w.emit(graph.ActRelationUpdate, r.ID, old, r, related...)
}

// Unrelate: see graph.RelationService.
func (db *DB) Unrelate(ctx context.Context, rm graph.RelationRemove) (*graph.RelationChange, error) {
	var full string
	var tuple graph.RelationCreate
	if strings.TrimSpace(rm.ID) != "" {
		var err error
		if full, err = relationID("id", rm.ID); err != nil {
			return nil, err
		}
	} else {
		if strings.TrimSpace(rm.From) == "" && strings.TrimSpace(rm.To) == "" && strings.TrimSpace(rm.Type) == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "id", "name the relation to remove: its id (rel:<uuid>), or from, type and to (with their ports)")
		}
		// The tuple goes through the declaration's checks (a cable's kind aside).
		c, err := graph.NormalizeRelationCreate(graph.RelationCreate{From: rm.From, FromPort: rm.FromPort, Type: rm.Type, To: rm.To, ToPort: rm.ToPort, Attrs: map[string]string{"kind": graph.CableKinds[0]}})
		if err != nil {
			return nil, err
		}
		tuple = c
	}
	var out *graph.RelationChange
	_, err := db.writeOrDry(ctx, rm.DryRun, func(w *wtx) error {
		out = nil
		var r *graph.Relation
		var err error
		if full != "" {
			if r, err = mustRelation(w.tx, full); err != nil {
				return err
			}
		} else {
			from, err := w.relEndpoint("from", tuple.From)
			if err != nil {
				return err
			}
			to, err := w.relEndpoint("to", tuple.To)
			if err != nil {
				return err
			}
			probe := &graph.Relation{From: from, FromPort: tuple.FromPort, Type: tuple.Type, To: to, ToPort: tuple.ToPort}
			if r, err = tupleRelation(w.tx, probe); err != nil {
				return err
			}
			if r == nil {
				// The same type between the same ends on other ports is most likely what
				// was meant: name it, so the caller can give its ports or its id.
				var near []string
				for _, local := range relIDsOf(w.tx, from, true) {
					if o, err := getRelation(w.tx, local); err == nil && o.Type == tuple.Type && o.To == to {
						near = append(near, fmt.Sprintf("%s%s → %s%s is %s", from, portSuffix(o.FromPort), to, portSuffix(o.ToPort), o.ID))
					}
				}
				hint := ""
				if len(near) > 0 {
					hint = " (" + strings.Join(near, "; ") + ": give its ports or its id)"
				}
				return graph.FieldErrorf(graph.ENOTFOUND, "id", "no %s relation from %s%s to %s%s%s", tuple.Type, from, portSuffix(tuple.FromPort), to, portSuffix(tuple.ToPort), hint).Next(
					graph.ListStep(graph.ListRelations, from))
			}
		}
		if err := w.removeRelation(r); err != nil {
			return err
		}
		out = &graph.RelationChange{Relation: r, Action: "remove", DryRun: rm.DryRun, Events: 1}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func portSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " [" + p + "]"
}

// FindRelationByID: see graph.RelationService (declared relations only).
func (db *DB) FindRelationByID(ctx context.Context, id string) (*graph.Relation, error) {
	full, err := relationID("id", id)
	if err != nil {
		if graph.KindOf(strings.TrimSpace(id)) == graph.KindObserved {
			return nil, graph.FieldErrorf(graph.ENOTFOUND, "id", "%s is an observed relation; the store keeps declared ones only (ask the service, which sees the live ones)", strings.TrimSpace(id))
		}
		return nil, err
	}
	var out *graph.Relation
	err = db.view(ctx, func(tx *bolt.Tx) error {
		r, err := mustRelation(tx, full)
		out = r
		return err
	})
	return out, err
}

// normalizeTypes lowercases and checks a type filter.
func normalizeTypes(ts []string) ([]string, error) {
	var out []string
	for _, t := range ts {
		n, err := graph.NormalizeRelationType(t)
		if err != nil {
			return nil, err
		}
		if !contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// FindRelations: see graph.RelationStore. On a node it lists that node's own declared
// relations; without one every declared relation. Sorted by id.
func (db *DB) FindRelations(ctx context.Context, f graph.RelationFilter) ([]*graph.Relation, int, string, error) {
	first := graph.ClampFirst(f.First)
	dir := strings.ToLower(strings.TrimSpace(f.Direction))
	switch dir {
	case "", graph.DirBoth:
		dir = graph.DirBoth
	case graph.DirOut, graph.DirIn:
	default:
		return nil, 0, "", graph.FieldErrorf(graph.EINVALID, "direction", "direction %q: want out, in or both", f.Direction)
	}
	types, err := normalizeTypes(f.Types)
	if err != nil {
		return nil, 0, "", err
	}
	after := ""
	if a := strings.TrimSpace(f.After); a != "" {
		full, err := relationID("after", a)
		if err != nil {
			return nil, 0, "", err
		}
		after = relLocal(full)
	}
	out := []*graph.Relation{}
	var total int
	var next string
	err = db.view(ctx, func(tx *bolt.Tx) error {
		if strings.TrimSpace(f.Node) == "" {
			return findAllRelations(tx, types, first, after, &out, &total, &next)
		}
		node, err := db.resolve(tx, f.Node, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		var ids []string
		switch dir {
		case graph.DirOut:
			ids = relIDsOf(tx, node, true)
		case graph.DirIn:
			ids = relIDsOf(tx, node, false)
		default:
			ids = relIDsBoth(tx, node)
		}
		if len(types) == 0 {
			total = len(ids)
			if dir == graph.DirBoth {
				total = nodeRelCount(tx, node) // the counter, the same number
			}
		}
		for _, id := range ids {
			if len(types) == 0 && (id <= after && after != "") {
				continue
			}
			if len(types) == 0 && len(out) == first {
				next = out[len(out)-1].ID
				break
			}
			r, err := getRelation(tx, id)
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			if len(types) > 0 {
				if !contains(types, r.Type) {
					continue
				}
				total++
				if after != "" && id <= after {
					continue
				}
				if len(out) == first {
					if next == "" {
						next = out[len(out)-1].ID
					}
					continue
				}
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, 0, "", err
	}
	return out, total, next, nil
}

// findAllRelations pages every declared relation (of types, when given) by id; totals from
// the counters.
func findAllRelations(tx *bolt.Tx, types []string, first int, after string, out *[]*graph.Relation, total *int, next *string) error {
	if tx.Bucket(m.BucketRelations) == nil {
		return nil
	}
	take := func(local string) (bool, error) {
		if len(*out) == first {
			*next = (*out)[len(*out)-1].ID
			return false, nil
		}
		r, err := getRelation(tx, local)
		if err != nil || r == nil {
			return err == nil, err
		}
		*out = append(*out, r)
		return true, nil
	}
	if len(types) == 0 {
		*total = int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountRelations)))
		c := tx.Bucket(m.BucketRelations).Cursor()
		k, _ := c.First()
		if after != "" {
			k, _ = c.Seek([]byte(after))
			if k != nil && string(k) == after {
				k, _ = c.Next()
			}
		}
		for ; k != nil; k, _ = c.Next() {
			if more, err := take(string(k)); err != nil || !more {
				return err
			}
		}
		return nil
	}
	// one type: its index is sorted by id; several: merge their index lists
	var ids []string
	for _, t := range types {
		*total += typeRelCount(tx, t)
		p := prefixKey(t)
		c := tx.Bucket(m.BucketRelTypes).Cursor()
		k, _ := c.Seek(p)
		if after != "" {
			k, _ = c.Seek(joinKey(t, after))
			if k != nil && string(k[len(p):]) == after {
				k, _ = c.Next()
			}
		}
		n := 0
		for ; k != nil && bytes.HasPrefix(k, p) && n <= first; k, _ = c.Next() {
			ids = append(ids, string(k[len(p):]))
			n++
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if more, err := take(id); err != nil || !more {
			return err
		}
	}
	return nil
}

// RelationTypes: see graph.RelationService.
func (db *DB) RelationTypes(ctx context.Context) ([]graph.RelationTypeCount, error) {
	counts := map[string]int{}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(m.BucketRelCounts)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			counts[string(k)] = int(m.ReadU64(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, t := range graph.SeedRelationTypes {
		counts[t] += 0
	}
	for _, t := range graph.ReservedRelationTypes {
		counts[t] += 0
	}
	out := make([]graph.RelationTypeCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, graph.RelationTypeCount{Type: t, Count: n, Seeded: graph.IsSeedRelationType(t), Reserved: graph.IsReservedRelationType(t)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out, nil
}

// RelationsOf: see graph.RelationStore.
func (db *DB) RelationsOf(ctx context.Context, nodes []string) ([]*graph.Relation, error) {
	out := []*graph.Relation{}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		seen := map[string]bool{}
		var ids []string
		for _, n := range nodes {
			for _, id := range relIDsBoth(tx, n) {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			r, err := getRelation(tx, id)
			if err != nil {
				return err
			}
			if r != nil {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}

// ---- cascades: identity delete, merge and restore -------------------------------------

// removeRelationsOf removes every declared relation touching node, each recorded with
// relation.remove (indexed under node, so a restore finds them by the delete's request).
func (w *wtx) removeRelationsOf(node string) error {
	for _, id := range relIDsBoth(w.tx, node) {
		r, err := getRelation(w.tx, id)
		if err != nil {
			return err
		}
		if r == nil {
			continue
		}
		if err := w.removeRelation(r); err != nil {
			return err
		}
	}
	return nil
}

// moveRelations moves from's relations to into (merge), keeping their ids: each is
// rewritten with relation.update, except one that would become a self-loop or the
// duplicate of a relation into already holds, which is removed (relation.remove). ELIMIT
// when into would hold more than MaxRelationsPerNode.
func (w *wtx) moveRelations(from, into string) error {
	for _, id := range relIDsBoth(w.tx, from) {
		old, err := getRelation(w.tx, id)
		if err != nil {
			return err
		}
		if old == nil {
			continue
		}
		r := *old
		if r.From == from {
			r.From = into
		}
		if r.To == from {
			r.To = into
		}
		if r.From == r.To {
			if err := w.removeRelation(old); err != nil {
				return err
			}
			continue
		}
		dup, err := tupleRelation(w.tx, &r)
		if err != nil {
			return err
		}
		if dup != nil {
			if err := w.removeRelation(old); err != nil {
				return err
			}
			continue
		}
		r.Updated = w.now
		if err := w.replaceRelation(old, &r); err != nil {
			return err
		}
	}
	if n := nodeRelCount(w.tx, into); n > graph.MaxRelationsPerNode {
		return graph.FieldErrorf(graph.ELIMIT, "into", "merging would give %s %d relations, more than a node may hold (%d); remove some first", into, n, graph.MaxRelationsPerNode).Next(
			graph.ListStep(graph.ListRelations, into), graph.Step{Do: graph.StepRemove})
	}
	return nil
}

// restoreRelations brings back the relations the delete event del removed (named in its
// before, their records in the relation.remove events of its request, indexed under the
// identity), same ids, authors and times, with relation.add events of the restoring
// request. A merge's delete removed none (the merge moved them). One whose other end is
// gone, whose id or tuple is taken again, or that no longer fits a node's cap is skipped
// and logged.
func (w *wtx) restoreRelations(del *graph.Event) error {
	var named struct {
		RemovedRelations []string `json:"removed_relations"`
	}
	if err := json.Unmarshal(del.Before, &named); err != nil {
		return internal("decode deleted identity", err)
	}
	want := make(map[string]bool, len(named.RemovedRelations))
	for _, id := range named.RemovedRelations {
		want[id] = true
	}
	if len(want) == 0 {
		return nil
	}
	var rels []*graph.Relation
	err := eachTargetEvent(w.tx, del.Target, del.Seq, func(h *m.EventHeader) (bool, error) {
		if h.RequestID != del.RequestID || len(rels) == len(want) {
			return false, nil
		}
		if h.Action != graph.ActRelationRemove || !want[h.Target] {
			return true, nil
		}
		e, err := h.Body()
		if err != nil {
			return false, err
		}
		var r graph.Relation
		if err := json.Unmarshal(e.Before, &r); err != nil {
			return false, internal("decode removed relation", err)
		}
		rels = append(rels, &r)
		return true, nil
	})
	if err != nil {
		return err
	}
	for i := len(rels) - 1; i >= 0; i-- { // oldest first, as the delete removed them
		r := rels[i]
		skip := ""
		for _, n := range []string{r.From, r.To} {
			if k, local, ok := graph.SplitID(n); !ok || !exists(w.tx, k, local) {
				skip = n + " no longer exists"
			}
		}
		if skip == "" && w.b(m.BucketRelations).Get([]byte(relLocal(r.ID))) != nil {
			skip = "its id exists again"
		}
		if skip == "" {
			if dup, err := tupleRelation(w.tx, r); err != nil {
				return err
			} else if dup != nil {
				skip = "the same relation exists again as " + dup.ID
			}
		}
		if skip == "" && (w.checkRelCap("from", r.From, 1) != nil || w.checkRelCap("to", r.To, 1) != nil) {
			skip = "a node holds the most relations it may"
		}
		if skip != "" {
			w.db.log.Warn("restore: relation not brought back", "identity", del.Target, "relation", r.ID, "why", skip)
			continue
		}
		if err := w.putRelation(r); err != nil {
			return err
		}
		if err := w.emit(graph.ActRelationAdd, r.ID, nil, r, relRelated(w.tx, r)...); err != nil {
			return err
		}
	}
	return nil
}
