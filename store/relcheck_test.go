package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	bolt "go.etcd.io/bbolt"
)

// TestCheckRelations_FindsBrokenIndexes writes relations to a real file, then breaks one
// index entry or counter at a time in a copy: CheckFile (what every test runs on its file
// at the end) and DB.CheckRelations must name each break, and pass the intact file.
func TestCheckRelations_FindsBrokenIndexes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.db")
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxActor("cli:alice")
	for _, s := range []string{"keystep", "jdxi", "scout"} {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: s, Slug: s}); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	if err != nil {
		t.Fatal(err)
	}
	rel := ch.Relation
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "jdxi", Type: "mounted_on", To: "scout"}); err != nil {
		t.Fatal(err)
	}
	if p, err := db.CheckRelations(ctx); err != nil || len(p) != 0 {
		t.Fatalf("intact file: problems %q, %v", p, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(path); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	local := strings.TrimPrefix(rel.ID, "rel:")
	join := func(parts ...string) []byte { return []byte(strings.Join(parts, "\x00")) }
	for _, c := range []struct {
		name   string
		bucket []byte
		key    []byte
		value  []byte // nil: delete the key
		want   string
	}{
		{"out entry gone", m.BucketRelAdj, join(rel.From, "o", local), nil, "out entry under identity:keystep is missing"},
		{"in entry gone", m.BucketRelAdj, join(rel.To, "i", local), nil, "in entry under identity:jdxi is missing"},
		{"tuple gone", m.BucketRelAdj, join(rel.From, "t", "midi out", "cable", rel.To, "midi in"), nil, "tuple entry is missing"},
		{"type entry gone", m.BucketRelTypes, join("cable", local), nil, "type entry under cable is missing"},
		{"stray out entry", m.BucketRelAdj, join("identity:scout", "o", local), []byte{}, "identity:scout lists " + rel.ID + " as leaving it"},
		{"entry of no relation", m.BucketRelAdj, join("identity:scout", "i", "0190aaaa-0000-7000-8000-000000000000"), []byte{}, "which does not exist"},
		{"node counter off", m.BucketRelAdj, join("identity:jdxi", "n"), m.U64(1), "identity:jdxi: relation counter says 1, its relations are 2"},
		{"node counter gone", m.BucketRelAdj, join("identity:keystep", "n"), nil, "identity:keystep: relation counter missing"},
		{"type counter off", m.BucketRelCounts, []byte("cable"), m.U64(3), "relation type cable: counter says 3"},
		{"type counter gone", m.BucketRelCounts, []byte("mounted_on"), nil, "relation type mounted_on: counter missing"},
		{"total off", m.BucketMeta, m.CountRelations, m.U64(5), "relation total says 5, the records are 2"},
		{"record gone", m.BucketRelations, []byte(local), nil, "lists " + rel.ID + ", which does not exist"},
		{"end gone", m.BucketIdentities, []byte("keystep"), nil, rel.ID + ": its end identity:keystep does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.db")
			copyFile(t, path, bad)
			bdb, err := bolt.Open(bad, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = bdb.Update(func(tx *bolt.Tx) error {
				if c.value == nil {
					return tx.Bucket(c.bucket).Delete(c.key)
				}
				return tx.Bucket(c.bucket).Put(c.key, c.value)
			})
			bdb.Close()
			if err != nil {
				t.Fatal(err)
			}
			err = store.CheckFile(bad)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CheckFile = %v, want it to say %q", err, c.want)
			}
			db, err := store.Open(bad, store.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p, err := db.CheckRelations(context.Background())
			if err != nil || len(p) == 0 {
				t.Fatalf("CheckRelations = %q, %v; want a problem", p, err)
			}
		})
	}
}
