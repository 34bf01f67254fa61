package query

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

//go:embed assets/graphiql.html assets/devgraph.js assets/graphiql.min.js assets/graphiql.min.css assets/react.production.min.js assets/react-dom.production.min.js assets/NOTICE
var assets embed.FS

// HandlerOptions configure the HTTP layer.
type HandlerOptions struct {
	// Tokens maps bearer token → name; a request with a token acts as "http:<name>".
	Tokens map[string]string
	// Loopback is true when the server listens on a loopback address only: requests
	// without a token are then allowed and act as "http:local". Otherwise every request
	// needs a token.
	Loopback bool
	// AllowedHosts are extra Host names (with or without :port) this server answers to,
	// e.g. its public name. Loopback names and the listener's own address are always allowed.
	AllowedHosts []string
	// MaxBodyBytes bounds a request body (default: the document limit plus the variables
	// limit plus 4 KiB).
	MaxBodyBytes int64
	// ReadOnly refuses every mutation (403, FORBIDDEN); queries still run. Set it for a
	// server started with --read-only.
	ReadOnly bool
	// JSONRPCErrors makes Guard answer its refusals as JSON-RPC error objects
	// ({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":…}}) instead of
	// GraphQL's shape: set it for the guard in front of /mcp, whose clients speak JSON-RPC.
	JSONRPCErrors bool
}

// NewHandler serves POST and GET /graphql (GraphiQL for a browser), /graphql/assets/… and
// /healthz, behind Guard.
func NewHandler(exec *Executor, opts HandlerOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = int64(exec.limits.MaxDocumentBytes+exec.limits.MaxVariablesBytes) + 4096
	}
	mux := http.NewServeMux()
	h := &handler{exec: exec, opts: opts}
	mux.HandleFunc("/graphql", h.graphql)
	mux.HandleFunc("/graphql/assets/", h.asset)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	return Guard(mux, opts)
}

type handler struct {
	exec *Executor
	opts HandlerOptions
}

const graphqlResponseJSON = "application/json; charset=utf-8"

// bodyReadTimeout bounds how long reading one request body may take.
const bodyReadTimeout = 30 * time.Second

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", graphqlResponseJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, errResponse(code, format, args...))
}

func (h *handler) graphql(w http.ResponseWriter, r *http.Request) {
	var req Request
	m := modeAll
	switch r.Method {
	case http.MethodPost:
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/json" {
			writeErr(w, http.StatusUnsupportedMediaType, graph.EINVALID, "POST /graphql takes Content-Type: application/json with a body like {\"query\": \"…\", \"variables\": {…}}")
			return
		}
		// A client that trickles its body must not hold a connection for ever.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, h.opts.MaxBodyBytes+1))
		if err != nil {
			writeErr(w, http.StatusBadRequest, graph.EINVALID, "could not read the request body")
			return
		}
		if int64(len(body)) > h.opts.MaxBodyBytes {
			writeErr(w, http.StatusRequestEntityTooLarge, graph.ELIMIT, "the request body is larger than %d bytes; send a smaller query or fewer variables", h.opts.MaxBodyBytes)
			return
		}
		if !utf8.Valid(body) {
			writeErr(w, http.StatusBadRequest, graph.EINVALID, "the request body is not valid UTF-8; send JSON text encoded as UTF-8")
			return
		}
		if err := decodeRequest(body, &req); err != nil {
			writeErr(w, http.StatusBadRequest, graph.EINVALID, "%s", err)
			return
		}
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		if q.Get("query") == "" && acceptsHTML(r) {
			h.graphiql(w, r)
			return
		}
		req.Query = q.Get("query")
		req.OperationName = q.Get("operationName")
		if v := q.Get("variables"); v != "" {
			if err := json.Unmarshal([]byte(v), &req.Variables); err != nil {
				writeErr(w, http.StatusBadRequest, graph.EINVALID, "variables is not a JSON object: %s", jsonProblem(err))
				return
			}
		}
		m = modeGET
	default:
		w.Header().Set("Allow", "GET, POST")
		writeErr(w, http.StatusMethodNotAllowed, graph.EINVALID, "/graphql takes GET (queries) or POST (application/json)")
		return
	}
	if h.opts.ReadOnly && m == modeAll {
		m = modeReadOnly
	}
	resp, fail := h.exec.execute(r.Context(), req, m)
	if fail == failForbidden && m == modeReadOnly {
		resp = errResponse(CodeForbidden, "this server is read-only (--read-only): mutations are refused and nothing was changed; send queries, or use a server started without --read-only")
	}
	status := http.StatusOK
	switch fail {
	case failRequest:
		status = http.StatusBadRequest
	case failMethod:
		w.Header().Set("Allow", "POST")
		status = http.StatusMethodNotAllowed
	case failForbidden:
		status = http.StatusForbidden
	}
	writeJSON(w, status, resp)
}

