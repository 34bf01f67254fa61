package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// A replica is a database file that mirrors a shared store (an etcd cluster): every
// record, index, counter, event and the changelog head, exactly as one bbolt file holds
// them. It is read by the same code as any file. It is written two ways only: by
// ApplyReplicated, with commits the shared store made (a feed), and by this store's own
// writes, whose write set a Committer ships to the shared store inside the write
// transaction; the local transaction commits only once the shared store has accepted
// the same changes, so a write is answered after the replica holds it (read your own
// writes). Two meta keys are the replica's own and never shipped: which cluster it
// mirrors and the revision of the shared store's last commit it holds.

// Change is one put or delete of a write set, as a Committer receives it and
// ApplyReplicated takes it.
type Change struct {
	Bucket, Key, Value []byte
	Deleted            bool // a delete (Value is nil), else a put
}

// Pacer is what a Committer may also do: Pace is called before each batch of writes is
// made, with the revision the replica holds, and may wait (briefly, and not past ctx)
// while another writer of the shared store is due to commit, so the batch is made on top
// of that commit instead of racing it for the same fence.
type Pacer interface {
	Pace(ctx context.Context, held int64)
}

// Committer ships a write transaction's write set to a shared store.
type Committer interface {
	// Commit makes changes in the shared store as one commit, fenced on fence: the
	// revision of the shared store's last commit the replica held when the changes were
	// made. It returns the revision of the new commit; a *ConflictError when another
	// commit came first (the write is then made again on a replica that holds it); a
	// *TooBigError when the changes do not fit one commit; any other error when the
	// change was not made (or, said in the error, when its outcome is unknown).
	Commit(ctx context.Context, fence int64, changes []Change) (rev int64, err error)
}

// WriteRefuser is what a Committer may also offer: RefuseWrite returns the error every
// write gets while the shared store takes none from here (nil while it takes them). The
// store asks it before a write is queued, so a refused write builds no transaction.
// Commit must refuse as well: the answer may change between the two.
type WriteRefuser interface {
	RefuseWrite() error
}

// ConflictError says the shared store has a commit (at Rev) the replica does not hold.
type ConflictError struct{ Rev int64 }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the shared store moved on (revision %d) since the replica was read", e.Rev)
}

// TooBigError says a write set does not fit one commit of the shared store.
type TooBigError struct{ Err error }

func (e *TooBigError) Error() string { return e.Err.Error() }
func (e *TooBigError) Unwrap() error { return e.Err }

// ErrReplicaGap is ApplyReplicated's answer to a commit that does not follow what the
// replica holds (its first event's prev_hash or seq is not the replica's head): the
// replica missed something and must be rebuilt (ResetReplica).
var ErrReplicaGap = errors.New("the replica's changelog does not join the commit's")

// The replica's own meta keys, never shipped and never overwritten by a feed.
var (
	keyReplicaOf  = []byte("replica.of")
	keyReplicaRev = []byte("replica.rev")
	keyReplicaURL = []byte("replica.url") // the --store URL the replica was last served from
)

// localMeta reports whether meta key k is this file's own (not the shared store's).
func localMeta(k []byte) bool {
	return bytes.Equal(k, keyReplicaOf) || bytes.Equal(k, keyReplicaRev) || bytes.Equal(k, keyReplicaURL)
}

// replicaState tracks the revision the replica holds, and wakes those waiting for one.
type replicaState struct {
	mu      sync.Mutex
	rev     int64
	changed chan struct{} // closed and replaced each time rev moves
}

func (s *replicaState) set(rev int64) {
	s.mu.Lock()
	if rev > s.rev {
		s.rev = rev
		close(s.changed)
		s.changed = make(chan struct{})
	}
	s.mu.Unlock()
}

func (s *replicaState) get() (int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev, s.changed
}

// ReplicaOf returns the cluster the file mirrors, "" for an ordinary database.
func (db *DB) ReplicaOf() string { return db.replicaOf }

