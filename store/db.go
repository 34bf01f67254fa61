package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"crypto/sha256"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

var _ graph.Store = (*DB)(nil)
var _ graph.Notifier = (*DB)(nil)

// Options configure Open.
type Options struct {
	Now      func() time.Time // clock; time.Now when nil
	Timeout  time.Duration    // how long to wait for the file lock; 1s when zero
	ReadOnly bool             // open shared, refuse writes
	NoBackup bool             // do not copy the file aside before migrating it
	// NoSync skips fsync on commit (benchmarks and scratch data only).
	NoSync bool

	// schemaVersion writes a new file at an old schema version (fixture generation).
	schemaVersion int
}

// DB is an open devgraph database.
type DB struct {
	path    string
	opts    Options
	now     func() time.Time
	bolt    *bolt.DB
	version int
	backup  string

	mu     sync.RWMutex // guards closed and sending on writes
	closed bool
	writes chan *writeReq
	done   chan struct{}

	subMu   sync.Mutex
	subs    map[int]func([]*graph.Event)
	subN    int
	notifyQ chan []*graph.Event // committed events, delivered in order by notifyLoop
	notifyD chan struct{}

	migratedFrom int

	suggester atomic.Pointer[graph.Suggester] // names the closest node of an unknown id; see SetSuggester

	// testHook, when set, is called at named points inside write transactions; an error
	// it returns aborts the write (atomicity tests).
	testHook func(point string) error
}

// Open opens (creating if needed) the devgraph database at path, migrating an older file
// after backing it up. A file another process holds gives ELOCKED after opts.Timeout; a
// file that is not a devgraph database, is damaged or is from a newer devgraph gives
// EINVALID.
func Open(path string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if path == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "db", "database path is empty; pass --db or set DEVGRAPH_DB")
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, graph.FieldErrorf(graph.EINVALID, "db", "%s is a directory, not a devgraph database; pass a file path", path)
		}
		if fi.Size() > 0 && fi.Size() < 4096 {
			return nil, notDevgraph(path, "the file is too short")
		}
	} else if opts.ReadOnly {
		return nil, graph.Errorf(graph.ENOTFOUND, "database %s does not exist; create it by running a command that writes", path)
	} else if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, graph.Errorf(graph.EINVALID, "cannot create the directory for %s: %v", path, err)
		}
	}
	bdb, err := openBolt(path, opts)
	if err != nil {
		return nil, err
	}
	db := &DB{path: path, opts: opts, now: opts.Now, bolt: bdb, subs: map[int]func([]*graph.Event){}}
	if err := db.checkSize(); err != nil {
		bdb.Close()
		return nil, err
	}
	if st, err := migrations.StatusOf(bdb, path); err == nil && st.Version > 0 && st.Version < migrations.CurrentVersion {
		db.migratedFrom = st.Version
	}
	db.version, db.backup, err = migrations.Prepare(bdb, path, migrations.Options{
		Now: opts.Now, NoBackup: opts.NoBackup, ReadOnly: opts.ReadOnly, Version: opts.schemaVersion,
	})
	if err != nil {
		bdb.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		writePID(path)
		db.writes = make(chan *writeReq, 1024)
		db.done = make(chan struct{})
		db.notifyQ = make(chan []*graph.Event, 1024)
		db.notifyD = make(chan struct{})
		go db.commitLoop()
		go db.notifyLoop()
	}
	return db, nil
}

func openBolt(path string, opts Options) (bdb *bolt.DB, err error) {
	defer func() {
		// bbolt panics on some damaged files instead of returning an error.
		if r := recover(); r != nil {
			bdb, err = nil, notDevgraph(path, fmt.Sprint(r))
		}
	}()
	bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout, ReadOnly: opts.ReadOnly, NoSync: opts.NoSync, FreelistType: bolt.FreelistMapType})
	switch {
	case err == nil:
		return bdb, nil
	case errors.Is(err, berrors.ErrTimeout):
		msg := fmt.Sprintf("database %s is in use by another devgraph process", path)
		if pid := readPID(path); pid > 0 {
			msg = fmt.Sprintf("database %s is in use by another devgraph process (pid %d)", path, pid)
		}
		return nil, graph.Errorf(graph.ELOCKED, "%s; stop it or use its socket", msg)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, notDevgraph(path, err.Error())
	case os.IsPermission(err):
		return nil, graph.Errorf(graph.EINVALID, "cannot open %s: permission denied", path)
	default:
		return nil, notDevgraph(path, err.Error())
	}
}

