package migrations

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
)

// A fleet's graph lives in etcd as the records of one file's buckets, so a graph written
// by an older devgraph is migrated the way a file is: its records are put into a scratch
// file, the steps run there (Prepare), and the records of the result are read back. A
// front end does it to read an older cluster mid-upgrade (never shipping the result);
// `devgraph --store … migrate` does it to ship the difference.

// MigrateRecords carries a graph's records to CurrentVersion in a scratch file at path
// (which must not exist; it is removed afterwards): fill puts every record, the meta
// bucket's version among them; the steps from that version run as for a file (o.Host
// names the host an old graph's devices get; no backup is made); then each calls fn
// with every record of the migrated graph, in bucket and key order. It returns the
// version the records were at. A graph newer than this build is refused.
func MigrateRecords(path string, o Options, fill func(put func(bucket, key, value []byte) error) error, each func(bucket, key, value []byte) error) (from int, err error) {
	if _, err := os.Stat(path); err == nil {
		return 0, graph.Errorf(graph.EINVALID, "migrating records: the scratch file %s exists already", path)
	}
	defer os.Remove(path)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return 0, fmt.Errorf("migrating records: scratch file %s: %w", path, err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		return fill(func(bucket, key, value []byte) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			return b.Put(bytes.Clone(key), bytes.Clone(value))
		})
	})
	if err != nil {
		return 0, err
	}
	from, empty, err := readVersion(db, path)
	if err != nil {
		return 0, err
	}
	if empty {
		return 0, graph.Errorf(graph.EINVALID, "migrating records: the graph holds no records")
	}
	o.NoBackup, o.ReadOnly, o.Fleet = true, false, true
	if _, _, err := Prepare(db, path, o); err != nil {
		return from, err
	}
	return from, db.View(func(tx *bolt.Tx) error { return ForEachRecord(tx, each) })
}

// EachRecord calls fn with every record of the file at path, read-only and as it is
// (whatever its version), in bucket and key order: how a test seeds a cluster with an
// old file's graph.
func EachRecord(path string, fn func(bucket, key, value []byte) error) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return graph.Errorf(graph.EINVALID, "cannot read %s as a devgraph database: %v", path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error { return ForEachRecord(tx, fn) })
}

// ForEachRecord calls fn with every record of tx's graph buckets (AllBuckets), in bucket
// and key order, and stops at fn's first error.
func ForEachRecord(tx *bolt.Tx, fn func(bucket, key, value []byte) error) error {
	for _, name := range AllBuckets {
		b := tx.Bucket(name)
		if b == nil {
			continue
		}
		if err := b.ForEach(func(k, v []byte) error { return fn(name, k, v) }); err != nil {
			return err
		}
	}
	return nil
}