// ReplicaRev returns the revision of the shared store's last commit the replica holds.
func (db *DB) ReplicaRev() int64 {
	rev, _ := db.replica.get()
	return rev
}

// WaitReplica waits until the replica holds revision rev (or ctx ends).
func (db *DB) WaitReplica(ctx context.Context, rev int64) error {
	for {
		have, changed := db.replica.get()
		if have >= rev {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// replicaCatchUp bounds how long a write the shared store made, but this replica could
// not store, waits for the feed to bring it (tests make it short).
var replicaCatchUp = 10 * time.Second

// lostLocally answers a write the shared store committed at rev whose local transaction
// then failed (cause: a full disk on the replica, an I/O error): the change exists in the
// fleet, so it is reported made once the replica holds rev, which the feed brings it
// within replicaCatchUp (or the file holds already: the commit landed after all). Else
// the error says the change was made, at which revision, and why this replica lacks it,
// and the replica is marked to be refilled from the shared store.
func (db *DB) lostLocally(rev int64, cause error) error {
	db.log.Warn("replica: a change the cluster committed could not be stored here; waiting for the feed to bring it", "db", db.path, "revision", rev, "err", cause)
	if held, err := db.heldRev(); err == nil && held >= rev {
		db.replica.set(rev)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), replicaCatchUp)
	err := db.WaitReplica(ctx, rev)
	cancel()
	if err == nil {
		return nil
	}
	for {
		if r := db.refill.Load(); r >= rev || db.refill.CompareAndSwap(r, rev) {
			break
		}
	}
	db.log.Error("replica: a change the cluster committed is not in the replica; it is refilled from the cluster", "db", db.path, "revision", rev, "err", cause)
	return graph.Errorf(graph.EUNAVAILABLE, "the change was made: it was committed to the cluster at revision %d, but this replica (%s) could not store it (%s) and had not caught up after %s; do not make it again: other hosts see it now, and this one once its replica is refilled from the cluster (check its disk)", rev, db.path, ioCause(cause), replicaCatchUp)
}

// openReplica reads (or, on a new file, writes) the replica marker: a file opened for a
// cluster must be that cluster's replica; devgraph never takes an ordinary database, nor
// another cluster's replica, for one.
func (db *DB) openReplica(created bool) error {
	var of []byte
	var rev int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(m.BucketMeta)
		of = bytes.Clone(meta.Get(keyReplicaOf))
		db.replicaURL = string(meta.Get(keyReplicaURL))
		rev = int64(m.ReadU64(meta.Get(keyReplicaRev)))
		return nil
	})
	if err != nil {
		return err
	}
	want := db.opts.ReplicaOf
	switch {
	case want == "":
		db.replicaOf = string(of)
	case of == nil && !created:
		return graph.FieldErrorf(graph.EINVALID, "db", "%s is an ordinary devgraph database, not a replica of %s; devgraph never uses one as a replica: pass another --db (or none, for the default cache file)", db.path, want)
	case of == nil:
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			t, err := newTxw(tx, db.buckets)
			if err != nil {
				return err
			}
			return t.put(m.BucketMeta, keyReplicaOf, []byte(want))
		})
		if err != nil {
			return err
		}
		db.replicaOf = want
	case string(of) != want:
		return graph.FieldErrorf(graph.EINVALID, "db", "%s is a replica of %s, not of %s: pass another --db, or remove the file (a replica is a cache, rebuilt from the cluster)", db.path, of, want)
	default:
		db.replicaOf = want
	}
	if u := db.opts.ReplicaURL; want != "" && u != "" && u != db.replicaURL && !db.opts.ReadOnly {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			t, err := newTxw(tx, db.buckets)
			if err != nil {
				return err
			}
			return t.put(m.BucketMeta, keyReplicaURL, []byte(u))
		})
		if err != nil {
			return err
		}
		db.replicaURL = u
	}
	db.replica.changed = make(chan struct{})
	db.replica.rev = rev
	return nil
}

