package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	bolt "go.etcd.io/bbolt"
)

// A robot record keeps its battery; one saved before the battery was kept reads as full.
func TestRobotRecords_Battery(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.SaveRobot(ctx, &graph.RobotRecord{Ref: "robot:scout", Serial: "SIM-SCOUT-0001", Name: "scout", Battery: 37.25}, "", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A record as an earlier devgraph wrote it: no battery field.
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(m.BucketRobots).Put([]byte("robot:old"), []byte(`{"ref":"robot:old","serial":"SIM-OLD-0001","name":"old","pose":{"x":1,"y":2,"heading":0},"params":{}}`))
	})
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	db, err = store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.FindRobotRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range recs {
		got[r.Ref] = r.Battery
	}
	if len(got) != 2 || got["robot:scout"] != 37.25 || got["robot:old"] != 100 {
		t.Fatalf("batteries %v; want robot:scout 37.25 (saved) and robot:old 100 (saved before the battery was kept)", got)
	}
}
