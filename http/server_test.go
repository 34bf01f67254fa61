package http_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
)

// TestMain checks that no goroutine a test started outlives it: every server the tests
// open is closed, and Close waits for what it started.
func TestMain(m *testing.M) {
	code := m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines outlived the tests: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// fakeExec answers every request with the actor and request id it ran as.
type fakeExec struct {
	mu    sync.Mutex
	modes []graph.GraphQLMode
}

func (f *fakeExec) ExecuteGraphQL(ctx context.Context, req graph.GraphQLRequest, mode graph.GraphQLMode) (any, graph.GraphQLFailure) {
	f.mu.Lock()
	f.modes = append(f.modes, mode)
	f.mu.Unlock()
	return map[string]any{"data": map[string]any{"actor": graph.ActorFrom(ctx), "query": req.Query}}, graph.GraphQLOK
}

func (f *fakeExec) MaxRequestBytes() int64 { return 1 << 20 }

// lockedBuffer is a log destination the server writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// TestServer_Close: Close ends a request still streaming (an MCP event stream), waits
// for its handler, and leaves no goroutine behind; the access log has a line per request.
func TestServer_Close(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	streaming := make(chan struct{})
	handlerDone := make(chan struct{})
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": hello\n\n")
		w.(http.Flusher).Flush()
		close(streaming)
		<-r.Context().Done()
	})
	var logs lockedBuffer
	s := &devhttp.Server{Addr: "127.0.0.1:0", Options: devhttp.Options{
		GraphQL: &fakeExec{}, MCP: mcp, Loopback: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL=%q", s.URL())
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	resp, err := client.Post(s.URL()+"/graphql", "application/json", strings.NewReader(`{"query": "{ stats { identities } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"actor":"http:local"`) {
		t.Fatalf("graphql: %d %s", resp.StatusCode, body)
	}

	stream, err := client.Get(s.URL() + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if line, _ := bufio.NewReader(stream.Body).ReadString('\n'); line != ": hello\n" {
		t.Fatalf("stream: %q", line)
	}
	<-streaming

	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a stream open")
	}
	select {
	case <-handlerDone:
	default:
		t.Fatal("Close returned before the streaming handler did")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var access []string
	for _, l := range lines {
		if strings.Contains(l, "msg=http ") {
			access = append(access, l)
		}
	}
	if len(access) != 2 {
		t.Fatalf("access log lines=%d, want 2:\n%s", len(access), logs.String())
	}
	for i, want := range [][]string{
		{"level=INFO", "method=POST", "path=/graphql", "actor=http:local", "status=200", "duration=", "request_id="},
		{"method=GET", "path=/mcp", "actor=http:local", "status=200"},
	} {
		for _, w := range want {
			if !strings.Contains(access[i], w) {
				t.Errorf("access log line %q lacks %q", access[i], w)
			}
		}
	}
}

// TestServer_AccessLogRefusal: a refused request is logged with its status and no actor.
func TestServer_AccessLogRefusal(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader(`{"query": "{ a }"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status=%d, want 401 (not loopback, no token)", rec.Code)
	}
	if l := logs.String(); !strings.Contains(l, "status=401") || !strings.Contains(l, `actor=""`) || !strings.Contains(l, "path=/graphql") {
		t.Errorf("access log: %s", l)
	}
}

// TestServer_ReadOnlyMode: a read-only server hands POSTs to the executor in read-only
// mode and GETs in GET mode.
func TestServer_ReadOnlyMode(t *testing.T) {
	t.Parallel()
	exec := &fakeExec{}
	h := devhttp.NewHandler(devhttp.Options{GraphQL: exec, Loopback: true, ReadOnly: true})
	post, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/graphql", strings.NewReader(`{"query": "{ a }"}`))
	post.Header.Set("Content-Type", "application/json")
	get, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/graphql?query=%7Ba%7D", nil)
	for _, r := range []*http.Request{post, get} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != 200 {
			t.Fatalf("%s: %d", r.Method, rec.Code)
		}
	}
	if got, want := exec.modes, []graph.GraphQLMode{graph.GraphQLReadOnlyServer, graph.GraphQLGet}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("modes=%v, want %v", got, want)
	}
}

// TestHandler_AfterAnswer: work a handler puts off with graph.AfterAnswer runs once the
// handler has written its answer and returned, not while it runs.
func TestHandler_AfterAnswer(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		graph.AfterAnswer(r.Context(), func() { note("after the answer") })
		io.WriteString(w, "answer")
		note("answered")
	})
	h := devhttp.NewHandler(devhttp.Options{GraphQL: &fakeExec{}, MCP: mcp, Loopback: true})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader("{}"))
	req.RemoteAddr = "127.0.0.1:1234"
	h.ServeHTTP(rec, req)
	mu.Lock()
	defer mu.Unlock()
	if rec.Body.String() != "answer" || !slices.Equal(order, []string{"answered", "after the answer"}) {
		t.Fatalf("body %q, order %v: want the handler's answer, then the work put off", rec.Body.String(), order)
	}
}
