package mcptools

import (
	"context"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// BenchmarkFindStdio_50k measures a graph_find round trip over ServeStdio's newline
// JSON-RPC (mcp-go's client on pipes) against a 50,000-identity database. Target:
// p50 ≤ 10 ms.
func BenchmarkFindStdio_50k(b *testing.B) {
	dbPath := filepath.Join(b.TempDir(), "bench.db")
	storetest.BuildIdentities(b, dbPath, 50_000, 5)
	db, err := store.Open(dbPath, store.Options{NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc := identity.New(db, nil, nil)
	names := search.NewFinder(db)
	exec, err := query.New(svc, query.Options{Finder: names})
	if err != nil {
		b.Fatal(err)
	}
	defer exec.Close()
	srv, err := New(svc, Options{Exec: exec, Finder: names, Notifier: db})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()

	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), cr, sw); sw.Close() }()
	c := client.NewClient(transport.NewIO(sr, cw, io.NopCloser(strings.NewReader(""))))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "bench"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	texts := []string{"roland synth 00042", "korg", "moog sampler 1234", "elektron 4999", "arturia controller"}
	call := func(i int) time.Duration {
		req := mcp.CallToolRequest{}
		req.Params.Name = "graph_find"
		req.Params.Arguments = map[string]any{"text": texts[i%len(texts)], "limit": 10}
		start := time.Now()
		res, err := c.CallTool(ctx, req)
		d := time.Since(start)
		if err != nil || res.IsError {
			b.Fatalf("graph_find: %v %v", err, res)
		}
		return d
	}
	for i := 0; i < 20; i++ { // build the index, warm the caches
		call(i)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, call(i))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	c.Close()
	cw.Close()
	<-done
}
