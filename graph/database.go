package graph

import (
	"context"
	"io"
)

// Stats are cheap counters kept by the store.
type Stats struct {
	Identities    int    `json:"identities"`
	Devices       int    `json:"devices"`
	Notes         int    `json:"notes"`
	Relations     int    `json:"relations"` // declared
	Events        uint64 `json:"events"`
	SchemaVersion int    `json:"schema_version"`
	FileBytes     int64  `json:"file_bytes"`
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
	// Backup writes a consistent copy of the whole file to w while others keep working.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	// Export writes every record and the changelog as JSON lines.
	Export(ctx context.Context, w io.Writer) error
	// Import reads Export's JSON lines in batched transactions, calling progress now and
	// then. Into an empty database the chain is kept byte for byte; into a non-empty one
	// the import records its own events. The whole input is checked first: malformed
	// input (EINVALID) or an identity, unit hint or note already here (ECONFLICT) writes
	// nothing, and the error names the first such line.
	Import(ctx context.Context, r io.Reader, progress func(records int)) (*ImportStats, error)
}
