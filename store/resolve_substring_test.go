package store_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// An unknown id that is part of an existing slug (or holds its tokens) gets that slug
// as a suggestion.
func TestResolveID_SuggestsContaining(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	for _, c := range []graph.IdentityCreate{
		{Name: "Roland JD-Xi", Slug: "roland-jd-xi"},
		{Name: "Korg Minilogue", Slug: "korg-minilogue"},
		{Name: "Arturia KeyStep", Slug: "arturia-keystep"},
	} {
		if _, err := db.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"jd-xi", "did you mean identity:roland-jd-xi?"},
		{"jdxi", "did you mean identity:roland-jd-xi?"},
		{"mini_logue", "did you mean identity:korg-minilogue?"},
		{"roland-jd-x", "did you mean identity:roland-jd-xi?"},
		{"identity:minilogue", "did you mean identity:korg-minilogue?"},
		{"xi-roland", "did you mean identity:roland-jd-xi?"},
		{"KeyStep", "did you mean identity:arturia-keystep?"},
	} {
		_, err := db.ResolveID(ctx, c.in, graph.KindIdentity)
		mustCode(t, err, graph.ENOTFOUND)
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("ResolveID(%q): %q lacks %q", c.in, err, c.says)
		}
	}
	if _, err := db.ResolveID(ctx, "zzzzzzzzzzzzzz"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("far-off text: %v", err)
	}
}
