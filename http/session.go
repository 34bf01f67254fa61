package http

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// SessionTTL is how long a login lasts: a session older than this is gone and the page
// asks for the token again.
const SessionTTL = 12 * time.Hour

// maxSessions bounds the sessions kept; past it the oldest goes first.
const maxSessions = 10_000

// tokenSet holds the token file's tokens as SHA-256 digests. A lookup compares the
// digest of what was sent with every digest in constant time: comparing the tokens
// themselves would return early on a length mismatch and so tell a token's length.
type tokenSet struct {
	digests [][sha256.Size]byte
	lines   []Token
}

func newTokenSet(tokens map[string]Token) *tokenSet {
	s := &tokenSet{}
	for tok, line := range tokens {
		s.digests = append(s.digests, sha256.Sum256([]byte(tok)))
		s.lines = append(s.lines, line)
	}
	return s
}

func (s *tokenSet) empty() bool { return len(s.digests) == 0 }

// lookup finds tok's line, looking at every token whatever matched.
func (s *tokenSet) lookup(tok string) (Token, bool) {
	if tok == "" {
		return Token{}, false
	}
	d := sha256.Sum256([]byte(tok))
	var found Token
	ok := 0
	for i := range s.digests {
		if subtle.ConstantTimeCompare(s.digests[i][:], d[:]) == 1 {
			found, ok = s.lines[i], 1
		}
	}
	return found, ok == 1
}

// sessions are the browsers logged in with a token: a random id in an HttpOnly,
// SameSite=Strict cookie (Secure over TLS) maps to the token's line, so the token itself
// never sits in the browser. They live in memory: a restarted server asks again.
type sessions struct {
	now func() time.Time

	mu   sync.Mutex
	byID map[[sha256.Size]byte]*session // keyed by the id's digest, so a lookup takes constant time
}

type session struct {
	token   Token
	created time.Time
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byID: map[[sha256.Size]byte]*session{}}
}

// cookieName is per port: browsers send a localhost cookie to every port, and two
// devgraph servers on one machine must not log each other out.
func cookieName(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(local.String()); err == nil {
			return "devgraph_session_" + port
		}
	}
	return "devgraph_session"
}

// create starts a session for tok and sets its cookie on w.
func (s *sessions) create(w http.ResponseWriter, r *http.Request, tok Token) {
	var raw [32]byte
	rand.Read(raw[:])
	id := base64.RawURLEncoding.EncodeToString(raw[:])
	now := s.now()
	s.mu.Lock()
	if len(s.byID) >= maxSessions {
		s.expireLocked(now)
	}
	for len(s.byID) >= maxSessions { // still full: drop the oldest
		var oldest [sha256.Size]byte
		first := true
		var at time.Time
		for k, v := range s.byID {
			if first || v.created.Before(at) {
				oldest, at, first = k, v.created, false
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[sha256.Sum256([]byte(id))] = &session{token: tok, created: now}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: id, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
}

func (s *sessions) expireLocked(now time.Time) {
	for k, v := range s.byID {
		if now.Sub(v.created) >= SessionTTL {
			delete(s.byID, k)
		}
	}
}

// lookup returns the token of the session r's cookie names; false when it has none, or
// one that ended (logout, expiry, a restart).
func (s *sessions) lookup(r *http.Request) (Token, bool) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return Token{}, false
	}
	k := sha256.Sum256([]byte(c.Value))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[k]
	if !ok {
		return Token{}, false
	}
	if s.now().Sub(v.created) >= SessionTTL {
		delete(s.byID, k)
		return Token{}, false
	}
	return v.token, true
}

// end forgets r's session and clears its cookie on w.
func (s *sessions) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName(r)); err == nil {
		s.mu.Lock()
		delete(s.byID, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// cookieMayRide reports whether r may be authenticated by its session cookie: opening
// the web page or GraphiQL (GET / and a browser's GET /graphql, which run nothing), and
// the page's own writes — POST /graphql with a JSON body and this server's Origin, which
// a form on another site cannot send. A GET query and /mcp need a bearer token.
func cookieMayRide(r *http.Request) bool {
	switch {
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return r.URL.Path == "/" || r.URL.Path == "/graphql" && !r.URL.Query().Has("query")
	case r.Method == http.MethodPost && (r.URL.Path == "/graphql" || r.URL.Path == "/logout"):
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return err == nil && ct == "application/json" && sameOrigin(r)
	}
	return false
}

// sameOrigin reports whether r carries this server's own Origin (scheme, host and port).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && u.Host != "" && strings.EqualFold(u.Host, r.Host) && u.Path == "" && u.User == nil
}

// browserPage reports whether r is a browser opening the web page or GraphiQL: without
// a login it is sent to /login rather than refused.
func browserPage(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	return r.URL.Path == "/" || r.URL.Path == "/graphql" && !r.URL.Query().Has("query") && acceptsHTML(r)
}

// safeNext is where a login may send the browser: a path on this server, never another
// origin ("//evil", "/\evil", "/%09/evil" and the like become "/").
func safeNext(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 {
		return "/"
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return "/"
	}
	for _, c := range next { // printable ASCII only: the page's own links are URL-encoded
		if c < 0x21 || c > 0x7e || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") {
		return "/"
	}
	// Decoded, the path must still be a plain path (a %2F%2F or %5C prefix is refused).
	if p := u.Path; strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\t\r\n") {
		return "/"
	}
	return next
}

