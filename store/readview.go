package store

import (
	"context"
	"errors"
	"sync"

	"github.com/devgraph/devgraph/graph"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

var _ graph.ReadViewer = (*DB)(nil)

// readView is one read transaction shared by every read made with a context carrying it
// (graph.ReadViewer). A bbolt transaction is not meant for concurrent goroutines, so the
// reads take turns on mu.
type readView struct {
	db   *DB
	mu   sync.Mutex
	tx   *bolt.Tx
	done bool
}

type viewKey struct{}

// viewOf returns the view of db ctx carries, or nil.
func (db *DB) viewOf(ctx context.Context) *readView {
	v, _ := ctx.Value(viewKey{}).(*readView)
	if v == nil || v.db != db {
		return nil
	}
	return v
}

// BeginRead opens one read transaction for every read made with the returned context;
// see graph.ReadViewer. Writes made with it fail (EINTERNAL) rather than deadlock: a
// commit that must grow the file waits for every open read transaction to end.
func (db *DB) BeginRead(ctx context.Context) (context.Context, func(), error) {
	if db.viewOf(ctx) != nil {
		return ctx, func() {}, nil
	}
	if err := ctx.Err(); err != nil {
		return ctx, nil, err
	}
	if err := graph.SettleCommits(ctx); err != nil {
		return ctx, nil, err // a request reads its own writes
	}
	var tx *bolt.Tx
	err := db.guard(func() (err error) {
		tx, err = db.bolt.Begin(false)
		return err
	})
	if err != nil {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return ctx, nil, errClosed
		}
		return ctx, nil, internal("begin read view", err)
	}
	v := &readView{db: db, tx: tx}
	release := func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		if !v.done {
			v.done = true
			v.tx.Rollback()
		}
	}
	return context.WithValue(ctx, viewKey{}, v), release, nil
}

// errInView refuses a write made with a context that holds a read view.
func errInView() error {
	return graph.Errorf(graph.EINTERNAL, "write inside a read view: a write made while its caller holds a read transaction could wait on that transaction forever; write with a context that carries no view")
}

// inView runs fn in ctx's view of db; ok is false when ctx carries none (or it was
// released: the caller then reads in a transaction of its own).
func (db *DB) inView(ctx context.Context, fn func(tx *bolt.Tx) error) (ok bool, err error) {
	v := db.viewOf(ctx)
	if v == nil {
		return false, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.done {
		return false, nil
	}
	return true, fn(v.tx)
}
