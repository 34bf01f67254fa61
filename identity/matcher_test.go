package identity_test

import (
	"context"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store/storetest"
)

// spyStore is the real store, counting how the matcher reaches it.
type spyStore struct {
	graph.Store
	holderCalls, identityCalls int
	unfiltered                 int // identity reads that were not by id: a scan
}

func (s *spyStore) FindHintHolders(ctx context.Context, fps []graph.Fingerprint) (map[graph.Fingerprint][]string, error) {
	s.holderCalls++
	return s.Store.FindHintHolders(ctx, fps)
}

func (s *spyStore) FindIdentities(ctx context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error) {
	s.identityCalls++
	if len(f.IDs) == 0 {
		s.unfiltered++
	}
	return s.Store.FindIdentities(ctx, f)
}

// TestMatcher_BatchedIndexLookups: matching many devices is one hint-index lookup and one
// load of candidates by id, never a scan over identities.
func TestMatcher_BatchedIndexLookups(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:tester")
	for i := 0; i < 300; i++ {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Unit", Slug: slug(i), Hints: benchHints(i)}); err != nil {
			t.Fatal(err)
		}
	}
	snap := &graph.Snapshot{}
	var subjects []identity.Subject
	for i := 0; i < 300; i += 3 {
		fps := benchHints(i)
		snap.Devices = append(snap.Devices, &graph.ObservedDevice{Key: slug(i), Fingerprints: fps})
		subjects = append(subjects, identity.Subject{Fingerprints: fps, InScene: true})
	}
	spy := &spyStore{Store: db}
	m := identity.Matcher{Store: spy}
	ms, err := m.MatchSubjects(ctx, identity.NewScene(snap), subjects)
	if err != nil {
		t.Fatal(err)
	}
	if spy.holderCalls != 1 || spy.identityCalls != 1 || spy.unfiltered != 0 {
		t.Errorf("hint lookups=%d identity loads=%d unfiltered=%d, want 1 1 0", spy.holderCalls, spy.identityCalls, spy.unfiltered)
	}
	for k, x := range ms {
		if want := "identity:" + slug(k*3); x.Confidence != graph.High || x.IdentityID != want {
			t.Errorf("device %d: want high %s, got %s", k, want, why(x))
		}
	}
}

func slug(i int) string {
	return "u" + string(rune('a'+i/26/26%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
}
