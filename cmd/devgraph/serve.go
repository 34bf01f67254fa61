package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/mcptools"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
)

// serveFlags are `devgraph serve`'s flags.
type serveFlags struct {
	common
	httpAddr  string
	tokenFile string
	readOnly  bool
	stdio     bool
	noStdio   bool
	simRobots stringList
	poll      time.Duration
	autoBind  bool
	limits    query.Limits
	logLevel  string
	set       map[string]bool // the flags given on the command line
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("serve", "[--demo] [--db PATH] [--http ADDR [--token-file F]] [--read-only] [--sim-robot NAME[@x,y]]… [--poll 2s] [--auto-bind]")
	var f serveFlags
	f.register(fs, true)
	fs.StringVar(&f.httpAddr, "http", "", "also serve GraphQL, GraphiQL and MCP over HTTP on ADDR (e.g. 127.0.0.1:8080); stdio MCP is then off unless --stdio")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer tokens (\"name token\" per line); required for a non-loopback --http address")
	fs.BoolVar(&f.readOnly, "read-only", false, "refuse every change: no write tools, no robot motion, read-only socket")
	fs.BoolVar(&f.stdio, "stdio", false, "speak MCP on stdin/stdout (the default without --http)")
	fs.Var(&f.simRobots, "sim-robot", "add a simulated robot NAME[@x,y] (repeatable)")
	fs.DurationVar(&f.poll, "poll", 2*time.Second, "how often to read the sources in the background (0: never)")
	fs.BoolVar(&f.autoBind, "auto-bind", false, "bind devices whose match is high and unambiguous, as discovery:<source>")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	d := query.DefaultLimits()
	fs.IntVar(&f.limits.MaxDepth, "max-depth", d.MaxDepth, "GraphQL: deepest selection nesting")
	fs.IntVar(&f.limits.MaxAliases, "max-aliases", d.MaxAliases, "GraphQL: aliased fields per request")
	fs.IntVar(&f.limits.MaxComplexity, "max-complexity", d.MaxComplexity, "GraphQL: fields weighted by list sizes")
	fs.IntVar(&f.limits.MaxDocumentBytes, "max-document-bytes", d.MaxDocumentBytes, "GraphQL: document size")
	fs.IntVar(&f.limits.MaxPageSize, "max-page", d.MaxPageSize, "GraphQL and MCP: largest page")
	fs.DurationVar(&f.limits.Timeout, "query-timeout", d.Timeout, "GraphQL: time limit per query")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flagT) { f.set[fl.Name] = true })
	if !f.set["stdio"] {
		f.stdio = f.httpAddr == ""
	}
	for _, s := range f.simRobots {
		if _, err := robot.ParseSimSpec(s); err != nil {
			return err
		}
	}
	if f.poll < 0 {
		return usagef("serve: --poll must not be negative")
	}
	// Check the HTTP address and tokens before opening anything.
	if f.httpAddr != "" {
		loop, err := loopbackAddr(f.httpAddr)
		if err != nil {
			return err
		}
		if !loop && f.tokenFile == "" {
			return graph.FieldErrorf(graph.EINVALID, "http", "--http %s is not a loopback address; give --token-file so only token holders can use it (or listen on 127.0.0.1)", f.httpAddr)
		}
		if f.tokenFile != "" {
			if _, err := query.LoadTokens(f.tokenFile); err != nil {
				return err
			}
		}
	} else if f.tokenFile != "" {
		return usagef("serve: --token-file goes with --http ADDR")
	}
	log := newLogger(e.stderr, f.logLevel)
	return e.serve(ctx, &f, log)
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// serve opens the database and serves it; when another server holds the database it
// relays to that one instead.
func (e *env) serve(ctx context.Context, f *serveFlags, log *slog.Logger) error {
	db := e.dbPath(&f.common)
	sock := remote.SocketPath(db)
	// The holder may be starting up (locked, socket not yet listening): retry briefly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if cl := dialServer(ctx, db); cl != nil {
			defer cl.Close()
			return e.relay(ctx, f, cl, db, log)
		}
		st, err := store.Open(db, store.Options{Timeout: 500 * time.Millisecond})
		if err == nil {
			return e.serveDB(ctx, f, st, db, sock, log)
		}
		if graph.ErrorCode(err) != graph.ELOCKED || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
	}
}

