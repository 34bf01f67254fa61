package startgc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gcPercent reads the collector's setting.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// The process starts held; holds are counted, and the collector runs again, with the
// setting it had, when the last one ends; nothing is held when $GOGC tunes it.
func TestHold(t *testing.T) {
	if gcPercent() != -1 {
		t.Skip("not held at start: $GOGC or $GOMEMLIMIT is set")
	}
	if got := debug.SetMemoryLimit(-1); got != HeapLimit {
		t.Fatalf("held at start: memory limit %d, want %d", got, HeapLimit)
	}
	noEnv := func(string) string { return "" }
	end := Hold(noEnv)
	Release()
	Release()
	if got := gcPercent(); got != -1 {
		t.Fatalf("start's hold ended (twice), one left: GC percent %d, want -1", got)
	}
	end()
	before := gcPercent()
	if before < 0 {
		t.Fatalf("every hold ended: GC percent %d", before)
	}
	if got := debug.SetMemoryLimit(-1); got == HeapLimit {
		t.Fatalf("every hold ended: memory limit still %d", got)
	}
	endA, endB := Hold(noEnv), Hold(noEnv)
	endA()
	endA()
	if got := gcPercent(); got != -1 {
		t.Fatalf("one of two holds ended (twice): GC percent %d, want -1", got)
	}
	endB()
	if got := gcPercent(); got != before {
		t.Fatalf("both ended: GC percent %d, want %d", got, before)
	}
	end = Hold(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := gcPercent(); got != before {
		t.Fatalf("with $GOGC set: GC percent %d, want %d (untouched)", got, before)
	}
	end()
}

// KeepHeadroom: after a collection the percent puts the next one the headroom past the
// live heap; a hold keeps the collector off and gets the tuned percent when it ends;
// the last stop puts 100 back; with $GOGC set nothing changes.
func TestKeepHeadroom(t *testing.T) {
	Release() // the start's hold (TestHold may have ended it already)
	if gcPercent() < 0 {
		t.Skip("the collector is off: $GOGC=off")
	}
	noEnv := func(string) string { return "" }
	const headroom = 256 << 20
	stop := KeepHeadroom(noEnv, headroom)
	stop2 := KeepHeadroom(noEnv, headroom)
	tuned := collectUntil(t, func(p int) bool { return p > 100 })
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if live := sample[0].Value.Uint64(); uint64(tuned)*live/100 < headroom/2 {
		t.Fatalf("percent %d leaves %d bytes over a live heap of %d, want about %d", tuned, uint64(tuned)*live/100, live, headroom)
	}

	end := Hold(noEnv)
	runtime.GC()
	runtime.GC()
	if got := gcPercent(); got != -1 {
		t.Fatalf("held: GC percent %d, want -1 (off)", got)
	}
	end()
	if got := gcPercent(); got <= 100 {
		t.Fatalf("hold ended: GC percent %d, want the tuned one (> 100)", got)
	}

	stop()
	stop()
	if got := gcPercent(); got <= 100 {
		t.Fatalf("one of two callers stopped (twice): GC percent %d, want still tuned", got)
	}
	stop2()
	if got := gcPercent(); got != 100 {
		t.Fatalf("both stopped: GC percent %d, want 100", got)
	}
	runtime.GC()
	runtime.GC()
	if got := gcPercent(); got != 100 {
		t.Fatalf("stopped, after collections: GC percent %d, want 100", got)
	}

	stop = KeepHeadroom(func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}, headroom)
	runtime.GC()
	runtime.GC()
	stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("with $GOGC set: GC percent %d, want 100 (untouched)", got)
	}
}

// collectUntil collects until the percent satisfies ok (the finalizer that sets it runs
// after a collection, on its own goroutine) and returns it.
func collectUntil(t *testing.T, ok func(int) bool) int {
	t.Helper()
	for i := 0; i < 1000; i++ {
		runtime.GC()
		if p := gcPercent(); ok(p) {
			return p
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("GC percent %d after 1000 collections", gcPercent())
	return 0
}

// Prefault: a process that has touched its headroom allocates within it without page
// faults; one that has not faults on about every page (a child process each, counting
// its minor faults while it allocates 16 MB of small objects; both hold on to nothing
// and the headroom, 64 MB, keeps the collector out of the count).
func TestPrefault(t *testing.T) {
	const pages = 16 << 20 / 4096
	none, pre := childFaults(t, "none"), childFaults(t, "prefault")
	t.Logf("minor faults allocating %d pages: %d without Prefault, %d after it", pages, none, pre)
	if none < pages/2 {
		t.Fatalf("without Prefault: %d faults for %d fresh pages; the test no longer sees the heap grow", none, pages)
	}
	if pre > pages/8 {
		t.Fatalf("after Prefault: %d faults for %d pages, want almost none", pre, pages)
	}
}

// Prefault allocates nothing when the heap's mapped pages hold the live heap and the
// headroom already.
func TestPrefault_AlreadyMapped(t *testing.T) {
	out := child(t, "mapped")
	var n int
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "allocated %d", &n); err == nil {
			if n >= prefaultChunk {
				t.Fatalf("Prefault allocated %d bytes over a heap that holds the headroom already", n)
			}
			return
		}
	}
	t.Fatalf("child printed no allocation:\n%s", out)
}

// childFaults runs this test binary as a child that allocates after mode's start and
// returns the minor faults it counted.
func childFaults(t *testing.T, mode string) int {
	t.Helper()
	out := child(t, mode)
	var n int
	for _, line := range strings.Split(out, "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "faults %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("child %s printed no count:\n%s", mode, out)
	return 0
}

// child runs this test binary as TestPrefaultChild in mode and returns its output.
func child(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPrefaultChild$", "-test.v")
	cmd.Env = append(os.Environ(), "STARTGC_CHILD="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

// TestPrefaultChild is childFaults's child; it does nothing in a plain run.
func TestPrefaultChild(t *testing.T) {
	mode := os.Getenv("STARTGC_CHILD")
	if mode == "" {
		return
	}
	Release()
	noEnv := func(string) string { return "" }
	defer KeepHeadroom(noEnv, 64<<20)()
	collectUntil(t, func(p int) bool { return p > 100 })
	switch mode {
	case "prefault":
		Prefault()
	case "mapped":
		// The heap holds the headroom already (as a large graph's start leaves it):
		// Prefault allocates nothing.
		var keep [][]byte
		for range 96 << 20 / prefaultChunk {
			b := make([]byte, prefaultChunk)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		runtime.KeepAlive(keep)
		keep = nil
		runtime.GC()
		allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		Prefault()
		metrics.Read(allocs)
		fmt.Printf("allocated %d\n", allocs[0].Value.Uint64()-before)
	}
	runtime.GC()
	before := minorFaults(t)
	for range 16 << 20 / 512 {
		b := make([]byte, 512)
		b[0] = 1
		sink = b
	}
	fmt.Printf("faults %d\n", minorFaults(t)-before)
}

var sink []byte

func minorFaults(t *testing.T) int {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return int(ru.Minflt)
}
