package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

var _ graph.Store = (*DB)(nil)
var _ graph.Notifier = (*DB)(nil)
var _ graph.Hosted = (*DB)(nil)

// Options configure Open.
type Options struct {
	Now      func() time.Time // clock; time.Now when nil
	Timeout  time.Duration    // how long to wait for the file lock; 1s when zero
	ReadOnly bool             // open shared, refuse writes
	NoBackup bool             // do not copy the file aside before migrating it
	// NoSync skips fsync on commit (benchmarks and scratch data only).
	NoSync bool
	// Logger receives what the store reports on its own (a dropped subscriber, a device
	// a restore could not bind again); slog.Default() when nil.
	Logger *slog.Logger

	// Host is this machine's host name (a slug, graph.ValidateHost): the host of the
	// devices and robots discovery records here. A file holds the host name it was first
	// written with (meta "host"); opening it for writing under another is refused. ""
	// takes the file's, or for a file without one graph.HostSlug(os.Hostname()).
	Host string
	// Fleet is set by the cluster front end: refs, device keys and usb_path fingerprints
	// carry their host ("studio-a/usb:3-3.2"), a bare ref resolves on Host, and actors are
	// recorded with "@Host". A plain bbolt file leaves it false: ids and refs as they are.
	Fleet bool
	// ReplicaOf, when set, opens the file as the replica of that shared store (a cluster's
	// name): a new file is marked as its replica, an existing one must be (see replica.go).
	ReplicaOf string
	// ReplicaURL is the --store URL the replica is served from, kept to name it in messages.
	ReplicaURL string
	// Committer, with ReplicaOf, ships every write's changes to the shared store before
	// the replica keeps them (see Committer).
	Committer Committer

	// schemaVersion writes a new file at an old schema version (fixture generation).
	schemaVersion int
}

// DB is an open devgraph database.
type DB struct {
	path    string
	opts    Options
	now     func() time.Time
	log     *slog.Logger
	bolt    *bolt.DB
	version int
	buckets fileBuckets // the buckets the file lacks at its version (Open's checkBuckets)
	backup  string
	host    string // the host name in force: Options.Host, else the file's

	mu     sync.RWMutex // guards closed and sending on writes
	closed bool
	writes chan *writeReq
	done   chan struct{}

	subMu      sync.Mutex // guards subs, subN, subsClosed and sending on their queues
	subs       map[int]*subscription
	subN       int
	subsClosed bool
	subWG      sync.WaitGroup // one per subscription goroutine

	migratedFrom int

	replicaOf  string       // the shared store this file mirrors; "" for an ordinary database
	replicaURL string       // the --store URL it was last served from
	replica    replicaState // the revision of the shared store's last commit the replica holds
	shared     sharedWrites // a shared store's write in flight (replica.go)
	refill     atomic.Int64 // a commit the shared store made (at this revision) could not be stored here: the feed refills the replica (replica.go)

	// failed is set when a read found the file damaged (a fault, or bbolt panicking on a
	// page): every later call returns it instead of touching the memory map again.
	failed atomic.Pointer[graph.Error]

	suggester atomic.Pointer[graph.Suggester] // names the closest node of an unknown id; see SetSuggester

	writeFailed atomic.Pointer[graph.Error] // set when a commit failed with an unknown outcome (diskfull.go)

	// writerLost is set when a fault escaped bbolt's Update (in its commit or its
	// rollback, on a file cut under us): its writer lock may be held for good, so Close
	// leaves the file to the process's exit.
	writerLost atomic.Bool

	// testHook, when set, is called at named points inside write transactions; an error
	// it returns aborts the write (atomicity tests).
	testHook func(point string) error

	// txObserver, when set, is called as each write transaction (dry runs included)
	// begins and again once it has committed or rolled back, before its callers are
	// answered: the hold-time benchmark times the writer's hold from the two calls (the
	// store itself reads no clock but Options.Now).
	txObserver func(begin bool)

	// beforeCommit, when set, is handed each write transaction's write set (every put and
	// delete it made, in order) after its last write and before bbolt commits it; an error
	// rolls the transaction back and fails every write grouped in it. It is the seam for a
	// committer that ships write sets elsewhere (an etcd cluster); today only tests set it.
	beforeCommit func(changes []change) error
}

