package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

// common are the options every verb shares: the global flags (the database, the
// sources' roots, the why), the output choice of the verbs that print one, and the
// environment the verb runs in.
type common struct {
	e        *env
	db       string
	demo     bool
	message  string
	sysRoot  string
	procRoot string
	pwDump   string
	usbIDs   string
	devRoot  string
	// hostName is --host-name: this machine's name ("" for $DEVGRAPH_HOST_NAME, else the
	// OS host name; see host).
	hostName string
	// store is --store: an etcd cluster (etcd://…) holding a fleet's graph, "" for the
	// file; connectTimeout bounds how long a verb tries to reach it.
	store          string
	connectTimeout time.Duration

	// json is --json; output is -o json|wide. asJSON and wide read them.
	json   bool
	output string
	// wide is -o wide: tables keep every column and cell whole.
	wide bool
}

// register adds the global flags (persistent on the root, so they stand before or after
// the verb and are listed once in help).
func (c *common) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "database file (default $DEVGRAPH_DB, else $XDG_DATA_HOME/devgraph/devgraph.db)")
	fs.BoolVar(&c.demo, "demo", false, "use the demo rig and its own database (demo.db) unless --db is given")
	fs.StringVarP(&c.message, "message", "m", "", "why: recorded on the changelog events this command writes")
	// Every verb may open the file itself, and then reads the sources: all take the roots.
	fs.StringVar(&c.sysRoot, "sys-root", "", "read sysfs from this root instead of /sys")
	fs.StringVar(&c.procRoot, "proc-root", "", "read procfs from this root instead of /proc")
	fs.StringVar(&c.pwDump, "pw-dump-file", "", "read pw-dump JSON from this file instead of running pw-dump")
	fs.StringVar(&c.usbIDs, "usb-ids", "", "name USB devices from this usb.ids (default /usr/share/hwdata/usb.ids, else /usr/share/misc/usb.ids)")
	fs.StringVar(&c.devRoot, "dev-root", "", "read the stable /dev links (serial/by-id …) from this root instead of /dev")
	fs.StringVar(&c.hostName, "host-name", "", "this machine's host name, a slug fixed in the database once written (default $DEVGRAPH_HOST_NAME, else the first label of the OS host name, lowercased)")
	fs.StringVar(&c.store, "store", "", "the graph on an etcd cluster shared by a fleet of hosts: etcd://h1:2379,h2:2379[/prefix], or etcds://…?cacert=&cert=&key= (--db is then the local replica)")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", 10*time.Second, "with --store: how long to try reaching etcd before giving up")
}

// host is the host name devices found here belong to: --host-name, else
// $DEVGRAPH_HOST_NAME, else the OS host name as a slug (graph.HostSlug). A name given
// that is not a valid host name is an error.
func (c *common) host() (string, error) {
	h := c.hostName
	if h == "" && c.e != nil {
		h = c.e.getenv("DEVGRAPH_HOST_NAME")
	}
	if h == "" {
		name, _ := os.Hostname()
		return graph.HostSlug(name), nil
	}
	if err := graph.ValidateHost(h); err != nil {
		return "", graph.FieldErrorf(graph.EINVALID, "host_name", "--host-name: %s", graph.ErrorMessage(err))
	}
	return h, nil
}

// storeOptions is o with this machine's host name, for every store.Open.
func (c *common) storeOptions(o store.Options) (store.Options, error) {
	h, err := c.host()
	o.Host = h
	return o, err
}

// asJSON reports whether the verb prints JSON (--json or -o json: the same bytes).
func (c *common) asJSON() bool { return c.json || c.output == "json" }

// checkOutput validates -o and sets wide.
func (c *common) checkOutput() error {
	switch c.output {
	case "", "json":
	case "wide":
		c.wide = true
		if c.e != nil && columnsOf(c.e.stdout) > 0 {
			// Wide tables are never fitted to the terminal: every cell whole.
			c.e.stdout = &fitted{Writer: c.e.stdout, cols: 0}
		}
	default:
		return usagef("-o %q: want json or wide", c.output)
	}
	return nil
}

// dataDir is $XDG_DATA_HOME/devgraph (~/.local/share/devgraph).
func (e *env) dataDir() string {
	if d := e.getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "devgraph")
	}
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "devgraph")
}