// errReplicaNoFrontEnd refuses a write to a replica opened without its cluster.
func (db *DB) errReplicaNoFrontEnd() error {
	url := db.replicaURL
	if url == "" {
		url = "etcd://HOST:2379"
	}
	return graph.Errorf(graph.EINVALID, "%s is a replica of the cluster %s: changes go through a front end; start one with `devgraph serve --store %s --db %s`", db.path, db.replicaOf, url, db.path)
}

// ApplyReplicated applies one commit of the shared store, made at revision rev, to the
// replica in one transaction, and tells subscribers its events. A commit the replica
// holds already (its own write, or one seen before) is skipped; one whose events do not
// follow the replica's changelog head gives ErrReplicaGap and changes nothing.
func (db *DB) ApplyReplicated(rev int64, changes []Change) error {
	if db.replicaOf == "" {
		return graph.Errorf(graph.EINVALID, "%s is not a replica", db.path)
	}
	if lost := db.refill.Load(); lost > 0 {
		return fmt.Errorf("%w: the change the cluster committed at revision %d could not be stored in the replica; it is refilled", ErrReplicaGap, lost)
	}
	// This front end's own commit is most often heard of while the write that made it is
	// still committing to the file: wait for that write to end, so the file says it holds
	// the commit, rather than queue a write transaction behind it to find out.
	db.shared.inFlight.Lock()
	//lint:ignore SA2001 the lock is only waited for: the write holding it ends its commit
	db.shared.inFlight.Unlock()
	if held, err := db.heldRev(); err == nil && rev <= held {
		// Held already (most often this front end's own commit, which the feed hears of
		// after the write made it): skip it without a write transaction, which would take
		// the writer's lock from the next write and rewrite the file's meta page. Only the
		// feed lowers what the file holds (ResetReplica), so this stays true until it
		// calls again. (Not the revision in memory: a write's commit raises that after its
		// transaction, and a refill between the two can leave it above what the file holds.)
		return nil
	}
	var evs []*graph.Event
	var applied bool
	err := db.guard(func() error {
		return db.bolt.Update(func(tx *bolt.Tx) error {
			evs, applied = nil, false
			t, err := newTxw(tx, db.buckets)
			if err != nil {
				return err
			}
			meta := t.b(m.BucketMeta)
			if int64(m.ReadU64(meta.Get(keyReplicaRev))) >= rev {
				return nil
			}
			head, _ := m.DecodeHead(meta.Get(m.KeyHead))
			if head.Seq == 0 {
				head, _ = m.DecodeHead(meta.Get(m.KeyCheckpoint))
			}
			for _, c := range changes {
				if bytes.Equal(c.Bucket, m.BucketEvents) && !c.Deleted {
					e, err := m.DecodeEvent(m.ReadU64(c.Key), c.Value)
					if err != nil {
						return fmt.Errorf("%w: event %x: %v", ErrReplicaGap, c.Key, err)
					}
					evs = append(evs, e)
				}
			}
			sortEvents(evs)
			for _, e := range evs {
				if e.Seq != head.Seq+1 || e.PrevHash != hex.EncodeToString(head.Hash[:]) {
					return fmt.Errorf("%w: event %d follows %s, the replica's head is %d (%x)", ErrReplicaGap, e.Seq, e.PrevHash, head.Seq, head.Hash[:4])
				}
				h, err := hex.DecodeString(e.Hash)
				if err != nil || len(h) != len(head.Hash) {
					return fmt.Errorf("%w: event %d has a bad hash", ErrReplicaGap, e.Seq)
				}
				head.Seq = e.Seq
				copy(head.Hash[:], h)
			}
			for _, c := range changes {
				if t.b(c.Bucket) == nil || (bytes.Equal(c.Bucket, m.BucketMeta) && localMeta(c.Key)) {
					continue
				}
				if c.Deleted {
					err = t.delete(c.Bucket, c.Key)
				} else {
					err = t.put(c.Bucket, c.Key, nonNil(c.Value))
				}
				if err != nil {
					return err
				}
			}
			applied = true
			return t.put(m.BucketMeta, keyReplicaRev, m.U64(uint64(rev)))
		})
	})
	if err != nil {
		return err
	}
	if applied {
		db.replica.set(rev)
		db.notify(evs)
	}
	return nil
}