// server is one running `devgraph serve`'s parts, closed in reverse order.
type server struct {
	log     *slog.Logger
	closers []namedCloser
}

type namedCloser struct {
	name string
	fn   func() error
}

func (s *server) onClose(name string, fn func() error) {
	s.closers = append(s.closers, namedCloser{name, fn})
}

func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		c := s.closers[i]
		start := time.Now()
		if err := c.fn(); err != nil {
			s.log.Warn("shutdown", "part", c.name, "err", err)
		}
		s.log.Debug("stopped", "part", c.name, "took", time.Since(start))
	}
	s.closers = nil
}

func (e *env) serveDB(ctx context.Context, f *serveFlags, st *store.DB, db, sock string, log *slog.Logger) (err error) {
	srv := &server{log: log}
	defer srv.close()
	srv.onClose("store", st.Close) // last: releases the lock

	fleet, err := e.fleet(f, st, log)
	if err != nil {
		return err
	}
	if err := fleet.Open(); err != nil {
		return err
	}
	srv.onClose("robots", fleet.Close) // robots stopped before the store closes

	live, err := e.live(&f.common, db)
	if err != nil {
		return err
	}
	live.Extra = append(live.Extra, fleet)
	svc := identity.New(st, live, fleet)
	svc.PollInterval = f.poll
	svc.AutoBind = f.autoBind
	svc.Logger = log
	if err := svc.Open(); err != nil {
		return err
	}
	srv.onClose("sources", svc.Close)

	names := search.NewFinder(st) // the one name index: find, graph_find, "did you mean"
	st.SetSuggester(names)
	rt := &runtime{log: log}
	if err := rt.build(svc, svc, names, fleet, f); err != nil {
		return err
	}
	srv.onClose("graphql+mcp", rt.close)

	// Build the name index for find now rather than on the first find (about a second
	// per 100,000 identities), so an agent's first search does not pay for it.
	warmCtx, stopWarm := context.WithCancel(context.Background())
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		if err := names.Refresh(warmCtx); err != nil && warmCtx.Err() == nil {
			log.Warn("build the find index", "err", err)
		}
	}()
	srv.onClose("find index", func() error { stopWarm(); <-warmed; return nil })

	// The socket: the CLI's verbs, `devgraph query` and relayed stdio sessions.
	ln, err := remote.Listen(sock)
	if err != nil {
		return err
	}
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	mux := http.NewServeMux()
	mux.Handle("/rpc/", remote.NewHandler(svc, remote.Options{Logger: log, DB: db, Version: Version, ReadOnly: f.readOnly}))
	mux.Handle("/graphql", socketGraphQL(rt.exec, f.readOnly))
	mux.Handle("/mcp-stdio", relayHandler(baseCtx, rt, log))
	sockSrv := &http.Server{Handler: mux, ConnContext: remote.ConnContext, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go sockSrv.Serve(ln)
	srv.onClose("socket", func() error {
		cancelBase() // ends relayed sessions
		// Let quick calls finish; then close what is left (a navigation streaming its
		// progress is cancelled by its connection closing, which stops the robot).
		sctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if sockSrv.Shutdown(sctx) != nil {
			sockSrv.Close()
		}
		return ln.Close()
	})
	// First at shutdown: end the navigations (each caller gets its "cancelled" result
	// while its connection is still open) and stop the robots. Close is safe twice.
	srv.onClose("navigations", fleet.Close)
	fmt.Fprintf(e.stderr, "devgraph: serving %s\n", db)
	fmt.Fprintf(e.stderr, "socket: %s\n", sock)
	return e.runFrontends(ctx, f, rt, log)
}

