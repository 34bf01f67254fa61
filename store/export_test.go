package store

// Test-only access to internals for the external test package.

// SetTestHook installs a hook called at named points inside write transactions.
func SetTestHook(db *DB, fn func(point string) error) { db.testHook = fn }

// WithSchemaVersion makes Open write a brand-new file at an old schema version.
func WithSchemaVersion(o Options, v int) Options { o.schemaVersion = v; return o }

// SetImportBatch makes imports write n lines per transaction until the returned func.
func SetImportBatch(n int) (restore func()) {
	old := importBatch
	importBatch = n
	return func() { importBatch = old }
}
