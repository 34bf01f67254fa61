package identity_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

// The relation benchmarks, through the service over a real store file: 100,000
// identities with 3 declared relations each to random identities (fixed seed) — 300,000 —
// plus one 10-hop chain of cables; path over 1,000 fixed connected pairs (the ends of
// random walks of 2 to 8 steps, as graph's in-memory benchmarks pick them). The store is
// built once per run through the store's import and removed by TestMain. Targets: a
// node's relations (a page of 50) ≤ 30 µs, neighbours depth 2 ≤ 1 ms, path p50 ≤ 20 ms,
// trace over the 10-hop chain ≤ 1 ms.
const (
	relBenchIdentities = 100_000
	relBenchPerNode    = 3
	relBenchPairs      = 1000
)

func relBenchID(i int) string { return fmt.Sprintf("identity:n%06d", i) }

var relBench struct {
	once  sync.Once
	dir   string
	path  string
	pairs [][2]string
	nodes []string // random identities the per-node benchmarks cycle through
	built time.Duration
	err   error
}

type relBenchLine struct {
	Type     string          `json:"type"`
	Format   string          `json:"format,omitempty"`
	Version  int             `json:"version,omitempty"`
	Identity *graph.Identity `json:"identity,omitempty"`
	Relation *graph.Relation `json:"relation,omitempty"`
}

// writeRelBench writes the export the benchmark store is imported from, and returns the
// connected pairs.
func writeRelBench(path string) ([][2]string, []string, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(bw)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	enc.Encode(relBenchLine{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion})
	ident := func(id, name string, i int) error {
		t := base.Add(time.Duration(i) * time.Millisecond)
		return enc.Encode(relBenchLine{Type: "identity", Identity: &graph.Identity{ID: id, Name: name, Hints: []graph.Fingerprint{}, Tags: []string{}, CreatedAt: t, UpdatedAt: t}})
	}
	for i := 0; i < relBenchIdentities; i++ {
		if err := ident(relBenchID(i), fmt.Sprintf("Node %06d", i), i); err != nil {
			return nil, nil, err
		}
	}
	for i := 0; i <= 10; i++ {
		if err := ident(fmt.Sprintf("identity:chain%d", i), fmt.Sprintf("Chain %d", i), relBenchIdentities+i); err != nil {
			return nil, nil, err
		}
	}
	rnd := rand.New(rand.NewSource(10))
	byNode := map[string][]*graph.Relation{}
	n := 0
	seen := map[[3]string]bool{}
	add := func(typ, from, to string) error {
		n++
		r := &graph.Relation{ID: fmt.Sprintf("rel:%08x-%04x-7000-8000-%012x", n, n&0xffff, n), Type: typ, From: from, To: to,
			Author: "cli:bench", Created: base.Add(time.Duration(n) * time.Millisecond)}
		if typ == graph.RelCable {
			r.Attrs = map[string]string{"kind": "midi-din"}
		}
		byNode[from] = append(byNode[from], r)
		byNode[to] = append(byNode[to], r)
		return enc.Encode(relBenchLine{Type: "relation", Relation: r})
	}
	types := graph.SeedRelationTypes
	for i := 0; i < relBenchIdentities; i++ {
		for k := 0; k < relBenchPerNode; k++ {
			typ, j := types[rnd.Intn(len(types))], rnd.Intn(relBenchIdentities-1)
			if j >= i {
				j++
			}
			// A repeated tuple would be one relation: draw again.
			for seen[[3]string{typ, relBenchID(i), relBenchID(j)}] {
				if j = rnd.Intn(relBenchIdentities - 1); j >= i {
					j++
				}
			}
			seen[[3]string{typ, relBenchID(i), relBenchID(j)}] = true
			if err := add(typ, relBenchID(i), relBenchID(j)); err != nil {
				return nil, nil, err
			}
		}
	}
	for i := 0; i < 10; i++ {
		if err := add(graph.RelCable, fmt.Sprintf("identity:chain%d", i), fmt.Sprintf("identity:chain%d", i+1)); err != nil {
			return nil, nil, err
		}
	}
	var pairs [][2]string
	for len(pairs) < relBenchPairs {
		s := relBenchID(rnd.Intn(relBenchIdentities))
		cur := s
		for step := 2 + rnd.Intn(7); step > 0; step-- {
			rs := byNode[cur]
			r := rs[rnd.Intn(len(rs))]
			if r.From == cur {
				cur = r.To
			} else {
				cur = r.From
			}
		}
		if cur != s {
			pairs = append(pairs, [2]string{s, cur})
		}
	}
	nodes := make([]string, 1024)
	for i := range nodes {
		nodes[i] = relBenchID(rnd.Intn(relBenchIdentities))
	}
	return pairs, nodes, bw.Flush()
}

