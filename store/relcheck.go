package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// maxCheckProblems is how many problems a check lists before it stops looking.
const maxCheckProblems = 20

// CheckRelations checks the declared relations against their indexes and counters, in
// one read transaction: every record decodes, names existing nodes and has its entries
// (out under from, in under to, the tuple, the type) and nothing else does; the per-node,
// per-type and total counters equal what the records say; no node holds more than
// graph.MaxRelationsPerNode. It returns the problems found (at most 20), none when the
// relations are whole. A file at a schema version before relations has none to check.
func (db *DB) CheckRelations(ctx context.Context) ([]string, error) {
	var problems []string
	err := db.view(ctx, func(tx *bolt.Tx) error {
		var err error
		problems, err = checkRelations(ctx, tx)
		return err
	})
	return problems, err
}

type relChecker struct {
	tx       *bolt.Tx
	problems []string
}

func (c *relChecker) add(format string, args ...any) bool {
	if len(c.problems) < maxCheckProblems {
		c.problems = append(c.problems, fmt.Sprintf(format, args...))
	}
	return len(c.problems) < maxCheckProblems
}

func (c *relChecker) full() bool { return len(c.problems) >= maxCheckProblems }

func checkRelations(ctx context.Context, tx *bolt.Tx) ([]string, error) {
	rb, adj, tb, cb := tx.Bucket(m.BucketRelations), tx.Bucket(m.BucketRelAdj), tx.Bucket(m.BucketRelTypes), tx.Bucket(m.BucketRelCounts)
	if rb == nil && adj == nil && tb == nil && cb == nil {
		return nil, nil // a file before version 3
	}
	c := &relChecker{tx: tx}
	if rb == nil || adj == nil || tb == nil || cb == nil {
		c.add("a relation bucket is missing (relations, reladj, reltypes, relcounts)")
		return c.problems, nil
	}
	nodeCount := map[string]int{}
	typeCount := map[string]int{}
	total := 0
	// Records → their index entries.
	n := 0
	cur := rb.Cursor()
	for k, v := cur.First(); k != nil && !c.full(); k, v = cur.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		local := string(k)
		r, err := decodeRelation(v)
		if err != nil {
			c.add("relation %s: record does not decode: %v", local, err)
			continue
		}
		if r.ID != "rel:"+local {
			c.add("relation %s: record holds id %q", local, r.ID)
			continue
		}
		total++
		typeCount[r.Type]++
		nodeCount[r.From]++
		nodeCount[r.To]++
		if r.From == r.To {
			c.add("%s is a self-loop on %s", r.ID, r.From)
		}
		for _, end := range []string{r.From, r.To} {
			k, l, ok := graph.SplitID(end)
			if !ok || (k != graph.KindIdentity && k != graph.KindDevice) || !exists(tx, k, l) {
				c.add("%s: its end %s does not exist", r.ID, end)
			}
		}
		for _, e := range []struct {
			b    *bolt.Bucket
			what string
			k, v []byte
		}{
			{adj, "out entry under " + r.From, joinKey(r.From, "o", local), nil},
			{adj, "in entry under " + r.To, joinKey(r.To, "i", local), nil},
			{adj, "tuple entry", relTupleKey(r), []byte(local)},
			{tb, "type entry under " + r.Type, joinKey(r.Type, local), nil},
		} {
			got := e.b.Get(e.k)
			switch {
			case got == nil:
				c.add("%s: its %s is missing", r.ID, e.what)
			case e.v != nil && !bytes.Equal(got, e.v):
				c.add("%s: its %s names rel:%s", r.ID, e.what, got)
			}
		}
	}
	if c.full() {
		return c.problems, nil
	}
	// Index entries → records; the per-node counters.
	counted := map[string]bool{}
	record := func(local string) *graph.Relation {
		r, err := getRelation(tx, local)
		if err != nil || r == nil {
			return nil
		}
		return r
	}
	ac := adj.Cursor()
	for k, v := ac.First(); k != nil && !c.full(); k, v = ac.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		node, rest, ok := bytes.Cut(k, []byte{0})
		if !ok || len(rest) == 0 {
			c.add("reladj: malformed key %q", k)
			continue
		}
		switch {
		case string(rest) == "n":
			counted[string(node)] = true
			if got, want := int(m.ReadU64(v)), nodeCount[string(node)]; got != want {
				c.add("%s: relation counter says %d, its relations are %d", node, got, want)
			}
		case bytes.HasPrefix(rest, []byte("o\x00")), bytes.HasPrefix(rest, []byte("i\x00")):
			local := string(rest[2:])
			r := record(local)
			out := rest[0] == 'o'
			switch {
			case r == nil:
				c.add("reladj: %s lists rel:%s, which does not exist", node, local)
			case out && r.From != string(node):
				c.add("reladj: %s lists rel:%s as leaving it; it leaves %s", node, local, r.From)
			case !out && r.To != string(node):
				c.add("reladj: %s lists rel:%s as entering it; it enters %s", node, local, r.To)
			}
		case bytes.HasPrefix(rest, []byte("t\x00")):
			r := record(string(v))
			switch {
			case r == nil:
				c.add("reladj: a tuple of %s names rel:%s, which does not exist", node, v)
			case !bytes.Equal(relTupleKey(r), k):
				c.add("reladj: a tuple of %s names rel:%s, whose tuple is another", node, v)
			}
		default:
			c.add("reladj: malformed key %q", k)
		}
	}
	for node, want := range nodeCount {
		if c.full() {
			break
		}
		if !counted[node] {
			c.add("%s: relation counter missing, its relations are %d", node, want)
		}
		if want > graph.MaxRelationsPerNode {
			c.add("%s holds %d relations, more than a node may (%d)", node, want, graph.MaxRelationsPerNode)
		}
	}
	// The type index and counters.
	tc := tb.Cursor()
	for k, _ := tc.First(); k != nil && !c.full(); k, _ = tc.Next() {
		typ, local, ok := bytes.Cut(k, []byte{0})
		if !ok {
			c.add("reltypes: malformed key %q", k)
			continue
		}
		if r := record(string(local)); r == nil {
			c.add("reltypes: %s lists rel:%s, which does not exist", typ, local)
		} else if r.Type != string(typ) {
			c.add("reltypes: %s lists rel:%s, whose type is %s", typ, local, r.Type)
		}
	}
	cc := cb.Cursor()
	seen := map[string]bool{}
	for k, v := cc.First(); k != nil && !c.full(); k, v = cc.Next() {
		seen[string(k)] = true
		if got, want := int(m.ReadU64(v)), typeCount[string(k)]; got != want {
			c.add("relation type %s: counter says %d, its relations are %d", k, got, want)
		}
	}
	for t, want := range typeCount {
		if !seen[t] && !c.full() {
			c.add("relation type %s: counter missing, its relations are %d", t, want)
		}
	}
	if got := int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountRelations))); got != total && !c.full() {
		c.add("relation total says %d, the records are %d", got, total)
	}
	return c.problems, nil
}

// relationProblems is CheckRelations' answer as one error (nil when whole).
func relationProblems(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("relations: %s", strings.Join(problems, "; "))
}
