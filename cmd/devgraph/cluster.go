package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// serveCluster serves a fleet's graph from an etcd cluster: the front end keeps a local
// replica (--db, else a cache file) that every part reads and writes as it would a file.
// endStart ends serve's hold on the collector (see serveDB).
func (e *env) serveCluster(ctx context.Context, f *serveFlags, log *slog.Logger, endStart func()) error {
	replica := ""
	if f.db != "" || e.getenv("DEVGRAPH_DB") != "" {
		replica = e.dbPath(f.common)
	}
	host, err := f.host()
	if err != nil {
		return err
	}
	fe, err := cluster.Open(ctx, cluster.Config{
		Store:          f.store,
		ConnectTimeout: f.connectTimeout,
		Replica:        replica,
		Host:           host,
		MachineID:      e.machineID(),
		Version:        Version,
		Logger:         log,
		Store0:         store.Options{Logger: log, Timeout: lockWait},
	})
	if err != nil {
		return err
	}
	defer fe.Close()
	return e.serveDB(ctx, f, fe.DB(), fe.DB().Path(), log, fe, endStart)
}

// machineID identifies this machine to the cluster's host-name claims: the same machine
// takes its name back after a restart, another is refused it.
func (e *env) machineID() string {
	if id := e.getenv("DEVGRAPH_MACHINE_ID"); id != "" {
		return id
	}
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	h, _ := os.Hostname()
	return "host:" + h
}

// openStore opens the service for a verb given --store. A front end serving the cluster
// beside --db (or beside the cluster's default replica) answers as it does without
// --store. With none running, a verb that only reads gets a consistent snapshot of the
// cluster, read straight from etcd at one revision into a temporary replica; a verb that
// writes needs a front end.
func (e *env) openStore(ctx context.Context, c *common, mode openMode) (*session, error) {
	if mode == openLocalOnly {
		return nil, usagef("--store names a cluster; this verb works on a database file (--db): drop --store")
	}
	t, err := cluster.ParseStore(c.store)
	if err != nil {
		return nil, err
	}
	if c.db != "" || e.getenv("DEVGRAPH_DB") != "" {
		if s, err := e.frontEnd(ctx, t, e.dbPath(c)); s != nil || err != nil {
			return s, err
		}
	}
	cc, err := cluster.Dial(ctx, c.store, c.connectTimeout)
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	replica := e.dbPath(c)
	if c.db == "" && e.getenv("DEVGRAPH_DB") == "" {
		replica = cluster.DefaultReplica(cc.Name())
		if s, err := e.frontEnd(ctx, t, replica); s != nil || err != nil {
			return s, err
		}
	}
	if mode != openRead {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "no front end serves the cluster %s on this host (none answers beside %s): changes go through one; start `devgraph serve --store %s --db %s`, or pass the --db of a running one", c.store, replica, c.store, replica)
	}
	return e.openSnapshot(ctx, c, cc)
}

// frontEnd returns a session through the front end serving db when one answers (nil
// when none does), after checking that it serves the cluster --store names.
func (e *env) frontEnd(ctx context.Context, t *cluster.Target, db string) (*session, error) {
	cl := dialServer(ctx, db)
	if cl == nil {
		return nil, nil
	}
	st, err := cl.Stats(ctx)
	if err != nil {
		cl.Close()
		return nil, err
	}
	if !t.Names(st.ReplicaOf) {
		cl.Close()
		what := "an ordinary database"
		if st.ReplicaOf != "" {
			what = "a replica of " + st.ReplicaOf
		}
		return nil, graph.FieldErrorf(graph.EINVALID, "store", "the server beside %s serves %s, not the cluster --store %s names: pass the --db of that cluster's front end, or drop --store", db, what, t)
	}
	return &session{svc: cl, db: db, client: cl, closer: cl.Close}, nil
}

// openSnapshot reads the cluster's graph at one revision into a temporary replica and
// opens it as a verb opens a file (read-only: a replica refuses writes); the file goes
// when the session closes.
func (e *env) openSnapshot(ctx context.Context, c *common, cc *cluster.Client) (*session, error) {
	dir, err := os.MkdirTemp("", "devgraph-snapshot-")
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "cannot make a temporary snapshot of the cluster: %v", err)
	}
	path := filepath.Join(dir, "snapshot.db")
	// A fleet store: refs carry their host, a bare one is this host's.
	so, err := c.storeOptions(store.Options{Timeout: lockWait, Logger: storeLog()})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	so.Fleet = true
	if _, err := cc.Snapshot(ctx, path, so); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s, err := e.openLocalWith(ctx, c, path, so)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	closeDB := s.closer
	s.closer = func() error {
		err := closeDB()
		os.RemoveAll(dir)
		return err
	}
	return s, nil
}

// graphName names the graph a verb works on, for its messages: the cluster, or the file.
func (e *env) graphName(c *common) string {
	if c.store != "" {
		return c.store
	}
	return e.dbPath(c)
}

// importCluster imports an export into an empty cluster no host serves (offline): the
// store's own import builds the graph in a temporary file, which is then loaded into
// etcd (cluster.Client.Load), so the cluster holds the export's changelog byte for byte.
func (e *env) importCluster(ctx context.Context, o *importOptions, r io.Reader, out io.Writer) (err error) {
	cc, err := cluster.Dial(ctx, o.store, o.connectTimeout)
	if err != nil {
		return err
	}
	defer cc.Close()
	host, err := o.host()
	if err != nil {
		return err
	}
	imp := cluster.ImportOptions{Force: o.force, Host: host, MachineID: e.machineID()}
	// Refuse before reading the input; Load checks again inside its transactions.
	if err := cc.CheckImportable(ctx, imp); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "devgraph-import-")
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "import: cannot make a temporary database: %v", err)
	}
	defer os.RemoveAll(dir)
	// A fleet store, as a front end's replica is: the export's refs take the host form.
	db, err := store.Open(filepath.Join(dir, "import.db"), store.Options{Timeout: lockWait, Logger: storeLog(), NoSync: true, Host: host, Fleet: true})
	if err != nil {
		return err
	}
	defer db.Close()
	bar := newProgressLine(e.stderr, "import")
	// A single-host export (a file's) becomes the devices of this host (--host-name):
	// its refs, keys, usb_path hints, relation ends, note and tag targets take the
	// qualified form; a fleet's export keeps the hosts it names.
	st, err := db.ImportWith(ctx, r, func(done, total int) {
		if !o.quiet {
			bar.update(done, total)
		}
	}, store.ImportOptions{QualifyHost: host})
	bar.finish(err == nil)
	if err != nil {
		if ctx.Err() != nil {
			return errImportInterrupted
		}
		return err
	}
	if !o.quiet {
		keys := 0
		db.Records(ctx, func(_, _, _ []byte) error { keys++; return nil })
		load := newProgressLine(e.stderr, "import into etcd")
		imp.Progress = func(done int) { load.update(done, keys) }
		defer func() { load.finish(err == nil) }()
	}
	ls, err := cc.Load(ctx, db, imp)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "imported %s and %s into the cluster %s (%d keys in %s; changelog kept byte for byte)\n",
		plural(st.Records, "record", "records"), plural(st.Events, "event", "events"), o.store, ls.Keys, plural(ls.Txns, "etcd transaction", "etcd transactions"))
	return nil
}
