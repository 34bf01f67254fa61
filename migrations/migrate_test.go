package migrations

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
)

func TestSteps_Ordered(t *testing.T) {
	t.Parallel()
	for i, s := range Steps {
		if s.From != i+1 || s.Name == "" || s.Apply == nil {
			t.Fatalf("step %d: %+v", i, s)
		}
	}
	if got, want := len(Steps)+1, CurrentVersion; got != want {
		t.Fatalf("steps reach version %d, current is %d", got, want)
	}
}

func openRaw(t *testing.T) (*bolt.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	t.Run("new file gets every bucket at the current version", func(t *testing.T) {
		db, path := openRaw(t)
		v, backup, err := Prepare(db, path, Options{})
		if err != nil || v != CurrentVersion || backup != "" {
			t.Fatalf("v=%d backup=%q err=%v", v, backup, err)
		}
		db.View(func(tx *bolt.Tx) error {
			for _, b := range AllBuckets {
				if tx.Bucket(b) == nil {
					t.Fatalf("bucket %s missing", b)
				}
			}
			return nil
		})
		st, err := StatusOf(db, path)
		if err != nil || st.Version != CurrentVersion || len(st.Pending) != 0 {
			t.Fatalf("status %+v %v", st, err)
		}
	})
	t.Run("foreign file refused", func(t *testing.T) {
		db, path := openRaw(t)
		db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
		_, _, err := Prepare(db, path, Options{})
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "not a devgraph database") {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("v1 migrates with a backup, failing step leaves the file whole", func(t *testing.T) {
		db, path := openRaw(t)
		if _, _, err := Prepare(db, path, Options{Version: 1}); err != nil {
			t.Fatal(err)
		}
		e := &graph.Event{Seq: 1, ID: graph.NewUUIDv7(), Time: time.Now().UTC(), Actor: "a", Action: "identity.create", Target: "identity:x",
			PrevHash: strings.Repeat("00", 32), Hash: strings.Repeat("11", 32)}
		v1, _ := EncodeEventV1(e)
		db.Update(func(tx *bolt.Tx) error {
			tx.Bucket(BucketEvents).Put(U64(1), v1)
			return tx.Bucket(BucketEvents).Put(U64(2), []byte("{broken"))
		})
		_, _, err := Prepare(db, path, Options{Host: "studio-a"})
		if err == nil || !strings.Contains(err.Error(), "event 2") {
			t.Fatalf("err=%v", err)
		}
		db.View(func(tx *bolt.Tx) error {
			if string(tx.Bucket(BucketMeta).Get(KeyVersion)) != "1" || string(tx.Bucket(BucketEvents).Get(U64(1))) != string(v1) {
				t.Fatal("a failed step changed the file")
			}
			return nil
		})
		db.Update(func(tx *bolt.Tx) error { return tx.Bucket(BucketEvents).Delete(U64(2)) })
		now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
		v, backup, err := Prepare(db, path, Options{Now: func() time.Time { return now }, Host: "studio-a"})
		if err != nil || v != CurrentVersion || backup != path+".bak-v1-20260203T040506Z" {
			t.Fatalf("v=%d backup=%q err=%v", v, backup, err)
		}
		db.View(func(tx *bolt.Tx) error {
			got, err := DecodeEvent(1, tx.Bucket(BucketEvents).Get(U64(1)))
			if err != nil || got.ID != e.ID || got.Hash != e.Hash {
				t.Fatalf("migrated event %+v %v", got, err)
			}
			return nil
		})
		if st, err := Status(backup); err != nil || st.Version != 1 {
			t.Fatalf("backup status %+v %v", st, err)
		}
	})
	t.Run("read-only refuses to migrate", func(t *testing.T) {
		db, path := openRaw(t)
		Prepare(db, path, Options{Version: 1})
		_, _, err := Prepare(db, path, Options{ReadOnly: true})
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "needs migrating") {
			t.Fatalf("err=%v", err)
		}
	})
}

// A version-3 file's devices and robots get the host, the meta fixes it, and another host
// name is then refused for writing (read-only opens still read it).
func TestPrepare_Host(t *testing.T) {
	db, path := openRaw(t)
	if _, _, err := Prepare(db, path, Options{Version: 3}); err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		tx.Bucket(BucketDevices).Put([]byte("path:0582:01a9:1-2"), []byte(`{"id":"device:path:0582:01a9:1-2","key":"path:0582:01a9:1-2","ref":"usb:1-2","future":{"kept":true}}`))
		return tx.Bucket(BucketRobots).Put([]byte("robot:scout"), []byte(`{"ref":"robot:scout","serial":"S1"}`))
	})
	if _, _, err := Prepare(db, path, Options{NoBackup: true}); graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "--host-name") {
		t.Fatalf("migrating without a host: %v", err)
	}
	v, _, err := Prepare(db, path, Options{NoBackup: true, Host: "studio-a"})
	if err != nil || v != CurrentVersion {
		t.Fatalf("v=%d err=%v", v, err)
	}
	if got := HostOf(db); got != "studio-a" {
		t.Fatalf("meta host %q", got)
	}
	db.View(func(tx *bolt.Tx) error {
		for _, rec := range [][]byte{tx.Bucket(BucketDevices).Get([]byte("path:0582:01a9:1-2")), tx.Bucket(BucketRobots).Get([]byte("robot:scout"))} {
			if !strings.Contains(string(rec), `"host":"studio-a"`) {
				t.Errorf("record without its host: %s", rec)
			}
		}
		if d := tx.Bucket(BucketDevices).Get([]byte("path:0582:01a9:1-2")); !strings.Contains(string(d), `"future":{"kept":true}`) || !strings.Contains(string(d), `"ref":"usb:1-2"`) {
			t.Errorf("the migration lost a field: %s", d)
		}
		return nil
	})
	_, _, err = Prepare(db, path, Options{Host: "studio-b"})
	if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), `belongs to host "studio-a"`) || !strings.Contains(err.Error(), "--host-name studio-a") {
		t.Fatalf("another host name: %v", err)
	}
	if _, _, err := Prepare(db, path, Options{Host: "studio-b", ReadOnly: true}); err != nil {
		t.Fatalf("read-only under another host name: %v", err)
	}
	if _, _, err := Prepare(db, path, Options{Host: "studio-a"}); err != nil {
		t.Fatal(err)
	}
}