// Open opens (creating if needed) the devgraph database at path, migrating an older file
// after backing it up. A file another process holds gives ELOCKED after opts.Timeout; a
// file that is not a devgraph database, is damaged or is from a newer devgraph gives
// EINVALID, naming the problem and the way out (see damage.go). After an unclean shutdown
// (the pid file a writer keeps beside the database is still there) Open runs bbolt's full
// consistency check first.
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
	if opts.Host != "" {
		if err := graph.ValidateHost(opts.Host); err != nil {
			return nil, err
		}
	}
	hdr, err := checkHeader(path)
	if err != nil {
		return nil, err
	}
	if hdr == nil { // no file yet
		if opts.ReadOnly {
			return nil, graph.Errorf(graph.ENOTFOUND, "database %s does not exist; create it by running a command that writes", path)
		}
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, graph.Errorf(graph.EINVALID, "cannot create the directory for %s: %v", path, err)
			}
		}
	}
	bdb, err := openBolt(path, opts)
	if err != nil {
		return nil, openDiskFull(path, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	db := &DB{path: path, opts: opts, now: opts.Now, log: opts.Logger, bolt: bdb, subs: map[int]*subscription{}}
	// Holding bbolt's lock, no other devgraph writes the file: a pid file left beside it
	// means the last writer did not get to Close (killed, crashed, power cut).
	_, statErr := os.Stat(pidPath(path))
	unclean := hdr != nil && statErr == nil
	err = guard(path, func() error {
		if err := db.checkSize(); err != nil {
			return err
		}
		if unclean {
			if err := checkConsistency(path, bdb, false); err != nil {
				return err
			}
		}
		if hdr != nil {
			if err := checkWritten(path, bdb, hdr); err != nil {
				return err
			}
			if hdr.staleMeta >= 0 {
				opts.Logger.Warn("one of the database's two header pages is damaged; bbolt uses the other, so the last write before it may be missing", "db", path, "page", hdr.staleMeta)
			}
		}
		if st, err := migrations.StatusOf(bdb, path); err == nil && st.Version > 0 && st.Version < migrations.CurrentVersion {
			db.migratedFrom = st.Version
		}
		host := opts.Host
		if host == "" && !opts.Fleet {
			host = migrations.HostOf(bdb)
		}
		if host == "" {
			name, _ := os.Hostname()
			host = graph.HostSlug(name)
		}
		var err error
		db.version, db.backup, err = migrations.Prepare(bdb, path, migrations.Options{
			Now: opts.Now, NoBackup: opts.NoBackup, ReadOnly: opts.ReadOnly, Version: opts.schemaVersion, Host: host, Fleet: opts.Fleet,
		})
		db.host = host
		if db.version < 4 {
			db.host = "" // a fixture written at a version before hosts
		}
		if held := migrations.HostOf(bdb); held != "" && opts.ReadOnly && !opts.Fleet {
			db.host = held // reading another machine's file: its devices are its host's
		}
		if err != nil {
			return err
		}
		return bdb.View(func(tx *bolt.Tx) error { db.buckets = checkBuckets(tx); return nil })
	})
	if err != nil {
		bdb.Close()
		return nil, undecodable(path, openDiskFull(path, err))
	}
	if err := db.openReplica(hdr == nil); err != nil {
		bdb.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		writePID(path)
		db.writes = make(chan *writeReq, 1024)
		db.done = make(chan struct{})
		go db.commitLoop()
	}
	return db, nil
}

// openBolt opens path with bbolt, under guard: bbolt reads the meta pages and the
// freelist through its memory map while opening (preloaded in read-only mode too, so
// that a later tx.Check, reading in a goroutine of its own, finds it loaded).
// renamedOver reports whether the file at path is no longer f, the file opened (and
// locked) under that name.
func renamedOver(path string, f *os.File) bool {
	if f == nil {
		return false
	}
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && !os.SameFile(held, now)
}

func openBolt(path string, opts Options) (bdb *bolt.DB, err error) {
	// bbolt panicking halfway through Open cannot close its file: close it here (which
	// drops its lock), so a long-running process does not keep it.
	var file *os.File
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	stack, err := guarded(path, func() (err error) {
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.Timeout, ReadOnly: opts.ReadOnly, NoSync: opts.NoSync,
			FreelistType: bolt.FreelistMapType, PreLoadFreelist: true, OpenFile: openFile, InitialMmapSize: mmapReserve})
		if err == nil {
			if fi, serr := file.Stat(); serr == nil {
				growStep(bdb, fi.Size())
			}
		}
		return err
	})
	if stack != nil && file != nil {
		file.Close()
	}
	var ge *graph.Error
	switch {
	case err == nil && renamedOver(path, file):
		// While we waited for the lock, another file was renamed over path (compact
		// does so before it lets go of the old one): writing to the old file would be
		// writing to nobody. Open the one at path now.
		bdb.Close()
		return openBolt(path, opts)
	case err == nil:
		return bdb, nil
	case errors.As(err, &ge):
		return nil, err
	case errors.Is(err, berrors.ErrTimeout):
		msg := fmt.Sprintf("database %s is in use by another devgraph process", path)
		if pid := readPID(path); pid > 0 {
			msg = fmt.Sprintf("database %s is in use by another devgraph process (pid %d)", path, pid)
		}
		return nil, graph.Errorf(graph.ELOCKED, "%s; stop it or use its socket", msg)
	case os.IsPermission(err):
		return nil, graph.Errorf(graph.EINVALID, "cannot open %s: permission denied", path)
	default:
		return nil, damagedFile(path, "cannot be read ("+err.Error()+")")
	}
}

