package http

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// Options configure the routes: the handlers cmd hands over and the guard in front of them.
type Options struct {
	// GraphQL serves /graphql (POST and GET) and GraphiQL; nil leaves them out.
	GraphQL graph.GraphQLExecutor
	// MCP serves /mcp (MCP's streamable HTTP transport); nil leaves it out. The guard's
	// refusals there come in JSON-RPC's error shape.
	MCP http.Handler
	// Tokens maps bearer token → its token-file line (LoadTokens); a request with a token
	// acts as "http:<name>".
	Tokens map[string]Token
	// Loopback is true when the server listens on a loopback address only: requests
	// without a token are then allowed and act as "http:local" — unless Tokens is set:
	// a token file is enforced on loopback too.
	Loopback bool
	// AllowedHosts are extra Host names the guard accepts besides loopback and the
	// listener's own address.
	AllowedHosts []string
	// MaxBodyBytes bounds a GraphQL request body (default: GraphQL.MaxRequestBytes()).
	MaxBodyBytes int64
	// ReadOnly refuses every mutation (403, FORBIDDEN); queries still run.
	ReadOnly bool
	// Logger gets the access log (one line per request at info) and the server's own
	// errors (at debug); nil discards them.
	Logger *slog.Logger
	// Timeouts bound slow and idle clients; zero fields take the defaults.
	Timeouts Timeouts
	// TLSCert and TLSKey, both PEM files, make Server serve HTTPS (Open loads them).
	TLSCert, TLSKey string
	// Now is the clock for login sessions and the login throttle (default time.Now).
	Now func() time.Time
}

// Timeouts bound how long a client may hold a connection without making progress, so
// slow or idle clients cannot pile up. A connection costs a goroutine and a file
// descriptor, so many idle ones do not stop others from being served; these make sure
// they go away. There is no server-wide read or write timeout: MCP's event streams
// (GET /mcp, and a POST /mcp answered as a stream) live as long as the session, so each
// route sets its own deadlines.
type Timeouts struct {
	// ReadHeader is how long a client may take to send a request's headers (default 10 s).
	ReadHeader time.Duration
	// Body is how long a client may take to send a request's body (default 30 s).
	Body time.Duration
	// Write is how long a non-streaming request (GraphQL, GraphiQL, /healthz) may take
	// from its headers to the last byte of its response (default 2 min; give more than
	// the GraphQL executor's longest time limit, or an answer that runs to it is cut
	// off: serve does). MCP is not bounded by it.
	Write time.Duration
	// Idle is how long a kept-alive connection may wait for its next request
	// (default 2 min).
	Idle time.Duration
}

// DefaultTimeouts are the timeouts a zero Timeouts field takes.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Body: 30 * time.Second, Write: 2 * time.Minute, Idle: 2 * time.Minute}

func (t Timeouts) withDefaults() Timeouts {
	d := DefaultTimeouts
	if t.ReadHeader > 0 {
		d.ReadHeader = t.ReadHeader
	}
	if t.Body > 0 {
		d.Body = t.Body
	}
	if t.Write > 0 {
		d.Write = t.Write
	}
	if t.Idle > 0 {
		d.Idle = t.Idle
	}
	return d
}

// NewHandler serves the routes, each behind Guard, with an access log around them all:
//
//	/                  the web page (devices, identities, the drawn graph, the changelog)
//	/assets/           its scripts, styles and cytoscape.js, embedded (assets/NOTICE)
//	/graphql           GraphQL over HTTP; GraphiQL for a browser's GET
//	/graphql/assets/   GraphiQL's scripts and styles, embedded
//	/login, /logout    a browser's login with a token (only with Tokens)
//	/healthz           "ok", without a token
//	/mcp               MCP
//
// Anything else is 404.
func NewHandler(opts Options) http.Handler {
	h, _ := newHandler(opts)
	return h
}

