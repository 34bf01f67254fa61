package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/internal/startgc"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
)

func runServe(ctx context.Context, f *serveFlags, logs io.Writer) error {
	return f.e.serve(ctx, f, newLogger(logs, f.logLevel, f.logFormat))
}

// serve opens the database and serves it; when another server holds the database it
// relays to that one instead.
func (e *env) serve(ctx context.Context, f *serveFlags, log *slog.Logger) error {
	// The process's hold on the collector (startgc), which serve keeps (root.go): what a
	// server allocates before its first find is mostly the find index, all of it live,
	// and at 100,000 identities the collections the heap's growth would start mark it
	// again and again, about 15 ms of CPU that a first find would wait for. No
	// collections until the first find (serveDB ends the hold then, or this on return).
	endStart := e.endGC
	defer endStart()
	// Then the collector runs startgc.Headroom apart at least: on a small graph the
	// default (twice the live heap) collected every few dozen writes.
	defer startgc.KeepHeadroom(e.getenv, startgc.Headroom)()
	if f.store != "" {
		return e.serveCluster(ctx, f, log, endStart)
	}
	db := e.dbPath(f.common)
	// The holder may be starting up (locked, socket not yet listening): retry briefly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if cl := dialServer(ctx, db); cl != nil {
			defer cl.Close()
			endStart() // a relay builds no index
			return e.relay(ctx, f, cl, db, log)
		}
		so, err := f.storeOptions(store.Options{Timeout: 500 * time.Millisecond, Logger: log})
		if err != nil {
			return err
		}
		st, err := store.Open(db, so)
		if err == nil {
			return e.serveDB(ctx, f, st, db, log, nil, endStart)
		}
		if graph.ErrorCode(err) != graph.ELOCKED || time.Now().After(deadline) || ctx.Err() != nil {
			return lockedBy(err, db)
		}
	}
}

// serveDB serves st; fe is the cluster front end st is the replica of (serve --store), nil
// for a file. endStart ends serve's hold on the collector; serveDB calls it once the
// first find has been answered (or after warmRestAfter), or when it returns.
func (e *env) serveDB(ctx context.Context, f *serveFlags, st *store.DB, db string, log *slog.Logger, fe *cluster.FrontEnd, endStart func()) error {
	parts := &closers{log: log}
	defer parts.close()
	parts.add("store", st.Close) // last: releases the lock

	// The find index is built from here on, beside the rest of the start (robots, sources,
	// the GraphQL schema, the MCP tools): at 100,000 identities it is most of the time
	// from start to a first find's answer.
	rt := &runtime{log: log, names: search.NewFinder(st), endStart: endStart}
	rt.warmFind()
	parts.add("find index", rt.stopWarmFind)

	// On a cluster the edges reach every host's robots through the router, and this
	// host's fleet records through it (kept across an outage); on a file, the fleet.
	var router *cluster.Robots
	var robotStore graph.RobotStore = st
	if fe != nil {
		router = cluster.NewRobots(fe)
		router.ReadOnly = f.readOnly // other hosts' commands are refused as this host's edges refuse them
		robotStore = router.Store(st)
		parts.add("robot router", router.Close) // after the robots stop: records their stops
	}
	fleet, err := e.fleet(f, robotStore, log)
	if err != nil {
		return err
	}
	if err := fleet.Open(); err != nil {
		return err
	}
	parts.add("robots", fleet.Close) // robots stopped before the store closes
	var robots graph.Fleet = fleet
	robotEvents := fleetEvents(fleet)
	if router != nil {
		if err := router.Open(fleet); err != nil {
			return err
		}
		robots, robotEvents = router, router.Subscribe
	}

	live, err := e.live(f.common, db)
	if err != nil {
		return err
	}
	live.Extra = append(live.Extra, fleet)
	parts.add("live", live.Close) // after the poll loop stops, before the robots
	var hw graph.Live = live
	if fe != nil {
		hw = fe.Live(live) // this host's readings as the fleet names them, published to the others
	}
	svc := identity.New(st, hw, robots)
	if fe != nil {
		svc.Hosts = fe // other hosts' liveness and live state
	}
	svc.PollInterval = f.poll
	svc.AutoBind = f.autoBind
	svc.Logger = log
	if err := svc.Open(); err != nil {
		return err
	}
	parts.add("sources", svc.Close)

	var hosts graph.HostStatus
	if fe != nil {
		hosts = fe
	}
	if err := rt.build(svc, svc, st, robotEvents, hosts, f); err != nil {
		return err
	}
	st.SetSuggester(rt.names) // "did you mean" from the name index
	parts.add("graphql+mcp", rt.close)

	// The socket: the CLI's verbs, `devgraph query` and relayed stdio sessions.
	ro := remote.Options{Logger: log, DB: db, Version: Version, ReadOnly: f.readOnly}
	if fe != nil {
		ro.LeaseLoss = fe.LeaseLoss // doctor says when this host's lease is lost
	}
	sock := &remote.SocketServer{
		Path:     remote.SocketPath(db),
		RPC:      remote.NewHandler(svc, ro),
		GraphQL:  rt.exec,
		MCP:      rt.session,
		Changes:  svc, // changelog --follow, devices --watch
		Notifier: svc,
		ReadOnly: f.readOnly,
		Logger:   log,
	}
	if err := sock.Open(); err != nil {
		return err
	}
	parts.add("socket", sock.Close)
	// First at shutdown: end the navigations (each caller gets its "cancelled" result
	// while its connection is still open) and stop the robots. Close is safe twice.
	parts.add("navigations", fleet.Close)
	fmt.Fprintf(e.stderr, "devgraph: serving %s\n", db)
	fmt.Fprintf(e.stderr, "socket: %s\n", sock.Path)
	return e.runFrontends(ctx, f, rt, log)
}

