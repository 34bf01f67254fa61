package store_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// viewFile runs fn in a read transaction of the closed store file at path, opened
// with bbolt (its free pages loaded, for tx.Page).
func viewFile(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.View(fn); err != nil {
		t.Fatal(err)
	}
}

// rootPage reports the type of the file's root bucket page, "leaf" or "branch".
func rootPage(t *testing.T, path string) string {
	t.Helper()
	var typ string
	viewFile(t, path, func(tx *bolt.Tx) error {
		info, err := tx.Page(int(tx.Cursor().Bucket().Root()))
		if err != nil {
			return err
		}
		typ = info.Type
		return nil
	})
	return typ
}

// TestMergeRoot: a root bucket that split when small buckets grew inline, and stayed in
// two leaves and a branch once they shrank, is merged back into one page by the next
// writes (one leaf at least each), whichever of its leaves holds more; nothing else
// changes.
func TestMergeRoot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keep [][]byte // buckets left at about 950 bytes after the others shrink back
	}{
		{"every inline bucket shrunk", nil},
		{"the last leaf over half a page", [][]byte{migrations.BucketRobots, migrations.BucketRelTypes}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "devgraph.db")
			db := openFile(t, path, store.Options{Host: storetest.Host})
			ctx := ctxActor("cli:alice")
			// Enough identities that their buckets (and the changelog's) have pages of
			// their own: the root holds their headers, and the notes below grow it little.
			for i := range 30 {
				if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Korg Minilogue %d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if got := rootPage(t, path); got != "leaf" {
				t.Fatalf("a new file's root is a %s, want a leaf", got)
			}
			splitRoot(t, path, tc.keep)
			if got := rootPage(t, path); got != "branch" {
				t.Fatalf("after the inline buckets grew and shrank the root is a %s, want a branch (split)", got)
			}

			// The root split into three leaves; each write merges one at least.
			db = openFile(t, path, store.Options{Host: storetest.Host})
			for _, body := range []string{"key C4 sticks", "the filter sweeps too far"} {
				if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "korg-minilogue-0", Body: body}); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if got := rootPage(t, path); got != "leaf" {
				t.Fatalf("after two writes the root is a %s, want one leaf again", got)
			}
			db = openFile(t, path, store.Options{Host: storetest.Host, ReadOnly: true})
			defer db.Close()
			if _, total, _, err := db.FindNotes(ctx, graph.NoteFilter{Target: "korg-minilogue-0"}); err != nil || total != 2 {
				t.Errorf("notes after the merge: %d (%v), want 2", total, err)
			}
			if r, err := db.VerifyChangelog(ctx); err != nil || !r.OK {
				t.Errorf("changelog after the merge: %+v (%v)", r, err)
			}
		})
	}
}

// splitRoot splits the root bucket of the closed file at path with bbolt: five empty
// buckets, inline in the root, grow to some 950 bytes each (the root overflows a page and
// splits), then all but keep empty again (it would fit in one).
func splitRoot(t *testing.T, path string, keep [][]byte) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	fill := [][]byte{migrations.BucketRefs, migrations.BucketPresent, migrations.BucketRobots, migrations.BucketBindings, migrations.BucketRelTypes}
	each := func(buckets [][]byte, fn func(b *bolt.Bucket, k []byte) error) {
		t.Helper()
		if err := bdb.Update(func(tx *bolt.Tx) error {
			for _, name := range buckets {
				for i := 0; i < 22; i++ {
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
	each(fill, func(b *bolt.Bucket, k []byte) error { return b.Put(k, make([]byte, 20)) })
	shrink := slices.DeleteFunc(slices.Clone(fill), func(name []byte) bool {
		return slices.ContainsFunc(keep, func(k []byte) bool { return bytes.Equal(k, name) })
	})
	each(shrink, func(b *bolt.Bucket, k []byte) error { return b.Delete(k) })
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
	viewFile(t, path, func(tx *bolt.Tx) error {
		for _, name := range [][]byte{migrations.BucketNotes, migrations.BucketEvents} {
			s := tx.Bucket(name).Stats()
			if fill := float64(s.LeafInuse) / float64(s.LeafAlloc); s.LeafPageN < 4 || fill < 0.7 {
				t.Errorf("bucket %s: %d leaf pages %.0f%% full, want several, at least 70%% full", name, s.LeafPageN, fill*100)
			}
		}
		return nil
	})
}
