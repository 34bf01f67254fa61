package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
)

const benchIdentities = 100000

var (
	benchOnce sync.Once
	benchDir  string
	bench     *benchEnv
	benchErr  error
)

type benchEnv struct {
	db    *store.DB
	svc   *identity.Service
	exec  *query.Executor
	noted []string // identities with a note
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench != nil {
		bench.exec.Close()
		bench.db.Close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var (
	benchAdj  = []string{"amber", "brisk", "cobalt", "dusty", "ember", "frosty", "golden", "hollow", "ivory", "jade", "keen", "lunar", "misty", "noble", "onyx", "polar", "quiet", "rusty", "silver", "tidal"}
	benchNoun = []string{"falcon", "otter", "synth", "sampler", "mixer", "rover", "drone", "sensor", "camera", "keyboard", "pedal", "looper", "arm", "scout", "beacon", "relay", "module", "deck", "console", "rack"}
)

func benchName(i int) string {
	return fmt.Sprintf("%s %s %s %d", title(benchAdj[i%len(benchAdj)]), title(benchNoun[(i/len(benchAdj))%len(benchNoun)]), []string{"Mk I", "Mk II", "Pro", "Mini", "XL"}[(i/400)%5], i)
}

// benchSetup builds a 100,000-identity store once per process: each identity has a unit
// hint, a model hint and two tags; every 100th also has two notes.
func benchSetup(b *testing.B) *benchEnv {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "devgraph-query-bench-")
		if benchErr != nil {
			return
		}
		db, err := store.Open(filepath.Join(benchDir, "bench.db"), store.Options{NoSync: true, NoBackup: true})
		if err != nil {
			benchErr = err
			return
		}
		ctx := graph.WithActor(context.Background(), "bench:setup")
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= benchIdentities {
						return
					}
					_, err := db.CreateIdentity(ctx, graph.IdentityCreate{
						Name: benchName(i), Slug: fmt.Sprintf("b%06d", i),
						Hints: []graph.Fingerprint{
							{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("1234:%04x:SN%06d", i%0xffff, i)},
							{Kind: graph.FPUSBID, Value: fmt.Sprintf("1234:%04x", i%500)},
						},
						Tags: []string{"role:" + benchNoun[i%len(benchNoun)], fmt.Sprintf("project:p%d", i%50)},
					})
					if err == nil && i%100 == 0 {
						id := graph.IdentityID(fmt.Sprintf("b%06d", i))
						for k := 0; k < 2; k++ {
							if _, err = db.AddNote(ctx, graph.NoteCreate{Target: id, Body: fmt.Sprintf("note %d on %s", k, id)}); err != nil {
								break
							}
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			benchErr = err
			return
		}
		svc := identity.New(db, nil, nil)
		finder := search.NewFinder(db) // as serve wires it: the index over the store
		exec, err := query.New(svc, query.Options{Finder: finder})
		if err != nil {
			benchErr = err
			return
		}
		if err := finder.Refresh(ctx); err != nil {
			benchErr = err
			return
		}
		bench = &benchEnv{db: db, svc: svc, exec: exec}
		for i := 0; i < benchIdentities; i += 100 {
			bench.noted = append(bench.noted, graph.IdentityID(fmt.Sprintf("b%06d", i)))
		}
		fmt.Fprintf(os.Stderr, "bench setup: %d identities in %v\n", benchIdentities, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return bench
}

func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

func mustOK(b *testing.B, r *query.Response) {
	if len(r.Errors) > 0 {
		b.Fatalf("query failed: %+v", r.Errors)
	}
}

// BenchmarkIdentityQuery: identity(id){name hints tags notes} in-process (target ≤ 250 µs p50).
func BenchmarkIdentityQuery(b *testing.B) {
	env := benchSetup(b)
	ctx := context.Background()
	q := `query($id: ID!){ identity(id: $id){ name hints { kind value } tags { name } notes { nodes { body } } } }`
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := env.noted[i%len(env.noted)]
		t0 := time.Now()
		r := env.exec.Execute(ctx, query.Request{Query: q, Variables: map[string]any{"id": id}}, true)
		durs = append(durs, time.Since(t0))
		mustOK(b, r)
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}

// BenchmarkIdentities100WithTags: a page of 100 identities with their tags (target ≤ 3 ms).
func BenchmarkIdentities100WithTags(b *testing.B) {
	env := benchSetup(b)
	ctx := context.Background()
	q := `query($after: String){ identities(first: 100, after: $after){ nodes { id name tags { name } } pageInfo { endCursor } } }`
	// Cursors spread over the whole store.
	var cursors []any
	after := any(nil)
	for len(cursors) < 50 {
		r := env.exec.Execute(ctx, query.Request{Query: q, Variables: map[string]any{"after": after}}, true)
		mustOK(b, r)
		cursors = append(cursors, after)
		after = get(r.Data, "identities.pageInfo.endCursor")
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r := env.exec.Execute(ctx, query.Request{Query: q, Variables: map[string]any{"after": cursors[i%len(cursors)]}}, true)
		durs = append(durs, time.Since(t0))
		mustOK(b, r)
	}
	b.StopTimer()
	reportPercentiles(b, durs)
}

var benchFindTexts = []string{"amber falcon", "jade rover pro", "qt", "silver mk 12", "tdl", "otter", "b", "console 9999", "zzz", "lunar keyboard mini 4"}

// BenchmarkFind: Finder over 100,000 names (target ≤ 10 ms), and find through GraphQL with
// its hits loaded as nodes.
func BenchmarkFind(b *testing.B) {
	env := benchSetup(b)
	ctx := context.Background()
	b.Run("Finder", func(b *testing.B) {
		durs := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			hits, err := env.exec.Finder().Find(ctx, graph.FindQuery{Text: benchFindTexts[i%len(benchFindTexts)], First: 20})
			durs = append(durs, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			_ = hits
		}
		b.StopTimer()
		reportPercentiles(b, durs)
	})
	b.Run("Finder+tags", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := env.exec.Finder().Find(ctx, graph.FindQuery{Text: benchFindTexts[i%len(benchFindTexts)], Tags: []string{"role:synth"}, Kind: "identity", First: 20}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GraphQL", func(b *testing.B) {
		q := `query($t: String){ find(text: $t, first: 20){ edges { score node { id ... on Identity { name } } } } }`
		durs := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			r := env.exec.Execute(ctx, query.Request{Query: q, Variables: map[string]any{"t": benchFindTexts[i%len(benchFindTexts)]}}, true)
			durs = append(durs, time.Since(t0))
			mustOK(b, r)
		}
		b.StopTimer()
		reportPercentiles(b, durs)
	})
}

// BenchmarkHTTPLoopback: small queries over a real loopback listener from parallel
// keep-alive clients (target ≥ 5,000 req/s), through the http package's routes as
// devgraph serve --http mounts them.
func BenchmarkHTTPLoopback(b *testing.B) {
	env := benchSetup(b)
	srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: env.exec, Loopback: true}))
	defer srv.Close()
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	bodies := make([]string, 64)
	for i := range bodies {
		bodies[i] = gqlBody(`query($id: ID!){ identity(id: $id){ name } }`, map[string]any{"id": env.noted[i]})
	}
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			resp, err := client.Post(srv.URL+"/graphql", "application/json", strings.NewReader(bodies[i%int64(len(bodies))]))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "req/s")
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func gqlBody(q string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	return string(b)
}
