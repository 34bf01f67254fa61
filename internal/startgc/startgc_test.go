package startgc

import (
	"runtime/debug"
	"testing"
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