// checkSize catches a file cut short after checkHeader read it (the same check, on the
// meta bbolt chose), which bbolt would otherwise fault on when reading past its end.
func (db *DB) checkSize() error {
	fi, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	var need int64
	err = db.bolt.View(func(tx *bolt.Tx) error { need = tx.Size(); return nil })
	if err != nil {
		return damagedFile(db.path, "cannot be read ("+err.Error()+")")
	}
	if fi.Size() < need {
		return damagedFile(db.path, fmt.Sprintf("is truncated: %d bytes, its pages need %d", fi.Size(), need))
	}
	return nil
}

func pidPath(path string) string { return path + ".pid" }

// writePID replaces the pid file (a temp file renamed over it) rather than writing
// through whatever is there: a symlink there would make this process overwrite the file
// it points to, a named pipe would block it. Best effort, like the file itself.
func writePID(path string) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".pid.*")
	if err != nil {
		return
	}
	_, err = f.WriteString(strconv.Itoa(os.Getpid()))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), pidPath(path))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// readPID reads the pid file when it is a regular file (not through a symlink, never
// blocking on a named pipe); 0 when there is none.
func readPID(path string) int {
	f, err := os.OpenFile(pidPath(path), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	b, _ := io.ReadAll(io.LimitReader(f, 32))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// Version returns the schema version the file is at.
func (db *DB) Version() int { return db.version }

// Host is the host name in force: the devices discovery records here are its. See
// graph.Hosted.
func (db *DB) Host() string { return db.host }

// actorAt is actor as this store records it: with "@host" on a fleet, as it is in a file.
func (db *DB) actorAt(actor string) string {
	if !db.opts.Fleet {
		return actor
	}
	return graph.ActorAt(actor, db.host)
}

// actorOf is ctx's actor as this store records it: on a fleet, an actor that acted from
// another host (graph.WithActorOfHost: a robot command routed here) keeps that host.
func (db *DB) actorOf(ctx context.Context) string {
	if a, ok := graph.HostedActor(ctx); ok && db.opts.Fleet {
		return a
	}
	return db.actorAt(graph.ActorFrom(ctx))
}

// MultiHost reports whether refs, keys and usb_path fingerprints carry their host
// (Options.Fleet). See graph.Hosted.
func (db *DB) MultiHost() bool { return db.opts.Fleet }

// MigratedFrom returns the schema version Open migrated the file from (0 when it did not).
func (db *DB) MigratedFrom() int { return db.migratedFrom }

// SchemaStatus reports the open file's schema state (for devgraph migrate --status when a
// server holds the file).
func (db *DB) SchemaStatus() (*migrations.StatusReport, error) {
	return migrations.StatusOf(db.bolt, db.path)
}

// SchemaStatus reports the schema state of the database at path without changing it
// (devgraph migrate --status). ENOTFOUND when the file does not exist.
func SchemaStatus(path string) (r *migrations.StatusReport, err error) {
	if _, err := checkHeader(path); err != nil {
		return nil, err
	}
	err = guard(path, func() (err error) {
		r, err = migrations.Status(path)
		return err
	})
	return r, err
}

// BackupPath returns where Open copied the file before migrating it ("" when it did not).
func (db *DB) BackupPath() string { return db.backup }

// Close waits for queued writes and for every subscription to be called with what was
// committed before (so a subscriber's fn must return), then closes the file. It is safe
// to call twice.
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
		<-db.done // nothing commits any more, so nothing more is queued for subscribers
	}
	db.subMu.Lock()
	db.subsClosed = true
	for n, s := range db.subs {
		delete(db.subs, n)
		close(s.queue)
	}
	db.subMu.Unlock()
	db.subWG.Wait()
	// A DB that found its file damaged leaves the pid file, so the next Open runs the
	// full consistency check.
	if db.done != nil && readPID(db.path) == os.Getpid() && db.failed.Load() == nil {
		os.Remove(pidPath(db.path))
	}
	if db.writerLost.Load() {
		// bbolt's Close takes its writer lock first, which a fault inside its own
		// rollback left held: closing would hang (serve did, on SIGTERM). The file and
		// its lock are released when the process exits.
		db.log.Warn("the damaged database is left open until the process exits (a fault inside a write left bbolt's lock held)", "db", db.path)
		return nil
	}
	return db.bolt.Close()
}

