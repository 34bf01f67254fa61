package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

type httpResult struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func send(t *testing.T, req *http.Request) httpResult {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (the server must survive)", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := httpResult{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	json.Unmarshal(raw, &r.body)
	return r
}

func post(t *testing.T, url, ctype, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	return req
}

func gqlBody(q string, vars map[string]any) string {
	b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	return string(b)
}

func repeat(n int, f func(i int) string) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(f(i))
	}
	return sb.String()
}

// TestHTTP_Hostile sends hostile and malformed requests to the real HTTP server: each gets
// an error and the next normal query still succeeds.
func TestHTTP_Hostile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	defer srv.Close()
	gql := srv.URL + "/graphql"

	// Exponential fan-out: F0 spreads F1 twice, F1 spreads F2 twice, … 2^40 fields.
	expo := "query { ...F0 }\n" + repeat(40, func(i int) string {
		return fmt.Sprintf("fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}) + "fragment F40 on Query { stats { identities } }"
	deepFields := "{ identity(id:\"jdxi\") " + strings.Repeat("{ devices { identity ", 12) + "{ id }" + strings.Repeat(" } }", 12) + " }"

	cases := []struct {
		name   string
		req    func() *http.Request
		status int    // 0: any 4xx
		code   string // extensions.code of the first error, "" for any
	}{
		{"deep braces", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(strings.Repeat("{", 200000)+strings.Repeat("}", 200000), nil))
		}, 413, ""},
		{"deep braces within the size limit", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(strings.Repeat("{a", 20000)+strings.Repeat("}", 20000), nil))
		}, 400, graph.ELIMIT},
		{"deep list literal", func() *http.Request {
			return post(t, gql, "application/json", gqlBody("{ find(tags: "+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+"){ edges { name } } }", nil))
		}, 400, graph.ELIMIT},
		{"deep valid selection", func() *http.Request { return post(t, gql, "application/json", gqlBody(deepFields, nil)) }, 400, graph.ELIMIT},
		{"thousands of aliases", func() *http.Request {
			return post(t, gql, "application/json", gqlBody("{"+repeat(3000, func(i int) string { return fmt.Sprintf(" a%d: stats { identities }", i) })+"}", nil))
		}, 400, graph.ELIMIT},
		{"huge fragment list", func() *http.Request {
			q := "query { ...F0 }\n" + repeat(1000, func(i int) string { return fmt.Sprintf("fragment F%d on Query { stats { identities } }\n", i) })
			return post(t, gql, "application/json", gqlBody(q, nil))
		}, 400, graph.ELIMIT},
		{"exponential fragments", func() *http.Request { return post(t, gql, "application/json", gqlBody(expo, nil)) }, 400, graph.ELIMIT},
		{"fragment cycle", func() *http.Request {
			return post(t, gql, "application/json", gqlBody("query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }", nil))
		}, 400, graph.EINVALID},
		{"fragment self-cycle", func() *http.Request {
			return post(t, gql, "application/json", gqlBody("query { ...A } fragment A on Query { stats { identities } ...A }", nil))
		}, 400, graph.EINVALID},
		{"fragment cycle through fields", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`query { identity(id:"jdxi"){ ...A } } fragment A on Identity { devices { identity { ...B } } } fragment B on Identity { name ...A }`, nil))
		}, 400, graph.EINVALID},
		{"unused cyclic fragments", func() *http.Request {
			return post(t, gql, "application/json", gqlBody("{ stats { identities } } fragment A on Query { ...B } fragment B on Query { ...C } fragment C on Query { ...A }", nil))
		}, 400, graph.EINVALID},
		{"introspection bomb", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`{ __schema { types { fields { type { fields { type { fields { type { name } } } } } } } } }`, nil))
		}, 400, graph.ELIMIT},
		{"complexity bomb", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`{ identities(first: 100){ edges { node { tags { nodes(first: 100){ nodes { id ... on Identity { tags { name } } } } } } } } }`, nil))
		}, 400, graph.ELIMIT},
		{"enormous string", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`{ find(text: "`+strings.Repeat("x", 2<<20)+`"){ edges { name } } }`, nil))
		}, 413, graph.ELIMIT},
		{"enormous variables", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`query($t: String){ find(text: $t){ edges { name } } }`, map[string]any{"t": strings.Repeat("y", 4<<20)}))
		}, 413, graph.ELIMIT},
		{"deeply nested variables", func() *http.Request {
			body := `{"query": "query($f: JSON){ createIdentity: stats { identities } }", "variables": {"f": ` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`
			return post(t, gql, "application/json", body)
		}, 400, graph.ELIMIT},
		{"variables over their limit", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`query($t: String){ find(text: $t){ edges { name } } }`, map[string]any{"t": strings.Repeat("y", 300<<10)}))
		}, 400, graph.ELIMIT},
		{"many tokens", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`{ find(tags: [`+strings.Repeat(`a `, 25000)+`]){ edges { name } } }`, nil))
		}, 400, graph.ELIMIT},
		{"long string argument", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`{ find(text: "`+strings.Repeat("z", 10000)+`"){ edges { name } } }`, nil))
		}, 200, graph.EINVALID},
		{"syntax error", func() *http.Request { return post(t, gql, "application/json", gqlBody("{ stats { ", nil)) }, 400, graph.EINVALID},
		{"unknown field", func() *http.Request { return post(t, gql, "application/json", gqlBody("{ planets { name } }", nil)) }, 400, graph.EINVALID},
		{"wrong variable type", func() *http.Request {
			return post(t, gql, "application/json", gqlBody(`query($n: Int){ identities(first: $n){ totalCount } }`, map[string]any{"n": "many"}))
		}, 400, graph.EINVALID},
		{"empty body", func() *http.Request { return post(t, gql, "application/json", "") }, 400, graph.EINVALID},
		{"truncated JSON", func() *http.Request { return post(t, gql, "application/json", `{"query": "{ stats`) }, 400, graph.EINVALID},
		{"JSON array", func() *http.Request {
			return post(t, gql, "application/json", `[{"query": "{ stats { identities } }"}]`)
		}, 400, graph.EINVALID},
		{"query not a string", func() *http.Request { return post(t, gql, "application/json", `{"query": 5}`) }, 400, graph.EINVALID},
		{"variables not an object", func() *http.Request {
			return post(t, gql, "application/json", `{"query": "{ stats { identities } }", "variables": [1]}`)
		}, 400, graph.EINVALID},
		{"trailing garbage", func() *http.Request {
			return post(t, gql, "application/json", `{"query": "{ stats { identities } }"} {"query": "mutation { x }"}`)
		}, 400, graph.EINVALID},
		{"no query", func() *http.Request { return post(t, gql, "application/json", `{"variables": {}}`) }, 400, graph.EINVALID},
		{"invalid UTF-8", func() *http.Request {
			return post(t, gql, "application/json", "{\"query\": \"{ find(text: \\\"\xff\xfe\\\"){ edges { name } } }\"}")
		}, 400, graph.EINVALID},
		{"text/plain", func() *http.Request { return post(t, gql, "text/plain", gqlBody("{ stats { identities } }", nil)) }, 415, graph.EINVALID},
		{"form post", func() *http.Request {
			return post(t, gql, "application/x-www-form-urlencoded", "query="+url.QueryEscape(`mutation { createIdentity(name: "Evil"){ id } }`))
		}, 415, graph.EINVALID},
		{"no content type", func() *http.Request { return post(t, gql, "", gqlBody("{ stats { identities } }", nil)) }, 415, graph.EINVALID},
		{"GET mutation", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, gql+"?query="+url.QueryEscape(`mutation { createIdentity(name: "Via GET"){ id } }`), nil)
			return req
		}, 405, devhttp.CodeForbidden},
		{"PUT", func() *http.Request {
			req, _ := http.NewRequest(http.MethodPut, gql, strings.NewReader(gqlBody("{ stats { identities } }", nil)))
			return req
		}, 405, graph.EINVALID},
		{"cross-origin POST", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`mutation { createIdentity(name: "CSRF"){ id } }`, nil))
			req.Header.Set("Origin", "http://evil.example")
			return req
		}, 403, devhttp.CodeForbidden},
		{"null origin", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`mutation { createIdentity(name: "CSRF"){ id } }`, nil))
			req.Header.Set("Origin", "null")
			return req
		}, 403, devhttp.CodeForbidden},
		{"origin on another port", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`mutation { createIdentity(name: "CSRF"){ id } }`, nil))
			req.Header.Set("Origin", "http://127.0.0.1:1")
			return req
		}, 403, devhttp.CodeForbidden},
		{"cross-site fetch", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`mutation { createIdentity(name: "CSRF"){ id } }`, nil))
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			return req
		}, 403, devhttp.CodeForbidden},
		{"DNS rebinding Host", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`mutation { createIdentity(name: "Rebind"){ id } }`, nil))
			req.Host = "evil.example"
			return req
		}, 403, devhttp.CodeForbidden},
		{"Host with another port", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`{ stats { identities } }`, nil))
			req.Host = "localhost:1"
			return req
		}, 403, devhttp.CodeForbidden},
		{"unknown bearer token", func() *http.Request {
			req := post(t, gql, "application/json", gqlBody(`{ stats { identities } }`, nil))
			req.Header.Set("Authorization", "Bearer not-a-token")
			return req
		}, 401, devhttp.CodeForbidden},
	}
	normal := func(t *testing.T) {
		t.Helper()
		r := send(t, post(t, gql, "application/json", gqlBody(`{ identity(id: "jdxi"){ name } }`, nil)))
		if r.status != 200 || get(r.body, "data.identity.name") != "Roland JD-Xi" {
			t.Fatalf("normal query after a hostile one: %d %s", r.status, truncateStr(r.raw, 300))
		}
	}
	// Requests that are not well-formed GraphQL-over-HTTP requests: 400 whatever the
	// client accepts. The other 400s are documents that did not run: with
	// application/json they are 200 with the errors (GraphQL over HTTP).
	malformed := map[string]bool{"empty body": true, "truncated JSON": true, "JSON array": true, "query not a string": true,
		"variables not an object": true, "trailing garbage": true, "no query": true, "invalid UTF-8": true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req()
			req.Header.Set("Accept", "application/graphql-response+json")
			r := send(t, req)
			if c.status != 0 && r.status != c.status {
				t.Errorf("status=%d, want %d: %s", r.status, c.status, truncateStr(r.raw, 300))
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/graphql-response+json") && c.status != 401 && c.status != 403 {
				t.Errorf("Content-Type=%q, want application/graphql-response+json", ct)
			}
			if _, has := r.body["data"]; has && r.status >= 400 {
				t.Errorf("a request that did not run has data: %s", truncateStr(r.raw, 300))
			}
			want := c.status
			if want == 400 && !malformed[c.name] {
				want = 200
			}
			if rj := send(t, c.req()); want != 0 && rj.status != want || !strings.HasPrefix(rj.header.Get("Content-Type"), "application/json") {
				t.Errorf("application/json: status=%d, want %d, Content-Type %q: %s", rj.status, want, rj.header.Get("Content-Type"), truncateStr(rj.raw, 300))
			}
			errs := getList(r.body, "errors")
			if len(errs) == 0 {
				t.Fatalf("no error in the response: %s", truncateStr(r.raw, 300))
			}
			if c.code != "" {
				if got := get(errs[0], "extensions.code"); got != c.code {
					t.Errorf("code=%v, want %s: %v", got, c.code, get(errs[0], "message"))
				}
			}
			if msg, _ := get(errs[0], "message").(string); msg == "" || len(msg) > 2000 {
				t.Errorf("error message unusable: %q", truncateStr(msg, 100))
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id header")
			}
			normal(t)
		})
	}
	// Nothing the hostile requests tried to create exists.
	d := e.ok(`{ find(text: "csrf"){ edges { name } } a: find(text: "evil"){ edges { name } } b: find(text: "rebind"){ edges { name } } c: find(text: "via get"){ edges { name } } }`, nil)
	for _, k := range []string{"find", "a", "b", "c"} {
		if l := getList(d, k+".edges"); len(l) > 0 {
			t.Errorf("a refused request wrote %v", l)
		}
	}
	// A repeated hostile document is answered from the cache with the same error.
	for i := 0; i < 3; i++ {
		req := post(t, gql, "application/json", gqlBody(expo, nil))
		req.Header.Set("Accept", "application/graphql-response+json")
		r := send(t, req)
		if r.status != 400 {
			t.Fatalf("repeat %d: %d", i, r.status)
		}
	}
}

func truncateStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// TestHTTP_Protocol covers the happy paths of GraphQL over HTTP: POST and GET queries,
// the request id in the header and the changelog, the actor from the token or loopback.
func TestHTTP_Protocol(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	tokFile := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokFile, []byte("# devgraph tokens\nci 0123456789abcdef0123\n\ndash  fedcba9876543210fedc\n"), 0o600)
	tokens, err := devhttp.LoadTokens(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	loop := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	defer loop.Close()
	loopTok := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true, Tokens: tokens}))
	defer loopTok.Close()
	remote := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: false, Tokens: tokens, AllowedHosts: []string{"devgraph.lan"}}))
	defer remote.Close()

	t.Run("POST query", func(t *testing.T) {
		r := send(t, post(t, loop.URL+"/graphql", "application/json; charset=utf-8", gqlBody(`query Q($id: ID!){ identity(id: $id){ name } }`, map[string]any{"id": "jdxi"})))
		if r.status != 200 || get(r.body, "data.identity.name") != "Roland JD-Xi" {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("content type %q", ct)
		}
	})
	t.Run("GET query", func(t *testing.T) {
		v := url.Values{"query": {`query($n: Int){ identities(first: $n){ totalCount edges { node { id } } } }`}, "variables": {`{"n": 2}`}}
		req, _ := http.NewRequest(http.MethodGet, loop.URL+"/graphql?"+v.Encode(), nil)
		req.Header.Set("Accept", "application/json")
		r := send(t, req)
		if r.status != 200 || len(getList(r.body, "data.identities.edges")) != 2 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
	t.Run("not found is 200 with a code", func(t *testing.T) {
		r := send(t, post(t, loop.URL+"/graphql", "application/json", gqlBody(`{ identity(id: "jdx1"){ name } }`, nil)))
		if r.status != 200 || get(r.body, "errors.0.extensions.code") != graph.ENOTFOUND || get(r.body, "errors.0.path.0") != "identity" {
			t.Fatalf("%d %s", r.status, r.raw)
		}
	})
	mutationActor := func(t *testing.T, srvURL, auth, host, name string) (rid string, actor any) {
		t.Helper()
		req := post(t, srvURL+"/graphql", "application/json", gqlBody(`mutation($n: String!){ createIdentity(name: $n, message: "over http"){ id } }`, map[string]any{"n": name}))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if host != "" {
			req.Host = host
		}
		r := send(t, req)
		if r.status != 200 || get(r.body, "data.createIdentity.id") == nil {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		rid = r.header.Get("X-Request-Id")
		id := get(r.body, "data.createIdentity.id").(string)
		evs, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{Target: id, First: 5})
		if err != nil || len(evs) == 0 {
			t.Fatalf("events: %v %v", evs, err)
		}
		if evs[0].RequestID != rid || evs[0].Message != "over http" {
			t.Errorf("event request id %q (header %q), message %q", evs[0].RequestID, rid, evs[0].Message)
		}
		return rid, evs[0].Actor
	}
	t.Run("loopback actor", func(t *testing.T) {
		if _, actor := mutationActor(t, loop.URL, "", "", "Loopback Thing"); actor != "http:local" {
			t.Errorf("actor=%v, want http:local", actor)
		}
		if _, actor := mutationActor(t, loopTok.URL, "Bearer 0123456789abcdef0123", "", "Token Thing"); actor != "http:ci" {
			t.Errorf("actor=%v, want http:ci", actor)
		}
	})
	// A token file given on loopback is enforced for every request: without a token a
	// loopback request no longer acts as http:local.
	t.Run("loopback with a token file needs a token", func(t *testing.T) {
		r := send(t, post(t, loopTok.URL+"/graphql", "application/json", gqlBody(`mutation { createIdentity(name: "Sneaky"){ id } }`, nil)))
		if r.status != 401 || r.header.Get("WWW-Authenticate") == "" || get(r.body, "errors.0.extensions.code") != devhttp.CodeForbidden {
			t.Fatalf("no token on loopback: %d %s", r.status, r.raw)
		}
		req, _ := http.NewRequest(http.MethodGet, loopTok.URL+"/graphql?query="+url.QueryEscape("{ stats { identities } }"), nil)
		if r := send(t, req); r.status != 401 {
			t.Fatalf("GET query without a token on loopback: %d %s", r.status, r.raw)
		}
		if ids, _, _, err := e.svc.FindIdentities(e.ctx, graph.IdentityFilter{IDs: []string{"identity:sneaky"}}); err != nil || len(ids) != 0 {
			t.Fatalf("a refused request created an identity: %v %v", ids, err)
		}
		for _, open := range []string{"/healthz", "/login", "/assets/app.js", "/graphql/assets/devgraph.js"} {
			req, _ := http.NewRequest(http.MethodGet, loopTok.URL+open, nil)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET %s without a token: %d, want 200 (it stays open)", open, resp.StatusCode)
			}
		}
	})
	t.Run("remote needs a token", func(t *testing.T) {
		r := send(t, post(t, remote.URL+"/graphql", "application/json", gqlBody(`{ stats { identities } }`, nil)))
		if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Fatalf("no token: %d %s", r.status, r.raw)
		}
		if _, actor := mutationActor(t, remote.URL, "Bearer fedcba9876543210fedc", "devgraph.lan", "Remote Thing"); actor != "http:dash" {
			t.Errorf("actor=%v, want http:dash", actor)
		}
		req, _ := http.NewRequest(http.MethodGet, remote.URL+"/healthz", nil)
		if r := send(t, req); r.status != 200 {
			t.Errorf("healthz without token: %d", r.status)
		}
	})
	t.Run("healthz", func(t *testing.T) {
		resp, err := http.Get(loop.URL + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz: %v %v", resp, err)
		}
		resp.Body.Close()
	})
	t.Run("GraphiQL page and assets", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, loop.URL+"/graphql", nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		r := send(t, req)
		if r.status != 200 || !strings.Contains(r.raw, "graphiql.min.js") || !strings.Contains(r.header.Get("Content-Security-Policy"), "connect-src 'self'") {
			t.Fatalf("page: %d %q", r.status, r.header)
		}
		for _, a := range []string{"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js", "devgraph.js", "NOTICE"} {
			resp, err := http.Get(loop.URL + "/graphql/assets/" + a)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("asset %s: %v %v", a, resp, err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n == 0 {
				t.Errorf("asset %s is empty", a)
			}
		}
		if resp, _ := http.Get(loop.URL + "/graphql/assets/../../etc/passwd"); resp != nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && bytes.Contains(b, []byte("root:")) {
				t.Error("asset path escapes")
			}
		}
	})
}

