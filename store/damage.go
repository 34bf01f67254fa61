package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
)

// A damaged file (cut short by a full disk or a careless copy, overwritten, or not a
// devgraph database at all) must give one clear error, never kill the process. bbolt reads
// its file through a memory map and trusts what it finds there: a page past the end of the
// file faults (SIGBUS), a page pointer into nowhere faults (SIGSEGV) or reads garbage, and
// a page of the wrong type makes bbolt panic. So the store
//
//   - checks the file's header itself, with plain reads, before bbolt maps it (checkHeader):
//     the size, both meta pages' magic, version, page size and checksum, and that the file
//     holds every page the newest valid meta says it has;
//   - runs bbolt's full consistency check (tx.Check) after an unclean shutdown, which the
//     pid file a writer leaves beside the database tells (see Open), and in doctor;
//   - reads with faults turned into panics (guard), so a fault or one of bbolt's panics on a
//     bad page becomes that same error, and the database is marked failed: every later call
//     gets the error instead of touching the memory map again.

// damageAdvice is the way out every damaged-file error ends with.
const damageAdvice = "restore a backup; devgraph backup makes one"

// damagedFile returns the error for a database file that cannot be used as it is: problem
// completes "database <path> …".
func damagedFile(path, problem string) *graph.Error {
	return graph.Errorf(graph.EINVALID, "database %s %s: %s", path, problem, damageAdvice)
}

// damagedOr is damagedFile with another way out offered first.
func damagedOr(path, problem, other string) *graph.Error {
	return graph.Errorf(graph.EINVALID, "database %s %s: %s, or %s", path, problem, other, damageAdvice)
}

// bbolt's on-disk layout (go.etcd.io/bbolt internal/common: page.go, meta.go), in the
// machine's byte order: a page header (id u64, flags u16, count u16, overflow u32), then
// on a meta page the meta: magic u32, version u32, page size u32, flags u32, root bucket
// (root pgid u64, sequence u64), freelist pgid u64, high-water pgid u64, txid u64 and an
// FNV-64a checksum of the bytes before it.
const (
	pageHeaderSize = 16
	metaSize       = 64
	metaSumSize    = 56 // the bytes the checksum covers
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	noFreelist     = ^uint64(0)
)

// fileMeta is one meta page as read from the file.
type fileMeta struct {
	magic, version, pageSize uint32
	root, freelist, pgid     uint64
	txid                     uint64
	sumOK                    bool
}

func parseMeta(page []byte) fileMeta {
	m := page[pageHeaderSize : pageHeaderSize+metaSize]
	ne := binary.NativeEndian
	h := fnv.New64a()
	h.Write(m[:metaSumSize])
	return fileMeta{
		magic:    ne.Uint32(m[0:]),
		version:  ne.Uint32(m[4:]),
		pageSize: ne.Uint32(m[8:]),
		root:     ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]),
		pgid:     ne.Uint64(m[40:]),
		txid:     ne.Uint64(m[48:]),
		sumOK:    ne.Uint64(m[56:]) == h.Sum64(),
	}
}

// valid is what bbolt's Meta.Validate checks.
func (m fileMeta) valid() bool {
	return m.magic == boltMagic && m.version == boltVersion && m.sumOK
}

// sanePageSize reports whether n is a page size bbolt could have written: a power of two
// from 1 KiB (bbolt's smallest) to 1 MiB (well above any OS page size).
func sanePageSize(n uint32) bool { return n >= 1024 && n <= 1<<20 && n&(n-1) == 0 }

// fileHeader is what checkHeader found.
type fileHeader struct {
	size      int64
	pageSize  int
	meta      fileMeta // the newest valid meta, the one bbolt will use
	staleMeta int      // the meta page (0 or 1) that failed its checks, else -1
}

