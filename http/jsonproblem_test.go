package http_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

// TestHTTP_BodyProblems: the words for a body that is not the expected JSON. A JSON
// array said "the body is not a JSON object {…}:  has the wrong type (array)" (an empty
// field name), and a variable too big for a number said it had the wrong type.
func TestHTTP_BodyProblems(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	ts := httptest.NewServer(devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true}))
	defer ts.Close()
	srv := ts.URL
	for _, c := range []struct{ body, want string }{
		{`[{"query":"{ identities { totalCount } }"}]`, "the body is not a JSON object {\"query\": …}: it is an array"},
		{`{"query":"query($x: Float){ identities { totalCount } }","variables":{"x":1e400}}`, "variables.x is not a finite number"}, // graph.CheckJSONText, before decoding
		{`{"query":"{ identities { totalCount } }","variables":[1]}`, "\"variables\" must be a JSON object: it is an array"},
	} {
		r := send(t, post(t, srv+"/graphql", "application/json", c.body))
		msg, _ := get(r.body, "errors.0.message").(string)
		if r.status != 400 || !strings.Contains(msg, c.want) || strings.Contains(msg, ":  ") {
			t.Errorf("%s: %d %s; want %q", c.body, r.status, r.raw, c.want)
		}
	}
}