// runtime is what the frontends (stdio, HTTP) serve: the GraphQL executor and the MCP server.
type runtime struct {
	log  *slog.Logger
	exec *query.Executor
	mcp  *mcptools.Server

	svc      graph.Service
	mcpOpts  mcptools.Options
	roOnce   sync.Once
	mcpRO    *mcptools.Server // for relayed sessions of a `serve --read-only`
	mcpROErr error
}

func (rt *runtime) build(svc graph.Service, notifier graph.Notifier, names graph.Finder, fleet *robot.Fleet, f *serveFlags) error {
	exec, err := query.New(svc, query.Options{Limits: f.limits, Logger: rt.log, Finder: names})
	if err != nil {
		return err
	}
	rt.exec = exec
	opts := mcptools.Options{ReadOnly: f.readOnly, Exec: exec, Finder: names, Notifier: notifier, Logger: rt.log, Version: Version, MaxPage: f.limits.MaxPageSize}
	if fleet != nil {
		opts.RobotEvents = func(fn func(ref string)) func() {
			return fleet.Subscribe(func(ref string, _ graph.RobotState) { fn(ref) })
		}
	}
	rt.mcp, err = mcptools.New(svc, opts)
	if err != nil {
		exec.Close()
		return err
	}
	rt.svc, rt.mcpOpts = svc, opts
	return nil
}

// readOnlyMCP is the MCP server for sessions that ask for read-only mode: the server
// itself when it is read-only, else a read-only one over the same service, built on
// first use.
func (rt *runtime) readOnlyMCP() (*mcptools.Server, error) {
	if rt.mcpOpts.ReadOnly {
		return rt.mcp, nil
	}
	rt.roOnce.Do(func() {
		opts := rt.mcpOpts
		opts.ReadOnly = true
		rt.mcpRO, rt.mcpROErr = mcptools.New(rt.svc, opts)
	})
	return rt.mcpRO, rt.mcpROErr
}

func (rt *runtime) close() error {
	rt.roOnce.Do(func() {}) // no read-only server is built after this
	if rt.mcpRO != nil {
		rt.mcpRO.Close()
	}
	if rt.mcp != nil {
		rt.mcp.Close()
	}
	if rt.exec != nil {
		rt.exec.Close()
	}
	return nil
}

// fleet builds the robots: the demo world with --demo, plus every --sim-robot.
func (e *env) fleet(f *serveFlags, st graph.Store, log *slog.Logger) (*robot.Fleet, error) {
	opts := robot.Options{Store: st, Logger: log}
	var fleet *robot.Fleet
	var err error
	if f.demo {
		fleet, err = robot.DemoFleet(opts)
	} else {
		fleet, err = robot.NewFleet(opts)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range f.simRobots {
		if err := fleet.AddSimSpec(s); err != nil {
			return nil, err
		}
	}
	return fleet, nil
}

// runFrontends serves MCP on stdio and/or HTTP until stdin ends (stdio), ctx is
// cancelled (SIGTERM, SIGINT) or the HTTP server fails.
func (e *env) runFrontends(ctx context.Context, f *serveFlags, rt *runtime, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	if f.httpAddr != "" {
		hs, ln, err := e.httpServer(f, rt, log)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("http: %w", err)
			}
		}()
		defer func() {
			sctx, c := context.WithTimeout(context.Background(), time.Second)
			defer c()
			if hs.Shutdown(sctx) != nil {
				hs.Close() // long-lived MCP streams
			}
			wg.Wait()
		}()
	}
	if f.stdio {
		fmt.Fprintln(e.stderr, "MCP: stdio")
		go func() {
			err := rt.mcp.ServeStdio(ctx, e.stdin, e.stdout)
			if err == nil {
				log.Info("stdin closed; shutting down")
			}
			errc <- err
		}()
	}
	select {
	case <-ctx.Done():
		log.Info("signal received; shutting down")
		return nil
	case err := <-errc:
		if err != nil && ctx.Err() == nil {
			return err
		}
		return nil
	}
}

