package main

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/mcptools"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/sources/robot"
)

// serveFlags are `devgraph serve`'s flags.
type serveFlags struct {
	*common
	httpAddr  string
	tokenFile string
	readOnly  bool
	stdio     bool
	simRobots []string
	poll      time.Duration
	autoBind  bool
	limits    query.Limits
	logLevel  string
	// logFormat is text or json (slog's handlers).
	logFormat string
	// HTTPS and the extra names the Host guard accepts (--http only).
	tlsCert, tlsKey string
	allowedHosts    []string
	// mcpSessions caps the MCP sessions open at once over HTTP.
	mcpSessions int
	// tools is --tools as given; toolsets the MCP toolsets it names (nil: the default).
	tools    string
	toolsets []string
	set      map[string]bool // the flags given on the command line
}

func newServeCmd(c *common) *cobra.Command {
	f := &serveFlags{common: c}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "serve MCP on stdio (and the web page, GraphQL and MCP over HTTP with --http)",
		Example: `  devgraph serve
  devgraph serve --demo --http 127.0.0.1:8080
  devgraph serve --http 0.0.0.0:8080 --token-file ~/.config/devgraph/tokens
  devgraph serve --http 0.0.0.0:8443 --token-file tokens --tls-cert cert.pem --tls-key key.pem --allowed-host studio.lan
  devgraph serve --read-only --sim-robot scout@1,1 --poll 5s`,
		Args:        nargs(0, 0),
		Annotations: map[string]string{keepsGCHold: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(cmd.Flags()); err != nil {
				return err
			}
			return runServe(cmd.Context(), f, c.e.stderr)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// parseServeFlags parses and checks serve's flags alone (tests), before anything is opened.
func (e *env) parseServeFlags(args []string) (*serveFlags, error) {
	f := &serveFlags{common: &common{e: e}}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.common.register(fs)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, usagef("serve: %v", err)
	}
	if err := f.check(fs); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.httpAddr, "http", "", "also serve the web page, GraphQL, GraphiQL and MCP over HTTP on ADDR (e.g. 127.0.0.1:8080); stdio MCP is then off unless --stdio")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer tokens (\"name token\" per line, \"name token prune\" for one that may prune the changelog); required for a non-loopback --http address, and enforced on loopback too when given")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve --http over HTTPS with this PEM certificate (chain); needs --tls-key")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
	fs.StringArrayVar(&f.allowedHosts, "allowed-host", nil, "a host name the server also answers to besides loopback and its own address, e.g. studio.lan (repeatable)")
	fs.BoolVar(&f.readOnly, "read-only", false, "refuse every change: no write tools, no robot motion, read-only socket")
	fs.BoolVar(&f.stdio, "stdio", false, "speak MCP on stdin/stdout (the default without --http)")
	fs.StringArrayVar(&f.simRobots, "sim-robot", nil, "add a simulated robot `NAME[@x,y]` (repeatable)")
	fs.DurationVar(&f.poll, "poll", 2*time.Second, "how often to read the sources in the background (0: never)")
	fs.BoolVar(&f.autoBind, "auto-bind", false, "bind devices whose match is high and unambiguous, as discovery:<source>")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (logs go to stderr)")
	fs.StringVar(&f.tools, "tools", "", "MCP toolsets to offer, comma-separated: graph (reading), edit (writing), robots (default: graph,edit, and robots once a robot exists)")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json: how log lines (the HTTP access log included) are written")
	fs.IntVar(&f.mcpSessions, "mcp-max-sessions", mcptools.DefaultMaxHTTPSessions, "MCP over HTTP: sessions open at once; an initialize past it is refused")
	d := query.DefaultLimits()
	fs.IntVar(&f.limits.MaxDepth, "max-depth", d.MaxDepth, "GraphQL: deepest selection nesting")
	fs.IntVar(&f.limits.MaxAliases, "max-aliases", d.MaxAliases, "GraphQL: aliased fields per request")
	fs.IntVar(&f.limits.MaxComplexity, "max-complexity", d.MaxComplexity, "GraphQL: fields weighted by list sizes")
	fs.IntVar(&f.limits.MaxDocumentBytes, "max-document-bytes", d.MaxDocumentBytes, "GraphQL: document size")
	fs.IntVar(&f.limits.MaxPageSize, "max-page", d.MaxPageSize, "GraphQL and MCP: largest page")
	fs.DurationVar(&f.limits.Timeout, "query-timeout", d.Timeout, "GraphQL: time limit per query")
}

// check checks the parsed flags (fs holds them) before anything is opened.
func (f *serveFlags) check(fs *pflag.FlagSet) error {
	f.set = map[string]bool{}
	fs.Visit(func(fl *pflag.Flag) { f.set[fl.Name] = true })
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
	if f.mcpSessions < 1 {
		return usagef("serve: --mcp-max-sessions must be at least 1")
	}
	if f.set["tools"] {
		sets, err := mcptools.ParseToolsets(f.tools)
		if err != nil {
			return usagef("serve: %v", err)
		}
		if f.readOnly && len(sets) == 1 && sets[0] == "edit" {
			return usagef("serve: --tools edit with --read-only offers no tool; add graph or robots, or drop --read-only")
		}
		f.toolsets = sets
	}
	if err := f.checkHTTPFlags(); err != nil {
		return err
	}
	// Check the HTTP address and tokens before opening anything.
	if f.httpAddr != "" {
		if _, err := f.httpLoopback(); err != nil {
			return err
		}
		if f.tokenFile != "" {
			if _, err := devhttp.LoadTokens(f.tokenFile); err != nil {
				return err
			}
		}
	} else if f.tokenFile != "" {
		return usagef("serve: --token-file goes with --http ADDR")
	}
	return nil
}

// checkHTTPFlags checks --log-format, the TLS pair and --allowed-host: a bad
// combination is bad usage (exit 2); a certificate that cannot be used is exit 1.
func (f *serveFlags) checkHTTPFlags() error {
	if f.logFormat != "text" && f.logFormat != "json" {
		return usagef("serve: --log-format is text or json, not %q", f.logFormat)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usagef("serve: --tls-cert and --tls-key go together: give the PEM certificate and its key")
	}
	if f.httpAddr == "" && (f.tlsCert != "" || len(f.allowedHosts) > 0) {
		return usagef("serve: --tls-cert, --tls-key and --allowed-host go with --http ADDR")
	}
	for _, h := range f.allowedHosts {
		if h == "" || strings.ContainsAny(h, "/ \t@") {
			return usagef("serve: --allowed-host takes a host name (studio.lan, or studio.lan:8080), not %q", h)
		}
	}
	if f.tlsCert != "" {
		if _, err := devhttp.LoadTLS(f.tlsCert, f.tlsKey); err != nil {
			return err
		}
	}
	return nil
}

// httpLoopback reports whether --http listens on loopback only; any other address
// needs --token-file.
func (f *serveFlags) httpLoopback() (bool, error) {
	loop, err := loopbackAddr(f.httpAddr)
	if err != nil {
		return false, err
	}
	if !loop && f.tokenFile == "" {
		return false, graph.FieldErrorf(graph.EINVALID, "http", "--http %s is not a loopback address; give --token-file so only token holders can use it (or listen on 127.0.0.1)", f.httpAddr)
	}
	return loop, nil
}

// relayIgnored are the serve flags that shape the server's own sources and robots: a
// relaying process has none of its own, so they do not apply.
var relayIgnored = []string{"demo", "sim-robot", "auto-bind", "poll", "sys-root", "proc-root", "pw-dump-file", "usb-ids", "dev-root", "tools"}

func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
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
