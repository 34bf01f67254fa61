package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

func slugOf(id string) string { return strings.TrimPrefix(id, "identity:") }

// getIdentity reads an identity record by slug; nil when absent.
func getIdentity(tx *bolt.Tx, slug string) (*graph.Identity, error) {
	id, err := getRecord[graph.Identity](tx, m.BucketIdentities, slug, "identity")
	if id == nil || err != nil {
		return nil, err
	}
	if id.Hints == nil {
		id.Hints = []graph.Fingerprint{}
	}
	if id.Tags == nil {
		id.Tags = []string{}
	}
	return id, nil
}

// identityJSON is the node's JSON as events carry it (no notes or devices).
func identityJSON(id *graph.Identity) json.RawMessage {
	c := *id
	c.Notes, c.Devices = nil, nil
	if c.Hints == nil {
		c.Hints = []graph.Fingerprint{}
	}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	b, _ := json.Marshal(&c)
	return b
}

func (w *wtx) putIdentity(id *graph.Identity) error {
	return w.put(m.BucketIdentities, []byte(slugOf(id.ID)), identityJSON(id))
}

// mustIdentity resolves text to an existing identity inside the transaction.
func (w *wtx) mustIdentity(text string) (*graph.Identity, error) {
	full, err := w.db.resolve(w.tx, text, graph.KindIdentity)
	if err != nil {
		return nil, err
	}
	return getIdentity(w.tx, slugOf(full))
}

func nameKey(name, slug string) []byte { return joinKey(strings.ToLower(name), slug) }

