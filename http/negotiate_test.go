package http_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

// TestGraphQL_ContentNegotiation: the answer's media type follows Accept, and the status
// follows the media type (GraphQL over HTTP): application/json answers a well-formed
// request that did not run with 200 and its errors; application/graphql-response+json
// with 400 and no data. A malformed request is 400 either way.
func TestGraphQL_ContentNegotiation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed()
	srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	defer srv.Close()
	gql := srv.URL + "/graphql"
	const (
		js = "application/json"
		gr = "application/graphql-response+json"
	)

	t.Run("MediaType", func(t *testing.T) {
		for _, c := range []struct{ accept, want string }{
			{"", js},
			{"*/*", js},
			{"application/*", js},
			{js, js},
			{gr, gr},
			{gr + ", " + js, gr},
			{js + ", " + gr, gr},
			{gr + ";q=0.5, " + js, js},
			{gr + ";q=0, */*", js},
			{"application/json;q=0.9, application/graphql-response+json;q=1.0", gr},
			{"text/plain", js}, // nothing acceptable: the default, not 406
		} {
			req := post(t, gql, "application/json", gqlBody(`{ __typename }`, nil))
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			r := send(t, req)
			if ct := r.header.Get("Content-Type"); r.status != 200 || ct != c.want+"; charset=utf-8" {
				t.Errorf("Accept %q: %d %q, want 200 %s", c.accept, r.status, ct, c.want)
			}
			if !strings.Contains(r.header.Get("Vary"), "Accept") {
				t.Errorf("Accept %q: no Vary: Accept", c.accept)
			}
		}
	})

	t.Run("Status", func(t *testing.T) {
		for _, c := range []struct {
			name       string
			body       string
			json, gqlr int
		}{
			{"parse error", `{"query": "{"}`, 200, 400},
			{"validation error", `{"query": "{ planets }"}`, 200, 400},
			{"variable coercion", `{"query": "query($id: ID!){ __typename }", "variables": {"id": null}}`, 200, 400},
			{"unknown operation", `{"query": "query A { __typename }", "operationName": "B"}`, 200, 400},
			{"limit", `{"query": "{ ` + strings.Repeat("a: ", 1) + strings.Repeat("{", 70) + `"}`, 200, 400},
			{"field error", `{"query": "{ identity(id: \"nope\") { name } }"}`, 200, 200},
			{"ok with nulls", `{"query": "{ __typename }", "variables": null, "operationName": null, "extensions": null}`, 200, 200},
			{"extensions object", `{"query": "{ __typename }", "extensions": {"some": "value"}}`, 200, 200},
			{"no body", ``, 400, 400},
			{"no query", `{"notquery": "{ __typename }"}`, 400, 400},
			{"empty query", `{"query": ""}`, 400, 400},
			{"query an object", `{"query": {"obj": "ect"}}`, 400, 400},
			{"query false", `{"query": false}`, 400, 400},
			{"operationName a number", `{"query": "{ __typename }", "operationName": 0}`, 400, 400},
			{"operationName an array", `{"query": "{ __typename }", "operationName": ["array"]}`, 400, 400},
			{"variables a string", `{"query": "{ __typename }", "variables": "string"}`, 400, 400},
			{"variables false", `{"query": "{ __typename }", "variables": false}`, 400, 400},
			{"extensions a string", `{"query": "{ __typename }", "extensions": "string"}`, 400, 400},
			{"extensions a number", `{"query": "{ __typename }", "extensions": 0}`, 400, 400},
			{"extensions an array", `{"query": "{ __typename }", "extensions": ["array"]}`, 400, 400},
			{"not JSON", `{ "not a JSON`, 400, 400},
		} {
			for _, accept := range []string{js, gr} {
				req := post(t, gql, "application/json", c.body)
				req.Header.Set("Accept", accept)
				r := send(t, req)
				want := c.json
				if accept == gr {
					want = c.gqlr
				}
				if r.status != want {
					t.Errorf("%s, Accept %s: status %d, want %d: %s", c.name, accept, r.status, want, truncateStr(r.raw, 200))
				}
				if _, has := r.body["data"]; has && (r.status == 400 || want != 200) {
					t.Errorf("%s, Accept %s: data in an answer to a request that did not run: %s", c.name, accept, truncateStr(r.raw, 200))
				}
				if want != 200 || c.name == "parse error" || c.name == "validation error" {
					if errs := getList(r.body, "errors"); len(errs) == 0 || get(errs[0], "extensions.code") == nil {
						t.Errorf("%s, Accept %s: no error with a code: %s", c.name, accept, truncateStr(r.raw, 200))
					}
				}
			}
		}
	})

	t.Run("GET", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			params url.Values
			status int
		}{
			{"query", url.Values{"query": {"{ __typename }"}}, 200},
			{"variables", url.Values{"query": {"query($n: String!){ __type(name: $n) { name } }"}, "variables": {`{"n": "Query"}`}}, 200},
			{"extensions object", url.Values{"query": {"{ __typename }"}, "extensions": {`{"some": "value"}`}}, 200},
			{"extensions not an object", url.Values{"query": {"{ __typename }"}, "extensions": {`"string"`}}, 400},
			{"variables not an object", url.Values{"query": {"{ __typename }"}, "variables": {`[1]`}}, 400},
			{"no query", url.Values{"variables": {`{}`}}, 400},
			{"mutation", url.Values{"query": {"mutation { __typename }"}}, 405},
		} {
			req, _ := http.NewRequest(http.MethodGet, gql+"?"+c.params.Encode(), nil)
			req.Header.Set("Accept", gr)
			if r := send(t, req); r.status != c.status {
				t.Errorf("GET %s: status %d, want %d: %s", c.name, r.status, c.status, truncateStr(r.raw, 200))
			}
		}
	})

	t.Run("NotStarted", func(t *testing.T) {
		srv := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: notStarted{}, Loopback: true}))
		defer srv.Close()
		for accept, want := range map[string]int{js: 200, gr: 503} {
			req := post(t, srv.URL+"/graphql", "application/json", gqlBody(`{ __typename }`, nil))
			req.Header.Set("Accept", accept)
			if r := send(t, req); r.status != want {
				t.Errorf("Accept %s: status %d, want %d", accept, r.status, want)
			}
		}
	})
}

// notStarted is an executor whose requests never start (the store is unavailable).
type notStarted struct{}

func (notStarted) ExecuteGraphQL(context.Context, graph.GraphQLRequest, graph.GraphQLMode) (any, graph.GraphQLFailure) {
	return map[string]any{"errors": []any{map[string]any{"message": "the store is unavailable", "extensions": map[string]any{"code": graph.EUNAVAILABLE}}}}, graph.GraphQLNotStarted
}

func (notStarted) MaxRequestBytes() int64 { return 1 << 20 }
