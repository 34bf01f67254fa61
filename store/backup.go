package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the file to w from one read transaction, while
// writers keep going. A replica's copy is an ordinary database (backupReplica).
func (db *DB) Backup(ctx context.Context, w io.Writer) (int64, error) {
	if db.replicaOf != "" {
		return db.backupReplica(ctx, w)
	}
	var n int64
	err := db.view(ctx, func(tx *bolt.Tx) (err error) {
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, internal("backup", err)
	}
	return n, nil
}

// Compact copies the database at src into a new file dst, leaving out free pages and
// filling pages fully. src must not be held by another process; dst must not exist.
func Compact(src, dst string) error {
	if hdr, err := checkHeader(src); err != nil {
		return err
	} else if hdr == nil {
		return graph.Errorf(graph.ENOTFOUND, "database %s does not exist", src)
	}
	sdb, err := openBolt(src, Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer sdb.Close()
	if _, err := m.StatusOf(sdb, src); err != nil {
		return err
	}
	return compactInto(src, sdb, dst)
}

// CompactTo is Compact from the open database: it keeps db's lock on the file while it
// copies, so nobody writes behind its back, and the caller can rename dst over the file
// before Close lets anyone else in (Open notices a file renamed over the one it waited
// for, and opens the new one). No write may run meanwhile.
func (db *DB) CompactTo(dst string) error {
	return compactInto(db.path, db.bolt, dst)
}

// compactInto writes the compacted copy of sdb (the file at src) into the new file dst.
func compactInto(src string, sdb *bolt.DB, dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return graph.FieldErrorf(graph.EINVALID, "dst", "%s already exists; compact into a new path", dst)
	}
	ddb, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return graph.Errorf(graph.EINVALID, "create %s: %v", dst, err)
	}
	// Compact reads src through its memory map: guarded, a damaged src is an error.
	if err := guard(src, func() error { return bolt.Compact(ddb, sdb, 64<<20) }); err != nil {
		ddb.Close()
		os.Remove(dst)
		return fmt.Errorf("compact %s: %w", src, err)
	}
	if err := ddb.Sync(); err != nil {
		ddb.Close()
		return err
	}
	var used int64
	ddb.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	if err := ddb.Close(); err != nil {
		return err
	}
	// bbolt grows files in 16 MiB steps; the pages past the high-water mark are unused, so
	// the compacted copy is cut to what it holds (bbolt grows it again when it needs to).
	if fi, err := os.Stat(dst); err == nil && used > 0 && fi.Size() > used {
		if err := os.Truncate(dst, used); err != nil {
			return fmt.Errorf("trim %s: %w", dst, err)
		}
	}
	return nil
}
