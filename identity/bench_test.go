package identity_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store"
)

const (
	benchIdentities = 100_000 // × 3 hints = 300,000 hints
	benchDevices    = 1_000
)

// benchHints are identity i's three hints. A third are units with a serial; the rest are
// serial-less models known by model, name and port. Every 50th pair of identities are
// twins (same model and name, different ports).
func benchHints(i int) []graph.Fingerprint {
	vid, pid := fmt.Sprintf("%04x", 0x1000+i%4000), fmt.Sprintf("%04x", i/4000)
	model := i
	if i%100 == 1 {
		model = i - 1 // twin of the identity before it
		vid, pid = fmt.Sprintf("%04x", 0x1000+model%4000), fmt.Sprintf("%04x", model/4000)
	}
	usbID := graph.Fingerprint{Kind: graph.FPUSBID, Value: vid + ":" + pid}
	port := graph.Fingerprint{Kind: graph.FPUSBPath, Value: fmt.Sprintf("%d-%d.%d", 1+i/10000, (i/100)%100, i%100)}
	if i%3 == 0 && i%100 > 1 {
		return []graph.Fingerprint{{Kind: graph.FPUSBSerial, Value: usbID.Value + fmt.Sprintf(":SN%07d", i)}, usbID, port}
	}
	return []graph.Fingerprint{usbID, {Kind: graph.FPMIDIClient, Value: fmt.Sprintf("Synth %d", model)}, port}
}

// benchDevice is what present device k shows: identity (k*97)'s unit, mostly on its
// port, every 4th moved to another one, every 10th a device nobody knows.
func benchDevice(k int) []graph.Fingerprint {
	i := (k * 97) % benchIdentities
	if k%10 == 9 {
		return []graph.Fingerprint{{Kind: graph.FPUSBID, Value: fmt.Sprintf("f%03x:%04x", k%4096, k)}, {Kind: graph.FPUSBPath, Value: fmt.Sprintf("200-%d", k%1000)}}
	}
	fps := benchHints(i)
	if k%4 == 0 {
		for j := range fps {
			if fps[j].Kind == graph.FPUSBPath {
				fps[j].Value = fmt.Sprintf("300-%d.%d", k/100, k%100)
			}
		}
	}
	return fps
}

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

// benchStore builds the 100,000-identity database once per test binary run through the
// store's own CreateIdentity (concurrent writers share group commits).
func benchStore(tb testing.TB) string {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "identity-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchPath = filepath.Join(dir, "bench.db")
		db, err := store.Open(benchPath, store.Options{NoSync: true, NoBackup: true})
		if err != nil {
			benchErr = err
			return
		}
		defer db.Close()
		ctx := graph.WithActor(context.Background(), "cli:bench")
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < benchIdentities; i += 8 {
					if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Unit %d", i), Slug: fmt.Sprintf("u%06d", i), Hints: benchHints(i)}); err != nil {
						errs <- fmt.Errorf("identity %d: %w", i, err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		benchErr = <-errs
		tb.Logf("built %d identities in %v", benchIdentities, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		tb.Fatal(benchErr)
	}
	return benchPath
}

// removeBenchStore deletes the benchmark fixture once every test and benchmark has run
// (TestMain in main_test.go).
func removeBenchStore() {
	if benchPath != "" {
		os.RemoveAll(filepath.Dir(benchPath))
	}
}

// BenchmarkMatch matches 1,000 present devices against 100,000 identities (300,000
// hints) in one pass, the snapshot context included. Target: ≤ 50 ms per pass.
func BenchmarkMatch(b *testing.B) {
	path := benchStore(b)
	db, err := store.Open(path, store.Options{ReadOnly: true, NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	snap := &graph.Snapshot{}
	for k := 0; k < benchDevices; k++ {
		snap.Devices = append(snap.Devices, &graph.ObservedDevice{Key: fmt.Sprint(k), Fingerprints: benchDevice(k)})
	}
	sc := identity.NewScene(snap)
	m := identity.Matcher{Store: db}
	ctx := context.Background()
	var high int
	b.ResetTimer()
	for b.Loop() {
		subjects := make([]identity.Subject, benchDevices)
		for k := range subjects {
			subjects[k] = identity.Subject{Fingerprints: snap.Devices[k].Fingerprints, InScene: true}
		}
		ms, err := m.MatchSubjects(ctx, sc, subjects)
		if err != nil {
			b.Fatal(err)
		}
		high = 0
		for _, x := range ms {
			if x.Confidence == graph.High {
				high++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/match-1000")
	b.ReportMetric(float64(high), "high")
	if high == 0 || high == benchDevices {
		b.Fatalf("%d of %d devices high: the fixture does not exercise the rules", high, benchDevices)
	}
}
