package http_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/internal/testcert"
)

const anaToken = "0123456789abcdef0123456789"

func anaTokens(t *testing.T) map[string]devhttp.Token {
	t.Helper()
	toks, err := devhttp.ParseTokens(strings.NewReader("ana "+anaToken+"\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// clock is a settable clock for sessions and the login throttle.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type loginResult struct {
	status int
	next   string
	cookie *http.Cookie
	raw    string
	header http.Header
}

// doLogin posts a login to h from addr (RemoteAddr) and returns what it answered.
func doLogin(t *testing.T, h http.Handler, origin, addr, token, next string) loginResult {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token, "next": next})
	req := httptest.NewRequest(http.MethodPost, origin+"/login", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", origin)
	req.RemoteAddr = addr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	res := loginResult{status: w.Code, raw: w.Body.String(), header: w.Header()}
	var out struct{ Next string }
	json.Unmarshal(w.Body.Bytes(), &out)
	res.next = out.Next
	for _, c := range w.Result().Cookies() {
		res.cookie = c
	}
	return res
}

// TestLogin_Session: a login sets an HttpOnly, SameSite=Strict cookie that opens the
// page and carries the page's own JSON writes (with this server's Origin) as
// http:<token name>, and nothing else: not a GET query, not /mcp, not a form post, not
// a request from another origin. It ends at logout and after SessionTTL.
func TestLogin_Session(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, graph.ActorFrom(r.Context())) })
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, MCP: mcp, Loopback: true, Tokens: anaTokens(t), Now: clk.Now})
	const origin = "http://127.0.0.1:8080"

	res := doLogin(t, h, origin, "127.0.0.1:5000", " "+anaToken+"\n", "/#changelog")
	if res.status != 200 || res.next != "/#changelog" || res.cookie == nil {
		t.Fatalf("login: %d %s", res.status, res.raw)
	}
	if c := res.cookie; !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, not Secure over plain HTTP, Path=/", c)
	}
	if strings.Contains(res.cookie.Value, anaToken) {
		t.Error("the cookie holds the token")
	}

	do := func(method, target, ctype, orig, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, origin+target, strings.NewReader(body))
		req.AddCookie(res.cookie)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if orig != "" {
			req.Header.Set("Origin", orig)
		}
		req.Header.Set("Accept", "text/html")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	gql := `{"query":"{ stats { identities } }"}`
	for _, c := range []struct {
		name, method, target, ctype, origin, body string
		status                                    int
		has                                       string
	}{
		{"the page", "GET", "/", "", "", "", 200, `data-actor="http:ana"`},
		{"GraphiQL", "GET", "/graphql", "", "", "", 200, "graphiql.min.js"},
		{"the page's write", "POST", "/graphql", "application/json", origin, gql, 200, `"actor":"http:ana"`},
		{"ErrNoOrigin", "POST", "/graphql", "application/json", "", gql, 401, "bearer token"},
		{"ErrOtherOrigin", "POST", "/graphql", "application/json", "http://evil.example", gql, 403, "cross-origin"},
		{"ErrOtherScheme", "POST", "/graphql", "application/json", "https://127.0.0.1:8080", gql, 401, "bearer token"},
		{"ErrFormPost", "POST", "/graphql", "text/plain", origin, gql, 401, "bearer token"},
		{"ErrGETQuery", "GET", "/graphql?query=" + url.QueryEscape("{ stats { identities } }"), "", "", "", 401, "bearer token"},
		{"ErrMCP", "POST", "/mcp", "application/json", origin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 401, "bearer token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(c.method, c.target, c.ctype, c.origin, c.body)
			if status != c.status || !strings.Contains(body, c.has) {
				t.Errorf("%s %s: %d %s, want %d with %q", c.method, c.target, status, truncateStr(body, 300), c.status, c.has)
			}
		})
	}

	t.Run("ErrExpired", func(t *testing.T) {
		again := doLogin(t, h, origin, "127.0.0.1:5000", anaToken, "/")
		req := httptest.NewRequest(http.MethodGet, origin+"/", nil)
		req.AddCookie(again.cookie)
		clk.Add(devhttp.SessionTTL)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login?next=%2F" {
			t.Errorf("an expired session: %d %v", w.Code, w.Header())
		}
	})

	t.Run("logout", func(t *testing.T) {
		res = doLogin(t, h, origin, "127.0.0.1:5000", anaToken, "/")
		if status, _ := do("POST", "/logout", "application/json", "http://evil.example", "{}"); status != 403 {
			t.Errorf("logout from another origin: %d", status)
		}
		if status, body := do("POST", "/logout", "application/json", origin, "{}"); status != 200 || !strings.Contains(body, `"/login"`) {
			t.Fatalf("logout: %d %s", status, body)
		}
		if status, _ := do("POST", "/graphql", "application/json", origin, gql); status != 401 {
			t.Errorf("the session outlived its logout: %d", status)
		}
	})
}