// ---- reads ----------------------------------------------------------------------------

var errClosed = graph.Errorf(graph.EUNAVAILABLE, "the database is closed")

// view runs fn in a read transaction: ctx's read view, else one of its own. It is
// guarded (see damage.go): a damaged file gives the damaged-file error and fails the DB.
func (db *DB) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := graph.SettleCommits(ctx); err != nil {
		return err // a request reads its own writes
	}
	err := db.guard(func() error {
		if ok, err := db.inView(ctx, fn); ok {
			return err
		}
		return db.bolt.View(fn)
	})
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errClosed
	}
	return db.finish(ctx, undecodable(db.path, err))
}

// guard runs fn (which reads or writes through bbolt) under the package's guard, unless
// the DB has already failed; a damaged-file error it gives fails the DB.
func (db *DB) guard(fn func() error) error {
	if err := db.failed.Load(); err != nil {
		return err
	}
	stack, err := guarded(db.path, fn)
	if stack != nil {
		var ge *graph.Error
		errors.As(err, &ge)
		if db.failed.CompareAndSwap(nil, ge) {
			db.log.Error("database damaged; refusing every further call", "db", db.path, "err", err, "stack", string(stack))
		}
		return db.failed.Load()
	}
	return err
}

// ---- writes: group commit ---------------------------------------------------------------

type writeReq struct {
	ctx    context.Context
	fn     func(w *wtx) error
	err    error
	events []*graph.Event
	done   chan struct{}
	// ready, when the write's commit may be held (graph.HoldCommit), is closed once the
	// transaction's work is done and only bbolt's commit is left; prepared then holds
	// the events (r.events is cleared if the commit fails).
	ready    chan struct{}
	readied  bool
	prepared []*graph.Event
}

// readyAll tells the writes of batch whose commit may be held that only the commit is
// left.
func readyAll(batch []*writeReq) {
	for _, r := range batch {
		if r.ready != nil && !r.readied {
			r.readied, r.prepared = true, r.events
			close(r.ready)
		}
	}
}

const maxBatch = 256

// maxCommitAttempts bounds how often a write is made again after losing a race for the
// shared store's next commit to another front end.
const maxCommitAttempts = 50

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
	if err := checkCaller(ctx); err != nil {
		return nil, err
	}
	if err := graph.SettleCommits(ctx); err != nil {
		return nil, err // never write on top of this request's write that failed
	}
	if err := db.failed.Load(); err != nil {
		return nil, err
	}
	if db.viewOf(ctx) != nil {
		return nil, errInView()
	}
	if err := db.writesRefused(); err != nil {
		return nil, err
	}
	if db.replicaOf != "" && db.opts.Committer == nil {
		return nil, db.errReplicaNoFrontEnd()
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	if db.opts.Committer == nil && graph.CanHoldCommit(ctx) {
		r.ready = make(chan struct{})
	}
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return nil, errClosed
	}
	db.writes <- r
	db.mu.RUnlock()
	if r.ready != nil {
		// The edge sends no answer before the commit is durable (graph.WithCommitHold):
		// return the results once only the commit is left, and let the edge prepare
		// the answer while bbolt writes and syncs.
		select {
		case <-r.ready:
			// A held write failed, if at all, in bbolt's commit or at the disk: every fn
			// had succeeded (readyAll), so its error is never an unknown id for finish to
			// word, and waiting never reads for ctx (which would settle ctx again).
			wait := func() error {
				<-r.done
				return r.err
			}
			if !graph.HoldCommit(ctx, wait) { // the edge answered meanwhile
				if err := wait(); err != nil {
					return nil, err
				}
			}
			return r.prepared, nil
		case <-r.done:
		}
	}
	<-r.done
	return r.events, db.finish(ctx, r.err)
}