// checkHeader checks the database file at path with plain reads before bbolt maps it:
// an error names what is wrong (empty, truncated, not a bbolt file, damaged header). A
// missing file is not its business (nil, nil: Open creates it).
func checkHeader(path string) (*fileHeader, error) {
	// O_NONBLOCK: a named pipe at path would block a plain open until a writer came;
	// this one returns, and the pipe is refused below as not a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		if os.IsPermission(err) {
			return nil, graph.Errorf(graph.EINVALID, "cannot open %s: permission denied", path)
		}
		return nil, graph.Errorf(graph.EINVALID, "cannot open %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "cannot read %s: %v", path, err)
	}
	if fi.IsDir() {
		return nil, graph.FieldErrorf(graph.EINVALID, "db", "%s is a directory, not a devgraph database; pass a file path", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, graph.FieldErrorf(graph.EINVALID, "db", "%s is not a regular file, so not a devgraph database; pass the database's file path", path)
	}
	size := fi.Size()
	if size == 0 {
		return nil, damagedOr(path, "is empty (0 bytes), not a devgraph database", "remove it to start a new one")
	}
	// meta 0 is at offset 0; meta 1 one page further, where the page size meta 0 gives
	// says, or (meta 0 damaged) at one of the offsets bbolt itself tries.
	read := func(off int64) ([]byte, bool) {
		buf := make([]byte, pageHeaderSize+metaSize)
		n, err := f.ReadAt(buf, off)
		return buf, n == len(buf) && (err == nil || err == io.EOF)
	}
	var metas []fileMeta
	b0, ok0 := read(0)
	if !ok0 {
		return nil, damagedFile(path, fmt.Sprintf("is too short to be a devgraph database (%d bytes)", size))
	}
	m0 := parseMeta(b0)
	metas = append(metas, m0)
	pageSize := 0
	sawMagic := m0.magic == boltMagic
	if m0.valid() {
		if !sanePageSize(m0.pageSize) {
			return nil, damagedFile(path, fmt.Sprintf("has a damaged header: page size %d", m0.pageSize))
		}
		pageSize = int(m0.pageSize)
		if b1, ok := read(int64(pageSize)); ok {
			metas = append(metas, parseMeta(b1))
		}
	} else {
		for i := 0; i <= 14; i++ {
			off := int64(1024) << i
			b1, ok := read(off)
			if !ok {
				break
			}
			m1 := parseMeta(b1)
			sawMagic = sawMagic || m1.magic == boltMagic
			if m1.valid() && int64(m1.pageSize) == off {
				if !sanePageSize(m1.pageSize) {
					return nil, damagedFile(path, fmt.Sprintf("has a damaged header: page size %d", m1.pageSize))
				}
				metas, pageSize = append(metas, m1), int(m1.pageSize)
				break
			}
		}
	}
	var best *fileMeta
	for i := range metas {
		if m := &metas[i]; m.valid() && (best == nil || m.txid > best.txid) {
			best = m
		}
	}
	if best == nil {
		switch {
		case !sawMagic && (len(metas) < 2 || metas[1].magic != boltMagic):
			return nil, damagedOr(path, "is not a devgraph database (it has no bbolt header)", "point --db at yours")
		case m0.magic == boltMagic && m0.version != boltVersion:
			return nil, damagedFile(path, fmt.Sprintf("has an unknown bbolt file format (version %d) or a damaged header", m0.version))
		default:
			return nil, damagedFile(path, "has a damaged header (neither meta page passes its checksum)")
		}
	}
	m := *best
	if m.pgid < 2 || m.root >= m.pgid || (m.freelist != noFreelist && m.freelist >= m.pgid) {
		return nil, damagedFile(path, fmt.Sprintf("has a damaged header (root page %d, freelist page %d, %d pages)", m.root, m.freelist, m.pgid))
	}
	if need := int64(m.pgid) * int64(pageSize); size < need {
		return nil, damagedFile(path, fmt.Sprintf("is truncated: %d bytes, its pages need %d", size, need))
	}
	h := &fileHeader{size: size, pageSize: pageSize, meta: m, staleMeta: -1}
	for i, m := range metas {
		if !m.valid() {
			h.staleMeta = i
		}
	}
	if len(metas) < 2 {
		h.staleMeta = 1
	}
	return h, nil
}

// guard runs fn, which reads the file through bbolt, with memory faults turned into
// panics (debug.SetPanicOnFault: per goroutine, so only fn's own reads are covered), and
// turns a fault, or a panic bbolt raises on a page it cannot make sense of, into the
// damaged-file error. Any other panic is not the file's fault and goes on.
func guard(path string, fn func() error) error {
	_, err := guarded(path, fn)
	return err
}

// guarded is guard, also giving, when fn faulted or bbolt panicked, the panicking
// goroutine's stack (nil otherwise). A bug in devgraph that makes bbolt panic (a missing
// bucket used as if it were there) looks like damage here; logged, the stack tells the two
// apart.
func guarded(path string, fn func() error) (stack []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			why, ok := fromDamage(r)
			if !ok {
				panic(r)
			}
			stack, err = debug.Stack(), damagedFile(path, "is damaged: "+why)
		}
	}()
	return nil, fn()
}