// TestLogin_Next: after a login the browser goes only to a page of this server; every
// way of naming another origin becomes "/".
func TestLogin_Next(t *testing.T) {
	t.Parallel()
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true, Tokens: anaTokens(t)})
	for next, want := range map[string]string{
		"/":                        "/",
		"/#node/identity%3Ajdxi":   "/#node/identity%3Ajdxi",
		"/graphql":                 "/graphql",
		"":                         "/",
		"//evil.example/":          "/",
		"/\\evil.example":          "/",
		"/%09/evil.example":        "/%09/evil.example", // decoded it is a path "/\t/…"? refused below
		"https://evil.example/":    "/",
		"javascript:alert(1)":      "/",
		"/\t/evil.example":         "/",
		" /":                       "/",
		"/%2F%2Fevil.example":      "/",
		"/%5Cevil.example":         "/",
		"http:/evil.example":       "/",
		"/ok?x=//evil.example":     "/ok?x=//evil.example",
		"\\\\evil.example":         "/",
		"/\u2028//evil.example":    "/",
		"///evil.example":          "/",
		"/.//evil.example/../x":    "/.//evil.example/../x",
		"/login?next=//evil.ex":    "/login?next=//evil.ex",
		strings.Repeat("/a", 1100): "/",
	} {
		if next == "/%09/evil.example" {
			want = "/" // decodes to "/\t/evil.example": browsers drop the tab and read //evil.example
		}
		res := doLogin(t, h, "http://127.0.0.1:8080", "127.0.0.9:1", anaToken, next)
		if res.status != 200 || res.next != want {
			t.Errorf("next %q: %d %q, want %q", next, res.status, res.next, want)
		}
	}
}

// TestLogin_Throttle: five wrong tokens from one address, then even the right one is
// refused with 429 and Retry-After until the bucket refills; another address is not
// held up, and a burst of parallel guesses gets no more than the burst.
func TestLogin_Throttle(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true, Tokens: anaTokens(t), Now: clk.Now})
	const origin = "http://127.0.0.1:8080"
	for i := 0; i < 5; i++ {
		if res := doLogin(t, h, origin, "192.0.2.7:1000", "wrong-wrong-wrong-wrong", "/"); res.status != 401 {
			t.Fatalf("guess %d: %d %s", i, res.status, res.raw)
		}
	}
	res := doLogin(t, h, origin, "192.0.2.7:1001", anaToken, "/")
	if res.status != 429 || res.header.Get("Retry-After") == "" || res.cookie != nil || !strings.Contains(res.raw, "too many login attempts") {
		t.Fatalf("sixth attempt: %d %v %s", res.status, res.header, res.raw)
	}
	if res := doLogin(t, h, origin, "192.0.2.8:1000", anaToken, "/"); res.status != 200 {
		t.Errorf("another address: %d %s", res.status, res.raw)
	}
	clk.Add(13 * time.Second)
	if res := doLogin(t, h, origin, "192.0.2.7:1002", anaToken, "/"); res.status != 200 {
		t.Errorf("after the refill: %d %s", res.status, res.raw)
	}
	// A good login gives its attempt back: five more good logins are not throttled.
	for i := 0; i < 5; i++ {
		if res := doLogin(t, h, origin, "192.0.2.9:1", anaToken, "/"); res.status != 200 {
			t.Fatalf("good login %d: %d", i, res.status)
		}
	}
	// An IPv6 client is throttled by its /64.
	for i := 0; i < 5; i++ {
		doLogin(t, h, origin, "[2001:db8::1]:1", "wrong-wrong-wrong-wrong", "/")
	}
	if res := doLogin(t, h, origin, "[2001:db8::2]:1", anaToken, "/"); res.status != 429 {
		t.Errorf("a neighbour in the same /64: %d", res.status)
	}
	// A burst in parallel: at most five get past the throttle.
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[int]int{}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := doLogin(t, h, origin, "198.51.100.1:1", "wrong-wrong-wrong-wrong", "/")
			mu.Lock()
			counts[res.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[401] != 5 || counts[429] != 35 {
		t.Errorf("a burst of 40 guesses: %v, want 5 checked and 35 throttled", counts)
	}
}