// runFrontends serves MCP on stdio and/or HTTP until stdin ends (stdio), ctx is
// cancelled (SIGTERM, SIGINT) or the HTTP server fails; it returns once both have stopped.
func (e *env) runFrontends(ctx context.Context, f *serveFlags, rt *runtime, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var httpErr <-chan error
	if f.httpAddr != "" {
		hs, err := e.openHTTP(f, rt, log)
		if err != nil {
			return err
		}
		defer hs.Close()
		httpErr = hs.Err()
	}
	stdioErr := make(chan error, 1)
	if f.stdio {
		fmt.Fprintln(e.stderr, "MCP: stdio")
		// A client that closes its end of stdout ends the session through the write's
		// EPIPE (ServeStdio), with the shutdown's clean-up (stdin made blocking again,
		// the socket and pid file removed), not by SIGPIPE killing the process.
		signal.Ignore(syscall.SIGPIPE)
		// Read through Go's poller: a read from a blocking stdin held its thread and the
		// processor with it, so the goroutine the line was handed to waited for the
		// runtime to take the processor back (up to 10 ms; the first request's answer
		// waited 11-16 ms at start) or for another thread to wake up and take it over.
		in, undo, _ := pollableReader(e.stdin)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer undo()
			err := rt.mcp.ServeStdio(ctx, in, e.stdout)
			if err == nil {
				log.Info("stdin closed; shutting down")
			}
			stdioErr <- err
		}()
		defer func() { cancel(); wg.Wait() }()
	}
	var err error
	select {
	case <-ctx.Done():
		log.Info("signal received; shutting down")
		return nil
	case err = <-httpErr:
		err = fmt.Errorf("http: %w", err)
	case err = <-stdioErr:
	}
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// openHTTP serves --http ADDR: GraphQL, GraphiQL and /healthz from rt's executor, /mcp
// from its MCP server, all behind the http package's guard (Host, Origin, tokens).
func (e *env) openHTTP(f *serveFlags, rt *runtime, log *slog.Logger) (*devhttp.Server, error) {
	hs := &devhttp.Server{Addr: f.httpAddr, Options: devhttp.Options{GraphQL: rt.exec, MCP: rt.mcp.HTTPHandler(), ReadOnly: f.readOnly, Logger: log,
		TLSCert: f.tlsCert, TLSKey: f.tlsKey, AllowedHosts: f.allowedHosts}}
	hs.Timeouts.Write = httpWriteTimeout(f.limits)
	if f.tokenFile != "" {
		toks, err := devhttp.LoadTokens(f.tokenFile)
		if err != nil {
			return nil, err
		}
		hs.Tokens = toks
	}
	loop, err := f.httpLoopback()
	if err != nil {
		return nil, err
	}
	hs.Loopback = loop
	if err := hs.Open(); err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "Web page: %s/\n", hs.URL())
	fmt.Fprintf(e.stderr, "GraphiQL: %s/graphql\n", hs.URL())
	fmt.Fprintf(e.stderr, "MCP: %s/mcp\n", hs.URL())
	return hs, nil
}

// httpWriteTimeout is how long a non-streaming HTTP response may take: a GraphQL
// request may run to its time limit (--query-timeout for a query; the mutation limit,
// as long as a blocking robotNavigate, for a mutation) and its answer, the timeout
// error included, must still get out.
func httpWriteTimeout(l query.Limits) time.Duration {
	d := query.DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MutationTimeout <= 0 {
		l.MutationTimeout = d.MutationTimeout
	}
	return max(devhttp.DefaultTimeouts.Write, max(l.Timeout, l.MutationTimeout)+30*time.Second)
}

// relay serves this process's stdio MCP through the server that holds the database. It
// serves no HTTP: HTTP callers' actors (http:<token>) are recorded only by the server that
// checks their tokens, so --http alone is refused and beside --stdio it is skipped.
func (e *env) relay(ctx context.Context, f *serveFlags, cl *remote.Client, db string, log *slog.Logger) error {
	ping, err := cl.Ping(ctx)
	if err != nil {
		return err
	}
	// HTTP callers act as http:<token> or http:local, which the holder's socket does not
	// accept from a caller (only the server that checked the token may record it): HTTP
	// is served by the server holding the database.
	noHTTP := fmt.Sprintf("the server holding %s (pid %d) must serve HTTP itself: start it with --http %s", db, ping.PID, f.httpAddr)
	if f.httpAddr != "" && !f.stdio {
		return graph.Errorf(graph.ECONFLICT, "cannot serve --http here: %s", noHTTP)
	}
	var ignored []string
	for _, name := range relayIgnored {
		if f.set[name] {
			ignored = append(ignored, "--"+name)
		}
	}
	line := fmt.Sprintf("devgraph: %s is held by a running server; this session relays to the server at %s (pid %d)", db, cl.SocketPath(), ping.PID)
	if len(ignored) > 0 {
		line += "; " + strings.Join(ignored, ", ") + " do not apply here (the server's own sources and robots serve)"
	}
	if ping.ReadOnly && !f.readOnly {
		line += "; that server is read-only, so changes are refused"
	}
	fmt.Fprintln(e.stderr, line)
	if f.httpAddr != "" {
		// The stdio relay is what this process is for (an MCP client started it).
		log.Warn("relay: not serving HTTP here; the stdio session relays on", "http", f.httpAddr, "reason", noHTTP)
	}
	if !f.stdio {
		return nil
	}
	return remote.RelayStdio(ctx, cl.SocketPath(), f.readOnly, e.stdin, e.stdout, func() error {
		return graph.Errorf(graph.EUNAVAILABLE, "the server holding %s (pid %d) stopped; this relayed session ends — restart the MCP client to start a new server", db, ping.PID)
	})
}