func notDevgraph(path, why string) error {
	return graph.Errorf(graph.EINVALID, "%s is not a devgraph database or is damaged (%s); point --db elsewhere or restore it from a backup", path, why)
}

// checkSize catches a truncated file, which bbolt would otherwise fault on when reading
// past its end.
func (db *DB) checkSize() error {
	fi, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	var need int64
	err = db.bolt.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil })
	if err != nil {
		return notDevgraph(db.path, err.Error())
	}
	if fi.Size() < need {
		return notDevgraph(db.path, fmt.Sprintf("the file is truncated: %d bytes, %d expected", fi.Size(), need))
	}
	return nil
}

func pidPath(path string) string { return path + ".pid" }

func writePID(path string) { os.WriteFile(pidPath(path), []byte(strconv.Itoa(os.Getpid())), 0o600) }

func readPID(path string) int {
	b, err := os.ReadFile(pidPath(path))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Version returns the schema version the file is at.
func (db *DB) Version() int { return db.version }

// MigratedFrom returns the schema version Open migrated the file from (0 when it did not).
func (db *DB) MigratedFrom() int { return db.migratedFrom }

// SchemaStatus reports the open file's schema state (for devgraph migrate --status when a
// server holds the file).
func (db *DB) SchemaStatus() (*migrations.StatusReport, error) {
	return migrations.StatusOf(db.bolt, db.path)
}

// SchemaStatus reports the schema state of the database at path without changing it
// (devgraph migrate --status). ENOTFOUND when the file does not exist.
func SchemaStatus(path string) (*migrations.StatusReport, error) { return migrations.Status(path) }

// BackupPath returns where Open copied the file before migrating it ("" when it did not).
func (db *DB) BackupPath() string { return db.backup }

// Close waits for queued writes, then closes the file. It is safe to call twice.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	if db.writes != nil {
		close(db.writes)
	}
	db.mu.Unlock()
	if db.done != nil {
		<-db.done
		close(db.notifyQ)
		<-db.notifyD
		if readPID(db.path) == os.Getpid() {
			os.Remove(pidPath(db.path))
		}
	}
	return db.bolt.Close()
}

// Subscribe calls fn after each committed write with its events, in commit order, from one
// delivery goroutine (never inside a transaction). fn may read and even write the store;
// a slow fn delays later notifications, not writes.
func (db *DB) Subscribe(fn func(events []*graph.Event)) (cancel func()) {
	db.subMu.Lock()
	defer db.subMu.Unlock()
	db.subN++
	n := db.subN
	db.subs[n] = fn
	return func() {
		db.subMu.Lock()
		delete(db.subs, n)
		db.subMu.Unlock()
	}
}

func (db *DB) notify(evs []*graph.Event) {
	if len(evs) > 0 {
		db.notifyQ <- evs
	}
}

func (db *DB) notifyLoop() {
	defer close(db.notifyD)
	for evs := range db.notifyQ {
		db.deliver(evs)
	}
}

func (db *DB) deliver(evs []*graph.Event) {
	db.subMu.Lock()
	fns := make([]func([]*graph.Event), 0, len(db.subs))
	for _, fn := range db.subs {
		fns = append(fns, fn)
	}
	db.subMu.Unlock()
	for _, fn := range fns {
		func() {
			defer func() { recover() }()
			fn(evs)
		}()
	}
}

// ---- reads ----------------------------------------------------------------------------

var errClosed = graph.Errorf(graph.EUNAVAILABLE, "the database is closed")

func (db *DB) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ok, err := db.inView(ctx, fn); ok {
		return db.finish(ctx, err)
	}
	err := db.bolt.View(fn)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errClosed
	}
	return db.finish(ctx, err)
}

// ---- writes: group commit ---------------------------------------------------------------

type writeReq struct {
	ctx    context.Context
	fn     func(w *wtx) error
	err    error
	events []*graph.Event
	done   chan struct{}
}

const maxBatch = 256