func TestParseTokens(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "one-word\n", "ci short\n", "ci 0123456789abcdef0123\nci 1123456789abcdef0123\n", "a 0123456789abcdef0123\nb 0123456789abcdef0123\n"} {
		if _, err := devhttp.ParseTokens(strings.NewReader(bad), "tokens"); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("ParseTokens(%q) err=%v, want INVALID", bad, err)
		}
	}
	if _, err := devhttp.LoadTokens(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("LoadTokens on a missing file succeeded")
	}
}

func TestParseTokens_Prune(t *testing.T) {
	t.Parallel()
	toks, err := devhttp.ParseTokens(strings.NewReader("ci 0123456789abcdef0123\nadmin fedcba9876543210fedc prune\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toks["0123456789abcdef0123"], (devhttp.Token{Name: "ci"}); got != want {
		t.Errorf("two-word line: %+v, want %+v", got, want)
	}
	if got, want := toks["fedcba9876543210fedc"], (devhttp.Token{Name: "admin", Prune: true}); got != want {
		t.Errorf("prune line: %+v, want %+v", got, want)
	}
	for _, bad := range []string{"ci 0123456789abcdef0123 admin\n", "ci 0123456789abcdef0123 prune extra\n", "ci 0123456789abcdef0123 PRUNE\n"} {
		_, err := devhttp.ParseTokens(strings.NewReader(bad), "tokens")
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), "tokens:1:") || !strings.Contains(graph.ErrorMessage(err), "prune") {
			t.Errorf("ParseTokens(%q) err=%v, want INVALID naming the line and prune", bad, err)
		}
	}
}

