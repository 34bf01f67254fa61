package http_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

// TestParseTokens_OddLines: a token file saved by an editor that starts it with a UTF-8
// byte order mark made the first name "\ufeffalice", so its writes were recorded as
// http:\ufeffalice, which --actor http:alice does not find. The mark is skipped, and a
// name holding an invisible or control character is refused with its line.
func TestParseTokens_OddLines(t *testing.T) {
	toks, err := devhttp.ParseTokens(strings.NewReader("\ufeffalice 0123456789abcdef0123\r\nbob\tfedcba9876543210fedc\tprune\r\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if got := toks["0123456789abcdef0123"].Name; got != "alice" {
		t.Errorf("first name %q, want alice", got)
	}
	if got := toks["fedcba9876543210fedc"]; got.Name != "bob" || !got.Prune {
		t.Errorf("second line %+v", got)
	}
	for _, bad := range []string{"ali\u200bce 0123456789abcdef0123\n", "ali\x1b[1mce 0123456789abcdef0123\n", "ci 0123456789abcdef0123\nx\ufeffy fedcba9876543210fedc\n"} {
		_, err := devhttp.ParseTokens(strings.NewReader(bad), "tokens")
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "tokens:") {
			t.Errorf("ParseTokens(%q) err=%v, want INVALID naming the line", bad, err)
		}
	}
}

// TestGuard_BearerScheme: the auth scheme is case-insensitive (RFC 9110), so "bearer
// <token>" with a good token acts as the token; a scheme other than Bearer is refused
// saying so, not that the token is unknown.
func TestGuard_BearerScheme(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	tokens, err := devhttp.ParseTokens(strings.NewReader("ci 0123456789abcdef0123\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: false, Tokens: tokens}))
	defer srv.Close()
	for _, auth := range []string{"bearer 0123456789abcdef0123", "BEARER  0123456789abcdef0123"} {
		req := post(t, srv.URL+"/graphql", "application/json", gqlBody(`{ identities { totalCount } }`, nil))
		req.Header.Set("Authorization", auth)
		if r := send(t, req); r.status != 200 || get(r.body, "data.identities.totalCount") == nil {
			t.Errorf("Authorization %q: %d %s", auth, r.status, r.raw)
		}
	}
	req := post(t, srv.URL+"/graphql", "application/json", gqlBody(`{ identities { totalCount } }`, nil))
	req.Header.Set("Authorization", "Basic Y2k6MDEyMzQ1Njc4OWFiY2RlZjAxMjM=")
	if r := send(t, req); r.status != 401 || !strings.Contains(r.raw, "Bearer") || strings.Contains(r.raw, "not one of this server's tokens") {
		t.Errorf("Basic auth: %d %s; want 401 asking for a Bearer token", r.status, r.raw)
	}
}