// httpServer listens on --http ADDR: GraphQL, GraphiQL and /healthz from query, /mcp
// from mcptools, all behind query.Guard (Host, Origin, tokens).
func (e *env) httpServer(f *serveFlags, rt *runtime, log *slog.Logger) (*http.Server, net.Listener, error) {
	opts := query.HandlerOptions{ReadOnly: f.readOnly}
	if f.tokenFile != "" {
		toks, err := query.LoadTokens(f.tokenFile)
		if err != nil {
			return nil, nil, err
		}
		opts.Tokens = toks
	}
	loop, err := loopbackAddr(f.httpAddr)
	if err != nil {
		return nil, nil, err
	}
	opts.Loopback = loop
	if !loop && f.tokenFile == "" {
		return nil, nil, graph.FieldErrorf(graph.EINVALID, "http", "--http %s is not a loopback address; give --token-file so only token holders can use it (or listen on 127.0.0.1)", f.httpAddr)
	}
	ln, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return nil, nil, graph.Errorf(graph.EUNAVAILABLE, "cannot listen on %s: %v", f.httpAddr, rootErr(err))
	}
	mux := http.NewServeMux()
	gql := query.NewHandler(rt.exec, opts)
	mux.Handle("/graphql", gql)
	mux.Handle("/graphql/", gql)
	mux.Handle("/healthz", gql)
	// MCP clients speak JSON-RPC: the guard's refusals come in its error shape there.
	mcpOpts := opts
	mcpOpts.JSONRPCErrors = true
	mux.Handle("/mcp", query.Guard(rt.mcp.HTTPHandler(), mcpOpts))
	mux.Handle("/", query.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, "/graphql", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	}), opts))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	base := "http://" + displayAddr(ln.Addr().String())
	fmt.Fprintf(e.stderr, "GraphiQL: %s/graphql\n", base)
	fmt.Fprintf(e.stderr, "MCP: %s/mcp\n", base)
	return hs, ln, nil
}

func rootErr(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// loopbackAddr reports whether ADDR listens on loopback only.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, graph.FieldErrorf(graph.EINVALID, "http", "--http %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

func displayAddr(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return a
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// socketGraphQL answers POST /graphql on the socket for `devgraph query`: same-user
// peers only (the listener checks), so no Host/Origin guard; the actor comes from the
// caller like every socket call.
func socketGraphQL(exec *query.Executor, readOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "use POST", http.StatusMethodNotAllowed)
			return
		}
		var req query.Request
		if err := json.NewDecoder(io.LimitReader(r.Body, int64(exec.Limits().MaxDocumentBytes+exec.Limits().MaxVariablesBytes+4096))).Decode(&req); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": "malformed request body: " + err.Error(), "extensions": map[string]any{"code": graph.EINVALID}}}})
			return
		}
		ctx, err := remote.CallerContext(r)
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": graph.ErrorMessage(err), "extensions": map[string]any{"code": graph.ErrorCode(err)}}}})
			return
		}
		resp := exec.Execute(ctx, req, readOnly)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
}

// relayHandler serves POST /mcp-stdio: it takes over the connection and speaks MCP's
// stdio protocol on it, so a second `devgraph serve` on the same database can pipe its
// own stdin and stdout through. The relayed client's name sets the actor as usual.
// ?read_only=1 (the relaying process has --read-only) serves the session without the
// tools that write or move a robot.
func relayHandler(ctx context.Context, rt *runtime, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "use POST", http.StatusMethodNotAllowed)
			return
		}
		mcp := rt.mcp
		readOnly := r.URL.Query().Get("read_only") == "1"
		if readOnly {
			var err error
			if mcp, err = rt.readOnlyMCP(); err != nil {
				log.Error("build the read-only MCP server", "err", err)
				http.Error(w, "cannot serve a read-only session", http.StatusInternalServerError)
				return
			}
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, "cannot relay on this connection", http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Time{})
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: devgraph-mcp-stdio\r\n\r\n")
		// Bytes the client sent after the request may already sit in brw's buffer.
		var in io.Reader = conn
		if n := brw.Reader.Buffered(); n > 0 {
			in = io.MultiReader(brw.Reader, conn)
		}
		log.Info("relayed stdio session started", "read_only", readOnly)
		err = mcp.ServeStdio(ctx, in, conn)
		log.Info("relayed stdio session ended", "err", err)
	})
}