// dbPath resolves the database: --db, else (with --demo) the demo database, else
// $DEVGRAPH_DB, else the default under $XDG_DATA_HOME. The demo never falls back to the
// user's real database.
func (e *env) dbPath(c *common) string {
	p := c.db
	switch {
	case p != "":
	case c.demo:
		p = filepath.Join(e.dataDir(), "demo.db")
	case e.getenv("DEVGRAPH_DB") != "":
		p = e.getenv("DEVGRAPH_DB")
	default:
		p = filepath.Join(e.dataDir(), "devgraph.db")
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// demoRigDir is where --demo writes the demo rig for the database at db: a cache
// directory of its own per database, so two demos never rewrite each other's files.
func (e *env) demoRigDir(db string) string {
	base := e.getenv("XDG_CACHE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := e.getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		base = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(db))
	return filepath.Join(base, "devgraph", "demo-rig-"+hex.EncodeToString(sum[:])[:12])
}

// withCaller puts the CLI's actor, a fresh request id and the --message on ctx. The CLI
// runs as the database's own user, who may prune the changelog.
func (c *common) withCaller(ctx context.Context) context.Context {
	ctx = graph.WithActor(ctx, cliActor())
	ctx = graph.WithPrunePermission(ctx)
	ctx = graph.WithRequestID(ctx, graph.NewRequestID())
	if c.message != "" {
		ctx = graph.WithMessage(ctx, c.message)
	}
	return ctx
}

// openMode says what a verb needs of the database.
type openMode int

const (
	openAny       openMode = iota // through a running server, else the file
	openLocalOnly                 // the file itself, exclusively (compact, migrate)
	openServer                    // only through a running server (robots)
	openRead                      // as openAny, but a verb that only reads creates nothing: the file must exist
)

// errNoDatabase is a reading verb's answer on a database file that does not exist.
func errNoDatabase(db string) error {
	return graph.Errorf(graph.ENOTFOUND, "no database at %s; check --db or $DEVGRAPH_DB", db)
}

// session is an open graph.Service: the running server's, or our own over the file.
type session struct {
	svc    graph.Service
	db     string
	client *remote.Client // set when a server answers
	closer func() error
}

func (s *session) Close() error {
	if s.closer != nil {
		f := s.closer
		s.closer = nil
		return f()
	}
	return nil
}

// dialServer returns a client when a server holding db answers on its socket.
func dialServer(ctx context.Context, db string) *remote.Client {
	path := remote.SocketPath(db)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	c, _, err := remote.Dial(ctx, path, 2*time.Second)
	if err != nil {
		return nil
	}
	return c
}

// open returns the service for the verb: through a running server's socket whenever one
// holds the database (the same results and events as opening the file), else by opening
// the file itself with the sources and no background polling.
func (e *env) open(ctx context.Context, c *common, mode openMode) (*session, error) {
	if c.store != "" {
		return e.openStore(ctx, c, mode)
	}
	db := e.dbPath(c)
	if mode != openLocalOnly {
		if cl := dialServer(ctx, db); cl != nil {
			return &session{svc: cl, db: db, client: cl, closer: cl.Close}, nil
		}
	}
	if mode == openServer {
		if p := remote.Probe(remote.SocketPath(db), time.Second); p.Problem() != "" {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "no devgraph server answers for %s: %s, then start one with `devgraph serve%s`", db, p.Problem(), demoHint(c))
		}
		return nil, graph.Errorf(graph.EUNAVAILABLE, "no devgraph server is running for %s; start one with `devgraph serve%s`", db, demoHint(c))
	}
	if mode == openRead && !(c.demo && c.db == "") { // the demo makes its own database
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			return nil, errNoDatabase(db)
		}
	}
	s, err := e.openLocal(ctx, c, db)
	if err != nil {
		if graph.ErrorCode(err) == graph.ELOCKED && mode != openLocalOnly {
			// A server may be starting: it holds the lock a moment before its socket
			// answers. Give it two seconds.
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			werr := remote.WaitAnswering(wctx, remote.SocketPath(db))
			cancel()
			if werr == nil {
				if cl := dialServer(ctx, db); cl != nil {
					return &session{svc: cl, db: db, client: cl, closer: cl.Close}, nil
				}
			}
			return nil, lockedBy(err, db)
		}
		return nil, err
	}
	if mode != openLocalOnly {
		// Nothing answered on the socket, so this command opened the file; say so if
		// something squats the socket path, or the next server will not start.
		if p := remote.Probe(remote.SocketPath(db), 500*time.Millisecond); p.Problem() != "" {
			fmt.Fprintf(e.stderr, "devgraph: warning: %s; until then no devgraph server can serve %s (this command opened the file itself)\n", p.Problem(), db)
		}
	}
	return s, nil
}

// lockedBy explains an ELOCKED error from opening db when no server answered on its
// socket: what holds the file, and what is at the socket path.
func lockedBy(err error, db string) error {
	if graph.ErrorCode(err) != graph.ELOCKED {
		return err
	}
	held := strings.TrimSuffix(graph.ErrorMessage(err), "; stop it or use its socket")
	p := remote.Probe(remote.SocketPath(db), time.Second)
	switch p.State {
	case remote.SocketNone, remote.SocketStale:
		return graph.Errorf(graph.ELOCKED, "%s, which serves no socket (a command such as import or compact, or a server still starting); wait for it to finish, or stop it", held)
	case remote.SocketDevgraph:
		return graph.Errorf(graph.ELOCKED, "%s; its server answers on %s only now: run the command again", held, p.Path)
	case remote.SocketSilent:
		if p.Command == "devgraph" && processStopped(p.PID) {
			return graph.Errorf(graph.ELOCKED, "%s; its server (pid %d) is stopped (SIGSTOP, or Ctrl-Z in its terminal), so it does not answer on %s: resume it (kill -CONT %d, or fg in its terminal) and run the command again", held, p.PID, p.Path, p.PID)
		}
		if p.Command == "devgraph" {
			return graph.Errorf(graph.ELOCKED, "%s; its server (pid %d) does not answer on %s: it is hung or overloaded; wait, or stop it (kill %d) and run the command again", held, p.PID, p.Path, p.PID)
		}
	}
	return graph.Errorf(graph.ELOCKED, "%s, and its server cannot be reached: %s, then restart that server", held, p.Problem())
}

func demoHint(c *common) string {
	switch {
	case c.db != "":
		return " --db " + c.db
	case c.demo:
		return " --demo"
	}
	return ""
}
