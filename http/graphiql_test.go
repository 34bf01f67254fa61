package http_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	devhttp "github.com/devgraph/devgraph/http"
	"github.com/devgraph/devgraph/query"
)

// cdp speaks the Chrome DevTools Protocol over --remote-debugging-pipe: JSON messages
// separated by NUL bytes, written to the browser's fd 3 and read from its fd 4.
type cdp struct {
	w      *os.File
	mu     sync.Mutex
	nextID int
	wait   map[int]chan cdpMsg
	events chan cdpMsg
}

type cdpMsg struct {
	ID        int                       `json:"id,omitempty"`
	Method    string                    `json:"method,omitempty"`
	Params    json.RawMessage           `json:"params,omitempty"`
	Result    json.RawMessage           `json:"result,omitempty"`
	Error     *struct{ Message string } `json:"error,omitempty"`
	SessionID string                    `json:"sessionId,omitempty"`
}

func newCDP(w, r *os.File) *cdp {
	c := &cdp{w: w, wait: map[int]chan cdpMsg{}, events: make(chan cdpMsg, 4096)}
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			b, err := br.ReadBytes(0)
			if err != nil {
				close(c.events)
				return
			}
			var m cdpMsg
			if json.Unmarshal(b[:len(b)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				c.mu.Lock()
				ch := c.wait[m.ID]
				delete(c.wait, m.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			select {
			case c.events <- m:
			default:
			}
		}
	}()
	return c
}

func (c *cdp) call(ctx context.Context, session, method string, params any, out any) error {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan cdpMsg, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// eval runs JavaScript in the page and returns its value.
func (c *cdp) eval(ctx context.Context, session, expr string) (any, error) {
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("js: %s", res.ExceptionDetails.Text)
	}
	return res.Result.Value, nil
}

// TestGraphiQL loads GraphiQL from the real handler in headless Chromium with every
// other host unreachable, types a query into it, runs it, and finds the answer in the
// page; every request the page made went to this server.
func TestGraphiQL(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (apt-get install -y chromium): %v", err)
		}
		t.Skipf("chromium is not installed: %v", err)
	}
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

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	toBrowserR, toBrowserW, _ := os.Pipe()
	fromBrowserR, fromBrowserW, _ := os.Pipe()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(),
		// Networking off: every host but the test server's is unresolvable.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fd 3, fd 4
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toBrowserR.Close()
	fromBrowserW.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	c := newCDP(toBrowserW, fromBrowserR)

	var target struct{ TargetID string }
	if err := c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatalf("%v\nchromium stderr:\n%s", err, stderr.String())
	}
	var attach struct{ SessionID string }
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attach); err != nil {
		t.Fatal(err)
	}
	s := attach.SessionID
	var (
		reqMu    sync.Mutex
		requests []string
		console  []string
	)
	go func() {
		for m := range c.events {
			switch m.Method {
			case "Network.requestWillBeSent":
				var p struct{ Request struct{ URL string } }
				json.Unmarshal(m.Params, &p)
				reqMu.Lock()
				requests = append(requests, p.Request.URL)
				reqMu.Unlock()
			case "Runtime.exceptionThrown", "Runtime.consoleAPICalled":
				reqMu.Lock()
				console = append(console, string(m.Params))
				reqMu.Unlock()
			}
		}
	}()
	for _, m := range []string{"Network.enable", "Page.enable", "Runtime.enable"} {
		if err := c.call(ctx, s, m, map[string]any{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.call(ctx, s, "Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{"Accept": "text/html"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": origin + "/graphql"}, nil); err != nil {
		t.Fatal(err)
	}

	poll := func(what, expr string) any {
		t.Helper()
		for {
			v, err := c.eval(ctx, s, expr)
			if err == nil && v != nil && v != false && v != "" {
				return v
			}
			select {
			case <-ctx.Done():
				reqMu.Lock()
				defer reqMu.Unlock()
				t.Fatalf("waiting for %s: %v (last error %v)\nrequests: %v\nconsole: %v\nchromium stderr:\n%s", what, ctx.Err(), err, requests, console, stderr.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	poll("GraphiQL to render", `!!document.querySelector('.graphiql-execute-button') && !!document.querySelector('.graphiql-query-editor .CodeMirror')`)
	// Wait for the schema (introspection through the page's fetcher) so the editor is live.
	poll("the schema to load", `!!document.querySelector('.graphiql-doc-explorer, [aria-label="Show Documentation Explorer"], .graphiql-sidebar button')`)
	q := `{ identity(id: "jdxi") { name tags { name } } }`
	if _, err := c.eval(ctx, s, fmt.Sprintf(`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(%q); true`, q)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.eval(ctx, s, `document.querySelector('.graphiql-execute-button').click(); true`); err != nil {
		t.Fatal(err)
	}
	out := poll("the result to appear", `(() => { const cm = document.querySelector('.graphiql-response .CodeMirror'); const v = cm ? cm.CodeMirror.getValue() : ''; return v.includes('Roland JD-Xi') ? v : ''; })()`)
	var res map[string]any
	if err := json.Unmarshal([]byte(out.(string)), &res); err != nil {
		t.Fatalf("result pane is not JSON: %v\n%s", err, out)
	}
	if get(res, "data.identity.name") != "Roland JD-Xi" || get(res, "data.identity.tags.0.name") != "manufacturer:roland" {
		t.Errorf("result pane: %v", res)
	}

	reqMu.Lock()
	defer reqMu.Unlock()
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
