package store

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestDB_CommitErr: how a failed commit's error is mapped. A full disk, a used-up quota
// and the file size limit (before the meta page landed) are clear errors and the
// database takes the next write; an I/O error, or any failure after the meta page
// landed, refuses every later write with one line saying to restart, while reads go on.
func TestDB_CommitErr(t *testing.T) {
	open := func(t *testing.T) *DB {
		db, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{NoBackup: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	ctx := graph.WithActor(context.Background(), "cli:test")
	next := func(db *DB) int { // the id the next write transaction gets
		tx, err := db.bolt.Begin(false)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		return tx.ID() + 1
	}
	pathErr := func(e syscall.Errno) error { return &fs.PathError{Op: "write", Path: "c.db", Err: e} }
	for _, c := range []struct {
		name   string
		err    error
		landed bool
		want   string
		refuse bool
	}{
		{"ENOSPC", pathErr(syscall.ENOSPC), false, "the disk is full", false},
		{"EDQUOT", pathErr(syscall.EDQUOT), false, "the disk quota is used up", false},
		{"EFBIG", fmt.Errorf("file resize error: %s", syscall.EFBIG), false, "the file size limit was reached", false},
		{"EIO", pathErr(syscall.EIO), false, "input/output error", true},
		{"ENOSPCAfterMeta", pathErr(syscall.ENOSPC), true, "restarted", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := open(t)
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Before"}); err != nil {
				t.Fatal(err)
			}
			txid := next(db)
			if c.landed {
				txid--
			}
			err := db.commitErr(txid, c.err)
			if msg := graph.ErrorMessage(err); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || graph.ErrorCode(err) != graph.EUNAVAILABLE {
				t.Fatalf("commitErr(%v) = %q (%s), want one line with %q", c.err, msg, graph.ErrorCode(err), c.want)
			}
			_, werr := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "After"})
			if c.refuse {
				if werr == nil || !strings.Contains(graph.ErrorMessage(werr), "restarted") {
					t.Errorf("a write after an unknown outcome: %v, want refused until restart", werr)
				}
			} else if werr != nil {
				t.Errorf("a write after %s: %v", c.name, werr)
			}
			if _, err := db.FindIdentityByID(ctx, "before", graph.IdentityParts{}); err != nil {
				t.Errorf("read after %s: %v", c.name, err)
			}
		})
	}
}
