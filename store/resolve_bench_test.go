package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// BenchmarkResolveUnknown_100k resolves unknown ids in the large fixture (125,000
// identities): one matching nothing (a full bounded scan) and one found only as a
// substring of a slug. Target: well under 50 ms per lookup.
func BenchmarkResolveUnknown_100k(b *testing.B) {
	db := bigFixture(b)
	ctx := context.Background()
	last := fmt.Sprintf("%06d", fixtureIdentities-1)
	for _, c := range []struct{ name, in, says string }{
		{"nothing-close", "zzzz-qqqq-wwww", ""},
		{"substring", "nth-" + last, "identity:synth-" + last},
	} {
		b.Run(c.name, func(b *testing.B) {
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
