package store

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
)

// syncBuffer is a bytes.Buffer safe for the commit loop's goroutine to log into.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDB_GuardLogsStack: the guard cannot tell a bug in devgraph that makes bbolt panic
// (here a missing bucket used as if it were there) from a damaged file, so it gives the
// damaged-file error; it logs the panicking goroutine's stack beside it, so such a bug
// can be found instead of hiding behind "restore a backup".
func TestDB_GuardLogsStack(t *testing.T) {
	ctx := graph.WithActor(context.Background(), "cli:test")
	missing := []byte("no such bucket")
	for name, call := range map[string]func(db *DB) error{
		"Read": func(db *DB) error {
			return db.view(ctx, func(tx *bolt.Tx) error { tx.Bucket(missing).Get([]byte("k")); return nil })
		},
		"Write": func(db *DB) error {
			_, err := db.update(ctx, func(w *wtx) error { return w.tx.Bucket(missing).Put([]byte("k"), []byte("v")) })
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			var log syncBuffer
			db, err := Open(filepath.Join(t.TempDir(), "g.db"), Options{NoBackup: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := call(db); graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), "is damaged") {
				t.Fatalf("err=%v, want the damaged-file error", err)
			}
			if got := log.String(); !strings.Contains(got, "guard_internal_test.go") {
				t.Fatalf("the log has no stack naming the caller:\n%s", got)
			}
		})
	}
}