func newHandler(opts Options) (*accessLog, *slog.Logger) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	guard := GuardOptions{Tokens: opts.Tokens, Loopback: opts.Loopback, AllowedHosts: opts.AllowedHosts, sessions: newSessions(now)}
	tm := opts.Timeouts.withDefaults()

	gql := http.NewServeMux()
	if opts.GraphQL != nil {
		maxBody := opts.MaxBodyBytes
		if maxBody <= 0 {
			maxBody = opts.GraphQL.MaxRequestBytes()
		}
		gql.Handle("/graphql", &graphqlHandler{exec: opts.GraphQL, maxBody: maxBody, readOnly: opts.ReadOnly})
		gql.HandleFunc("/graphql/assets/", asset)
		gql.HandleFunc("/assets/", asset)
		gql.HandleFunc("/", index)
	} else {
		gql.HandleFunc("/", http.NotFound)
	}
	gql.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	lg := &login{tokens: newTokenSet(opts.Tokens), sessions: guard.sessions, throttle: newThrottle(now)}
	gql.Handle("/login", lg)
	gql.Handle("/logout", lg)
	guarded := deadlines(Guard(gql, guard), tm.Body, tm.Write)

	mux := http.NewServeMux()
	mux.Handle("/", guarded)
	if opts.MCP != nil {
		// /mcp never rides a login cookie: its clients send a bearer token.
		rpc := guard
		rpc.JSONRPCErrors = true
		rpc.sessions = nil
		mux.Handle("/mcp", deadlines(Guard(opts.MCP, rpc), tm.Body, 0))
	}
	return &accessLog{log: log, next: mux}, log
}

// Server listens on Addr and serves NewHandler's routes until Close.
type Server struct {
	Options
	Addr string // host:port; port 0 picks one

	ln     net.Listener
	hs     *http.Server
	routes *accessLog
	errc   chan error
	done   chan struct{}
	once   sync.Once
}

// Open listens on Addr and starts serving in the background.
func (s *Server) Open() error {
	routes, log := newHandler(s.Options)
	var cfg *tls.Config
	if s.TLSCert != "" || s.TLSKey != "" {
		var err error
		if cfg, err = LoadTLS(s.TLSCert, s.TLSKey); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "cannot listen on %s: %v", s.Addr, rootErr(err))
	}
	if cfg != nil {
		ln = tls.NewListener(ln, cfg)
	}
	s.ln, s.routes = ln, routes
	tm := s.Timeouts.withDefaults()
	s.hs = &http.Server{Handler: routes, ReadHeaderTimeout: tm.ReadHeader, IdleTimeout: tm.Idle, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	s.errc = make(chan error, 1)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errc <- err
		}
	}()
	return nil
}

// URL is the server's base URL (http://host:port, or https:// with TLS), with a
// wildcard address shown as 127.0.0.1.
func (s *Server) URL() string {
	scheme := "http://"
	if s.TLSCert != "" {
		scheme = "https://"
	}
	return scheme + displayAddr(s.ln.Addr().String())
}

// LoadTLS reads a PEM certificate (chain) and its key for serving HTTPS; both are
// needed, and a bad pair is one clear error naming the files.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, graph.Errorf(graph.EINVALID, "HTTPS needs both a certificate and its key (--tls-cert and --tls-key)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "cannot use the TLS certificate %s with key %s: %v", certFile, keyFile, rootErr(err))
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Err receives the error that stopped the server, if serving fails before Close.
func (s *Server) Err() <-chan error { return s.errc }

// Close stops the server: requests get a second to finish, then their connections are
// closed (long-lived MCP streams); it returns once every request handler has returned.
// It is safe to call twice.
func (s *Server) Close() error {
	if s.hs == nil {
		return nil
	}
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if s.hs.Shutdown(ctx) != nil {
			s.hs.Close()
		}
		<-s.done
		s.routes.wait()
	})
	return nil
}

// deadlines bounds one request on its connection: its body must arrive within body,
// and, when write > 0, its response must be written within write of its start. With
// write 0 (MCP's streams) a deadline left on the kept-alive connection by an earlier
// request is cleared. The body's deadline is lifted once the body has been read, so
// a handler still running then (a stream) is not cut off by it.
func deadlines(next http.Handler, body, write time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		start := time.Now()
		var wd time.Time
		if write > 0 {
			wd = start.Add(write)
		}
		rc.SetWriteDeadline(wd)
		if body > 0 && r.Body != nil && r.Body != http.NoBody {
			rc.SetReadDeadline(start.Add(body))
			r.Body = &bodyDeadline{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline lifts the connection's read deadline when the body has been read to its
// end.
type bodyDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
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

// displayAddr shows a wildcard listener (0.0.0.0, ::) as 127.0.0.1.
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