// relBenchService opens the benchmark store (building it on first use) under a service
// without hardware.
func relBenchService(b *testing.B) *identity.Service {
	b.Helper()
	relBench.once.Do(func() {
		relBench.err = func() error {
			dir, err := os.MkdirTemp("", "identity-relbench-")
			if err != nil {
				return err
			}
			relBench.dir = dir
			exp := filepath.Join(dir, "export.jsonl")
			if relBench.pairs, relBench.nodes, err = writeRelBench(exp); err != nil {
				return err
			}
			relBench.path = filepath.Join(dir, "bench.db")
			db, err := store.Open(relBench.path, store.Options{NoSync: true, NoBackup: true})
			if err != nil {
				return err
			}
			defer db.Close()
			in, err := os.Open(exp)
			if err != nil {
				return err
			}
			defer in.Close()
			start := time.Now()
			st, err := db.Import(context.Background(), bufio.NewReaderSize(in, 1<<20), nil)
			relBench.built = time.Since(start)
			if err != nil {
				return err
			}
			os.Remove(exp)
			_, total, _, err := db.FindRelations(context.Background(), graph.RelationFilter{First: 1})
			if err != nil {
				return err
			}
			if want := relBenchIdentities*relBenchPerNode + 10; total != want {
				return fmt.Errorf("imported %d relations (%+v), want %d", total, st, want)
			}
			return nil
		}()
	})
	if relBench.err != nil {
		b.Fatal(relBench.err)
	}
	b.Logf("benchmark store: %d identities, %d relations, imported in %v", relBenchIdentities, relBenchIdentities*relBenchPerNode+10, relBench.built.Round(time.Millisecond))
	db, err := store.Open(relBench.path, store.Options{ReadOnly: true, NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	svc := identity.New(db, nil, nil)
	if err := svc.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	return svc
}

func removeRelBenchStore() {
	if relBench.dir != "" {
		os.RemoveAll(relBench.dir)
	}
}

// BenchmarkRelations_NodePage lists one page of 50 of a node's relations. Target ≤ 30 µs.
func BenchmarkRelations_NodePage(b *testing.B) {
	svc := relBenchService(b)
	ctx := context.Background()
	listed, i := 0, 0
	b.ResetTimer()
	for b.Loop() {
		rs, total, _, err := svc.FindRelations(ctx, graph.RelationFilter{Node: relBench.nodes[i%len(relBench.nodes)], First: 50})
		if err != nil {
			b.Fatal(err)
		}
		if total == 0 || len(rs) == 0 {
			b.Fatalf("%s has no relations", relBench.nodes[i%len(relBench.nodes)])
		}
		listed += len(rs)
		i++
	}
	b.ReportMetric(float64(listed)/float64(i), "relations/op")
}

// BenchmarkNeighbors_Depth2 walks two hops from a node. Target ≤ 1 ms.
func BenchmarkNeighbors_Depth2(b *testing.B) {
	svc := relBenchService(b)
	ctx := context.Background()
	vertices, i := 0, 0
	b.ResetTimer()
	for b.Loop() {
		g, err := svc.Neighbors(ctx, relBench.nodes[i%len(relBench.nodes)], graph.NeighborOptions{Depth: 2})
		if err != nil {
			b.Fatal(err)
		}
		vertices += len(g.Vertices)
		i++
	}
	b.ReportMetric(float64(vertices)/float64(i), "vertices/op")
}

// BenchmarkPath_Pairs finds the path between each of the 1,000 fixed connected pairs per
// iteration and reports the median. Target p50 ≤ 20 ms.
func BenchmarkPath_Pairs(b *testing.B) {
	svc := relBenchService(b)
	ctx := context.Background()
	var durs []time.Duration
	found, hops := 0, 0
	b.ResetTimer()
	for b.Loop() {
		for _, pr := range relBench.pairs {
			t0 := time.Now()
			p, err := svc.Path(ctx, pr[0], pr[1], graph.PathOptions{})
			durs = append(durs, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if p.Found {
				found++
				hops += len(p.Hops)
			}
		}
	}
	b.StopTimer()
	if found != len(durs) {
		b.Fatalf("found %d paths of %d connected pairs", found, len(durs))
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(hops)/float64(found), "hops/path")
}

// BenchmarkTrace_Chain10 traces the 10-hop chain of cables. Target ≤ 1 ms.
func BenchmarkTrace_Chain10(b *testing.B) {
	svc := relBenchService(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		tr, err := svc.Trace(ctx, "identity:chain0", graph.TraceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Hops) != 10 || len(tr.Ends) != 1 || tr.Ends[0] != "identity:chain10" {
			b.Fatalf("%d hops, ends %v; want 10 and the chain's end", len(tr.Hops), tr.Ends)
		}
	}
}