// decodeRequest reads {"query", "variables", "operationName"} strictly enough to give a
// useful message for the common mistakes.
func decodeRequest(body []byte, req *Request) error {
	var raw struct {
		Query         *string         `json:"query"`
		Variables     json.RawMessage `json:"variables"`
		OperationName *string         `json:"operationName"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("the body is not a JSON object {\"query\": …}: %s", jsonProblem(err))
	}
	if dec.More() {
		return errors.New("the body has data after its JSON object; send exactly one {\"query\": …}")
	}
	if raw.Query == nil {
		return errors.New("the body has no \"query\"; send {\"query\": \"{ stats { identities } }\"}")
	}
	req.Query = *raw.Query
	if raw.OperationName != nil {
		req.OperationName = *raw.OperationName
	}
	if v := bytes.TrimSpace(raw.Variables); len(v) > 0 && !bytes.Equal(v, []byte("null")) {
		if err := json.Unmarshal(v, &req.Variables); err != nil {
			return fmt.Errorf("\"variables\" must be a JSON object: %s", jsonProblem(err))
		}
	}
	return nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s has the wrong type (%s)", te.Field, te.Value)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends too early"
	}
	return "malformed JSON"
}

func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// The page and its assets come from this server only; the policy forbids anything else.
const graphiqlCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (h *handler) graphiql(w http.ResponseWriter, r *http.Request) {
	page, err := assets.ReadFile("assets/graphiql.html")
	if err != nil {
		http.Error(w, "GraphiQL is not built in", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", graphiqlCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(page)
}

var assetTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".html": "text/html; charset=utf-8",
	"":      "text/plain; charset=utf-8",
}

func (h *handler) asset(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	if name == "graphiql.html" || r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", assetTypes[path.Ext(name)])
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}

// Guard refuses requests that did not come from this server's own origin or lack a needed
// token, and puts the actor ("http:<token name>" or "http:local") and a fresh request id
// (also sent back as X-Request-Id) in the request context. Put it in front of every
// endpoint that changes state (/graphql, /mcp):
//
//   - Host must be a loopback name, the listener's own address or one of AllowedHosts (a
//     DNS-rebinding page's Host is its own name); 403 otherwise.
//   - Origin, when sent, must be the same host and port as Host; a cross-site page's
//     requests carry its origin and are refused (403), as is Sec-Fetch-Site: cross-site.
//   - A bearer token is required unless the server is loopback-only; a wrong token is 401.
//     /healthz needs no token.
func Guard(next http.Handler, opts HandlerOptions) http.Handler {
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
		if !hostAllowed(r, allowed) {
			fail(w, http.StatusForbidden, CodeForbidden, "Host %q is not this server's; use the address the server listens on (or add it to the allowed hosts)", truncate(r.Host, 100))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host) {
			fail(w, http.StatusForbidden, CodeForbidden, "cross-origin requests are refused (Origin %q); call the API from the same origin or from a non-browser client", truncate(o, 100))
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			fail(w, http.StatusForbidden, CodeForbidden, "cross-site requests are refused")
			return
		}
		actor := ""
		if auth := r.Header.Get("Authorization"); auth != "" {
			tok, ok := strings.CutPrefix(auth, "Bearer ")
			name := ""
			if ok {
				name = lookupToken(opts.Tokens, strings.TrimSpace(tok))
			}
			if name == "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="devgraph"`)
				fail(w, http.StatusUnauthorized, CodeForbidden, "the bearer token is not one of this server's tokens; check the token file")
				return
			}
			actor = "http:" + name
		} else if opts.Loopback {
			actor = "http:local"
		} else if r.URL.Path != "/healthz" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="devgraph"`)
			fail(w, http.StatusUnauthorized, CodeForbidden, "this server needs a bearer token: send Authorization: Bearer <token> with a token from its --token-file")
			return
		}
		ctx := graph.WithRequestID(r.Context(), rid)
		if actor != "" {
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

func lookupToken(tokens map[string]string, tok string) string {
	if tok == "" {
		return ""
	}
	found := ""
	for t, name := range tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			found = name
		}
	}
	return found
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

// LoadTokens reads a token file: one "name token" per line; blank lines and lines starting
// with # are skipped. Names become actors (http:<name>).
func LoadTokens(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "token file %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	return ParseTokens(f, path)
}

// ParseTokens reads LoadTokens' format from r; where names the source in errors.
func ParseTokens(r io.Reader, where string) (map[string]string, error) {
	tokens := map[string]string{}
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: want \"name token\" (two words), got %d words", where, n, len(fields))
		}
		name, tok := fields[0], fields[1]
		if err := graph.ValidateText("token name", name, 1, 64); err != nil {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: %s", where, n, graph.ErrorMessage(err))
		}
		if len(tok) < 16 {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token for %q is %d characters; use at least 16 random characters (e.g. openssl rand -hex 24)", where, n, name, len(tok))
		}
		if names[name] {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token name %q appears twice", where, n, name)
		}
		if _, dup := tokens[tok]; dup {
			return nil, graph.Errorf(graph.EINVALID, "%s:%d: token for %q is the same as another name's", where, n, name)
		}
		names[name] = true
		tokens[tok] = name
	}
	if err := sc.Err(); err != nil {
		return nil, graph.Errorf(graph.EINVALID, "%s: %v", where, err)
	}
	if len(tokens) == 0 {
		return nil, graph.Errorf(graph.EINVALID, "%s has no tokens; add lines like \"ci 3f9c…\" (name, then token)", where)
	}
	return tokens, nil
}

// ParseVar parses a `--var k=v` value: v is JSON when it parses as JSON, else a string.
func ParseVar(s string) (key string, value any, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", nil, graph.FieldErrorf(graph.EINVALID, "var", "--var %q: want name=value, e.g. --var id=identity:jdxi or --var first=10", truncate(s, 60))
	}
	if strings.HasPrefix(k, "$") {
		k = k[1:]
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		return k, j, nil
	}
	return k, v, nil
}
