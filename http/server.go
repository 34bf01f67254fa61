package http

import (
	"context"
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
	// without a token are then allowed and act as "http:local".
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
}

// NewHandler serves the routes, each behind Guard, with an access log around them all:
//
//	/graphql           GraphQL over HTTP; GraphiQL for a browser's GET
//	/graphql/assets/   GraphiQL's scripts and styles, embedded (assets/NOTICE)
//	/healthz           "ok", without a token
//	/mcp               MCP
//	/                  redirects to /graphql; anything else is 404
func NewHandler(opts Options) http.Handler {
	h, _ := newHandler(opts)
	return h
}

func newHandler(opts Options) (*accessLog, *slog.Logger) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	guard := GuardOptions{Tokens: opts.Tokens, Loopback: opts.Loopback, AllowedHosts: opts.AllowedHosts}

	gql := http.NewServeMux()
	if opts.GraphQL != nil {
		maxBody := opts.MaxBodyBytes
		if maxBody <= 0 {
			maxBody = opts.GraphQL.MaxRequestBytes()
		}
		gql.Handle("/graphql", &graphqlHandler{exec: opts.GraphQL, maxBody: maxBody, readOnly: opts.ReadOnly})
		gql.HandleFunc("/graphql/assets/", asset)
	}
	gql.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	guarded := Guard(gql, guard)

	mux := http.NewServeMux()
	mux.Handle("/graphql", guarded)
	mux.Handle("/graphql/", guarded)
	mux.Handle("/healthz", guarded)
	if opts.MCP != nil {
		rpc := guard
		rpc.JSONRPCErrors = true
		mux.Handle("/mcp", Guard(opts.MCP, rpc))
	}
	mux.Handle("/", Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, "/graphql", http.StatusFound)
			return
		}
		http.NotFound(w, r)
	}), guard))
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
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "cannot listen on %s: %v", s.Addr, rootErr(err))
	}
	s.ln, s.routes = ln, routes
	s.hs = &http.Server{Handler: routes, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
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

// URL is the server's base URL (http://host:port), with a wildcard address shown as
// 127.0.0.1.
func (s *Server) URL() string {
	return "http://" + displayAddr(s.ln.Addr().String())
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
