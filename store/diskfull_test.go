package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// mountTmpfs mounts a tmpfs of the given size (mount(8)'s size=, e.g. "4m") on a temp
// dir and unmounts it when the test ends. It needs root (CAP_SYS_ADMIN): without it the
// test fails under CI=true and is skipped otherwise.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a %s tmpfs on %s (the test needs root): %v", size, dir, err)
		}
		t.Skipf("mount a %s tmpfs on %s (the test needs root): %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// noteBody is n bytes of text that does not compress (bbolt does not compress, but it
// keeps the test honest should that change).
func noteBody(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz "
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// filler writes 8 KiB notes (a new identity every 100) until a write fails, and
// remembers every note a write acknowledged.
type filler struct {
	t     *testing.T
	db    *store.DB
	rnd   *rand.Rand
	n     int
	acked map[string]string // note id → body
}

func (f *filler) write(ctx context.Context) error {
	if f.n%100 == 0 {
		if _, err := f.db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Fill %d", f.n/100)}); err != nil && graph.ErrorCode(err) != graph.ECONFLICT {
			return err
		}
	}
	body := noteBody(f.rnd, 8<<10)
	n, err := f.db.AddNote(ctx, graph.NoteCreate{Target: fmt.Sprintf("identity:fill-%d", f.n/100), Body: body})
	if err != nil {
		return err
	}
	f.acked[n.ID] = body
	f.n++
	return nil
}

// fill writes until a write fails and returns that error.
func (f *filler) fill(ctx context.Context, max int) error {
	for i := 0; i < max; i++ {
		if err := f.write(ctx); err != nil {
			return err
		}
	}
	f.t.Fatalf("%d writes of 8 KiB fit; the disk never filled", max)
	return nil
}

// check reads back every acknowledged note and verifies the changelog.
func (f *filler) check(ctx context.Context, db *store.DB, when string) {
	f.t.Helper()
	for id, body := range f.acked {
		n, err := db.FindNoteByID(ctx, id)
		if err != nil {
			f.t.Fatalf("%s: acknowledged %s: %v", when, id, err)
		}
		if n.Body != body {
			f.t.Fatalf("%s: acknowledged %s has another body", when, id)
		}
	}
	rep, err := db.VerifyChangelog(ctx)
	if err != nil || !rep.OK {
		f.t.Fatalf("%s: changelog verify: %+v %v", when, rep, err)
	}
}

func wantDiskFull(t *testing.T, err error, cause string) {
	t.Helper()
	msg := graph.ErrorMessage(err)
	if graph.ErrorCode(err) != graph.EUNAVAILABLE || !strings.Contains(msg, cause) || strings.Contains(msg, "\n") {
		t.Fatalf("error %v (code %s), want one line with %q", err, graph.ErrorCode(err), cause)
	}
	if !strings.Contains(msg, "not saved") || !strings.Contains(msg, "intact") {
		t.Errorf("the message %q does not say the change was not saved and the rest is intact", msg)
	}
}

// TestDB_DiskFull: on a full file system (a 4 MiB tmpfs) a write fails with "the disk
// is full", every write acknowledged before is there, reads and the changelog work while
// full (also after a restart), and writes resume once space is freed.
func TestDB_DiskFull(t *testing.T) {
	dir := mountTmpfs(t, "4m")
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "full.db")
	ctx := graph.WithActor(context.Background(), "cli:test")
	db, err := store.Open(path, store.Options{NoBackup: true, Timeout: time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	f := &filler{t: t, db: db, rnd: rand.New(rand.NewPCG(1, 2)), acked: map[string]string{}}

	err = f.fill(ctx, 2000)
	wantDiskFull(t, err, "the disk is full")
	t.Logf("full after %d notes: %v", len(f.acked), err)
	// Still full: writes keep failing the same way, nothing else breaks.
	for i := 0; i < 3; i++ {
		if err := f.write(ctx); err != nil {
			wantDiskFull(t, err, "the disk is full")
		}
	}
	f.check(ctx, db, "while full")
	// Take the last free blocks too, so that nothing at all fits below.
	if top, err := os.Create(filepath.Join(dir, "topup")); err == nil {
		for err == nil {
			_, err = top.Write(make([]byte, 4096))
		}
		top.Close()
	}
	// A new database cannot be made while full, and the error says why (not "damaged").
	if nd, err := store.Open(filepath.Join(dir, "new.db"), store.Options{NoBackup: true, Logger: quiet}); err == nil {
		nd.Close()
		t.Errorf("a new database was created on a full disk")
	} else if msg := graph.ErrorMessage(err); !strings.Contains(msg, "the disk is full") || strings.Contains(msg, "damaged") {
		t.Errorf("creating a database on a full disk: %q", msg)
	}

	// A restart while the disk is full: the file opens, reads work, writes are refused.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(path, store.Options{NoBackup: true, Timeout: time.Second, Logger: quiet}); err != nil {
		t.Fatalf("reopen while full: %v", err)
	}
	f.db = db
	f.check(ctx, db, "reopened while full")
	if err := f.fill(ctx, 50); err != nil {
		wantDiskFull(t, err, "the disk is full")
	}

	// Space returns: writes resume.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	before := len(f.acked)
	for i := 0; i < 20; i++ {
		if err := f.write(ctx); err != nil {
			t.Fatalf("write %d after freeing space: %v", i, err)
		}
	}
	f.check(ctx, db, "after freeing space")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(path); err != nil {
		t.Fatalf("check the file: %v", err)
	}
	if db, err = store.Open(path, store.Options{NoBackup: true, Timeout: time.Second, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	f.check(ctx, db, "reopened")
	t.Logf("%d notes acknowledged before the disk filled, %d after space returned; all present", before, len(f.acked)-before)
}