// update runs fn in a write transaction, possibly together with other callers' writes
// (group commit). fn may run more than once (when a write grouped with it fails), so it
// must derive everything from the transaction and set its results afresh each time.
func (db *DB) update(ctx context.Context, fn func(w *wtx) error) ([]*graph.Event, error) {
	if db.opts.ReadOnly {
		return nil, graph.Errorf(graph.EINVALID, "database %s is open read-only; this change needs it read-write", db.path)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if db.viewOf(ctx) != nil {
		return nil, errInView()
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return nil, errClosed
	}
	db.writes <- r
	db.mu.RUnlock()
	<-r.done
	return r.events, db.finish(ctx, r.err)
}

func (db *DB) commitLoop() {
	defer close(db.done)
	for r := range db.writes {
		batch := []*writeReq{r}
	gather:
		for len(batch) < maxBatch {
			select {
			case r2, ok := <-db.writes:
				if !ok {
					break gather
				}
				batch = append(batch, r2)
			default:
				break gather
			}
		}
		db.runBatch(batch)
	}
}

func (db *DB) runBatch(batch []*writeReq) {
	for len(batch) > 0 {
		failed := -1
		var ferr error
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			w, err := newWtx(db, tx)
			if err != nil {
				return err
			}
			for i, r := range batch {
				if err := w.run(r); err != nil {
					failed, ferr = i, err
					return err
				}
			}
			return w.flush()
		})
		if err == nil {
			for _, r := range batch {
				db.notify(r.events)
				close(r.done)
			}
			return
		}
		if failed < 0 {
			for _, r := range batch {
				r.err, r.events = internal("commit", err), nil
				close(r.done)
			}
			return
		}
		r := batch[failed]
		r.err, r.events = ferr, nil
		close(r.done)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

func internal(step string, err error) error {
	var ge *graph.Error
	if errors.As(err, &ge) {
		return err
	}
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errClosed
	}
	return fmt.Errorf("%s: %w", step, err)
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// dryRun runs fn in its own write transaction and rolls it back.
func (db *DB) dryRun(ctx context.Context, fn func(w *wtx) error) error {
	if db.opts.ReadOnly {
		return graph.Errorf(graph.EINVALID, "database %s is open read-only", db.path)
	}
	if db.viewOf(ctx) != nil {
		return errInView()
	}
	r := &writeReq{ctx: ctx, fn: fn}
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		w, err := newWtx(db, tx)
		if err != nil {
			return err
		}
		if err := w.run(r); err != nil {
			return err
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return db.finish(ctx, internal("dry run", err))
}

// wtx is one write transaction shared by a group of requests.
type wtx struct {
	db       *DB
	tx       *bolt.Tx
	head     migrations.Head
	counters map[string]int64
	bk       map[string]*bolt.Bucket

	// pending, when not nil, collects puts to make them in key order at flushPending
	// (bulk import: bbolt inserts into a node by moving its tail, so unsorted bulk puts
	// cost quadratic time); tagDelta collects tag count changes meanwhile.
	pending  map[string][]kv
	tagDelta map[string]int64

	// the request running now
	r     *writeReq
	now   time.Time
	reqID string
	actor string
	msg   string
}

func newWtx(db *DB, tx *bolt.Tx) (*wtx, error) {
	w := &wtx{db: db, tx: tx, counters: map[string]int64{}, bk: map[string]*bolt.Bucket{}}
	for _, name := range migrations.AllBuckets {
		b := tx.Bucket(name)
		if b == nil {
			return nil, fmt.Errorf("bucket %s missing", name)
		}
		w.bk[string(name)] = b
	}
	w.bk[string(migrations.BucketEvents)].FillPercent = 1
	if h, ok := migrations.DecodeHead(w.b(migrations.BucketMeta).Get(migrations.KeyHead)); ok {
		w.head = h
	} else if h, ok := migrations.DecodeHead(w.b(migrations.BucketMeta).Get(migrations.KeyCheckpoint)); ok {
		w.head = h
	}
	return w, nil
}

func (w *wtx) b(name []byte) *bolt.Bucket { return w.bk[string(name)] }

func (w *wtx) run(r *writeReq) (err error) {
	w.r = r
	r.events = nil
	w.now = w.db.now().UTC()
	w.reqID = graph.RequestIDFrom(r.ctx)
	if w.reqID == "" {
		w.reqID = graph.NewRequestID()
	}
	w.actor = graph.ActorFrom(r.ctx)
	w.msg = graph.MessageFrom(r.ctx)
	if err := r.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in write: %v\n%s", p, debug.Stack())
		}
	}()
	return r.fn(w)
}

