package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// CheckFile opens the closed database at path read-only and checks bbolt's page
// consistency, the changelog chain and the relations' indexes and counters
// (CheckRelations). Tests call it after every test (storetest). A damaged file gives the
// damaged-file error (see damage.go).
func CheckFile(path string) error {
	if err := CheckConsistency(path); err != nil {
		return err
	}
	db, err := Open(path, Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := db.VerifyChangelog(context.Background())
	if err != nil {
		return err
	}
	if !r.OK {
		return fmt.Errorf("changelog: %s", r.Problem)
	}
	problems, err := db.CheckRelations(context.Background())
	if err != nil {
		return err
	}
	return relationProblems(problems)
}

// CheckConsistency runs bbolt's full page check on the open database, in one read
// transaction beside the others (doctor asks a running server for it over the socket).
// A problem is the damaged-file error, and fails the DB as a fault would.
func (db *DB) CheckConsistency(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := db.guard(func() error { return checkConsistency(db.path, db.bolt, !db.opts.ReadOnly) })
	var ge *graph.Error
	if errors.As(err, &ge) && ge.Code == graph.EINVALID && db.failed.CompareAndSwap(nil, ge) {
		db.log.Error("database damaged; refusing every further call", "db", db.path, "err", err)
	}
	return err
}

// CheckConsistency checks the closed database at path the way Open does after an unclean
// shutdown: its header (checkHeader), then bbolt's full page consistency check (tx.Check),
// read-only. Any problem is the damaged-file error: EINVALID, naming the problem and the
// way out (restore a backup). doctor shows it as a row; CheckFile starts with it.
func CheckConsistency(path string) error {
	hdr, err := checkHeader(path)
	if err != nil {
		return err
	}
	if hdr == nil {
		return graph.Errorf(graph.ENOTFOUND, "database %s does not exist; any devgraph command that writes creates it", path)
	}
	bdb, err := openBolt(path, Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return err
	}
	defer bdb.Close()
	return checkConsistency(path, bdb, false)
}
