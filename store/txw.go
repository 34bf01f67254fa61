package store

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// txw is the one path by which a write transaction changes the file. Every write helper
// (records, indexes, counters, events, the changelog head, the prune checkpoint) puts and
// deletes through put and delete, never through a *bolt.Bucket, so a transaction's write
// set is exactly the list of changes made here. With changes set, txw records that list
// in the order bbolt saw it: the seam where DB.beforeCommit hands it to whoever must see
// it before the transaction commits (see the package comment).
type txw struct {
	tx *bolt.Tx
	// buckets holds the buckets opened so far: each is opened when first used (b), as a
	// transaction touches a few of them and opening one costs (an inline bucket is copied
	// out of its parent). A bucket an older fixture lacks is held as nil.
	buckets map[string]*bolt.Bucket

	// pending, when not nil, defers puts, by bucket, to make them in key order (bulk
	// import, a replica's reset: bbolt inserts into a node by moving its tail, so unsorted
	// bulk puts cost quadratic time). A put whose key comes after every key its bucket
	// holds is made at once, into full pages (records that come in key order are appended
	// as they come); the others wait for flushPuts. Deletes are never deferred.
	pending map[string]*deferred
	// only, when not nil, limits deferring to these buckets (deferPutsIn).
	only map[string]bool

	// changes, when not nil, receives every put and delete as it is made.
	changes *[]change
}

// change is one put or delete of a write set.
type change struct {
	bucket, key, value []byte
	del                bool
}

type kv struct{ k, v []byte }

// deferred is one bucket's share of the deferred puts: its last key so far (the bucket's
// last when the first put came), the puts that came after one with a later key, and
// whether it is being appended to (its FillPercent set to 1).
type deferred struct {
	last      []byte
	kvs       []kv
	appending bool
}

// fileBuckets is what Open found of the file's buckets once it had migrated it (the set
// changes nowhere else): those a file at its version lacks (a fixture written at an older
// version), which every txw holds as nil, or the error naming one it should have, which
// every write returns.
type fileBuckets struct {
	absent []string
	err    error
}

// checkBuckets checks by name that tx's file holds every bucket its version has.
func checkBuckets(tx *bolt.Tx) fileBuckets {
	var fb fileBuckets
	c := tx.Cursor()
	for _, name := range migrations.AllBuckets {
		if k, _ := c.Seek(name); bytes.Equal(k, name) {
			continue
		}
		if migrations.BucketSince[string(name)] > 0 && !hasVersion(tx, migrations.BucketSince[string(name)]) {
			fb.absent = append(fb.absent, string(name))
			continue
		}
		return fileBuckets{err: fmt.Errorf("bucket %s missing", name)}
	}
	return fb
}

// newTxw sets a write transaction's file growth (growStep) and holds as nil the buckets
// fb found absent; b opens the others.
func newTxw(tx *bolt.Tx, fb fileBuckets) (txw, error) {
	if fb.err != nil {
		return txw{}, fb.err
	}
	if tx.Writable() {
		growStep(tx.DB(), tx.Size())
		if err := mergeRoot(tx); err != nil {
			return txw{}, err
		}
	}
	t := txw{tx: tx, buckets: make(map[string]*bolt.Bucket, 8)}
	for _, name := range fb.absent {
		t.buckets[name] = nil
	}
	return t, nil
}

// knownBuckets is migrations.AllBuckets as a set: b opens no other bucket.
var knownBuckets = func() map[string]bool {
	set := make(map[string]bool, len(migrations.AllBuckets))
	for _, name := range migrations.AllBuckets {
		set[string(name)] = true
	}
	return set
}()

// appended are the buckets whose new keys come after every key they hold (changelog
// sequence numbers, uuidv7 note ids): their pages are filled before a new one starts,
// where bbolt's default (half full) made twice the pages and a level more in the tree,
// another page for every commit to write.
var appended = map[string]bool{string(migrations.BucketEvents): true, string(migrations.BucketNotes): true}

// mergeRoot puts the file's root bucket back into one page when it has split and its
// entries would fit in one. The root holds every bucket's header and the small buckets
// stored inline, and a commit rewrites each of its pages that holds the header of a
// bucket it changed. bbolt splits a page when it overflows but merges one only after a
// delete leaves it under a threshold, so a root that once overflowed (small buckets
// growing inline before each moved to pages of its own) stayed in two leaves and a
// branch, three pages for most commits to write where one does. Deleting a bucket made
// in the same transaction is that delete, with the root's FillPercent at 1 (a page under
// half full is merged into its neighbour). It is done at both ends, in the first leaf and
// the last: with the entries within a page, one of the two is under half of one, so
// every attempt merges a leaf. Nothing of it is committed but the merged pages.
func mergeRoot(tx *bolt.Tx) error {
	root := tx.Cursor().Bucket()
	info, err := tx.Page(int(root.Root()))
	if err != nil || info == nil || info.Type != "branch" || rootSize(tx) > tx.DB().Info().PageSize*7/8 {
		return nil // a leaf already, or too full for one page (with room to grow): nothing to do
	}
	root.FillPercent = 1
	for _, name := range mergeBuckets {
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("merge the root bucket: %w", err)
		}
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("merge the root bucket: %w", err)
		}
	}
	return nil
}

