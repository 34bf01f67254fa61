package search_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
)

// slowSource hides the store's graph.NameIndex: a Finder over it reads whole records,
// as it does over a service.
type slowSource struct{ graph.NameSource }

// Over the store's name and tag indexes (and display names read for the ranked
// candidates only) the index answers exactly what it answers from whole records, before
// and after writes, and with or without Warm.
func TestFinder_FastPathAnswersAsRecords(t *testing.T) {
	t.Parallel()
	db, ctx := findDB(t)
	for i := 0; i < 30; i++ {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Élan MiXer %02d", i), Tags: []string{fmt.Sprintf("location:rack-%d", i%3)}}); err != nil {
			t.Fatal(err)
		}
	}
	fast, warmed, slow := search.NewFinder(db), search.NewFinder(db), search.NewFinder(slowSource{db})
	if err := warmed.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	// Hits of equal score come in the index's order, which differs between the two
	// builds (name order, id order): each query asks for all its hits, compared by score
	// and then id.
	queries := []graph.FindQuery{
		{Text: "jdxi"}, {Text: "Roland JD-Xi"}, {Text: "mixer"}, {Text: "élan mix 2"}, {Text: "MXR"},
		{Text: "filler 01"}, {}, {First: 7}, {Tags: []string{"location:rack-1"}},
		{Text: "mixer", Tags: []string{"location:rack-2"}}, {Text: "scout", Kind: "robot"},
		{Text: "er", Kind: "identity"}, {Text: "zzz"},
	}
	for i := range queries {
		if queries[i].Text != "" {
			queries[i].First = 500
		}
	}
	byScore := func(h []graph.FindHit) []graph.FindHit {
		sort.SliceStable(h, func(i, j int) bool {
			if h[i].Score != h[j].Score {
				return h[i].Score > h[j].Score
			}
			return h[i].ID < h[j].ID
		})
		return h
	}
	check := func(stage string) {
		t.Helper()
		for _, q := range queries {
			want, err := slow.Find(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for name, f := range map[string]*search.Finder{"fast": fast, "warmed": warmed} {
				got, err := f.Find(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, want := byScore(got), byScore(append([]graph.FindHit{}, want...))
				if name == "warmed" && len(got) > 0 && got[0].Tags == nil {
					t.Errorf("%s %+v: hits without tags once the index holds them", stage, q)
				}
				for i := range got {
					if got[i].Tags == nil && i < len(want) { // not held: the caller reads the node
						want[i].Tags = nil
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s %+v:\n got %v\nwant %v", stage, name, q, got, want)
				}
			}
		}
	}
	check("built")
	// Writes after the index was built: a rename (its display name read before), tags
	// added and removed, a new identity, a delete.
	if _, err := db.RenameIdentity(ctx, "identity:jdxi", "Roland JD-Xi Mk II"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "identity:filler-001", []string{"location:rack-1"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "identity:elan-mixer-04", nil, []string{"location:rack-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "MIXER Deluxe", Tags: []string{"location:rack-2"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteIdentity(ctx, "identity:elan-mixer-07"); err != nil {
		t.Fatal(err)
	}
	check("after writes")
}

// The first search by tag reads the tag index, and sees tags written before it and
// after the index was built.
func TestFinder_TagsReadOnFirstTagSearch(t *testing.T) {
	t.Parallel()
	db, ctx := findDB(t)
	f := search.NewFinder(db)
	if _, err := f.Find(ctx, graph.FindQuery{Text: "beatstep"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "identity:beatstep", []string{"status:on-loan"}, nil); err != nil {
		t.Fatal(err)
	}
	hits, err := f.Find(context.Background(), graph.FindQuery{Tags: []string{"role:synth"}})
	if err != nil || len(hits) != 1 || hits[0].ID != "identity:jdxi" || hits[0].Name != "Roland JD-Xi" {
		t.Fatalf("role:synth: %v %v", hits, err)
	}
	hits, err = f.Find(ctx, graph.FindQuery{Tags: []string{"status:on-loan"}})
	if err != nil || len(hits) != 1 || hits[0].ID != "identity:beatstep" {
		t.Fatalf("status:on-loan: %v %v", hits, err)
	}
}

// Warm (the id map, the tags) racing searches and writes leaves the index answering as
// one built afresh. Run under -race by make race.
func TestFinder_WarmRacesSearchesAndWrites(t *testing.T) {
	t.Parallel()
	db, ctx := findDB(t)
	f := search.NewFinder(db)
	done := make(chan error, 1)
	go func() { done <- f.Warm(ctx) }()
	for i := 0; i < 40; i++ {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Racer %02d", i), Tags: []string{fmt.Sprintf("project:p%d", i%4)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Find(ctx, graph.FindQuery{Text: "racer", Tags: []string{fmt.Sprintf("project:p%d", i%4)}}); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if err := db.DeleteIdentity(ctx, fmt.Sprintf("identity:filler-%03d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fresh := search.NewFinder(slowSource{db})
	for _, q := range []graph.FindQuery{{Text: "racer", First: 500}, {Tags: []string{"project:p1"}, First: 500}, {Text: "filler", First: 500}} {
		got, err := f.Find(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Find(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(h []graph.FindHit) []string {
			out := make([]string, len(h))
			for i := range h {
				out[i] = h[i].ID
			}
			sort.Strings(out)
			return out
		}
		if !reflect.DeepEqual(ids(got), ids(want)) {
			t.Errorf("%+v: got %v, want %v", q, ids(got), ids(want))
		}
	}
}
