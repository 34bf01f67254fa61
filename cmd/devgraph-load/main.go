// Command devgraph-load measures a running devgraph under load and prints a table.
//
//	go run ./cmd/devgraph-load [--identities 100000] [--duration 10s] [--concurrency 16] [--db PATH]
//	go run ./cmd/devgraph-load --cluster 3 [--duration 10s] [--concurrency 16] [--idle 5s] [--rebuild 10000]
//
// It builds (or, when --db exists, reuses) a database of N identities with 3 hints, 3 tags
// and a note each, starts the stack in-process from the constructors `devgraph serve
// --http` uses (store, identity service, GraphQL executor, MCP server, and the http
// package's server with its routes and guard) on a 127.0.0.1:0 listener, and runs
// time-limited phases against it over loopback HTTP:
// GraphQL reads, find, a write mix and MCP tools/call graph_find. Each phase prints one
// row: requests, req/s, latency percentiles and errors. Last come the Go heap and the
// process's anonymous RSS. --cluster N measures the fleet store instead (cluster.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/mcptools"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "devgraph-load:", err)
		}
		os.Exit(1)
	}
}

type config struct {
	identities  int
	duration    time.Duration
	concurrency int
	maxRequests int
	db          string

	cluster int           // --cluster N: the fleet store on N etcd members (cluster.go)
	idle    time.Duration // cluster mode: how long both front ends sit idle
	rebuild int           // cluster mode: identities a fresh front end's replica is built with
	only    string        // cluster mode: the phases to run (comma-separated names), "" for all
	cpuprof string        // write a CPU profile of the whole run here
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("devgraph-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.identities, "identities", 100_000, "identities in a new database (a reused --db keeps what it has)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "how long each phase runs")
	fs.IntVar(&c.concurrency, "concurrency", 16, "concurrent clients per phase")
	fs.IntVar(&c.maxRequests, "max-requests", 1_000_000, "at most this many requests per phase")
	fs.StringVar(&c.db, "db", "", "database to use; created when missing, reused when it exists (default: a temporary one, removed at exit)")
	fs.IntVar(&c.cluster, "cluster", 0, "run the fleet store instead: N etcd members on loopback (built from the pinned module) and two front ends, tag.add writers through one fault per phase")
	fs.DurationVar(&c.idle, "idle", 5*time.Second, "cluster mode: how long both front ends sit idle while the etcd revision is watched")
	fs.IntVar(&c.rebuild, "rebuild", 10_000, "cluster mode: identities to load before a fresh front end builds its replica (0: skip)")
	fs.StringVar(&c.cpuprof, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof)")
	fs.StringVar(&c.only, "phases", "", `cluster mode: run only these phases, comma-separated (e.g. "steady,leader kill")`)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q; every option is a flag (see -h)", fs.Arg(0))
	case c.identities < 1 || c.identities > 10_000_000:
		return nil, fmt.Errorf("--identities %d: want 1 to 10,000,000", c.identities)
	case c.duration <= 0 || c.duration > time.Hour:
		return nil, fmt.Errorf("--duration %s: want more than 0 and at most 1h", c.duration)
	case c.concurrency < 1 || c.concurrency > 1024:
		return nil, fmt.Errorf("--concurrency %d: want 1 to 1024", c.concurrency)
	case c.maxRequests < 1:
		return nil, fmt.Errorf("--max-requests %d: want at least 1", c.maxRequests)
	case c.cluster != 0 && c.cluster != 1 && c.cluster != 3 && c.cluster != 5:
		return nil, fmt.Errorf("--cluster %d: want 1, 3 or 5 etcd members", c.cluster)
	case c.idle < 0 || c.idle > time.Hour:
		return nil, fmt.Errorf("--idle %s: want 0 to 1h", c.idle)
	case c.rebuild < 0 || c.rebuild > 10_000_000:
		return nil, fmt.Errorf("--rebuild %d: want 0 to 10,000,000", c.rebuild)
	}
	return &c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if c.cpuprof != "" {
		f, err := os.Create(c.cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if c.cluster > 0 {
		return runCluster(ctx, c, stdout, stderr)
	}
	if c.db == "" {
		dir, err := os.MkdirTemp("", "devgraph-load-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.db = filepath.Join(dir, "devgraph.db")
	}
	start := time.Now()
	if _, err := os.Stat(c.db); err == nil {
		fmt.Fprintf(stdout, "database: %s (reused)\n", c.db)
	} else {
		if err := createDB(ctx, c.db, c.identities); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "database: %s (%d identities created in %s)\n", c.db, c.identities, time.Since(start).Round(time.Millisecond))
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := startStack(c.db, log)
	if err != nil {
		return err
	}
	defer s.close()

	start = time.Now()
	ids, err := identityIDs(ctx, s.st)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return fmt.Errorf("%s holds no identities; remove it or give another --db", c.db)
	}
	if err := s.names.Refresh(ctx); err != nil {
		return fmt.Errorf("build the find index: %w", err)
	}
	fmt.Fprintf(stdout, "server: %s, %d identities, find index built in %s\n\n", s.base, len(ids), time.Since(start).Round(time.Millisecond))

	l := newLoader(s.base, ids, c.concurrency)
	defer l.close()
	// The table is written when every phase is done (tabwriter aligns whole columns);
	// progress goes to stderr meanwhile.
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\trequests\treq/s\tp50\tp90\tp99\tmax\terrors")
	for _, p := range l.phases() {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "running %s for %s on %d clients…\n", p.name, c.duration, c.concurrency)
		r := l.runPhase(ctx, p, c.duration, c.maxRequests)
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\n", r.name, r.requests, r.rate,
			fmtDur(r.pct(50)), fmtDur(r.pct(90)), fmtDur(r.pct(99)), fmtDur(r.pct(100)), r.errors)
		if r.firstErr != nil {
			fmt.Fprintf(stderr, "%s: first error: %v\n", r.name, r.firstErr)
		}
	}
	tw.Flush()

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(stdout, "\nGo heap: %s in use, %s from the OS; anonymous RSS: %s\n",
		mib(ms.HeapInuse), mib(ms.HeapSys), anonRSS())
	return ctx.Err()
}