// TestLogin_Refusals: the login takes JSON only, refuses other origins, and a server
// without tokens has nothing to log in to.
func TestLogin_Refusals(t *testing.T) {
	t.Parallel()
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true, Tokens: anaTokens(t)})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/login", strings.NewReader("token="+anaToken))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusUnsupportedMediaType || len(w.Result().Cookies()) != 0 {
		t.Errorf("form login: %d", w.Code)
	}
	req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/login", strings.NewReader(`{"token":"`+anaToken+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://evil.example")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
		t.Errorf("login from another origin: %d", w.Code)
	}
	open := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true})
	req = httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/login", nil)
	w = httptest.NewRecorder()
	open.ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Errorf("GET /login without tokens: %d %v", w.Code, w.Header())
	}
}

// TestWeb_LinkedFromElsewhere: a link on another site opens the page (a navigation runs
// nothing), while any other cross-site request is still refused.
func TestWeb_LinkedFromElsewhere(t *testing.T) {
	t.Parallel()
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Loopback: true})
	// same-site: a page on another port of this machine (http://127.0.0.1:3000) is
	// another origin too; a browser sends no Origin with its GET (fetch no-cors, <img>,
	// <script src>), so Sec-Fetch-Site is all that tells.
	for _, site := range []string{"cross-site", "same-site"} {
		for _, c := range []struct {
			method, path, mode, dest string
			status                   int
		}{
			{"GET", "/", "navigate", "document", 200},
			{"GET", "/graphql", "navigate", "document", 200},
			{"GET", "/", "no-cors", "image", 403},
			{"GET", "/graphql?query=%7Bstats%7Bidentities%7D%7D", "navigate", "document", 403},
			{"GET", "/graphql?query=%7Bstats%7Bidentities%7D%7D", "no-cors", "empty", 403},
			{"GET", "/graphql?query=%7Bstats%7Bidentities%7D%7D", "no-cors", "script", 403},
			{"POST", "/graphql", "navigate", "document", 403},
		} {
			req := httptest.NewRequest(c.method, "http://127.0.0.1:8080"+c.path, strings.NewReader(`{"query":"{ stats { identities } }"}`))
			req.Header.Set("Sec-Fetch-Site", site)
			req.Header.Set("Sec-Fetch-Mode", c.mode)
			req.Header.Set("Sec-Fetch-Dest", c.dest)
			req.Header.Set("Accept", "text/html")
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != c.status {
				t.Errorf("%s %s %s (%s, %s): %d, want %d", site, c.method, c.path, c.mode, c.dest, w.Code, c.status)
			}
		}
	}
	// The page's own requests (same-origin) and a typed address (none) run.
	for _, site := range []string{"same-origin", "none"} {
		req := httptest.NewRequest("GET", "http://127.0.0.1:8080/graphql?query=%7Bstats%7Bidentities%7D%7D", nil)
		req.Header.Set("Sec-Fetch-Site", site)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Errorf("%s GET /graphql?query=…: %d, want 200", site, w.Code)
		}
	}
}

// TestServer_TLS: with a certificate and key the server speaks HTTPS only, its URL says
// https, the login cookie is Secure, an allowed host name is served and any other
// refused; a missing half or a bad pair is one clear error and nothing listens.
func TestServer_TLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := testcert.Write(t)
	s := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{GraphQL: &fakeExec{}, Loopback: true,
		Tokens: anaTokens(t), TLSCert: certFile, TLSKey: keyFile, AllowedHosts: []string{"studio.lan"}}}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL=%q", s.URL())
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Fatalf("healthz over TLS: %d %v", resp.StatusCode, resp.TLS)
	}
	// Plain HTTP to the TLS port gets no answer a client could use.
	if resp, err := http.Get(strings.Replace(s.URL(), "https://", "http://", 1) + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was served on the TLS port")
		}
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL(), "https://"))
	login := func(host string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/login", strings.NewReader(`{"token":"`+anaToken+`"}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "https://"+host)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp = login("studio.lan:" + port)
	if resp.StatusCode != 200 || len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Errorf("login over TLS via an allowed host: %d %v", resp.StatusCode, resp.Cookies())
	}
	if resp := login("elsewhere.lan:" + port); resp.StatusCode != 403 {
		t.Errorf("a host not allowed: %d", resp.StatusCode)
	}

	for _, c := range []struct{ cert, key, want string }{
		{certFile, "", "--tls-cert and --tls-key"},
		{"", keyFile, "--tls-cert and --tls-key"},
		{keyFile, certFile, "cannot use the TLS certificate"},
		{filepath.Join(t.TempDir(), "missing.pem"), keyFile, "missing.pem"},
	} {
		bad := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{GraphQL: &fakeExec{}, Loopback: true, TLSCert: c.cert, TLSKey: c.key}}
		err := bad.Open()
		if err == nil {
			bad.Close()
			t.Errorf("Open with cert %q key %q succeeded", c.cert, c.key)
			continue
		}
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), c.want) {
			t.Errorf("Open with cert %q key %q: %v, want INVALID mentioning %q", c.cert, c.key, err, c.want)
		}
	}
}
