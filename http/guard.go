package http

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// GuardOptions configure Guard.
type GuardOptions struct {
	// Tokens maps bearer token → its token-file line (LoadTokens); a request with a token
	// acts as "http:<name>", and may prune the changelog when the line says prune.
	Tokens map[string]Token
	// Loopback is true when the server listens on a loopback address only: requests
	// without a token are then allowed and act as "http:local", unless Tokens is set —
	// a token file is enforced on loopback too. Otherwise every request needs a token.
	Loopback bool
	// AllowedHosts are extra Host names (with or without :port) this server answers to,
	// e.g. its public name. Loopback names and the listener's own address are always allowed.
	AllowedHosts []string
	// JSONRPCErrors makes Guard answer its refusals as JSON-RPC error objects
	// ({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":…}}) instead of
	// GraphQL's shape: set it for the guard in front of /mcp, whose clients speak JSON-RPC.
	JSONRPCErrors bool

	// sessions, when set, lets a login session's cookie stand in for a bearer token on
	// the requests cookieMayRide allows.
	sessions *sessions
}

// Guard refuses requests that did not come from this server's own origin or lack a needed
// token, and puts the actor ("http:<token name>" or "http:local") and a fresh request id
// (also sent back as X-Request-Id) in the request context. A token's actor is marked
// authenticated (graph.WithAuthenticatedActor), so MCP keeps it instead of the client's
// self-chosen name, which goes to the access log (graph.SetClientName); a token marked
// prune carries graph.WithPrunePermission. Put it in front of every
// endpoint that changes state (/graphql, /mcp):
//
//   - Host must be a loopback name, the listener's own address or one of AllowedHosts (a
//     DNS-rebinding page's Host is its own name); 403 otherwise.
//   - Origin, when sent, must be the same host and port as Host; a cross-site page's
//     requests carry its origin and are refused (403), as is Sec-Fetch-Site: cross-site
//     or same-site (another port of this host) except a page navigation.
//   - A bearer token is required unless the server is loopback-only without a token
//     file; a wrong token is 401. A browser opening the page or GraphiQL without one is
//     sent to /login. /healthz, /login and the static assets need no token.
//   - A login session's cookie counts as the token only where cookieMayRide says.
func Guard(next http.Handler, opts GuardOptions) http.Handler {
	tokens := newTokenSet(opts.Tokens)
	needToken := !opts.Loopback || !tokens.empty()
	allowed := map[string]bool{}
	for _, h := range opts.AllowedHosts {
		allowed[strings.ToLower(h)] = true
	}
	fail := writeErr
	if opts.JSONRPCErrors {
		fail = writeJSONRPCErr
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := graph.NewRequestID()
		w.Header().Set("X-Request-Id", rid)
		rec := recordFrom(r)
		rec.requestID = rid
		if !hostAllowed(r, allowed) {
			fail(w, http.StatusForbidden, CodeForbidden, "Host %q is not this server's; use the address the server listens on (or add it to the allowed hosts)", truncate(r.Host, 100))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host) {
			fail(w, http.StatusForbidden, CodeForbidden, "cross-origin requests are refused (Origin %q); call the API from the same origin or from a non-browser client", truncate(o, 100))
			return
		}
		// A link from another site to the page opens it (a top-level navigation runs
		// nothing, and the SameSite=Strict cookie does not come along); anything else
		// another origin's page sends is refused. same-site is another origin too: a
		// page on another port of this machine, whose GETs (fetch no-cors, <script src>)
		// carry no Origin.
		if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") && !pageNavigation(r) {
			fail(w, http.StatusForbidden, CodeForbidden, "requests from another origin's page are refused (Sec-Fetch-Site: %s); open this server's own page or call it from a non-browser client", site)
			return
		}
		actor := ""
		var token Token
		if auth := r.Header.Get("Authorization"); auth != "" {
			// The scheme is case-insensitive (RFC 9110 §11.1).
			scheme, tok, _ := strings.Cut(strings.TrimSpace(auth), " ")
			if !strings.EqualFold(scheme, "Bearer") {
				w.Header().Set("WWW-Authenticate", `Bearer realm="devgraph"`)
				fail(w, http.StatusUnauthorized, CodeForbidden, "the Authorization header's scheme is %q; this server takes Authorization: Bearer <token> with a token from its --token-file", truncate(scheme, 20))
				return
			}
			var ok bool
			token, ok = tokens.lookup(strings.TrimSpace(tok))
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="devgraph"`)
				fail(w, http.StatusUnauthorized, CodeForbidden, "the bearer token is not one of this server's tokens; check the token file")
				return
			}
			actor = "http:" + token.Name
		} else if opts.sessions != nil && needToken {
			if tok, ok := opts.sessions.lookup(r); ok && cookieMayRide(r) {
				token, actor = tok, "http:"+tok.Name
			}
		}
		if actor == "" && needToken && !openPath(r.URL.Path) {
			if opts.sessions != nil && !tokens.empty() && browserPage(r) {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="devgraph"`)
			fail(w, http.StatusUnauthorized, CodeForbidden, "this server needs a bearer token: send Authorization: Bearer <token> with a token from its --token-file (a browser logs in at /login)")
			return
		}
		if actor == "" && !needToken {
			actor = "http:local"
		}
		rec.actor = actor
		ctx := graph.WithRequestID(r.Context(), rid)
		ctx = graph.WithClientNameSink(ctx, rec.setClient)
		switch {
		case token.Name != "":
			// The token, not any name the client gives itself, is who acts.
			ctx = graph.WithAuthenticatedActor(ctx, actor)
			if token.Prune {
				ctx = graph.WithPrunePermission(ctx)
			}
		case actor != "":
			ctx = graph.WithActor(ctx, actor)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeJSONRPCErr answers a refusal in JSON-RPC's error shape (invalid request, id null:
// the request was not read), keeping the HTTP status and putting devgraph's code in data.
func writeJSONRPCErr(w http.ResponseWriter, status int, code, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error": map[string]any{
			"code":    -32600,
			"message": fmt.Sprintf(format, args...),
			"data":    map[string]any{"code": code},
		},
	})
}

// pageNavigation reports whether r is a browser opening the web page, GraphiQL or the
// login page as a top-level navigation.
func pageNavigation(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document" &&
		(browserPage(r) || r.Method == http.MethodGet && r.URL.Path == "/login")
}

// openPath reports whether path is served without a token: the health check, the login
// and logout pages and the static assets (the page's scripts hold no data).
func openPath(path string) bool {
	switch path {
	case "/healthz", "/login", "/logout":
		return true
	}
	return strings.HasPrefix(path, "/assets/") || strings.HasPrefix(path, "/graphql/assets/")
}

func isLoopbackName(h string) bool {
	switch strings.ToLower(h) {
	case "localhost", "localhost.":
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func hostAllowed(r *http.Request, allowed map[string]bool) bool {
	host := strings.ToLower(r.Host)
	if host == "" {
		return false
	}
	if allowed[host] {
		return true
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = strings.Trim(host, "[]"), ""
	}
	if allowed[name] && port == "" {
		return true
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	localHost, localPort := "", ""
	if local != nil {
		localHost, localPort, _ = net.SplitHostPort(local.String())
	}
	if port != "" && localPort != "" && port != localPort {
		return false
	}
	if allowed[name] {
		return true
	}
	if isLoopbackName(name) {
		return true
	}
	// The listener's own address (e.g. a LAN IP the server was bound to).
	return localHost != "" && net.ParseIP(name) != nil && net.ParseIP(name).Equal(net.ParseIP(localHost))
}

func originAllowed(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// truncate cuts s to n bytes, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
