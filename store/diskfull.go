package store

import (
	"errors"
	"strings"
	"syscall"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// What a failed commit leaves behind.
//
// bbolt commits in three steps: it grows the file (ftruncate + fsync) when the
// transaction needs pages past its end, writes the dirty pages (pwrite + fdatasync),
// then writes the meta page (pwrite + fdatasync). When any step fails it rolls the
// transaction back: the free-page list is reloaded from the meta page on the file, and
// the meta page still names the last committed transaction, so the pages written so far
// are unreachable and the database stays as it was and usable. That is the case for a
// full disk (ENOSPC, EDQUOT) and the file size limit (EFBIG, RLIMIT_FSIZE: Go ignores
// SIGXFSZ, so the write fails instead of the process dying); both surface before the
// meta page is written, because the meta pages sit at the start of the file and never
// need new blocks. The change is refused with a clear error and the next write may
// succeed once space returns.
//
// Any other failure at commit (an I/O error, a failed fdatasync) leaves the outcome
// unknown: after a failed fdatasync Linux may drop the dirty pages, or the meta page may
// already be in the page cache, so this process would read a transaction it reported
// as failed. The store then refuses every further write until it is reopened; reads go
// on.

// commitErr turns the error of a write transaction whose commit failed (fn returned
// nil; txid is the transaction's id) into the error its callers get, and marks the
// database failed for writes when the outcome is unknown.
func (db *DB) commitErr(txid int, err error) error {
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return errClosed
	}
	if ge := db.failed.Load(); ge != nil {
		// The commit faulted on a damaged file: that error, not a disk error saying reads
		// still work (the DB now refuses them too).
		return ge
	}
	landed := false
	if verr := db.bolt.View(func(tx *bolt.Tx) error { landed = tx.ID() >= txid; return nil }); verr != nil {
		landed = true // cannot tell; assume the worst
	}
	if full := diskFullErr(db.path, err); full != nil && !landed {
		db.log.Warn("write refused", "db", db.path, "err", err)
		return full
	}
	ge := graph.Errorf(graph.EUNAVAILABLE, "writing to %s failed (%s), so devgraph accepts no more changes until it is restarted; reads still work. Check the disk (dmesg), then restart devgraph", db.path, ioCause(err))
	db.writeFailed.CompareAndSwap(nil, ge)
	db.log.Error("write failed; refusing further writes until restart", "db", db.path, "err", err, "landed", landed)
	return ge
}

// diskFullErr returns the clear error for a commit that failed because the disk is full,
// the quota is used up or the file size limit was reached; nil for any other error.
// bbolt wraps some of its errors with %s, losing the errno, so the message text is
// matched too.
func diskFullErr(path string, err error) error {
	has := func(e syscall.Errno) bool { return errors.Is(err, e) || strings.Contains(err.Error(), e.Error()) }
	const kept = "this change was not saved; everything saved before is intact and reads still work"
	switch {
	case has(syscall.ENOSPC):
		return graph.Errorf(graph.EUNAVAILABLE, "the disk is full: %s; free space on the disk holding %s and try again", kept, path)
	case has(syscall.EDQUOT):
		return graph.Errorf(graph.EUNAVAILABLE, "the disk quota is used up: %s; free space or raise the quota for %s and try again", kept, path)
	case has(syscall.EFBIG):
		return graph.Errorf(graph.EUNAVAILABLE, "the file size limit was reached writing %s: %s; raise devgraph's file size limit (ulimit -f, or prlimit for a running server) or make the file smaller (devgraph changelog prune, then devgraph compact) and try again", path, kept)
	}
	return nil
}

// openDiskFull turns an error from opening (creating, migrating) the database at path
// into the disk-full error when that is its cause; any other error is returned as is.
func openDiskFull(path string, err error) error {
	has := func(e syscall.Errno) bool { return errors.Is(err, e) || strings.Contains(err.Error(), e.Error()) }
	var why string
	switch {
	case has(syscall.ENOSPC):
		why = "the disk is full"
	case has(syscall.EDQUOT):
		why = "the disk quota is used up"
	case has(syscall.EFBIG):
		why = "the file size limit was reached"
	default:
		return err
	}
	return graph.Errorf(graph.EUNAVAILABLE, "cannot create or update %s: %s; free space on its disk (or raise the limit) and try again; nothing was changed", path, why)
}

// ioCause names the system error inside err ("input/output error") when there is one.
func ioCause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// writesRefused returns the error every write gets after a commit failed with an
// unknown outcome, or while the Committer refuses writes (WriteRefuser); nil while
// writes are accepted.
func (db *DB) writesRefused() error {
	if ge := db.writeFailed.Load(); ge != nil {
		return ge
	}
	if r, ok := db.opts.Committer.(WriteRefuser); ok {
		return r.RefuseWrite()
	}
	return nil
}
