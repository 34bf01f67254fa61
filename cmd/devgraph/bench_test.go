package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// seedDB writes n identities (a unit hint, a model hint, two tags each) into a new
// database at path, from 16 goroutines so group commit batches them.
func seedDB(b *testing.B, path string, n int) {
	b.Helper()
	db, err := store.Open(path, store.Options{Host: testHost, NoSync: true, NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := graph.WithActor(context.Background(), "bench:setup")
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.Load() != nil {
					return
				}
				_, err := db.CreateIdentity(ctx, graph.IdentityCreate{
					Name: fmt.Sprintf("Bench Device %d", i), Slug: fmt.Sprintf("b%06d", i),
					Hints: []graph.Fingerprint{
						{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("1234:%04x:SN%06d", i%0xffff, i)},
						{Kind: graph.FPUSBID, Value: fmt.Sprintf("1234:%04x", i%500)},
					},
					Tags: []string{fmt.Sprintf("role:r%d", i%20), fmt.Sprintf("project:p%d", i%50)},
				})
				if err != nil {
					firstErr.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
}

var (
	seedOnce sync.Once
	seedDir  string
)

// BenchmarkServe_FirstRequest starts `devgraph serve` (stdio) on a 100,000-identity
// database and measures how long after the process starts it answers initialize, and
// then a first graph_find (the target: the first request ≤ 50 ms after start).
func BenchmarkServe_FirstRequest(b *testing.B) {
	// The benchmark function runs once per b.N tried; seed the database only once.
	seedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "devgraph-bench")
		if err != nil {
			b.Fatal(err)
		}
		seedDir = dir
		start := time.Now()
		seedDB(b, filepath.Join(dir, "bench.db"), 100_000)
		b.Logf("seeded 100,000 identities in %s", time.Since(start).Round(time.Millisecond))
	})
	db := filepath.Join(seedDir, "bench.db")
	empty := b.TempDir() // no hardware: the sources read empty roots
	home := b.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CACHE_HOME="+home, "XDG_RUNTIME_DIR="+home)
	var initD, findD []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(binary, "serve", "--db", db, "--poll", "0", "--log-level", "error",
			"--sys-root", empty, "--proc-root", empty, "--pw-dump-file", filepath.Join(empty, "none.json"))
		cmd.Env = env
		in, _ := cmd.StdinPipe()
		outp, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		out := bufio.NewReader(outp)
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
		if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
			b.Fatalf("initialize: %q %v", line, err)
		}
		initD = append(initD, time.Since(t0))
		io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_find","arguments":{"text":"Bench Device 4242"}}}`+"\n")
		for {
			line, err := out.ReadString('\n')
			if err != nil {
				b.Fatalf("graph_find: %v", err)
			}
			if strings.Contains(line, `"id":2`) {
				if strings.Contains(line, `"isError":true`) {
					b.Fatalf("graph_find failed: %s", line)
				}
				break
			}
		}
		findD = append(findD, time.Since(t0))
		in.Close()
		cmd.Wait()
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(initD), "ms-to-initialize")
	b.ReportMetric(med(findD), "ms-to-first-find")
}
