package graph_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// The shape, in memory so the figures are the traversal's own: 100,000
// identities, 3 relations each between random identities (fixed seed), plus one 10-hop
// chain of cables; path over 1,000 fixed connected pairs. The service's benchmarks run the
// same shapes over the real store.
const (
	benchIdentities = 100_000
	benchPerNode    = 3
	benchPairs      = 1000
)

var (
	benchOnce  sync.Once
	benchGraph *memSource
	benchPath  [][2]string
)

func benchID(i int) string { return fmt.Sprintf("identity:n%06d", i) }

func benchSetup() {
	rnd := rand.New(rand.NewSource(10))
	m := newMem()
	types := graph.SeedRelationTypes
	for i := 0; i < benchIdentities; i++ {
		m.node(benchID(i))
	}
	n := 0
	addRel := func(typ, from, to string) {
		r := &graph.Relation{ID: fmt.Sprintf("rel:%08d", rnd.Intn(1<<30)) + fmt.Sprint(n), Type: typ, From: from, To: to}
		n++
		m.byNode[from] = append(m.byNode[from], r)
		m.byNode[to] = append(m.byNode[to], r)
	}
	for i := 0; i < benchIdentities; i++ {
		for k := 0; k < benchPerNode; k++ {
			j := rnd.Intn(benchIdentities - 1)
			if j >= i {
				j++
			}
			addRel(types[rnd.Intn(len(types))], benchID(i), benchID(j))
		}
	}
	for i := 0; i < 10; i++ {
		m.node(fmt.Sprintf("identity:chain%d", i), fmt.Sprintf("identity:chain%d", i+1))
		addRel(graph.RelCable, fmt.Sprintf("identity:chain%d", i), fmt.Sprintf("identity:chain%d", i+1))
	}
	for _, rs := range m.byNode {
		slices.SortFunc(rs, func(a, b *graph.Relation) int { return strings.Compare(a.ID, b.ID) })
	}
	// Connected pairs: the ends of random walks of 2 to 8 steps.
	for len(benchPath) < benchPairs {
		s := benchID(rnd.Intn(benchIdentities))
		cur := s
		for step := 2 + rnd.Intn(7); step > 0; step-- {
			rs := m.byNode[cur]
			r := rs[rnd.Intn(len(rs))]
			if r.From == cur {
				cur = r.To
			} else {
				cur = r.From
			}
		}
		if cur != s {
			benchPath = append(benchPath, [2]string{s, cur})
		}
	}
	benchGraph = m
}

func BenchmarkNeighborsDepth2(b *testing.B) {
	benchOnce.Do(benchSetup)
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(2))
	vis := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := graph.Neighbors(ctx, benchGraph, benchID(rnd.Intn(benchIdentities)), graph.NeighborOptions{Depth: 2})
		if err != nil {
			b.Fatal(err)
		}
		vis += g.Visited
	}
	b.ReportMetric(float64(vis)/float64(b.N), "vertices/op")
}

func BenchmarkPath(b *testing.B) {
	benchOnce.Do(benchSetup)
	ctx := context.Background()
	durs := make([]time.Duration, 0, b.N)
	found, hops := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pr := benchPath[i%len(benchPath)]
		t0 := time.Now()
		p, err := graph.Path(ctx, benchGraph, pr[0], pr[1], graph.PathOptions{})
		durs = append(durs, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if p.Found {
			found++
			hops += len(p.Hops)
		}
	}
	b.StopTimer()
	if found != b.N {
		b.Fatalf("found %d of %d connected pairs", found, b.N)
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(hops)/float64(found), "hops/op")
}

func BenchmarkTrace10Hop(b *testing.B) {
	benchOnce.Do(benchSetup)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := graph.Trace(ctx, benchGraph, "identity:chain0", graph.TraceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Hops) != 10 || len(tr.Ends) != 1 {
			b.Fatalf("%d hops, ends %q; want 10 and the chain's end", len(tr.Hops), tr.Ends)
		}
	}
}