// fromDamage reports whether the recovered panic r comes from reading a damaged file: a
// memory fault (a runtime.Error with the faulting address), or a panic raised inside
// bbolt (its assertions on page types and ids, and what garbage makes its code do). It is
// called from the deferred function, while the panicking frames are still on the stack.
func fromDamage(r any) (string, bool) {
	if re, ok := r.(runtime.Error); ok {
		if _, ok := re.(interface{ Addr() uintptr }); ok {
			return "reading it faulted (it is shorter than its pages say, or a page points outside it)", true
		}
	}
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	seenPanic := false
	for {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic":
			seenPanic = true
		case seenPanic && !strings.HasPrefix(fr.Function, "runtime."):
			// the frame that panicked
			if strings.HasPrefix(fr.Function, "go.etcd.io/bbolt") {
				return fmt.Sprintf("bbolt cannot read it (%s)", firstLine(fmt.Sprint(r))), true
			}
			return "", false
		}
		if !more {
			return "", false
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// undecodable turns the error of a read that could not decode a stored value (garbage
// in the file) into the damaged-file error; other errors are returned as they are. Reads
// decode only what the file holds, so a JSON syntax or type error there means damage.
func undecodable(path string, err error) error {
	var ge *graph.Error
	if err == nil || errors.As(err, &ge) {
		return err
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	if errors.As(err, &se) || errors.As(err, &te) || errors.As(err, &pe) {
		return damagedFile(path, "is damaged: a stored value does not decode ("+firstLine(err.Error())+")")
	}
	return err
}

// errNotUTF8 is a stored JSON record holding bytes that are not UTF-8: devgraph writes
// records with encoding/json, which never produces them, so a flipped bit put them there
// (json.Unmarshal would quietly read them as U+FFFD).
var errNotUTF8 = errors.New("it is not valid UTF-8")

// storedUndecodable is the damaged-file error for a stored record (what) that does not
// decode, naming the file tx reads.
func storedUndecodable(tx *bolt.Tx, what string, err error) error {
	return damagedFile(tx.DB().Path(), fmt.Sprintf("is damaged: the stored %s does not decode (%s)", what, firstLine(err.Error())))
}

// checkConsistency runs bbolt's full consistency check on bdb. tx.Check reads in a
// goroutine of its own, where a fault could not be caught; so first every bucket, key and
// value is walked here, under guard, touching each key's and value's first and last byte:
// when that passes, every page Check will read lies inside the file.
//
// bbolt's Check reads the shared free-page list without a lock, so on a database others
// write (exclusive), it runs in a write transaction that is rolled back: writers wait for
// the check instead of racing it.
func checkConsistency(path string, bdb *bolt.DB, exclusive bool) error {
	in := bdb.View
	if exclusive {
		in = func(fn func(*bolt.Tx) error) error {
			tx, err := bdb.Begin(true)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			return fn(tx)
		}
	}
	return guard(path, func() error {
		return in(func(tx *bolt.Tx) error {
			if err := tx.ForEach(func(name []byte, b *bolt.Bucket) error { touchBucket(b); return nil }); err != nil {
				return err
			}
			var problems []string
			for err := range tx.Check() {
				problems = append(problems, err.Error())
			}
			if len(problems) > 0 {
				return damagedFile(path, fmt.Sprintf("fails its consistency check (%d problem(s), first: %s)", len(problems), firstLine(problems[0])))
			}
			return nil
		})
	})
}

// touched keeps touchBucket's reads from being optimised away.
var touched atomic.Uint32

func touchBucket(b *bolt.Bucket) {
	var x byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) > 0 {
			x ^= k[0] ^ k[len(k)-1]
		}
		if v == nil {
			if sub := b.Bucket(k); sub != nil {
				touchBucket(sub)
			}
			continue
		}
		if len(v) > 0 {
			x ^= v[0] ^ v[len(v)-1]
		}
	}
	touched.Add(uint32(x))
}

// checkWritten refuses a file that holds no buckets although transactions were committed
// to it (its newest meta's txid is past the two bbolt writes at creation): a damaged root
// page, which the schema step would otherwise take for a new file and initialise,
// hiding every record.
func checkWritten(path string, bdb *bolt.DB, hdr *fileHeader) error {
	if hdr.meta.txid < 2 {
		return nil
	}
	return bdb.View(func(tx *bolt.Tx) error {
		n := 0
		tx.ForEach(func([]byte, *bolt.Bucket) error { n++; return nil })
		if n == 0 {
			return damagedFile(path, fmt.Sprintf("is damaged: its root page lists nothing, yet %d transactions were committed to it", hdr.meta.txid))
		}
		return nil
	})
}