// heldRev reads the revision of the shared store's last commit the file holds.
func (db *DB) heldRev() (int64, error) {
	var rev int64
	err := db.guard(func() error {
		return db.bolt.View(func(tx *bolt.Tx) error {
			rev = int64(m.ReadU64(tx.Bucket(m.BucketMeta).Get(keyReplicaRev)))
			return nil
		})
	})
	return rev, err
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func sortEvents(evs []*graph.Event) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].Seq < evs[j-1].Seq; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

// ResetReplica replaces everything the replica holds with a snapshot of the shared
// store at revision rev: snapshot calls put for every record, in any order. It is how a
// replica is first filled and how one that missed a commit is rebuilt. Subscribers are
// told with nil events, as when they fell behind: re-read what you keep.
func (db *DB) ResetReplica(rev int64, snapshot func(put func(bucket, key, value []byte) error) error) error {
	if db.replicaOf == "" {
		return graph.Errorf(graph.EINVALID, "%s is not a replica", db.path)
	}
	err := db.guard(func() error {
		return db.bolt.Update(func(tx *bolt.Tx) error {
			t, err := newTxw(tx, db.buckets)
			if err != nil {
				return err
			}
			for _, nb := range m.AllBuckets {
				name, b := string(nb), t.b(nb)
				if b == nil {
					continue // a fixture written at an older version lacks it
				}
				var keys [][]byte
				err := b.ForEach(func(k, _ []byte) error {
					if name != string(m.BucketMeta) || !localMeta(k) {
						keys = append(keys, bytes.Clone(k))
					}
					return nil
				})
				if err != nil {
					return err
				}
				for _, k := range keys {
					if err := t.delete([]byte(name), k); err != nil {
						return err
					}
				}
			}
			// A snapshot read from etcd comes bucket by bucket in key order: those records
			// are appended as they come, into full pages, while the next page is read; any
			// that come out of order wait and are put in key order at the end (txw.put).
			t.deferPuts()
			err = snapshot(func(bucket, key, value []byte) error {
				if t.b(bucket) == nil || (bytes.Equal(bucket, m.BucketMeta) && localMeta(key)) {
					return nil
				}
				return t.put(bucket, bytes.Clone(key), bytes.Clone(nonNil(value)))
			})
			if err != nil {
				return err
			}
			if err := t.flushPuts(); err != nil {
				return err
			}
			return t.put(m.BucketMeta, keyReplicaRev, m.U64(uint64(rev)))
		})
	})
	if err != nil {
		return err
	}
	if lost := db.refill.Load(); lost > 0 && rev >= lost {
		db.refill.CompareAndSwap(lost, 0) // the refill holds what the replica could not store
	}
	db.replica.mu.Lock()
	db.replica.rev = rev
	close(db.replica.changed)
	db.replica.changed = make(chan struct{})
	db.replica.mu.Unlock()
	db.subMu.Lock()
	for n, s := range db.subs {
		s.dropped.Store(true)
		delete(db.subs, n)
		close(s.queue)
	}
	db.subMu.Unlock()
	return nil
}

// Records calls fn with every record the shared store holds of this file (all but the
// replica's own meta keys), in one read transaction: how a new cluster is seeded with a
// fresh file's format, version and counters, and how an import is loaded into one.
func (db *DB) Records(ctx context.Context, fn func(bucket, key, value []byte) error) error {
	return db.view(ctx, func(tx *bolt.Tx) error {
		return m.ForEachRecord(tx, func(bucket, k, v []byte) error {
			if bytes.Equal(bucket, m.BucketMeta) && localMeta(k) {
				return nil
			}
			return fn(bucket, k, v)
		})
	})
}