// relayIgnored are the serve flags that shape the server's own sources and robots: a
// relaying process has none of its own, so they do not apply.
var relayIgnored = []string{"demo", "sim-robot", "auto-bind", "poll", "sys-root", "proc-root", "pw-dump-file"}

// relay serves this process's stdio MCP through the server that holds the database.
// With --http it also serves HTTP here, over the holder's socket.
func (e *env) relay(ctx context.Context, f *serveFlags, cl *remote.Client, db string, log *slog.Logger) error {
	ping, err := cl.Ping(ctx)
	if err != nil {
		return err
	}
	var ignored []string
	for _, name := range relayIgnored {
		if f.set[name] {
			ignored = append(ignored, "--"+name)
		}
	}
	line := fmt.Sprintf("devgraph: %s is held by a running server; this session relays to the server at %s (pid %d)", db, cl.Path(), ping.PID)
	if len(ignored) > 0 {
		line += "; " + strings.Join(ignored, ", ") + " do not apply here (the server's own sources and robots serve)"
	}
	if ping.ReadOnly && !f.readOnly {
		line += "; that server is read-only, so changes are refused"
	}
	fmt.Fprintln(e.stderr, line)
	if f.httpAddr != "" {
		rt := &runtime{log: log}
		if err := rt.build(cl, nil, search.NewFinder(cl), nil, f); err != nil {
			return err
		}
		defer rt.close()
		if !f.stdio {
			return e.runFrontends(ctx, f, rt, log)
		}
		go func() {
			g := *f
			g.stdio = false
			e.runFrontends(ctx, &g, rt, log)
		}()
	}
	if !f.stdio {
		return nil
	}
	return relayStdio(ctx, cl.Path(), f.readOnly, e.stdin, e.stdout, func() error {
		return graph.Errorf(graph.EUNAVAILABLE, "the server holding %s (pid %d) stopped; this relayed session ends — restart the MCP client to start a new server", db, ping.PID)
	})
}

// relayStdio connects to the socket, asks for /mcp-stdio (read-only when readOnly) and
// pipes in → server → out until in ends (then waits for the server's last answers) or
// the server hangs up; a hang-up before in ends returns gone().
func relayStdio(ctx context.Context, sock string, readOnly bool, in io.Reader, out io.Writer, gone func() error) error {
	c, err := remote.DialSocket(ctx, sock)
	if err != nil {
		if graph.ErrorCode(err) != graph.EINTERNAL {
			return err
		}
		return graph.Errorf(graph.EUNAVAILABLE, "cannot reach the devgraph server on %s: %v", sock, rootErr(err))
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	target := "/mcp-stdio"
	if readOnly {
		target += "?read_only=1"
	}
	if _, err := io.WriteString(conn, "POST "+target+" HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: devgraph-mcp-stdio\r\nContent-Length: 0\r\n\r\n"); err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: %v", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: the server on %s did not answer: %v", sock, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: the server on %s refused: %s", sock, resp.Status)
	}
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	var inDone atomic.Bool
	go func() {
		io.Copy(conn, in)
		inDone.Store(true)
		conn.CloseWrite() // the server sees EOF, finishes and hangs up
	}()
	_, err = io.Copy(out, br)
	if ctx.Err() != nil {
		return nil
	}
	if !inDone.Load() {
		// The server went away while our client still talks to us.
		return gone()
	}
	if err != nil && !strings.Contains(err.Error(), "use of closed") {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: %v", err)
	}
	return nil
}

// The fleet is one of the sources Live reads.
var _ sources.Source = (*robot.Fleet)(nil)
