package store

import (
	"encoding/json"
	"time"
)

// Test-only access to internals for the external test package.

// SetTestHook installs a hook called at named points inside write transactions.
func SetTestHook(db *DB, fn func(point string) error) { db.testHook = fn }

// SetTxObserver has fn called as each write transaction begins (true) and once it has
// committed or rolled back (false), before the writes in it are answered.
func SetTxObserver(db *DB, fn func(begin bool)) { db.txObserver = fn }

// WithSchemaVersion makes Open write a brand-new file at an old schema version.
func WithSchemaVersion(o Options, v int) Options { o.schemaVersion = v; return o }

// SetImportBatch makes imports call their progress func every n lines written (all in
// one transaction) until the returned func.
func SetImportBatch(n int) (restore func()) {
	old := importBatch
	importBatch = n
	return func() { importBatch = old }
}

// SetPlainJSONImport makes imports decode every line with json.Unmarshal alone (plain) or
// through the hand-written reader (the default), until the returned func.
func SetPlainJSONImport(plain bool) (restore func()) {
	old := lineDecoder
	lineDecoder = decodeLine
	if plain {
		lineDecoder = func(b []byte, l *exportLine) error { *l = exportLine{}; return json.Unmarshal(b, l) }
	}
	return func() { lineDecoder = old }
}

// WriteOp is one put or delete of a write transaction's write set.
type WriteOp struct {
	Bucket, Key, Value []byte
	Delete             bool
}

// SetBeforeCommit hands fn each write transaction's write set before it commits; an error
// from fn rolls the transaction back.
func SetBeforeCommit(db *DB, fn func(ops []WriteOp) error) {
	db.beforeCommit = func(changes []change) error {
		ops := make([]WriteOp, len(changes))
		for i, c := range changes {
			ops[i] = WriteOp{Bucket: c.bucket, Key: c.key, Value: c.value, Delete: c.del}
		}
		return fn(ops)
	}
}

// SetReplicaCatchUp sets how long a write the shared store made but the replica could not
// store waits for the feed, until the returned func.
func SetReplicaCatchUp(d time.Duration) (restore func()) {
	old := replicaCatchUp
	replicaCatchUp = d
	return func() { replicaCatchUp = old }
}
