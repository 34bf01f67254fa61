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
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
	if userTuned(getenv) {
		return func() {}
	}
	held.Lock()
	defer held.Unlock()
	if held.n == 0 {
		held.percent = debug.SetGCPercent(-1)
		held.limit = debug.SetMemoryLimit(HeapLimit)
	}
	held.n++
	return sync.OnceFunc(func() {
		held.Lock()
		defer held.Unlock()
		if held.n--; held.n == 0 {
			debug.SetMemoryLimit(held.limit)
			debug.SetGCPercent(held.percent)
		}
	})
}

// userTuned says whether $GOGC or $GOMEMLIMIT tune the collector: then it is left alone.
func userTuned(getenv func(string) string) bool {
	return getenv("GOGC") != "" || getenv("GOMEMLIMIT") != ""
}

// Headroom is the least a long-running process lets its heap grow between collections.
// Go's default goal is twice the live heap: a server whose live heap is a few MB (a
// small graph) collected every 40-odd notes, since a write allocates some 100 KB (bbolt
// copies each page it touches into nodes). 32 MB apart, it collects every few hundred
// writes; a graph whose live heap is over 32 MB keeps the default.
const Headroom = 32 << 20

// KeepHeadroom sets the collector's percent, after each collection, so that the next
// one comes at least headroom bytes of allocation later: max(100, headroom×100/live).
// It does nothing while a hold is in force, or when $GOGC or $GOMEMLIMIT tune the
// collector. The returned func ends it (safe twice); when the last caller's has been
// called the percent is 100 again. Several callers share one setting (the last given).
func KeepHeadroom(getenv func(string) string, headroom uint64) (stop func()) {
	if userTuned(getenv) {
		return func() {}
	}
	tuner.Lock()
	defer tuner.Unlock()
	tuner.headroom = headroom
	if tuner.n++; tuner.n == 1 {
		tuner.gen++
		watch(tuner.gen)
	}
	return sync.OnceFunc(func() {
		tuner.Lock()
		defer tuner.Unlock()
		if tuner.n--; tuner.n == 0 {
			setPercent(100)
		}
	})
}

// Prefault touches, once, as much fresh heap as KeepHeadroom lets the heap grow between
// collections, and lets it go: the collections headroom apart then reuse pages already
// mapped. Without it a new process's heap grows into pages never touched for its first
// headroom bytes of allocation, and each is a page fault when first written (~1.6 µs
// here; 8,192 for 32 MB): a note, some 90 KB of garbage, paid about 20 of them, each of
// a server's first 370 or so. It does nothing when no KeepHeadroom is in force
// ($GOGC or $GOMEMLIMIT set, or every caller stopped), when the live heap is as large as
// the headroom (the collector's default already leaves that much between collections,
// and the heap reuses its own pages: at 100,000 identities the touched headroom made
// faults more frequent, 9.7 a note against 1.8), or when the heap holds the live heap
// and the headroom in pages already mapped. Else it allocates and writes headroom bytes
// (~15 ms of CPU for 32 MB), so a caller runs it in the background.
func Prefault() {
	tuner.Lock()
	n, headroom := tuner.n, tuner.headroom
	tuner.Unlock()
	if live := liveHeap(); n == 0 || live >= headroom || MappedHeap() >= live+headroom {
		return
	}
	page := os.Getpagesize()
	// Each chunk is garbage once written: until a collection frees them, the next chunk
	// comes from fresh pages. None is kept, so that a collection meanwhile finds the live
	// heap it would find without them: held, they counted as live, and the next goal
	// (twice that) let the heap overshoot, 84 MB at 50,000 identities against 52.
	for range headroom / prefaultChunk {
		b := make([]byte, prefaultChunk)
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		runtime.KeepAlive(b)
	}
}

// MappedHeap is how much of the heap is in pages not returned to the system: its objects
// (live or not yet swept), the unused part of their spans, and its free pages — what
// Prefault tops up to the live heap and the headroom.
func MappedHeap() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(sample)
	var sum uint64
	for _, s := range sample {
		sum += s.Value.Uint64()
	}
	return sum
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// prefaultChunk is the size of Prefault's allocations: each its own span (over 32 KB),
// whose pages go back to the heap's free pages when collected.
const prefaultChunk = 256 << 10

var tuner struct {
	sync.Mutex
	n        int    // KeepHeadroom callers not yet stopped
	gen      int    // which chain of finalizers is current
	headroom uint64 // bytes
}

// watch arms a finalizer, which runs after the collection that finds its object
// unreachable; it sets the percent from the live heap and arms the next, as long as
// its chain (gen) is the current one and a caller remains.
func watch(gen int) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		tuner.Lock()
		defer tuner.Unlock()
		if gen != tuner.gen || tuner.n == 0 {
			return
		}
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(sample)
		if live := sample[0].Value.Uint64(); live > 0 {
			setPercent(int(max(100, tuner.headroom*100/live)))
		}
		watch(gen)
	})
}

// sentinel has a pointer: the tiny allocator's objects may never be finalized.
type sentinel struct{ _ *int }

// setPercent sets the collector's percent, or the one a hold puts back when it ends.
func setPercent(p int) {
	held.Lock()
	defer held.Unlock()
	if held.n > 0 {
		held.percent = p
		return
	}
	debug.SetGCPercent(p)
}
