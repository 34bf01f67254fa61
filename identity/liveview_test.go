package identity_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// refusingStore is a store that, once refuse is set, cannot record what the hardware
// shows (a full disk, a store that has never recorded a reading): reads still get the live snapshot.
type refusingStore struct {
	*store.DB
	refuse *atomic.Bool
}

func (s refusingStore) ObserveDevices(ctx context.Context, snap *graph.Snapshot) ([]*graph.Event, error) {
	if s.refuse.Load() {
		return nil, errors.New("disk full")
	}
	return s.DB.ObserveDevices(ctx, snap)
}

// countingLive counts the readings taken.
type countingLive struct {
	graph.Live
	n atomic.Int32
}

func (c *countingLive) Snapshot(ctx context.Context) (*graph.Snapshot, error) {
	c.n.Add(1)
	return c.Live.Snapshot(ctx)
}

// A relation list or a traversal reads the hardware once, before its read view opens,
// even when the store could not record the reading: one snapshot per call, and no read
// transaction held while the sources are read.
func TestRelations_OneSnapshotPerCall(t *testing.T) {
	r := newRig(t)
	live := &countingLive{Live: r.live}
	refuse := &atomic.Bool{}
	svc := identity.New(refusingStore{storetest.MustOpen(t), refuse}, live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := graph.WithActor(context.Background(), "cli:tester")
	refuse.Store(true) // nothing is ever recorded: the clients are live only
	const bitwig = "client:alsa:Bitwig Studio"
	for name, call := range map[string]func() error{
		"FindRelations": func() error {
			_, _, _, err := svc.FindRelations(ctx, graph.RelationFilter{Node: bitwig})
			return err
		},
		"Neighbors": func() error {
			_, err := svc.Neighbors(ctx, bitwig, graph.NeighborOptions{})
			return err
		},
		"Trace": func() error {
			_, err := svc.Trace(ctx, bitwig, graph.TraceOptions{})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			live.n.Store(0)
			if err := call(); err != nil {
				t.Fatal(err)
			}
			if got := live.n.Load(); got != 1 {
				t.Fatalf("%s took %d readings of the hardware, want 1", name, got)
			}
		})
	}
}

// deadlineStore records whether the declared relations were paged under a deadline.
type deadlineStore struct {
	*store.DB
	pages, bounded *atomic.Int32
}

func (s deadlineStore) FindRelations(ctx context.Context, f graph.RelationFilter) ([]*graph.Relation, int, string, error) {
	s.pages.Add(1)
	if _, ok := ctx.Deadline(); ok {
		s.bounded.Add(1)
	}
	return s.DB.FindRelations(ctx, f)
}

// The whole-graph subgraph lists the related nodes within the traversal's time bound, not
// before it starts.
func TestSubgraph_WholeGraphBoundInTime(t *testing.T) {
	r := newRig(t)
	ds := deadlineStore{DB: storetest.MustOpen(t), pages: &atomic.Int32{}, bounded: &atomic.Int32{}}
	svc := identity.New(ds, r.live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := graph.WithActor(context.Background(), "cli:tester")
	for _, name := range []string{"Desk", "Lamp"} {
		if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Relate(ctx, graph.RelationCreate{From: "lamp", Type: "located_in", To: "desk"}); err != nil {
		t.Fatal(err)
	}
	ds.pages.Store(0)
	ds.bounded.Store(0)
	g, err := svc.Subgraph(ctx, "", graph.NeighborOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Vertices) < 2 {
		t.Fatalf("whole graph: %d vertices", len(g.Vertices))
	}
	if p, b := ds.pages.Load(), ds.bounded.Load(); p == 0 || b != p {
		t.Fatalf("%d of %d pages of declared relations read under the traversal's deadline", b, p)
	}
}
