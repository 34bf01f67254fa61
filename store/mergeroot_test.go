package store_test

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// rootPage reports the type of the file's root bucket page, "leaf" or "branch" (read
// with bbolt, the store closed).
func rootPage(t *testing.T, path string) string {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var typ string
	if err := bdb.View(func(tx *bolt.Tx) error {
		info, err := tx.Page(int(tx.Cursor().Bucket().Root()))
		if err != nil {
			return err
		}
		typ = info.Type
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return typ
}

// TestMergeRoot: a root bucket that split when small buckets grew inline, and stayed in
// two leaves and a branch once they shrank, is merged back into one page by the next
// write; nothing else changes.
func TestMergeRoot(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	db := openFile(t, path, store.Options{Host: storetest.Host})
	ctx := ctxActor("cli:alice")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rootPage(t, path); got != "leaf" {
		t.Fatalf("a new file's root is a %s, want a leaf", got)
	}

	// Split it: fill five empty buckets, inline in the root, to some 900 bytes each (the
	// root overflows a page), then empty them again (it would fit in one).
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	fill := [][]byte{migrations.BucketRefs, migrations.BucketPresent, migrations.BucketRobots, migrations.BucketBindings, migrations.BucketRelTypes}
	each := func(fn func(b *bolt.Bucket, k []byte) error) {
		t.Helper()
		if err := bdb.Update(func(tx *bolt.Tx) error {
			for _, name := range fill {
				for i := 0; i < 20; i++ {
					if err := fn(tx.Bucket(name), fmt.Appendf(nil, "key-%02d", i)); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	each(func(b *bolt.Bucket, k []byte) error { return b.Put(k, make([]byte, 20)) })
	each(func(b *bolt.Bucket, k []byte) error { return b.Delete(k) })
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rootPage(t, path); got != "branch" {
		t.Fatalf("after the inline buckets grew and shrank the root is a %s, want a branch (split)", got)
	}

	db = openFile(t, path, store.Options{Host: storetest.Host})
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "korg-minilogue", Body: "key C4 sticks"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rootPage(t, path); got != "leaf" {
		t.Fatalf("after a write the root is a %s, want one leaf again", got)
	}
	db = openFile(t, path, store.Options{Host: storetest.Host, ReadOnly: true})
	defer db.Close()
	if _, total, _, err := db.FindNotes(ctx, graph.NoteFilter{Target: "korg-minilogue"}); err != nil || total != 1 {
		t.Errorf("notes after the merge: %d (%v), want 1", total, err)
	}
	if r, err := db.VerifyChangelog(ctx); err != nil || !r.OK {
		t.Errorf("changelog after the merge: %+v (%v)", r, err)
	}
}

// TestAppendedBucketsFillPages: notes (uuidv7 ids) and changelog events (sequence
// numbers) are appended in key order, and their pages are filled before the next starts
// (bbolt's default leaves each half full: twice the pages, and a level more to rewrite).
func TestAppendedBucketsFillPages(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	db := openFile(t, path, store.Options{Host: storetest.Host})
	ctx := ctxActor("cli:alice")
	for i := 0; i < 10; i++ {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Synth %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for j := 0; j < 600; j++ {
		if _, err := db.AddNote(ctx, graph.NoteCreate{Target: fmt.Sprintf("synth-%d", j%10), Body: fmt.Sprintf("note %d: the filter sweeps too far", j)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	bdb.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{migrations.BucketNotes, migrations.BucketEvents} {
			s := tx.Bucket(name).Stats()
			if fill := float64(s.LeafInuse) / float64(s.LeafAlloc); s.LeafPageN < 4 || fill < 0.7 {
				t.Errorf("bucket %s: %d leaf pages %.0f%% full, want several, at least 70%% full", name, s.LeafPageN, fill*100)
			}
		}
		return nil
	})
}
