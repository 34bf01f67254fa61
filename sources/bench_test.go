package sources

import (
	"context"
	"testing"

	"github.com/devgraph/devgraph/sources/fixture"
)

// BenchmarkDemoRigScan reads the whole demo rig — sysfs walk, procfs cards and sequencer
// clients, the pw-dump file — and merges it, as one uncached Snapshot does. Target:
// ≤ 5 ms per scan.
func BenchmarkDemoRigScan(b *testing.B) {
	l := Demo("testdata/demo")
	ctx := context.Background()
	if n, want := len(l.Scan(ctx).Devices), fixture.DemoRig().Counts().Devices; n != want {
		b.Fatalf("demo rig shows %d devices, want %d", n, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		l.Scan(ctx)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/scan")
}

// BenchmarkDemoRigSnapshot is the shared path: callers within the window get the last
// reading.
func BenchmarkDemoRigSnapshot(b *testing.B) {
	l := Demo("testdata/demo")
	ctx := context.Background()
	l.Snapshot(ctx)
	b.ReportAllocs()
	for b.Loop() {
		l.Snapshot(ctx)
	}
}
