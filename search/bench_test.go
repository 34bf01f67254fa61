package search_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sahilm/fuzzy"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
)

var (
	benchAdj  = []string{"amber", "brisk", "cobalt", "dusty", "ember", "frosty", "golden", "hollow", "ivory", "jade", "keen", "lunar", "misty", "noble", "onyx", "polar", "quiet", "rusty", "silver", "tidal"}
	benchNoun = []string{"falcon", "otter", "synth", "sampler", "mixer", "rover", "drone", "sensor", "camera", "keyboard", "pedal", "looper", "arm", "scout", "beacon", "relay", "module", "deck", "console", "rack"}
)

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// benchName is query's benchmark naming, so the figures compare.
func benchName(i int) string {
	return fmt.Sprintf("%s %s %s %d", title(benchAdj[i%len(benchAdj)]), title(benchNoun[(i/len(benchAdj))%len(benchNoun)]), []string{"Mk I", "Mk II", "Pro", "Mini", "XL"}[(i/400)%5], i)
}

var benchFindTexts = []string{"amber falcon", "jade rover pro", "qt", "silver mk 12", "tdl", "otter", "b", "console 9999", "zzz", "lunar keyboard mini 4"}

// BenchmarkFind/fuzzy-alone is the baseline the index avoids: sahilm/fuzzy over every one
// of 100,000 names (query's BenchmarkFind measures the index over the same names).
func BenchmarkFind(b *testing.B) {
	b.Run("fuzzy-alone", func(b *testing.B) {
		names := make([]string, 100_000)
		for i := range names {
			names[i] = benchName(i)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = len(fuzzy.Find(benchFindTexts[i%len(benchFindTexts)], names))
		}
	})
}

// BenchmarkSuggestID_125k: "did you mean" from an index of 125,000 identities (the
// store's large fixture has as many), for text matching nothing and text found only
// inside a slug.
func BenchmarkSuggestID_125k(b *testing.B) {
	src := newFakeSource()
	for i := range 125_000 {
		src.addIdentity(fmt.Sprintf("identity:synth-%06d", i), benchName(i))
	}
	f := search.NewFinder(src)
	ctx := context.Background()
	if err := f.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, in, want string }{
		{"nothing-close", "zzzz-qqqq-wwww", ""},
		{"substring", "nth-124999", "identity:synth-124999"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if got, _ := f.SuggestID(ctx, graph.KindIdentity, c.in); got != c.want {
					b.Fatalf("SuggestID(%q)=%q, want %q", c.in, got, c.want)
				}
			}
		})
	}
}
