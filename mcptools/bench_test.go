package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"devgraph/graph"
	"devgraph/identity"
	"devgraph/migrations"
	"devgraph/query"
	"devgraph/store"
)

// writeIdentities writes an export of n identities (3 hints, 3 tags each) for Import.
func writeIdentities(w io.Writer, n int) error {
	enc := json.NewEncoder(w)
	type line struct {
		Type     string          `json:"type"`
		Format   string          `json:"format,omitempty"`
		Version  int             `json:"version,omitempty"`
		Identity *graph.Identity `json:"identity,omitempty"`
	}
	if err := enc.Encode(line{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion}); err != nil {
		return err
	}
	makers := []string{"Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"}
	kinds := []string{"Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s %s %05d", makers[i%len(makers)], kinds[i%len(kinds)], i)
		id := &graph.Identity{
			ID: graph.IdentityID(graph.Slugify(name)), Name: name,
			Hints: []graph.Fingerprint{
				{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%06d", i)},
				{Kind: graph.FPUSBID, Value: fmt.Sprintf("%04x:%04x", 0x500+i%8, i%64)},
				{Kind: graph.FPUSBPath, Value: fmt.Sprintf("3-%d.%d", i%8+1, i%4+1)},
			},
			Tags:      []string{fmt.Sprintf("location:rack-%d", i%10), "manufacturer:" + strings.ToLower(makers[i%len(makers)]), "role:synth"},
			CreatedAt: base, UpdatedAt: base,
		}
		if err := enc.Encode(line{Type: "identity", Identity: id}); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkFindStdio_50k measures a graph_find round trip over ServeStdio's newline
// JSON-RPC (mcp-go's client on pipes) against a 50,000-identity database. Target:
// p50 ≤ 10 ms.
func BenchmarkFindStdio_50k(b *testing.B) {
	dir := b.TempDir()
	db, err := store.Open(filepath.Join(dir, "bench.db"), store.Options{NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeIdentities(pw, 50_000)) }()
	if _, err := db.Import(context.Background(), pr, nil); err != nil {
		b.Fatal(err)
	}
	svc := identity.New(db, nil, nil)
	exec, err := query.New(svc, query.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer exec.Close()
	srv, err := New(svc, Options{Exec: exec, Notifier: db})
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
