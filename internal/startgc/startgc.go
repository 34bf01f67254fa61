// Package startgc holds the garbage collector while a devgraph process starts.
//
// Its init runs before the heavier packages' (init order follows import paths; it needs
// only the standard library), so the collection the package initialisations would start
// (the heap passes the collector's first 4 MB goal there) is not made: a short command
// such as `devgraph version` ends before it needs one, and `devgraph serve` holds on
// until its first find has been answered. Release ends that first hold; a command that
// runs on ends it before its work. Hold takes further holds; the collector runs again,
// with the settings it had, when the last hold ends. Up to HeapLimit the heap grows
// uncollected; past it the collector runs. $GOGC or $GOMEMLIMIT set: nothing is held.
package startgc

import (
	"os"
	"runtime/debug"
	"sync"
)

// HeapLimit bounds the heap a hold lets grow uncollected.
const HeapLimit = 256 << 20

var held struct {
	sync.Mutex
	n       int
	percent int
	limit   int64
}

var first = Hold(os.Getenv)

// Release ends the hold taken when the process started; safe twice.
func Release() { first() }

// Hold stops the collector (unless getenv says $GOGC or $GOMEMLIMIT tune it) until the
// returned func, safe twice, is called.
func Hold(getenv func(string) string) (end func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	held.Lock()
	defer held.Unlock()
	if held.n == 0 {
		held.percent = debug.SetGCPercent(-1)
		held.limit = debug.SetMemoryLimit(HeapLimit)
	}
	held.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			held.Lock()
			defer held.Unlock()
			if held.n--; held.n == 0 {
				debug.SetMemoryLimit(held.limit)
				debug.SetGCPercent(held.percent)
			}
		})
	}
}
