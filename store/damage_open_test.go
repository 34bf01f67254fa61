package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestDamage_CutUnderAnOpenWriter: the file is cut while a read-write DB has it open (a
// user truncating the database under a running server). Writes then fault in bbolt's
// commit or its rollback. Each write must give the damaged-file error itself — not a
// disk error claiming "reads still work" while every read is refused —, later calls the
// same error, and Close must return (a fault inside bbolt's rollback left its writer lock
// held, so Close, and with it `serve` on SIGTERM, hung for ever).
func TestDamage_CutUnderAnOpenWriter(t *testing.T) {
	t.Parallel()
	t.Run("large", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "d.db")
		storetest.BuildIdentities(t, path, 2000, 4)
		cutUnderWriter(t, path)
	})
	t.Run("small", func(t *testing.T) {
		// As a user found it: a few identities (a 64 KiB file) cut to 16 KiB under a
		// server, then a tag; the fault came in the commit.
		t.Parallel()
		path := filepath.Join(t.TempDir(), "d.db")
		db := openFile(t, path, store.Options{})
		for i := 0; i < 3; i++ {
			if _, err := db.CreateIdentity(ctxActor("cli:damage"), graph.IdentityCreate{Name: fmt.Sprintf("Synth %d", i), Tags: []string{"role:synth"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		cutUnderWriter(t, path)
	})
}

func cutUnderWriter(t *testing.T, path string) {
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	defer func() {
		go func() { closed <- db.Close() }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Errorf("Close of a DB whose file was cut under it did not return (bbolt's writer lock left held)")
		}
	}()
	if err := os.Truncate(path, 16384); err != nil {
		t.Fatal(err)
	}
	ctx := ctxActor("cli:damage")
	var first error
	for i := 0; i < 50 && first == nil; i++ {
		if i%2 == 0 {
			_, first = db.UpdateTags(ctx, "identity:synth-0", []string{fmt.Sprintf("role:cut-%d", i)}, nil)
		} else {
			_, first = db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("After the cut %d", i)})
		}
	}
	if first == nil {
		t.Fatal("50 writes to a file cut to 16 KiB all succeeded")
	}
	if msg := first.Error(); !strings.Contains(msg, "is damaged") || !strings.HasSuffix(msg, "restore a backup; devgraph backup makes one") || strings.Contains(msg, "reads still work") {
		t.Errorf("write on a cut file: %v; want the damaged-file error alone", first)
	}
	_, _, _, err = db.FindIdentities(context.Background(), graph.IdentityFilter{First: 5})
	if err == nil || err.Error() != first.Error() {
		t.Errorf("read after: %v; want the same error %v", err, first)
	}
}

// TestOpen_FIFO: a named pipe at the database path blocked Open for ever in the header
// check's open (which waits for a writer), and the CLI ignored SIGTERM meanwhile; it is
// refused at once as not a regular file.
func TestOpen_FIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pipe.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := store.Open(path, store.Options{NoBackup: true})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("open of a named pipe: %v", err)
		}
	case <-time.After(30 * time.Second):
		f, _ := os.OpenFile(path, os.O_WRONLY, 0) // let the blocked open go
		if f != nil {
			f.Close()
		}
		t.Fatal("open of a named pipe blocked")
	}
}

// TestOpen_PIDFileIsNotFollowed: the pid file beside the database was written with
// os.WriteFile, which follows a symlink (another user's link in a shared directory made
// the writer truncate the file it points to) and blocks on a named pipe. It is replaced
// instead, and read only when it is a regular file.
func TestOpen_PIDFileIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path+".pid"); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the file the pid file linked to now holds %q", b)
	}
	// A named pipe as the pid file: Open neither blocks reading nor writing it.
	os.Remove(path + ".pid")
	if err := syscall.Mkfifo(path+".pid", 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := store.Open(path, store.Options{NoBackup: true})
		if err == nil {
			err = db.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("open with a named pipe as the pid file: %v", err)
		}
	case <-time.After(30 * time.Second):
		for i := 0; i < 2; i++ { // let the blocked open go
			if f, _ := os.OpenFile(path+".pid", os.O_RDWR, 0); f != nil {
				f.Close()
			}
		}
		t.Fatal("open with a named pipe as the pid file blocked")
	}
}