// Defect 6 (issue 11): any local user could prune the changelog through the loopback
// listener with no token and a before in the future, and the prune left no trace. Now
// pruning over HTTP needs a token marked prune, a future before is refused, and the prune
// is an event that verify reports.
func TestHTTP_PruneNeedsAPruneToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	tokens, err := devhttp.ParseTokens(strings.NewReader("ci 0123456789abcdef0123\nadmin fedcba9876543210fedc prune\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	loop := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true, Tokens: tokens}))
	defer loop.Close()
	verify := func() map[string]any {
		t.Helper()
		return e.ok(`{ changelogVerify { ok firstSeq headSeq headHash checkpoint prunedBy { actor time eventSeq firstSeq lastSeq checkpoint dropped } } }`, nil)
	}
	before := verify()
	newest, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{First: 1})
	if err != nil || len(newest) != 1 {
		t.Fatalf("newest event: %v %v", newest, err)
	}
	cut := newest[0].Time.Format(time.RFC3339Nano) // everything but the newest event
	prune := func(auth, before string) httpResult {
		t.Helper()
		req := post(t, loop.URL+"/graphql", "application/json", gqlBody(`mutation($b: Time!){ pruneChangelog(before: $b, message: "retention"){ dropped } }`, map[string]any{"b": before}))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		return send(t, req)
	}
	unchanged := func(what string) {
		t.Helper()
		if after := verify(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%s changed the changelog:\nbefore %v\nafter  %v", what, before, after)
		}
	}

	t.Run("ErrLoopbackWithoutToken", func(t *testing.T) {
		// A loopback server without a token file lets http:local write, but not prune.
		open := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
		defer open.Close()
		req := post(t, open.URL+"/graphql", "application/json", gqlBody(`mutation($b: Time!){ pruneChangelog(before: $b, message: "retention"){ dropped } }`, map[string]any{"b": cut}))
		r := send(t, req)
		if get(r.body, "errors.0.extensions.code") != graph.EFORBIDDEN || !strings.Contains(r.raw, "name token prune") {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		unchanged("a prune without a token")
	})
	t.Run("ErrTokenNotMarkedPrune", func(t *testing.T) {
		r := prune("0123456789abcdef0123", cut)
		if get(r.body, "errors.0.extensions.code") != graph.EFORBIDDEN || !strings.Contains(r.raw, "name token prune") {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		unchanged("a prune with a token not marked prune")
	})
	t.Run("ErrFuture", func(t *testing.T) {
		r := prune("fedcba9876543210fedc", "2999-01-01T00:00:00Z")
		if get(r.body, "errors.0.extensions.code") != graph.EINVALID || !strings.Contains(r.raw, "in the future") {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		unchanged("a prune with a future before")
	})
	t.Run("OK", func(t *testing.T) {
		r := prune("fedcba9876543210fedc", cut)
		dropped, _ := get(r.body, "data.pruneChangelog.dropped").(float64)
		if r.status != 200 || dropped == 0 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		evs, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{Target: graph.ChangelogTarget})
		if err != nil || len(evs) != 1 {
			t.Fatalf("prune events: %v %v", evs, err)
		}
		ev := evs[0]
		if ev.Action != graph.ActChangelogPrune || ev.Actor != "http:admin" || ev.Message != "retention" || ev.RequestID != r.header.Get("X-Request-Id") ||
			ev.PrevHash != get(before, "changelogVerify.headHash") {
			t.Errorf("prune event %+v", ev)
		}
		var p graph.Prune
		if err := json.Unmarshal(ev.After, &p); err != nil || p.FirstSeq != 1 || p.Dropped != int(dropped) || p.LastSeq != uint64(dropped) || p.Checkpoint == "" {
			t.Errorf("prune record %+v %v", p, err)
		}
		v := verify()
		if get(v, "changelogVerify.ok") != true ||
			get(v, "changelogVerify.firstSeq") != fmt.Sprint(p.LastSeq+1) ||
			get(v, "changelogVerify.checkpoint") != fmt.Sprintf("%d:%s", p.LastSeq, p.Checkpoint) ||
			get(v, "changelogVerify.prunedBy.actor") != "http:admin" ||
			get(v, "changelogVerify.prunedBy.eventSeq") != fmt.Sprint(ev.Seq) ||
			get(v, "changelogVerify.prunedBy.checkpoint") != p.Checkpoint {
			t.Errorf("verify after the prune: %v", v)
		}
	})
}
