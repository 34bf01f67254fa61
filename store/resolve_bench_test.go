package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
)

// BenchmarkResolveUnknown_100k resolves unknown ids in the large fixture (125,000
// identities) as a server does, with the name index answering "did you mean"
// (search.Finder, built before timing): one matching nothing and one found only as a
// substring of a slug. store-alone is the CLI on the file: the store's own bounded look
// at its keys. Target: well under 50 ms per lookup.
func BenchmarkResolveUnknown_100k(b *testing.B) {
	db := bigFixture(b)
	ctx := context.Background()
	names := search.NewFinder(db)
	if err := names.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	defer db.SetSuggester(nil)
	last := fmt.Sprintf("%06d", fixtureIdentities-1)
	for _, c := range []struct {
		name, in, says string
		alone          bool
	}{
		{"nothing-close", "zzzz-qqqq-wwww", "", false},
		{"substring", "nth-" + last, "identity:synth-" + last, false},
		{"store-alone/nothing-close", "zzzz-qqqq-wwww", "", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.alone {
				db.SetSuggester(nil)
			} else {
				db.SetSuggester(names)
			}
			for b.Loop() {
				_, err := db.ResolveID(ctx, c.in, graph.KindIdentity)
				if graph.ErrorCode(err) != graph.ENOTFOUND {
					b.Fatalf("ResolveID(%q): %v", c.in, err)
				}
				if c.says != "" && !strings.Contains(err.Error(), c.says) {
					b.Fatalf("ResolveID(%q): %v lacks %s", c.in, err, c.says)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/lookup")
		})
	}
}