// throttle limits login attempts per client address (an IPv6 client by its /64): a
// bucket of loginBurst attempts that refills one every loginRefill. An attempt is
// counted before its token is checked, so a burst of parallel guesses cannot slip
// past, and given back when the token was right. One address's guessing never locks
// out another.
type throttle struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

const (
	loginBurst    = 5
	loginRefill   = 12 * time.Second
	maxThrottled  = 4096
	maxLoginBytes = 4096
)

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, buckets: map[string]*bucket{}}
}

// clientKey is the address a client is throttled by.
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return host
}

func (t *throttle) refill(b *bucket, now time.Time) {
	b.tokens = math.Min(loginBurst, b.tokens+float64(now.Sub(b.at))/float64(loginRefill))
	b.at = now
}

// take counts one attempt from key; when none is left it says how long to wait.
func (t *throttle) take(key string) (ok bool, wait time.Duration) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buckets[key]
	if b == nil {
		if len(t.buckets) >= maxThrottled {
			for k, o := range t.buckets { // forget the addresses that are full again
				if t.refill(o, now); o.tokens >= loginBurst {
					delete(t.buckets, k)
				}
			}
			for k := range t.buckets { // still full: forget any one
				if len(t.buckets) < maxThrottled {
					break
				}
				delete(t.buckets, k)
			}
		}
		b = &bucket{tokens: loginBurst, at: now}
		t.buckets[key] = b
	}
	t.refill(b, now)
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) * float64(loginRefill))
	}
	b.tokens--
	return true, 0
}

// give returns an attempt that turned out to be a good login.
func (t *throttle) give(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.buckets[key]; b != nil {
		b.tokens = math.Min(loginBurst, b.tokens+1)
	}
}

// login serves /login: GET the login page; POST {"token", "next"} (application/json)
// starts a session and answers {"next"}, the page to go to. /logout (POST, JSON, this
// server's Origin) ends it.
type login struct {
	tokens   *tokenSet
	sessions *sessions
	throttle *throttle
}

func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/logout" {
		l.logout(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if l.tokens.empty() {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		page(w, "assets/login.html", "")
	case http.MethodPost:
		l.post(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeErr(w, http.StatusMethodNotAllowed, graph.EINVALID, "/login takes GET (the login page) or POST (application/json: {\"token\": …})")
	}
}

func (l *login) post(w http.ResponseWriter, r *http.Request) {
	if l.tokens.empty() {
		writeErr(w, http.StatusNotFound, graph.ENOTFOUND, "this server has no token file: nothing to log in to; open / directly")
		return
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		writeErr(w, http.StatusUnsupportedMediaType, graph.EINVALID, "POST /login takes Content-Type: application/json with a body like {\"token\": \"…\"}")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(r) {
		writeErr(w, http.StatusForbidden, CodeForbidden, "log in from this server's own page")
		return
	}
	key := clientKey(r)
	if ok, wait := l.throttle.take(key); !ok {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeErr(w, http.StatusTooManyRequests, graph.ELIMIT, "too many login attempts from your address; wait %d s and try again", secs)
		return
	}
	var in struct {
		Token string `json:"token"`
		Next  string `json:"next"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLoginBytes+1))
	if err != nil || len(body) > maxLoginBytes || json.Unmarshal(body, &in) != nil {
		writeErr(w, http.StatusBadRequest, graph.EINVALID, "the body must be a JSON object {\"token\": \"…\"} under %d bytes", maxLoginBytes)
		return
	}
	tok, ok := l.tokens.lookup(strings.TrimSpace(in.Token))
	if !ok {
		writeErr(w, http.StatusUnauthorized, CodeForbidden, "that token is not one of this server's; check the token file (the second word of a line)")
		return
	}
	l.throttle.give(key)
	l.sessions.create(w, r, tok)
	recordFrom(r).actor = "http:" + tok.Name
	writeJSON(w, http.StatusOK, map[string]string{"next": safeNext(in.Next), "actor": "http:" + tok.Name})
}

func (l *login) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeErr(w, http.StatusMethodNotAllowed, graph.EINVALID, "/logout takes POST (application/json) from the web page")
		return
	}
	if !cookieMayRide(r) {
		writeErr(w, http.StatusForbidden, CodeForbidden, "log out from this server's own page (POST, application/json, same Origin)")
		return
	}
	l.sessions.end(w, r)
	writeJSON(w, http.StatusOK, map[string]string{"next": "/login"})
}