func validateData(d json.RawMessage) (json.RawMessage, error) {
	if len(d) == 0 {
		return nil, nil
	}
	if len(d) > graph.MaxDataLen {
		return nil, graph.FieldErrorf(graph.EINVALID, "data", "data is %d bytes; the limit is %d", len(d), graph.MaxDataLen)
	}
	if err := graph.ValidateText("data", string(d), 1, graph.MaxDataLen); err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(d, &obj); err != nil || obj == nil {
		return nil, graph.FieldErrorf(graph.EINVALID, "data", "data must be a JSON object, e.g. {\"room\":\"studio\"}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, d); err != nil {
		return nil, graph.FieldErrorf(graph.EINVALID, "data", "data must be a JSON object: %v", err)
	}
	return buf.Bytes(), nil
}

// checkDataText refuses, naming its path, a string in data a user gave (identity create,
// update, a bind's new identity) that decoding would garble: a lone surrogate escape,
// which every JSON decoder reads as U+FFFD, or \u0000 (graph.FindJSONTextFault). The
// transports refuse these in their request bodies; this holds the CLI on the file to
// the same rule. An import keeps the data a file holds as it was written.
func checkDataText(d json.RawMessage) error {
	if f, bad := graph.FindJSONTextFault(d); bad {
		return f.RefusalIn("data")
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// slugTaken is the conflict of a create whose slug exists. The same name again reads as
// a retry (look at the identity, which may be the earlier try's); another name is told a
// free slug.
func (w *wtx) slugTaken(slug, name string) error {
	id := graph.IdentityID(slug)
	old, _ := getIdentity(w.tx, slug)
	if old != nil && strings.EqualFold(strings.TrimSpace(old.Name), name) {
		return graph.FieldErrorf(graph.ECONFLICT, "slug", "%s already exists, named %q as asked (created %s); use it, or give another slug for a second one",
			id, old.Name, old.CreatedAt.UTC().Format(time.RFC3339)).Next(graph.Step{Do: graph.StepShow, ID: id})
	}
	free := slug
	for i := 2; i < 100; i++ {
		c := fmt.Sprintf("%s-%d", strings.TrimRight(slug[:min(len(slug), 60)], "-"), i)
		if w.b(m.BucketIdentities).Get([]byte(c)) == nil {
			free = c
			break
		}
	}
	e := graph.FieldErrorf(graph.ECONFLICT, "slug", "%s already exists; choose another slug or use the existing identity", id)
	if free != slug {
		e.Next(graph.PassStep("slug", free))
	}
	return e.Next(graph.Step{Do: graph.StepShow, ID: id})
}

// createIdentity creates an identity with its hints and tags, writing identity.create and
// one hint.add / tag.add per item.
func (w *wtx) createIdentity(c graph.IdentityCreate) (*graph.Identity, error) {
	name := strings.TrimSpace(c.Name)
	if err := graph.ValidateText("name", name, 1, graph.MaxNameLen); err != nil {
		return nil, err
	}
	slug := c.Slug
	if slug == "" {
		slug = graph.Slugify(name)
		if slug == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "slug", "cannot make a slug from the name %q; give a slug of a-z 0-9 . _ -", name)
		}
	} else if err := graph.ValidateSlug(slug); err != nil {
		return nil, err
	}
	data, err := validateData(c.Data)
	if err != nil {
		return nil, err
	}
	hints, err := graph.NormalizeHintSet(c.Hints)
	if err != nil {
		return nil, err
	}
	tags, err := graph.NormalizeTagSet(c.Tags)
	if err != nil {
		return nil, err
	}
	if w.b(m.BucketIdentities).Get([]byte(slug)) != nil {
		return nil, w.slugTaken(slug, name)
	}
	id := &graph.Identity{ID: graph.IdentityID(slug), Name: name, Data: data, Hints: []graph.Fingerprint{}, Tags: []string{}, CreatedAt: w.now, UpdatedAt: w.now}
	if err := w.putIdentity(id); err != nil {
		return nil, err
	}
	if err := w.put(m.BucketNames, nameKey(name, slug), nil); err != nil {
		return nil, err
	}
	w.count(m.CountIdentities, 1)
	if err := w.emit(graph.ActIdentityCreate, id.ID, nil, identityJSON(id)); err != nil {
		return nil, err
	}
	if err := w.hook("identity.created"); err != nil {
		return nil, err
	}
	if _, _, err := w.addHints(id, hints, false, false); err != nil {
		return nil, err
	}
	if err := w.addTags(id.ID, &id.Tags, tags); err != nil {
		return nil, err
	}
	if len(hints)+len(tags) > 0 {
		if err := w.putIdentity(id); err != nil {
			return nil, err
		}
	}
	return id, nil
}

func removeStr(ss []string, s string) []string {
	out := ss[:0:0]
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// ---- public identity methods ------------------------------------------------------------

// CreateIdentity checks the call's per-call caps on hints and tags (graph.NormalizeHints,
// graph.NormalizeTags) before its transaction begins; createIdentity, which an import and
// a bind share, has none.
func (db *DB) CreateIdentity(ctx context.Context, c graph.IdentityCreate) (*graph.Identity, error) {
	if err := checkDataText(c.Data); err != nil {
		return nil, err
	}
	var err error
	if c.Hints, err = graph.NormalizeHints(c.Hints); err != nil {
		return nil, err
	}
	if c.Tags, err = graph.NormalizeTags(c.Tags); err != nil {
		return nil, err
	}
	var out *graph.Identity
	_, err = db.update(ctx, func(w *wtx) (err error) {
		out, err = w.createIdentity(c)
		return err
	})
	return out, err
}

func (db *DB) RenameIdentity(ctx context.Context, id, name string) (*graph.Identity, error) {
	return db.UpdateIdentity(ctx, id, graph.IdentityUpdate{Name: &name})
}

func (db *DB) UpdateIdentity(ctx context.Context, text string, u graph.IdentityUpdate) (*graph.Identity, error) {
	if u.Data != nil {
		if err := checkDataText(*u.Data); err != nil {
			return nil, err
		}
	}
	var out *graph.Identity
	_, err := db.update(ctx, func(w *wtx) error {
		id, err := w.mustIdentity(text)
		if err != nil {
			return err
		}
		before := identityJSON(id)
		action := graph.ActIdentityUpdate
		if u.Name != nil {
			name := strings.TrimSpace(*u.Name)
			if err := graph.ValidateText("name", name, 1, graph.MaxNameLen); err != nil {
				return err
			}
			if name != id.Name {
				if err := w.delete(m.BucketNames, nameKey(id.Name, slugOf(id.ID))); err != nil {
					return err
				}
				if err := w.put(m.BucketNames, nameKey(name, slugOf(id.ID)), nil); err != nil {
					return err
				}
				id.Name = name
				if u.Data == nil {
					action = graph.ActIdentityRename
				}
			}
		}
		if u.Data != nil {
			d, err := validateData(*u.Data)
			if err != nil {
				return err
			}
			id.Data = d
		}
		after := identityJSON(id)
		out = id
		if bytes.Equal(before, after) {
			return nil // nothing changed: no event
		}
		id.UpdatedAt = w.now
		if err := w.putIdentity(id); err != nil {
			return err
		}
		return w.emit(action, id.ID, before, identityJSON(id))
	})
	return out, err
}

func (db *DB) DeleteIdentity(ctx context.Context, text string) error {
	_, err := db.update(ctx, func(w *wtx) error {
		id, err := w.mustIdentity(text)
		if err != nil {
			return err
		}
		return w.deleteIdentity(id, true)
	})
	return err
}

// deletedIdentity is an identity.delete event's before when the delete removed
// relations: the identity (with its notes) and the ids of those relations.
type deletedIdentity struct {
	*graph.Identity
	RemovedRelations []string `json:"removed_relations,omitempty"`
}

// deleteIdentity removes id and everything hanging off it, each recorded. With cascade
// false (merge) the hints, tags, notes and bindings must already have been moved.
func (w *wtx) deleteIdentity(id *graph.Identity, cascade bool) error {
	before := identityJSON(id)
	if cascade {
		// The delete's before carries the notes it deletes (oldest first) and the ids of
		// the relations it removes, so a restore brings back those and nothing else (not
		// a relation an earlier write of the same request removed).
		rels := relIDsBoth(w.tx, id.ID)
		if ids := noteIDs(w.tx, id.ID); len(ids) > 0 || len(rels) > 0 {
			c := *id
			c.Devices, c.Notes = nil, make([]*graph.Note, 0, len(ids))
			for _, nid := range ids {
				n, err := getNote(w.tx, noteLocal(nid))
				if err != nil {
					return err
				}
				if n != nil {
					c.Notes = append(c.Notes, n)
				}
			}
			if c.Hints == nil {
				c.Hints = []graph.Fingerprint{}
			}
			if c.Tags == nil {
				c.Tags = []string{}
			}
			var body any = &c
			if len(rels) > 0 {
				full := make([]string, len(rels))
				for i, l := range rels {
					full[i] = string(graph.KindRelation) + ":" + l
				}
				body = deletedIdentity{Identity: &c, RemovedRelations: full}
			}
			b, err := json.Marshal(body)
			if err != nil {
				return err
			}
			before = b
		}
		for _, f := range append([]graph.Fingerprint(nil), id.Hints...) {
			if err := w.removeHint(id, f); err != nil {
				return err
			}
		}
		if err := w.removeTags(id.ID, &id.Tags, append([]string(nil), id.Tags...)); err != nil {
			return err
		}
		if err := w.hook("identity.delete.cascade"); err != nil {
			return err
		}
		for _, nid := range noteIDs(w.tx, id.ID) {
			if err := w.deleteNote(nid); err != nil {
				return err
			}
		}
		if err := w.removeRelationsOf(id.ID); err != nil {
			return err
		}
		for _, key := range boundKeys(w.tx, id.ID) {
			if _, err := w.unbind(key); err != nil {
				return err
			}
		}
	}
	if err := w.delete(m.BucketIdentities, []byte(slugOf(id.ID))); err != nil {
		return err
	}
	if err := w.delete(m.BucketNames, nameKey(id.Name, slugOf(id.ID))); err != nil {
		return err
	}
	w.count(m.CountIdentities, -1)
	return w.emit(graph.ActIdentityDelete, id.ID, before, nil)
}

func (db *DB) MergeIdentities(ctx context.Context, fromText, intoText string) (*graph.Identity, error) {
	var out *graph.Identity
	_, err := db.update(ctx, func(w *wtx) error {
		from, err := w.mustIdentity(fromText)
		if err != nil {
			return err
		}
		into, err := w.mustIdentity(intoText)
		if err != nil {
			return err
		}
		if from.ID == into.ID {
			return graph.FieldErrorf(graph.EINVALID, "from", "cannot merge %s into itself; name two different identities", from.ID)
		}
		intoBefore := identityJSON(into)
		for _, f := range from.Hints {
			if err := w.delete(m.BucketHints, joinKey(string(f.Kind), f.Value, from.ID)); err != nil {
				return err
			}
			if graph.ContainsFingerprint(into.Hints, f) {
				continue
			}
			into.Hints = append(into.Hints, f)
			if err := w.put(m.BucketHints, joinKey(string(f.Kind), f.Value, into.ID), nil); err != nil {
				return err
			}
			if err := w.emit(graph.ActHintMove, into.ID, hintBody{f.Kind, f.Value, from.ID}, hintBody{f.Kind, f.Value, into.ID}, from.ID); err != nil {
				return err
			}
		}
		graph.SortFingerprints(into.Hints)
		from.Hints = []graph.Fingerprint{}
		var newTags []string
		for _, t := range from.Tags {
			if !contains(into.Tags, t) {
				newTags = append(newTags, t)
			}
		}
		// from's tags leave quietly (from is deleted below, its before lists them no more)
		for _, t := range from.Tags {
			if err := w.delete(m.BucketTags, joinKey(t, from.ID)); err != nil {
				return err
			}
			if err := w.bumpTag(t, -1); err != nil {
				return err
			}
		}
		from.Tags = []string{}
		if err := w.addTags(into.ID, &into.Tags, newTags); err != nil {
			return err
		}
		if err := w.hook("identity.merge.moved"); err != nil {
			return err
		}
		for _, nid := range noteIDs(w.tx, from.ID) {
			if err := w.moveNote(nid, into.ID); err != nil {
				return err
			}
		}
		if n := len(noteIDs(w.tx, into.ID)); n > graph.MaxNotesPerNode {
			return graph.FieldErrorf(graph.ELIMIT, "into", "merging would give %s %d notes, more than a node may hold (%d); delete some first", into.ID, n, graph.MaxNotesPerNode).Next(
				graph.Step{Do: graph.StepDelNote, ID: into.ID}, graph.Step{Do: graph.StepDelNote, ID: from.ID})
		}
		if err := w.moveRelations(from.ID, into.ID); err != nil {
			return err
		}
		for _, key := range boundKeys(w.tx, from.ID) {
			if err := w.bind(key, into.ID); err != nil {
				return err
			}
		}
		into.UpdatedAt = w.now
		if err := w.putIdentity(into); err != nil {
			return err
		}
		if err := w.emit(graph.ActIdentityMerge, into.ID, intoBefore, identityJSON(into), from.ID); err != nil {
			return err
		}
		if err := w.deleteIdentity(from, false); err != nil {
			return err
		}
		out = into
		return nil
	})
	return out, err
}

func (db *DB) RestoreIdentity(ctx context.Context, text string) (*graph.Identity, error) {
	var out *graph.Identity
	_, err := db.update(ctx, func(w *wtx) error {
		full := text
		if graph.KindOf(text) == "" {
			full = graph.IdentityID(text)
		}
		if graph.KindOf(full) != graph.KindIdentity {
			return graph.FieldErrorf(graph.EINVALID, "id", "%q is not an identity id; want identity:<slug>", text)
		}
		last, err := lastEvent(w.tx, full, graph.ActIdentityDelete)
		if err != nil {
			return err
		}
		if w.b(m.BucketIdentities).Get([]byte(slugOf(full))) != nil {
			show := graph.Step{Do: graph.StepShow, ID: full}
			if last == nil {
				return graph.Errorf(graph.ECONFLICT, "%s exists and was never deleted; nothing to restore", full).Next(show)
			}
			restored, err := lastEvent(w.tx, full, graph.ActIdentityRestore)
			if err != nil {
				return err
			}
			if restored != nil && restored.Seq > last.Seq {
				// A retried restore: say when and by whom it was done.
				return graph.Errorf(graph.ECONFLICT, "%s was restored already, at %s by %s; nothing to restore", full,
					restored.Time.UTC().Format(time.RFC3339), restored.Actor).Next(show)
			}
			return graph.Errorf(graph.ECONFLICT, "%s exists again; rename or delete the current one before restoring the old one", full).Next(show)
		}
		if last == nil || len(last.Before) == 0 {
			return graph.Errorf(graph.ENOTFOUND, "%s was never deleted (no identity.delete event; it may have been pruned); nothing to restore", full)
		}
		var old graph.Identity
		if err := json.Unmarshal(last.Before, &old); err != nil {
			return internal("decode deleted identity", err)
		}
		id := &graph.Identity{ID: full, Name: old.Name, Data: old.Data, Hints: []graph.Fingerprint{}, Tags: []string{}, CreatedAt: old.CreatedAt, UpdatedAt: w.now}
		if err := w.putIdentity(id); err != nil {
			return err
		}
		if err := w.put(m.BucketNames, nameKey(id.Name, slugOf(id.ID)), nil); err != nil {
			return err
		}
		w.count(m.CountIdentities, 1)
		if err := w.emit(graph.ActIdentityRestore, id.ID, nil, identityJSON(id)); err != nil {
			return err
		}
		if _, _, err := w.addHints(id, old.Hints, false, false); err != nil {
			return err
		}
		if err := w.addTags(id.ID, &id.Tags, old.Tags); err != nil {
			return err
		}
		for _, n := range old.Notes {
			if err := w.restoreNote(n, id.ID); err != nil {
				return err
			}
		}
		if err := w.putIdentity(id); err != nil {
			return err
		}
		if err := w.rebindDeleted(last); err != nil {
			return err
		}
		if err := w.restoreRelations(last); err != nil {
			return err
		}
		out = id
		return nil
	})
	return out, err
}

// rebindDeleted binds again the devices the delete event del's request unbound (its
// device.unbind events, indexed under the identity) with device.bind events under the
// restoring request. A device gone since, or bound to another identity meanwhile, is
// skipped and logged.
func (w *wtx) rebindDeleted(del *graph.Event) error {
	var keys []string
	err := eachTargetEvent(w.tx, del.Target, del.Seq, func(h *m.EventHeader) (bool, error) {
		if h.RequestID != del.RequestID {
			return false, nil // a request's events are consecutive: the delete's are done
		}
		if h.Action == graph.ActDeviceUnbind && graph.KindOf(h.Target) == graph.KindDevice {
			keys = append(keys, devKey(h.Target))
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for i := len(keys) - 1; i >= 0; i-- { // oldest first, as the delete unbound them
		key := keys[i]
		d, err := getDevice(w.tx, key)
		if err != nil {
			return err
		}
		switch {
		case d == nil:
			w.db.log.Warn("restore: device no longer exists; not re-bound", "identity", del.Target, "device", graph.DeviceID(key))
			continue
		case d.IdentityID == del.Target:
			continue
		case d.IdentityID != "":
			w.db.log.Warn("restore: device was bound elsewhere meanwhile; not re-bound", "identity", del.Target, "device", d.ID, "bound_to", d.IdentityID)
			continue
		}
		if err := w.bind(key, del.Target); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) FindIdentityByID(ctx context.Context, text string, with graph.IdentityParts) (*graph.Identity, error) {
	var out *graph.Identity
	err := db.view(ctx, func(tx *bolt.Tx) error {
		full, err := db.resolve(tx, text, graph.KindIdentity)
		if err != nil {
			return err
		}
		out, err = readIdentity(tx, slugOf(full), with)
		return err
	})
	return out, err
}

func readIdentity(tx *bolt.Tx, slug string, with graph.IdentityParts) (*graph.Identity, error) {
	id, err := getIdentity(tx, slug)
	if err != nil || id == nil {
		return id, err
	}
	if with.Notes {
		notes, err := notesOf(tx, id.ID, "", 0)
		if err != nil {
			return nil, err
		}
		id.Notes = notes
	}
	if with.Devices {
		for _, key := range boundKeys(tx, id.ID) {
			d, err := getDevice(tx, key)
			if err != nil {
				return nil, err
			}
			if d != nil {
				id.Devices = append(id.Devices, d)
			}
		}
	}
	return id, nil
}

// FindIdentities pages identities sorted by id. Totals come from the counter when there is
// no filter, otherwise from the index the filter selects (never a scan of every identity).
func (db *DB) FindIdentities(ctx context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error) {
	first := graph.ClampFirst(f.First)
	after := slugOf(f.After)
	var out []*graph.Identity
	var total int
	var next string
	err := db.view(ctx, func(tx *bolt.Tx) error {
		tags, err := graph.NormalizeTagSet(f.Tags)
		if err != nil {
			return err
		}
		var hint *graph.Fingerprint
		if f.Hint != nil {
			h, err := graph.NormalizeFingerprint(f.Hint.Kind, f.Hint.Value)
			if err != nil {
				return err
			}
			hint = &h
		}
		name := strings.ToLower(strings.TrimSpace(f.Name))
		if len(f.IDs) == 0 && hint == nil && len(tags) == 0 && name == "" {
			total = int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountIdentities)))
			c := tx.Bucket(m.BucketIdentities).Cursor()
			k, _ := c.First()
			if after != "" {
				k, _ = c.Seek([]byte(after))
				if k != nil && string(k) == after {
					k, _ = c.Next()
				}
			}
			for ; k != nil; k, _ = c.Next() {
				if len(out) == first {
					next = graph.IdentityID(slugOf(out[len(out)-1].ID))
					break
				}
				id, err := readIdentity(tx, string(k), f.With)
				if err != nil {
					return err
				}
				out = append(out, id)
			}
			return nil
		}
		// candidate slugs from the most selective index the filter names
		var cands []string
		switch {
		case len(f.IDs) > 0:
			for _, s := range f.IDs {
				cands = append(cands, slugOf(s))
			}
		case hint != nil:
			for _, h := range holders(tx, *hint) {
				cands = append(cands, slugOf(h))
			}
		case len(tags) > 0:
			p := joinKey(tags[0], "identity:")
			c := tx.Bucket(m.BucketTags).Cursor()
			for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
				cands = append(cands, string(k[len(p):]))
			}
		default:
			p := []byte(name)
			c := tx.Bucket(m.BucketNames).Cursor()
			for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
				if i := bytes.LastIndexByte(k, 0); i >= 0 {
					cands = append(cands, string(k[i+1:]))
				}
			}
		}
		sort.Strings(cands)
		var prev string
		for _, s := range cands {
			if s == prev {
				continue
			}
			prev = s
			id, err := getIdentity(tx, s)
			if err != nil {
				return err
			}
			if id == nil || !identityMatches(id, name, tags, hint) {
				continue
			}
			total++
			if after != "" && s <= after {
				continue
			}
			if len(out) < first {
				if f.With.Notes || f.With.Devices {
					if id, err = readIdentity(tx, s, f.With); err != nil {
						return err
					}
				}
				out = append(out, id)
			} else if next == "" {
				next = out[len(out)-1].ID
			}
		}
		return nil
	})
	if out == nil {
		out = []*graph.Identity{}
	}
	return out, total, next, err
}

func identityMatches(id *graph.Identity, name string, tags []string, hint *graph.Fingerprint) bool {
	if name != "" && !strings.HasPrefix(strings.ToLower(id.Name), name) {
		return false
	}
	for _, t := range tags {
		if !contains(id.Tags, t) {
			return false
		}
	}
	if hint != nil && !graph.ContainsFingerprint(id.Hints, *hint) {
		return false
	}
	return true
}
