package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// refusingCommitter is a recordingCommitter that, while refuse holds an error, says so
// to the store (store.WriteRefuser) as a read-only cluster front end does.
type refusingCommitter struct {
	recordingCommitter
	refuse atomic.Pointer[graph.Error]
}

func (c *refusingCommitter) RefuseWrite() error {
	if e := c.refuse.Load(); e != nil {
		return e
	}
	return nil
}

// While the Committer refuses writes (a front end mid-upgrade), a write gets its error
// before any transaction is built: no write transaction runs, nothing is shipped. Once it
// takes writes again, writes go through.
func TestReplica_CommitterRefusesBeforeTheTransaction(t *testing.T) {
	c := &refusingCommitter{}
	db := storetest.MustOpen(t, store.Options{ReplicaOf: "etcd:test/devgraph", Committer: c, Host: "studio-a"})
	ctx := graph.WithActor(context.Background(), "cli:alice")
	var txs atomic.Int64
	store.SetTestHook(db, func(string) error { txs.Add(1); return nil })
	refusal := graph.Errorf(graph.EUNAVAILABLE, "this front end is read-only: the fleet is mid-upgrade")
	c.refuse.Store(refusal)

	_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk Mixer"})
	if graph.ErrorCode(err) != graph.EUNAVAILABLE || graph.ErrorMessage(err) != refusal.Message {
		t.Fatalf("a write while the committer refuses: %v; want %v", err, refusal)
	}
	if n := txs.Load(); n != 0 || c.commits() != 0 {
		t.Fatalf("a refused write ran %d write transaction steps and shipped %d commits; want none", n, c.commits())
	}

	c.refuse.Store(nil)
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk Mixer"}); err != nil {
		t.Fatalf("a write once the committer takes writes again: %v", err)
	}
	if txs.Load() == 0 || c.commits() != 1 {
		t.Fatalf("the accepted write: %d transaction steps, %d commits; want some and 1", txs.Load(), c.commits())
	}
}