// stack is the in-process server, built from the constructors cmd/devgraph's serve
// uses, without hardware sources or robots (the load is on the graph, not on /sys).
type stack struct {
	st    *store.DB
	svc   *identity.Service
	exec  *query.Executor
	names *search.Finder
	mcp   *mcptools.Server
	hs    *devhttp.Server
	base  string
}

func startStack(db string, log *slog.Logger) (*stack, error) {
	st, err := store.Open(db, store.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	s := &stack{st: st}
	s.svc = identity.New(st, nil, nil)
	s.svc.Logger = log
	if err := s.svc.Open(); err != nil {
		s.close()
		return nil, err
	}
	s.names = search.NewFinder(st)
	st.SetSuggester(s.names)
	limits := query.DefaultLimits()
	if s.exec, err = query.New(s.svc, query.Options{Limits: limits, Logger: log, Finder: s.names}); err != nil {
		s.close()
		return nil, err
	}
	s.mcp, err = mcptools.New(s.svc, mcptools.Options{Exec: s.exec, Finder: s.names, Devices: s.st, Notifier: s.svc, Logger: log, Version: "load", MaxPage: limits.MaxPageSize})
	if err != nil {
		s.close()
		return nil, err
	}
	hs := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{GraphQL: s.exec, MCP: s.mcp.HTTPHandler(), Loopback: true, Logger: log}}
	if err := hs.Open(); err != nil {
		s.close()
		return nil, err
	}
	s.hs, s.base = hs, hs.URL()
	return s, nil
}

// close stops the parts in reverse order, as serve does.
func (s *stack) close() {
	if s.hs != nil {
		s.hs.Close()
	}
	if s.mcp != nil {
		s.mcp.Close()
	}
	if s.exec != nil {
		s.exec.Close()
	}
	if s.svc != nil {
		s.svc.Close()
	}
	s.st.Close()
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

func mib[T int64 | uint64](n T) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// anonRSS reads the process's anonymous resident memory from /proc/self/smaps_rollup.
func anonRSS() string {
	data, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Anonymous:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return mib(kb << 10)
			}
		}
	}
	return "unknown (no Anonymous line in /proc/self/smaps_rollup)"
}
