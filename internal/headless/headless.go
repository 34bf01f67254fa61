// Package headless drives headless Chromium for tests that need a real browser: it
// speaks the Chrome DevTools Protocol over --remote-debugging-pipe with the network off
// for every host but loopback, and records what the page requested and logged so a
// failing test can say why. http's GraphiQL test and cmd/devgraph's Mermaid test share it.
//
// It imports only the standard library and testing.
package headless

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Browser is one headless Chromium with one page attached. Its methods fail the test
// they were launched for; they are for the test's own goroutine.
type Browser struct {
	t       testing.TB
	ctx     context.Context
	c       *cdp
	session string
	stderr  *strings.Builder

	artifacts string // ArtifactDir, made at the first screenshot

	mu         sync.Mutex
	requests   []string
	console    []string
	exceptions []string
}

// Launch starts headless Chromium on a blank page with Network, Page and Runtime
// enabled, and stops it when the test ends; every host but 127.0.0.1 is unresolvable.
// Without chromium on the PATH the test fails under CI=true and is skipped otherwise.
// Calls give up when ctx ends.
func Launch(ctx context.Context, t testing.TB) *Browser {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (apt-get install -y chromium): %v", err)
		}
		t.Skipf("chromium is not installed (apt-get install -y chromium): %v", err)
	}
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(),
		// Networking off: every host but the test server's is unresolvable.
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fd 3, fd 4
	b := &Browser{t: t, ctx: ctx, stderr: &strings.Builder{}}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	toBrowserR.Close()
	fromBrowserW.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		toBrowserW.Close()
		fromBrowserR.Close()
	})
	b.c = newCDP(toBrowserW, fromBrowserR)

	var target struct{ TargetID string }
	if err := b.c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatalf("%v\nchromium stderr:\n%s", err, b.stderr.String())
	}
	var attach struct{ SessionID string }
	if err := b.c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attach); err != nil {
		t.Fatal(err)
	}
	b.session = attach.SessionID
	go func() {
		for m := range b.c.events {
			switch m.Method {
			case "Network.requestWillBeSent":
				var p struct{ Request struct{ URL string } }
				json.Unmarshal(m.Params, &p)
				b.mu.Lock()
				b.requests = append(b.requests, p.Request.URL)
				b.mu.Unlock()
			case "Runtime.exceptionThrown", "Runtime.consoleAPICalled":
				b.mu.Lock()
				b.console = append(b.console, string(m.Params))
				if m.Method == "Runtime.exceptionThrown" {
					b.exceptions = append(b.exceptions, string(m.Params))
				}
				b.mu.Unlock()
			}
		}
	}()
	for _, m := range []string{"Network.enable", "Page.enable", "Runtime.enable"} {
		b.Call(m, map[string]any{}, nil)
	}
	return b
}

// Call sends a DevTools method to the page and decodes its result into out (if not
// nil); an error from the browser fails the test.
func (b *Browser) Call(method string, params, out any) {
	b.t.Helper()
	if err := b.c.call(b.ctx, b.session, method, params, out); err != nil {
		b.t.Fatal(err)
	}
}

// Navigate points the page at url.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Call("Page.navigate", map[string]any{"url": url}, nil)
}

// Eval runs JavaScript in the page and returns its value (awaiting a promise); a
// thrown exception is an error.
func (b *Browser) Eval(expr string) (any, error) { return b.c.eval(b.ctx, b.session, expr) }

// Poll evaluates expr until it is truthy and returns its value; if ctx ends first the
// test fails with what the page requested and logged and Chromium's stderr.
func (b *Browser) Poll(what, expr string) any {
	b.t.Helper()
	for {
		v, err := b.Eval(expr)
		if err == nil && v != nil && v != false && v != "" {
			return v
		}
		select {
		case <-b.ctx.Done():
			b.mu.Lock()
			defer b.mu.Unlock()
			b.t.Fatalf("waiting for %s: %v (last error %v)\nrequests: %v\nconsole: %v\nchromium stderr:\n%s", what, b.ctx.Err(), err, b.requests, b.console, b.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Screenshot saves the page as a PNG named name+".png" in ArtifactDir and returns its
// path; a test keeps its screenshots so a person can look at what the browser saw.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	var shot struct{ Data string }
	b.Call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": false}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if b.artifacts == "" {
		b.artifacts = ArtifactDir(b.t)
	}
	p := filepath.Join(b.artifacts, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	return p
}

// SetViewport sizes the page's window (CSS pixels).
func (b *Browser) SetViewport(width, height int) {
	b.t.Helper()
	b.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

// ArtifactDir is where a test keeps what it wants looked at afterwards (screenshots):
// $DEVGRAPH_ARTIFACTS/<test>, else testdata/out/<test> beside the test (never
// committed). It is emptied first, so it holds only this run's files.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DEVGRAPH_ARTIFACTS")
	if base == "" {
		base = filepath.Join("testdata", "out")
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	dir := filepath.Join(base, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Exceptions returns the uncaught JavaScript exceptions the page has thrown so far.
func (b *Browser) Exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.exceptions...)
}

// Requests returns the URLs the page has requested so far, in order.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

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

// eval runs JavaScript in the page and returns its value (awaiting a promise).
func (c *cdp) eval(ctx context.Context, session, expr string) (any, error) {
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := c.call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return nil, err
	}
	if d := res.ExceptionDetails; d != nil {
		if d.Exception != nil {
			return nil, fmt.Errorf("js: %s: %s", d.Text, d.Exception.Description)
		}
		return nil, fmt.Errorf("js: %s", d.Text)
	}
	return res.Result.Value, nil
}
