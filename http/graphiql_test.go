package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/internal/headless"
	"github.com/devgraph/devgraph/query"
)

// TestGraphiQL loads GraphiQL from the real handler in headless Chromium with every
// other host unreachable, types a query into it, runs it, and finds the answer in the
// page; every request the page made went to this server.
func TestGraphiQL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := headless.Launch(ctx, t)

	e := newEnv(t, query.Options{})
	e.seed()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: devhttp.NewHandler(devhttp.Options{GraphQL: e.exec, Loopback: true})}
	go srv.Serve(ln)
	defer srv.Close()
	origin := "http://" + ln.Addr().String()

	b.Call("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"Accept": "text/html"}}, nil)
	b.Navigate(origin + "/graphql")

	b.Poll("GraphiQL to render", `!!document.querySelector('.graphiql-execute-button') && !!document.querySelector('.graphiql-query-editor .CodeMirror')`)
	// Wait for the schema (introspection through the page's fetcher) so the editor is live.
	b.Poll("the schema to load", `!!document.querySelector('.graphiql-doc-explorer, [aria-label="Show Documentation Explorer"], .graphiql-sidebar button')`)
	q := `{ identity(id: "jdxi") { name tags { name } } }`
	if _, err := b.Eval(fmt.Sprintf(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(%q); true`, q)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Eval(`document.querySelector('.graphiql-execute-button').click(); true`); err != nil {
		t.Fatal(err)
	}
	out := b.Poll("the result to appear", `(() => { const cm = document.querySelector('.graphiql-response .CodeMirror'); const v = cm ? cm.CodeMirror.getValue() : ''; return v.includes('Roland JD-Xi') ? v : ''; })()`)
	var res map[string]any
	if err := json.Unmarshal([]byte(out.(string)), &res); err != nil {
		t.Fatalf("result pane is not JSON: %v\n%s", err, out)
	}
	if get(res, "data.identity.name") != "Roland JD-Xi" || get(res, "data.identity.tags.0.name") != "manufacturer:roland" {
		t.Errorf("result pane: %v", res)
	}

	requests := b.Requests()
	if len(requests) == 0 {
		t.Fatal("no network requests seen")
	}
	sawGraphQL := false
	for _, u := range requests {
		switch {
		case strings.HasPrefix(u, origin+"/"):
			sawGraphQL = sawGraphQL || u == origin+"/graphql"
		case strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "blob:"), u == "about:blank":
		default:
			t.Errorf("the page requested %s, outside the server", u)
		}
	}
	if !sawGraphQL {
		t.Errorf("no request to %s/graphql among %v", origin, requests)
	}
}