// backupReplica writes a consistent copy of the replica to w as an ordinary database:
// the shared store's graph as of the revision the replica holds, without the marks that
// make the file a replica, so it opens (and restores) like any backup. The copy is made
// in a temporary file beside the replica, unmarked there, then written to w.
func (db *DB) backupReplica(ctx context.Context, w io.Writer) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(db.path), ".devgraph-backup-*.db")
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "backup: cannot make a temporary copy beside %s: %v", db.path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = db.view(ctx, func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(f)
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, internal("backup", err)
	}
	bdb, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return 0, internal("backup", err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		t, err := newTxw(tx, checkBuckets(tx)) // a file of its own: checked here
		if err != nil {
			return err
		}
		for _, k := range [][]byte{keyReplicaOf, keyReplicaRev, keyReplicaURL} {
			if err := t.delete(m.BucketMeta, k); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, internal("backup", err)
	}
	f, err = os.Open(tmp)
	if err != nil {
		return 0, internal("backup", err)
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return n, internal("backup", err)
	}
	return n, nil
}

// shipChanges converts a write set for the Committer: the replica's own keys are not
// the shared store's.
func shipChanges(cs []change) []Change {
	out := make([]Change, 0, len(cs))
	for _, c := range cs {
		if bytes.Equal(c.bucket, m.BucketMeta) && localMeta(c.key) {
			continue
		}
		out = append(out, Change{Bucket: c.bucket, Key: c.key, Value: c.value, Deleted: c.del})
	}
	return out
}

// pauseBeforeRetry waits before a write is made again after its attempt-th conflict in a
// row, from the third on (the first two are made again as soon as the replica holds the
// commit that won, the Committer's Pacer keeping the front ends in turn): jittered,
// growing with the attempt, capped at 16 ms, so front ends racing for the next commit
// spread out. (A pause, not a time source: the clock test allows this one Sleep.)
func pauseBeforeRetry(attempt int) {
	if attempt <= 2 {
		return
	}
	d := time.Duration(1<<min(attempt, 6)) * 250 * time.Microsecond
	time.Sleep(d/2 + rand.N(d))
}

// sharedWrites is the commit loop's state for a shared store.
type sharedWrites struct {
	// inFlight is held by a write from before its changes are shipped until its
	// transaction ends (ApplyReplicated waits on it).
	inFlight sync.Mutex
}

// pace lets the Committer hold a batch back while another writer of the shared store is
// due to commit (Pacer), then adds the writes queued meanwhile.
func (db *DB) pace(batch []*writeReq) []*writeReq {
	p, ok := db.opts.Committer.(Pacer)
	if !ok {
		return batch
	}
	held := db.ReplicaRev()
	p.Pace(batch[0].ctx, held)
	if db.ReplicaRev() == held {
		return batch
	}
	return db.gatherShared(batch)
}

// gatherShared adds to a batch bound for a shared store the writes queued behind it, up
// to maxBatch, first letting the writers the last commit answered queue their next
// write. A commit there takes a network round trip: without the yield the writers woken
// by one commit missed the next batch and formed one of their own behind it, every time
// (two half batches leapfrogging, each a round trip). It also runs before a batch is made
// again after a conflict, or after it waited its turn (pace), so the writes queued
// meanwhile share that attempt. (A lone writer's yield costs about a microsecond: yielding
// only to writers seen lately made 16 writers' batches smaller, 14 writes to 10.)
func (db *DB) gatherShared(batch []*writeReq) []*writeReq {
	for range 4 {
		n := len(batch)
		runtime.Gosched()
		batch = db.drainWrites(batch)
		if len(batch) == n {
			break
		}
	}
	return batch
}

// headTime returns the time of the changelog's newest event (zero when there is none):
// on a shared store the clocks of many hosts stamp one chain, and event times must not
// go backwards along it.
func (w *wtx) headTime() time.Time {
	if w.head.Seq == 0 {
		return time.Time{}
	}
	v := w.b(m.BucketEvents).Get(m.U64(w.head.Seq))
	if v == nil {
		return time.Time{}
	}
	h, err := m.DecodeEventHeader(w.head.Seq, v)
	if err != nil {
		return time.Time{}
	}
	return h.Time
}