// checkCaller checks what the context brings into every event a write records, before
// the write is queued: the change message (graph.ValidateMessage), so no interface, nor
// discovery or a robot, can put a raw byte or an oversized "why" into the hash chain.
func checkCaller(ctx context.Context) error {
	return graph.ValidateMessage(graph.MessageFrom(ctx))
}

func (db *DB) commitLoop() {
	defer close(db.done)
	for r := range db.writes {
		batch := db.drainWrites([]*writeReq{r})
		if db.opts.Committer != nil {
			batch = db.gatherShared(batch)
		}
		db.runBatch(batch)
	}
}

// answer ends every write of batch: with err, or with the events it made when err is
// nil (subscribers told of them first when notify is set).
func (db *DB) answer(batch []*writeReq, err error, notify bool) {
	for _, r := range batch {
		if err != nil {
			r.err, r.events = err, nil
		} else if notify {
			db.notify(r.events)
		}
		close(r.done)
	}
}

// drainWrites adds to batch the writes already queued, up to maxBatch, without waiting.
func (db *DB) drainWrites(batch []*writeReq) []*writeReq {
	for len(batch) < maxBatch {
		select {
		case r, ok := <-db.writes:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

func (db *DB) runBatch(batch []*writeReq) {
	if err := db.writesRefused(); err != nil {
		db.answer(batch, err, false)
		return
	}
	committer := db.opts.Committer
	attempt := 0
	for len(batch) > 0 {
		failed, txid, committing := -1, 0, false
		var ferr error
		var shipped int64
		if committer != nil {
			batch = db.pace(batch)
		}
		db.observeTx(true)
		ran, returned := false, false // Update returned, rather than a fault escaping it
		if committer != nil {
			db.shared.inFlight.Lock()
		}
		err := db.guard(func() error {
			ran = true
			uerr := db.bolt.Update(func(tx *bolt.Tx) error {
				txid = tx.ID()
				w, err := newWtx(db, tx)
				if err != nil {
					return err
				}
				var changes []change
				if db.beforeCommit != nil || committer != nil {
					w.changes = &changes
				}
				if committer != nil {
					w.floor = w.headTime()
				}
				for i, r := range batch {
					if err := w.run(r); err != nil {
						failed, ferr = i, err
						return err
					}
				}
				if err := w.flush(); err != nil {
					return err
				}
				if db.beforeCommit != nil {
					if err := db.beforeCommit(changes); err != nil {
						return err
					}
				}
				if committer != nil {
					if ship := shipChanges(changes); len(ship) > 0 {
						fence := int64(migrations.ReadU64(w.b(migrations.BucketMeta).Get(keyReplicaRev)))
						rev, err := committer.Commit(context.Background(), fence, ship)
						if err != nil {
							return err
						}
						shipped = rev
						if err := w.put(migrations.BucketMeta, keyReplicaRev, migrations.U64(uint64(rev))); err != nil {
							return err
						}
					}
				}
				readyAll(batch)
				committing = true
				return w.hook("commit") // tests: the local commit fails
			})
			returned = true
			return uerr
		})
		if committer != nil {
			db.shared.inFlight.Unlock()
		}
		if ran && !returned {
			db.writerLost.Store(true)
		}
		db.observeTx(false)
		if shipped > 0 && err == nil {
			db.replica.set(shipped)
		}
		var conflict *ConflictError
		var tooBig *TooBigError
		switch {
		case failed < 0 && errors.As(err, &conflict):
			// Another front end committed first: wait until the replica holds that commit,
			// then make the writes again on top of it.
			if attempt++; attempt > maxCommitAttempts {
				err = graph.Errorf(graph.EUNAVAILABLE, "the change lost %d races with other writers in a row; nothing was written, try again", maxCommitAttempts)
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			werr := db.WaitReplica(ctx, conflict.Rev)
			cancel()
			if werr != nil {
				err = graph.Errorf(graph.EUNAVAILABLE, "the replica did not catch up with the cluster (revision %d) within 10s; nothing was written, try again", conflict.Rev)
				break
			}
			pauseBeforeRetry(attempt)
			batch = db.gatherShared(batch)
			continue
		case failed < 0 && errors.As(err, &tooBig) && len(batch) > 1:
			// Writes grouped together are too big for one commit: each goes on its own.
			for _, r := range batch {
				db.runBatch([]*writeReq{r})
			}
			return
		}
		if failed < 0 {
			notify := err == nil
			switch {
			case err == nil:
			case shipped > 0 && committing:
				// The shared store made the change but this replica could not store it: the
				// change WAS made, and the feed brings it here (and tells subscribers).
				err = db.lostLocally(shipped, err)
			default:
				if committing && committer == nil {
					err = db.commitErr(txid, err)
				}
				err = internal("commit", err)
			}
			db.answer(batch, err, notify)
			return
		}
		r := batch[failed]
		r.err, r.events = ferr, nil
		close(r.done)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

func (db *DB) observeTx(begin bool) {
	if db.txObserver != nil {
		db.txObserver(begin)
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
	if err := checkCaller(ctx); err != nil {
		return err
	}
	if err := graph.SettleCommits(ctx); err != nil {
		return err
	}
	if db.viewOf(ctx) != nil {
		return errInView()
	}
	r := &writeReq{ctx: ctx, fn: fn}
	db.observeTx(true)
	err := db.guard(func() error {
		return db.bolt.Update(func(tx *bolt.Tx) error {
			w, err := newWtx(db, tx)
			if err != nil {
				return err
			}
			if err := w.run(r); err != nil {
				return err
			}
			return errDryRun
		})
	})
	db.observeTx(false)
	if errors.Is(err, errDryRun) {
		return nil
	}
	return db.finish(ctx, internal("dry run", err))
}

// wtx is one write transaction shared by a group of requests. It writes only through its
// txw (put, delete).
type wtx struct {
	txw
	db       *DB
	head     migrations.Head
	head0    migrations.Head // the head the transaction began with
	counters map[string]int64

	// tagDelta, while puts are deferred (deferPuts), collects tag count changes.
	tagDelta map[string]int64
	// relDelta, while puts are deferred, collects relation counter changes.
	relDelta map[relCounter]int64

	// the request running now
	r     *writeReq
	now   time.Time
	reqID string
	actor string
	msg   string
	// floor is the newest event's time on a shared store, which no new event's time
	// goes below (the hosts' clocks differ; the chain's times never go back).
	floor time.Time
}

func newWtx(db *DB, tx *bolt.Tx) (*wtx, error) {
	t, err := newTxw(tx, db.buckets)
	if err != nil {
		return nil, err
	}
	w := &wtx{txw: t, db: db, counters: map[string]int64{}}
	if h, ok := migrations.DecodeHead(w.b(migrations.BucketMeta).Get(migrations.KeyHead)); ok {
		w.head = h
	} else if h, ok := migrations.DecodeHead(w.b(migrations.BucketMeta).Get(migrations.KeyCheckpoint)); ok {
		w.head = h
	}
	w.head0 = w.head
	return w, nil
}

func (w *wtx) run(r *writeReq) (err error) {
	w.r = r
	r.events = nil
	w.now = w.db.now().UTC()
	if w.now.Before(w.floor) {
		w.now = w.floor
	}
	w.reqID = graph.RequestIDFrom(r.ctx)
	if w.reqID == "" {
		w.reqID = graph.NewRequestID()
	}
	w.actor = w.db.actorOf(r.ctx)
	w.msg = graph.MessageFrom(r.ctx)
	if err := r.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			// Under the commit's guard a fault, or bbolt panicking on a page, means a
			// damaged file: the DB fails, as it does when a read finds it.
			if why, ok := fromDamage(p); ok {
				ge := damagedFile(w.db.path, "is damaged: "+why)
				if w.db.failed.CompareAndSwap(nil, ge) {
					w.db.log.Error("database damaged; refusing every further call", "db", w.db.path, "err", ge, "stack", string(debug.Stack()))
				}
				err = w.db.failed.Load()
				return
			}
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
		if err := w.put(migrations.BucketMeta, []byte(k), migrations.U64(uint64(v))); err != nil {
			return err
		}
	}
	// Only a transaction that wrote events moves the head: one that changed nothing (a
	// repeated add) then writes nothing at all.
	if w.head.Seq > 0 && w.head != w.head0 {
		return w.put(migrations.BucketMeta, migrations.KeyHead, migrations.EncodeHead(w.head))
	}
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

// deferPuts starts collecting puts and tag count changes; flushPending makes them in key
// order.
func (w *wtx) deferPuts() {
	w.txw.deferPuts()
	w.tagDelta = map[string]int64{}
	w.relDelta = map[relCounter]int64{}
}

func (w *wtx) flushPending() error {
	deltas, rdeltas := w.tagDelta, w.relDelta
	w.tagDelta, w.relDelta = nil, nil
	// Relation counters go in with the deferred puts, in key order among the index
	// entries beside them (put one by one afterwards, each would shift a grown node).
	var drop []relCounter
	for k, d := range rdeltas {
		n := int64(migrations.ReadU64(w.b([]byte(k.bucket)).Get([]byte(k.key)))) + d
		if n <= 0 {
			drop = append(drop, k)
			continue
		}
		if err := w.put([]byte(k.bucket), []byte(k.key), migrations.U64(uint64(n))); err != nil {
			return err
		}
	}
	if err := w.flushPuts(); err != nil {
		return err
	}
	for _, k := range drop {
		if err := w.delete([]byte(k.bucket), []byte(k.key)); err != nil {
			return err
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

// Stats reports the counters the store keeps.
func (db *DB) Stats(ctx context.Context) (*graph.Stats, error) {
	s := &graph.Stats{SchemaVersion: db.version, ReplicaOf: db.replicaOf}
	if s.ReplicaOf != "" {
		s.ReplicaRev = db.ReplicaRev()
	}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		meta := tx.Bucket(migrations.BucketMeta)
		s.Identities = int(migrations.ReadU64(meta.Get(migrations.CountIdentities)))
		s.Devices = int(migrations.ReadU64(meta.Get(migrations.CountDevices)))
		s.Notes = int(migrations.ReadU64(meta.Get(migrations.CountNotes)))
		s.Relations = int(migrations.ReadU64(meta.Get(migrations.CountRelations)))
		s.Events = migrations.ReadU64(meta.Get(migrations.CountEvents))
		s.FileBytes = tx.Size()
		if fi, err := os.Stat(db.path); err == nil && fi.Size() > s.FileBytes {
			s.FileBytes = fi.Size()
		}
		return nil
	})
	return s, err
}

// getRecord decodes the JSON record at key in bucket; nil when absent. The bytes are
// decoded before the transaction ends, so nothing outlives it.
func getRecord[T any](tx *bolt.Tx, bucket []byte, key, what string) (*T, error) {
	return decodeRecord[T](tx, tx.Bucket(bucket).Get([]byte(key)), key, what)
}

// decodeRecord decodes v, the JSON record at key read already; nil when v is.
func decodeRecord[T any](tx *bolt.Tx, v []byte, key, what string) (*T, error) {
	if v == nil {
		return nil, nil
	}
	var rec T
	if !utf8.Valid(v) {
		return nil, storedUndecodable(tx, what+" "+key, errNotUTF8)
	}
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, storedUndecodable(tx, what+" "+key, err)
	}
	return &rec, nil
}

// mmapReserve is the address space a file is mapped with from the start. bbolt maps the
// file anew each time it outgrows its mapping, and each time copies every node the write
// transaction holds out of the old mapping first: a big write (an import, a replica's
// fill) that grows the file paid for that copy a dozen times over (70 % of a replica's
// fill, a quarter of a 100,000-identity import's CPU). Reserving the space costs no memory
// (only pages read or written are ever resident) and lets the file grow to 1 GiB
// without a remap; readers then never hold up a writer that grows the file either.
const mmapReserve = 1 << 30