// hook calls the test hook at a named point.
func (w *wtx) hook(point string) error {
	if w.db.testHook != nil {
		return w.db.testHook(point)
	}
	return nil
}

func (w *wtx) count(key []byte, d int64) { w.counters[string(key)] += d }

func (w *wtx) flush() error {
	meta := w.b(migrations.BucketMeta)
	for k, d := range w.counters {
		if d == 0 {
			continue
		}
		v := int64(migrations.ReadU64(meta.Get([]byte(k)))) + d
		if v < 0 {
			v = 0
		}
		if err := meta.Put([]byte(k), migrations.U64(uint64(v))); err != nil {
			return err
		}
	}
	if w.head.Seq > 0 {
		return meta.Put(migrations.KeyHead, migrations.EncodeHead(w.head))
	}
	return nil
}

// body marshals an event body: nil stays absent, json.RawMessage and []byte are kept.
func body(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	return json.Marshal(v)
}

// emit appends one changelog event for target, indexed under target and any related ids.
func (w *wtx) emit(action, target string, before, after any, related ...string) error {
	bb, err := body(before)
	if err != nil {
		return err
	}
	ab, err := body(after)
	if err != nil {
		return err
	}
	e := &graph.Event{
		Seq: w.head.Seq + 1, ID: graph.NewUUIDv7(), Time: w.now, Actor: w.actor, Action: action,
		Target: target, Before: bb, After: ab, Message: w.msg, RequestID: w.reqID,
	}
	return w.appendEvent(e, related...)
}

// appendEvent chains e (its Seq already set to head+1) and stores it.
func (w *wtx) appendEvent(e *graph.Event, related ...string) error {
	if e.Seq != w.head.Seq+1 {
		return fmt.Errorf("event seq %d does not follow head %d", e.Seq, w.head.Seq)
	}
	e.PrevHash = hex.EncodeToString(w.head.Hash[:])
	h := sha256.New()
	h.Write(w.head.Hash[:])
	h.Write(migrations.CanonicalEvent(e))
	var sum [32]byte
	h.Sum(sum[:0])
	e.Hash = hex.EncodeToString(sum[:])
	if err := w.putEvent(e, related...); err != nil {
		return err
	}
	w.head = migrations.Head{Seq: e.Seq, Hash: sum}
	if w.r != nil {
		w.r.events = append(w.r.events, e)
	}
	return nil
}

func (w *wtx) putEvent(e *graph.Event, related ...string) error {
	encode := migrations.EncodeEvent
	if w.db.version == 1 {
		encode = migrations.EncodeEventV1 // only fixture generation writes version-1 files
	}
	rec, err := encode(e)
	if err != nil {
		return err
	}
	key := migrations.U64(e.Seq)
	if err := w.b(migrations.BucketEvents).Put(key, rec); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range append([]string{e.Target}, related...) {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if err := w.put(migrations.BucketEvTarget, joinKey(t, string(key)), nil); err != nil {
			return err
		}
	}
	w.count(migrations.CountEvents, 1)
	return nil
}

// joinKey joins parts with 0x00, the separator of every composite index key.
func joinKey(parts ...string) []byte {
	n := len(parts) - 1
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// prefixKey is joinKey plus a trailing separator, for prefix scans.
func prefixKey(parts ...string) []byte { return append(joinKey(parts...), 0) }

type kv struct{ k, v []byte }

// put writes k=v into bucket now, or later in key order while w.pending is set.
func (w *wtx) put(bucket, k, v []byte) error {
	if w.pending != nil {
		w.pending[string(bucket)] = append(w.pending[string(bucket)], kv{k, v})
		return nil
	}
	return w.b(bucket).Put(k, v)
}

// deferPuts starts collecting puts; flushPending makes them in key order.
func (w *wtx) deferPuts() {
	w.pending = map[string][]kv{}
	w.tagDelta = map[string]int64{}
}

func (w *wtx) flushPending() error {
	pending, deltas := w.pending, w.tagDelta
	w.pending, w.tagDelta = nil, nil
	for name, kvs := range pending {
		slices.SortStableFunc(kvs, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		b := w.b([]byte(name))
		for _, p := range kvs {
			if err := b.Put(p.k, p.v); err != nil {
				return err
			}
		}
	}
	tags := make([]string, 0, len(deltas))
	for t := range deltas {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	for _, t := range tags {
		if err := w.bumpTag(t, deltas[t]); err != nil {
			return err
		}
	}
	return nil
}
