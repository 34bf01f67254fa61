package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/store"
)

// lockWait is how long opening a held database waits before saying it is in use.
const lockWait = time.Second

// openLocal opens the database file itself: the store, the sources (no background
// polling; a request reads its own snapshot) and the identity service over them.
// Robots live only in a running server.
func (e *env) openLocal(ctx context.Context, c *common, db string) (*session, error) {
	so, err := c.storeOptions(store.Options{Timeout: lockWait, Logger: storeLog()})
	if err != nil {
		return nil, err
	}
	return e.openLocalWith(ctx, c, db, so)
}

// openLocalWith is openLocal with the store's options given (a cluster's snapshot is a
// fleet store).
func (e *env) openLocalWith(ctx context.Context, c *common, db string, so store.Options) (*session, error) {
	st, err := store.Open(db, so)
	if err != nil {
		return nil, err
	}
	live, err := e.live(c, db)
	if err != nil {
		st.Close()
		return nil, err
	}
	svc := identity.New(st, live, nil)
	if err := svc.Open(); err != nil {
		live.Close()
		st.Close()
		return nil, err
	}
	return &session{svc: svc, db: db, closer: func() error {
		svc.Close()
		live.Close()
		return st.Close()
	}}, nil
}

// live returns the hardware sources the flags ask for: the demo rig with --demo (unless
// roots are given), else the real /sys, /proc, pw-dump, usb.ids and /dev, each
// overridable. A --usb-ids file that cannot be read is refused before anything opens.
func (e *env) live(c *common, db string) (*sources.Live, error) {
	if c.usbIDs != "" {
		if err := sources.CheckUSBIDs(c.usbIDs); err != nil {
			return nil, graph.FieldErrorf(graph.EINVALID, "usb-ids", "--usb-ids: %v", err)
		}
	}
	if c.demo && c.sysRoot == "" && c.procRoot == "" && c.pwDump == "" && c.devRoot == "" {
		l, err := sources.NewDemo(e.demoRigDir(db))
		if err != nil {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "cannot write the demo rig: %v", err)
		}
		if c.usbIDs != "" {
			l.USBIDs = c.usbIDs
		}
		return l, nil
	}
	return &sources.Live{SysRoot: c.sysRoot, ProcRoot: c.procRoot, PWDumpFile: c.pwDump, USBIDs: c.usbIDs, DevRoot: c.devRoot}, nil
}

// storeLog is the logger a command gives the store it opens. What the store logs at
// error level (a damaged file, a failed write) it also returns, and the command prints
// that as its one line; so only its warnings are logged, as before, to stderr.
func storeLog() *slog.Logger { return slog.New(belowError{slog.Default().Handler()}) }

// belowError passes on the records below slog.LevelError.
type belowError struct{ slog.Handler }

func (h belowError) Enabled(ctx context.Context, l slog.Level) bool {
	return l < slog.LevelError && h.Handler.Enabled(ctx, l)
}

func (h belowError) WithAttrs(attrs []slog.Attr) slog.Handler {
	return belowError{h.Handler.WithAttrs(attrs)}
}

func (h belowError) WithGroup(name string) slog.Handler { return belowError{h.Handler.WithGroup(name)} }
