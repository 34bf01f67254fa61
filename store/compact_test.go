package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// TestCompactTo_OpenerWaitingMeanwhile: compact holds the file's lock from the copy until
// the copy is renamed over it. A process opening the database meanwhile waits for that
// lock on the old file; it must then open the compacted one, not write to the old file,
// which no name reaches any more (its acknowledged writes would be lost).
func TestCompactTo_OpenerWaitingMeanwhile(t *testing.T) {
	ctx := graph.WithActor(context.Background(), "cli:test")
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Before"}); err != nil {
		t.Fatal(err)
	}

	type opened struct {
		db  *store.DB
		err error
	}
	waiter := make(chan opened, 1)
	go func() {
		w, err := store.Open(path, store.Options{NoBackup: true, Timeout: 30 * time.Second})
		waiter <- opened{w, err}
	}()
	// Wait until the opener holds the old file open (it then waits for the lock).
	for deadline := time.Now().Add(10 * time.Second); openFDs(t, path) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the second Open never opened the file")
		}
		time.Sleep(time.Millisecond)
	}

	tmp := path + ".compact.tmp"
	if err := db.CompactTo(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	w := <-waiter
	if w.err != nil {
		t.Fatal(w.err)
	}
	if _, err := w.db.CreateIdentity(ctx, graph.IdentityCreate{Name: "After"}); err != nil {
		t.Fatal(err)
	}
	if err := w.db.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for _, slug := range []string{"before", "after"} {
		if _, err := again.FindIdentityByID(ctx, slug, graph.IdentityParts{}); err != nil {
			t.Errorf("identity %s after compact: %v", slug, err)
		}
	}
}

// openFDs counts this process's open descriptors on the file at path (Linux /proc).
func openFDs(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if fi, err := os.Stat(filepath.Join("/proc/self/fd", fd.Name())); err == nil && os.SameFile(fi, want) {
			n++
		}
	}
	return n
}
