package graph

import (
	"context"
	"io"
)

// DefaultImportMaxSize bounds an import read from a stream (a pipe, stdin, the socket):
// such input is spooled to a temporary file so it can be read twice, and the spool stops
// here. A regular file is read in place, twice, and has no such bound.
const DefaultImportMaxSize int64 = 4 << 30

type importMaxSizeKey struct{}

// WithImportMaxSize returns a context whose imports spool at most n bytes of a stream
// (the CLI's import --max-size); n <= 0 means DefaultImportMaxSize.
func WithImportMaxSize(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, importMaxSizeKey{}, n)
}

// ImportMaxSizeFrom returns the context's import spool bound, DefaultImportMaxSize when
// none was set.
func ImportMaxSizeFrom(ctx context.Context) int64 {
	if n, ok := ctx.Value(importMaxSizeKey{}).(int64); ok && n > 0 {
		return n
	}
	return DefaultImportMaxSize
}

// Stats are cheap counters kept by the store.
type Stats struct {
	Identities    int    `json:"identities"`
	Devices       int    `json:"devices"`
	Notes         int    `json:"notes"`
	Relations     int    `json:"relations"` // declared
	Events        uint64 `json:"events"`
	SchemaVersion int    `json:"schema_version"`
	FileBytes     int64  `json:"file_bytes"`
	// A replica's: the cluster it mirrors and the revision of that cluster's last
	// commit it holds (its lag is the cluster's newest commit minus this).
	ReplicaOf  string `json:"replica_of,omitempty"`
	ReplicaRev int64  `json:"replica_rev,omitempty"`
}

// ImportStats reports what an import wrote.
type ImportStats struct {
	Records int  `json:"records"`
	Events  int  `json:"events"`
	KeptLog bool `json:"kept_log"` // imported into an empty database: the chain was kept byte for byte
}

// DatabaseService is the database as a whole: counters, copies and moves.
type DatabaseService interface {
	// Stats returns the store's cheap counters.
	Stats(ctx context.Context) (*Stats, error)
	// CheckRelations checks the declared relations against their indexes and counters in
	// one read; it returns the problems found (none when whole), not an error for them.
	CheckRelations(ctx context.Context) (problems []string, err error)
	// CheckConsistency runs the storage engine's full page check in one read while others
	// keep working; a wrong page is the damaged-file error (EINVALID, naming the problem
	// and the way out: restore a backup), nil when every page is right.
	CheckConsistency(ctx context.Context) error
	// Backup writes a consistent copy of the whole file to w while others keep working.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	// Export writes every record and the changelog as JSON lines.
	Export(ctx context.Context, w io.Writer) error
	// Import reads Export's JSON lines twice: a first pass checks them all, a second
	// writes them in one transaction, calling progress now and then with the records
	// written and the records the check counted (done = total once written). A regular file is
	// read in place; any other reader is spooled to a temporary file (removed before
	// Import returns) of at most ImportMaxSizeFrom(ctx) bytes, ELIMIT past that. Into an
	// empty database the chain is kept byte for byte; into a non-empty one the import
	// records its own events. Malformed input (EINVALID), a line longer than any record
	// (ELIMIT), or an identity, unit hint or note already here (ECONFLICT) writes nothing,
	// and the error names the first such line; so does a cancelled ctx (ctx.Err()).
	Import(ctx context.Context, r io.Reader, progress func(done, total int)) (*ImportStats, error)
}
