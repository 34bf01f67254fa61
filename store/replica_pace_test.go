package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// fakeShared is a shared store in memory: each commit is fenced on the one before, as
// the cluster's are, and kept so replicas can be fed it.
type fakeShared struct {
	mu        sync.Mutex
	rev       int64
	log       [][]store.Change // log[i] is the commit at revision i+1
	conflicts int
}

// fakeFrontEnd is one replica's Committer (and Pacer) on a fakeShared.
type fakeFrontEnd struct {
	s    *fakeShared
	pace func(ctx context.Context, held int64)
}

func (f *fakeFrontEnd) Commit(_ context.Context, fence int64, changes []store.Change) (int64, error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if fence != f.s.rev {
		f.s.conflicts++
		return 0, &store.ConflictError{Rev: f.s.rev}
	}
	f.s.rev++
	f.s.log = append(f.s.log, changes)
	return f.s.rev, nil
}

func (f *fakeFrontEnd) Pace(ctx context.Context, held int64) {
	if f.pace != nil {
		f.pace(ctx, held)
	}
}

// feed applies to db the commits of s it does not hold yet, as a front end's feed does.
func (s *fakeShared) feed(t *testing.T, db *store.DB) {
	t.Helper()
	s.mu.Lock()
	log := slices.Clone(s.log)
	s.mu.Unlock()
	for i := db.ReplicaRev(); i < int64(len(log)); i++ {
		if err := db.ApplyReplicated(i+1, log[i]); err != nil {
			t.Fatalf("feed revision %d: %v", i+1, err)
		}
	}
}

// A replica's Committer that is also a Pacer is asked, before each batch, with the
// revision the replica holds; a commit of another front end that reaches the replica while
// the batch waits there is built on (the batch is made on top of it and fenced on it), so
// the write does not race it and lose.
func TestReplica_PacedBatchIsMadeOnTopOfTheCommitItWaitedFor(t *testing.T) {
	t.Parallel()
	s := &fakeShared{}
	a, b := &fakeFrontEnd{s: s}, &fakeFrontEnd{s: s}
	dbA := storetest.MustOpen(t, store.Options{ReplicaOf: "etcd:test/pace", Committer: a, Host: "host-a", Fleet: true})
	dbB := storetest.MustOpen(t, store.Options{ReplicaOf: "etcd:test/pace", Committer: b, Host: "host-a", Fleet: true})
	ctx := graph.WithActor(context.Background(), "cli:test")
	id, err := dbA.CreateIdentity(ctx, graph.IdentityCreate{Name: "Paced synth"})
	if err != nil {
		t.Fatal(err)
	}
	s.feed(t, dbB)

	var asked []int64
	a.pace = func(ctx context.Context, held int64) {
		asked = append(asked, held)
		if len(asked) > 1 {
			return
		}
		// While host A's batch waits its turn, host B commits, and A's feed brings it.
		if _, err := dbB.UpdateTags(ctx, id.ID, []string{"from:b"}, nil); err != nil {
			t.Error(err)
		}
		s.feed(t, dbA)
	}
	if _, err := dbA.UpdateTags(ctx, id.ID, []string{"from:a"}, nil); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != 1 {
		t.Errorf("Pace was asked with %v; want once, with revision 1 (the commit the replica held)", asked)
	}
	if s.conflicts != 0 || s.rev != 3 {
		t.Errorf("shared store: %d conflicts, revision %d; want none, 3 (A's write made on top of B's)", s.conflicts, s.rev)
	}
	s.feed(t, dbB)
	for name, db := range map[string]*store.DB{"A": dbA, "B": dbB} {
		got, err := db.FindIdentityByID(ctx, id.ID, graph.IdentityParts{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Tags, []string{"from:a", "from:b"}) {
			t.Errorf("replica %s: tags %v; want both writes", name, got.Tags)
		}
		if rev := db.ReplicaRev(); rev != 3 {
			t.Errorf("replica %s holds revision %d; want 3", name, rev)
		}
	}
}
