package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// A write the shared store committed whose local commit on the replica then failed (a
// full disk on the replica) exists in the fleet: it is reported made once the feed
// brings it to the replica, and when the feed does not within the bounded wait, the
// error says it was made, at which revision and why this replica lacks it, and the
// replica refuses the feed's next commit until it is refilled.
func TestReplica_CommittedButNotStored(t *testing.T) {
	c := &recordingCommitter{}
	db := storetest.MustOpen(t, store.Options{ReplicaOf: "etcd:test/devgraph", Committer: c, Host: "studio-a"})
	ctx := graph.WithActor(context.Background(), "cli:alice")
	var mu sync.Mutex
	fail := false
	diskFull := errors.New("write /var/cache/devgraph/replica.db: no space left on device")
	store.SetTestHook(db, func(point string) error {
		mu.Lock()
		defer mu.Unlock()
		if point == "commit" && fail {
			fail = false
			return diskFull
		}
		return nil
	})
	failNext := func() { mu.Lock(); fail = true; mu.Unlock() }
	// feed applies the shared store's newest commit to the replica, as the cluster's
	// feed does.
	feed := func() error {
		c.mu.Lock()
		rev, changes := c.rev, c.sets[len(c.sets)-1]
		c.mu.Unlock()
		return db.ApplyReplicated(rev, changes)
	}

	// The feed brings it: the write is answered as made.
	failNext()
	fed := make(chan error, 1)
	go func() {
		for c.commits() == 0 {
			time.Sleep(time.Millisecond)
		}
		fed <- feed()
	}()
	id, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk Mixer"})
	if err != nil {
		t.Fatalf("a write the cluster made and the feed brought: %v", err)
	}
	if err := <-fed; err != nil {
		t.Fatalf("the feed: %v", err)
	}
	if got, err := db.FindIdentityByID(ctx, id.ID, graph.IdentityParts{}); err != nil || got.Name != "Desk Mixer" {
		t.Fatalf("the identity on the replica: %+v %v", got, err)
	}
	if db.ReplicaRev() != 1 {
		t.Errorf("the replica holds revision %d; want 1", db.ReplicaRev())
	}

	// The feed does not bring it: the error says the change was made.
	defer store.SetReplicaCatchUp(50 * time.Millisecond)()
	failNext()
	_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Wall Patchbay"})
	msg := graph.ErrorMessage(err)
	for _, want := range []string{"the change was made", "committed to the cluster at revision 2", "could not store it (" + diskFull.Error() + ")", "do not make it again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error of a write the cluster made and the replica lacks: %q; want %q in it", msg, want)
		}
	}
	if c.commits() != 2 {
		t.Fatalf("the shared store has %d commits; want 2", c.commits())
	}
	// Marked for a refill: the feed's commit is refused as a gap (the feed then refills)…
	if err := feed(); !errors.Is(err, store.ErrReplicaGap) {
		t.Fatalf("the feed's commit on a replica marked for a refill: %v; want ErrReplicaGap", err)
	}
	// …and a refill holding the commit clears the mark.
	snap := map[[2]string][]byte{} // the shared store at revision 2: the replica's records and the lost commit
	if err := db.Records(ctx, func(b, k, v []byte) error {
		snap[[2]string{string(b), string(k)}] = append([]byte(nil), v...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range c.sets[1] {
		if ch.Deleted {
			delete(snap, [2]string{string(ch.Bucket), string(ch.Key)})
		} else {
			snap[[2]string{string(ch.Bucket), string(ch.Key)}] = ch.Value
		}
	}
	if err := db.ResetReplica(2, func(put func(b, k, v []byte) error) error {
		for bk, v := range snap {
			if err := put([]byte(bk[0]), []byte(bk[1]), v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindIdentityByID(ctx, "wall-patchbay", graph.IdentityParts{}); err != nil {
		t.Fatalf("the change after the refill: %v", err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Stage Box"}); err != nil {
		t.Fatalf("a write after the refill: %v", err)
	}
}