// mergeBuckets are mergeRoot's buckets, created and deleted in one transaction (never
// committed): one sorts before every bucket of the file, the other after.
var mergeBuckets = [][]byte{[]byte("\x00merge"), []byte("~merge")}

// rootSize is about how many bytes the root bucket's entries take in one page: the page
// header, and for each bucket its element, name and header, and its page when inline.
func rootSize(tx *bolt.Tx) int {
	size := 16
	c := tx.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		size += 16 + len(k) + 16
		if b := tx.Bucket(k); b != nil && b.Root() == 0 {
			size += b.Stats().InlineBucketInuse
		}
	}
	return size
}

// b returns a bucket for reading (Get, Cursor); writes go through put and delete.
func (t *txw) b(name []byte) *bolt.Bucket {
	if b, ok := t.buckets[string(name)]; ok {
		return b
	}
	var b *bolt.Bucket
	if knownBuckets[string(name)] {
		b = t.tx.Bucket(name)
	}
	if b != nil && appended[string(name)] {
		b.FillPercent = 1
	}
	t.buckets[string(name)] = b
	return b
}

// put writes k=v into bucket now, or, while deferring (deferPuts) a key that does not
// come after the bucket's last, later in key order. k and v must stay as they are until
// the transaction ends (as bbolt's Put needs).
func (t *txw) put(bucket, k, v []byte) error {
	if t.pending == nil || (t.only != nil && !t.only[string(bucket)]) {
		return t.apply(bucket, k, v, false)
	}
	d := t.pending[string(bucket)]
	if d == nil {
		b := t.b(bucket)
		if b == nil {
			return t.apply(bucket, k, v, false) // a bucket the file lacks: nothing to defer
		}
		last, _ := b.Cursor().Last()
		d = &deferred{last: bytes.Clone(last)}
		t.pending[string(bucket)] = d
	}
	if d.last != nil && bytes.Compare(k, d.last) <= 0 {
		d.kvs = append(d.kvs, kv{k, v})
		return nil
	}
	if !d.appending {
		t.b(bucket).FillPercent = 1 // appended in key order
		d.appending = true
	}
	d.last = k
	return t.apply(bucket, k, v, false)
}

// delete removes k from bucket now (deleting an absent key is no error).
func (t *txw) delete(bucket, k []byte) error { return t.apply(bucket, k, nil, true) }

func (t *txw) apply(bucket, k, v []byte, del bool) error {
	b := t.b(bucket)
	var err error
	if del {
		err = b.Delete(k)
	} else {
		err = b.Put(k, v)
	}
	if err == nil && t.changes != nil {
		*t.changes = append(*t.changes, change{bucket: bytes.Clone(bucket), key: bytes.Clone(k), value: bytes.Clone(v), del: del})
	}
	return err
}

// deferPuts starts deferring puts; flushPuts makes those that wait in key order.
func (t *txw) deferPuts() { t.pending = map[string]*deferred{} }

// deferPutsIn defers the puts into these buckets alone, until flushPuts: for index
// buckets that nothing reads back while their puts wait (a bulk write through the
// ordinary paths, which read the records themselves).
func (t *txw) deferPutsIn(buckets ...[]byte) {
	t.pending, t.only = map[string]*deferred{}, map[string]bool{}
	for _, b := range buckets {
		t.only[string(b)] = true
	}
}

func (t *txw) flushPuts() error {
	pending := t.pending
	t.pending, t.only = nil, nil
	for name, d := range pending {
		slices.SortStableFunc(d.kvs, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		for _, p := range d.kvs {
			if err := t.apply([]byte(name), p.k, p.v, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasVersion reports whether the file's schema version is at least v.
func hasVersion(tx *bolt.Tx, v int) bool {
	n, err := strconv.Atoi(string(tx.Bucket(migrations.BucketMeta).Get(migrations.KeyVersion)))
	return err == nil && n >= v
}

// growStep sets how far bbolt grows the file when a write needs more room: by as much
// again as the pages in use, 32 KiB at least and 16 MiB at most, which is how far bbolt
// grew it on its own while its mapping grew with the file. With the mapping reserved up
// front (mmapReserve) bbolt would add its 16 MiB step to every file, however small. Only a
// writer calls it (bbolt reads AllocSize when a commit grows the file, under the writer's
// lock), or Open before anything else runs.
func growStep(db *bolt.DB, used int64) {
	db.AllocSize = int(min(max(used, 32<<10), 16<<20))
}
