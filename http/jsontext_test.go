package http_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

// Defect 7 on GraphQL over HTTP: text that is not valid UTF-8 — raw bytes, and lone
// surrogate escapes, which encoding/json would turn into U+FFFD — and NUL are refused
// with the field named in extensions.field, and nothing is written.
func TestHTTP_RefusesInvalidText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	defer srv.Close()
	gql := srv.URL + "/graphql"
	headBefore := e.ok(`{ changelog(first: 1, filter: {actor: "http:*"}){ edges { node { id } } } }`, nil)

	const tag = `mutation($m: String){ tag(target: "jdxi", add: ["role:bad"], message: $m){ tags { name } } }`
	for _, c := range []struct {
		name  string
		req   *http.Request
		field string
		nul   bool
	}{
		{"raw byte in a variable", post(t, gql, "application/json", `{"query":"`+jsonEsc(tag)+"\",\"variables\":{\"m\":\"why\xff\"}}"), "variables.m", false},
		{"lone surrogate in a variable", post(t, gql, "application/json", `{"query":"`+jsonEsc(tag)+`","variables":{"m":"why\ud800"}}`), "variables.m", false},
		{"lone low surrogate in the query", post(t, gql, "application/json", `{"query":"mutation { tag(target: \"jdxi\", add: [\"role:bad\"], message: \"\udc00\"){ tags { name } } }"}`), "query", false},
		{"raw byte in the query", post(t, gql, "application/json", "{\"query\":\"{ find(text: \\\"\xff\xfe\\\"){ edges { name } } }\"}"), "query", false},
		{"NUL in a variable", post(t, gql, "application/json", `{"query":"`+jsonEsc(tag)+`","variables":{"m":"a\u0000b"}}`), "variables.m", true},
		{"bad key", post(t, gql, "application/json", "{\"query\":\"{ stats { identities } }\",\"variables\":{\"\xff\":1}}"), `variables["\xff"]`, false},
		{"GET query", mustGet(t, gql+"?query="+url.QueryEscape("{ find(text: \"\xff\"){ edges { name } } }")), "query", false},
		{"GET variables", mustGet(t, gql+"?query="+url.QueryEscape(`query($t: String){ find(text: $t){ edges { name } } }`)+"&variables="+url.QueryEscape(`{"t":"\ud800"}`)), "variables.t", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := send(t, c.req)
			errs := getList(r.body, "errors")
			if r.status != 400 || len(errs) != 1 {
				t.Fatalf("%d %s, want 400 and one error", r.status, truncateStr(r.raw, 300))
			}
			want := graph.JSONTextFault{Path: c.field, NUL: c.nul}.Refusal(c.field)
			if get(errs[0], "extensions.code") != graph.EINVALID || get(errs[0], "extensions.field") != c.field || get(errs[0], "message") != want.Message {
				t.Errorf("%s, want %q naming %s", r.raw, want.Message, c.field)
			}
		})
	}
	if got := e.ok(`{ changelog(first: 1, filter: {actor: "http:*"}){ edges { node { id } } } }`, nil); mustJSON(got) != mustJSON(headBefore) {
		t.Errorf("refused requests wrote to the changelog: %v, was %v", got, headBefore)
	}
}

func jsonEsc(s string) string {
	b := mustJSON(s)
	return b[1 : len(b)-1]
}

func mustGet(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
