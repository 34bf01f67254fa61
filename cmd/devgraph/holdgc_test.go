package main

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

// Servers in one process each hold the collector while they start; it runs again when
// the last hold ends, with the setting it had, and not when $GOGC tunes it.
func TestHoldGC(t *testing.T) {
	before := gcPercent()
	if before < 0 {
		t.Skip("the collector is off in this process")
	}
	noEnv := func(string) string { return "" }
	endA, endB := holdGC(noEnv), holdGC(noEnv)
	if got := gcPercent(); got != -1 {
		t.Fatalf("held: GC percent %d, want -1", got)
	}
	endA()
	endA()
	if got := gcPercent(); got != -1 {
		t.Fatalf("one of two holds ended (twice): GC percent %d, want -1", got)
	}
	endB()
	if got := gcPercent(); got != before {
		t.Fatalf("both ended: GC percent %d, want %d", got, before)
	}
	if got := debug.SetMemoryLimit(-1); got == startHeapLimit {
		t.Fatalf("both ended: memory limit still %d", got)
	}
	end := holdGC(func(k string) string {
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
