package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
)

// echoMCP stands in for mcptools.Server: it echoes each line it reads, prefixed with
// "ro " in read-only sessions, until in ends or ctx does.
type echoMCP struct {
	readOnly bool
	started  chan struct{} // gets a value when a session starts
}

func (e *echoMCP) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	select {
	case e.started <- struct{}{}:
	default:
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok := <-lines:
			if !ok {
				return nil
			}
			if e.readOnly {
				l = "ro " + l
			}
			io.WriteString(out, l+"\n")
		}
	}
}

// gqlExec records the mode and actor of each request.
type gqlExec struct {
	mu     sync.Mutex
	modes  []graph.GraphQLMode
	actors []string
}

func (g *gqlExec) ExecuteGraphQL(ctx context.Context, req graph.GraphQLRequest, mode graph.GraphQLMode) (any, graph.GraphQLFailure) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.modes = append(g.modes, mode)
	g.actors = append(g.actors, graph.ActorFrom(ctx))
	return map[string]any{"data": map[string]any{"query": req.Query}}, graph.GraphQLOK
}

func (g *gqlExec) MaxRequestBytes() int64 { return 4096 }

func openSocket(t *testing.T, readOnly bool) (*remote.SocketServer, *echoMCP, *gqlExec) {
	t.Helper()
	rw, ro := &echoMCP{started: make(chan struct{}, 1)}, &echoMCP{readOnly: true, started: make(chan struct{}, 1)}
	exec := &gqlExec{}
	s := &remote.SocketServer{
		Path:    shortDir(t) + "/devgraph.sock",
		RPC:     http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "rpc") }),
		GraphQL: exec,
		MCP: func(readOnly bool) (remote.StdioServer, error) {
			if readOnly {
				return ro, nil
			}
			return rw, nil
		},
		ReadOnly: readOnly,
	}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rw, exec
}

// relay runs RelayStdio in the background over pipes.
type relay struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startRelay(ctx context.Context, sock string, readOnly bool) *relay {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &relay{in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := remote.RelayStdio(ctx, sock, readOnly, inR, outW, func() error { return errors.New("gone") })
		outW.Close()
		r.done <- err
	}()
	return r
}

func (r *relay) roundTrip(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.out.ReadString('\n')
	if err != nil {
		t.Fatalf("read the echo of %q: %v", line, err)
	}
	return strings.TrimSuffix(got, "\n")
}

func (r *relay) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the relay did not end")
		return nil
	}
}

// TestRelayStdio: a relayed session reaches the server's MCP (read-only when asked) and
// ends when its input does; nothing outlives the socket server's Close.
func TestRelayStdio(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, _, _ := openSocket(t, false)

	r := startRelay(context.Background(), s.Path, false)
	if got := r.roundTrip(t, "hello"); got != "hello" {
		t.Errorf("echo=%q, want hello", got)
	}
	r.in.Close()
	if err := r.wait(t); err != nil {
		t.Errorf("relay ended with %v, want nil", err)
	}

	ro := startRelay(context.Background(), s.Path, true)
	if got := ro.roundTrip(t, "hello"); got != "ro hello" {
		t.Errorf("read-only echo=%q, want %q", got, "ro hello")
	}
	ro.in.Close()
	if err := ro.wait(t); err != nil {
		t.Errorf("read-only relay ended with %v, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestRelayStdio_ServerGone: closing the socket server ends the relayed session it
// serves (Close waits for it), and the relay returns gone().
func TestRelayStdio_ServerGone(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, _, _ := openSocket(t, false)
	r := startRelay(context.Background(), s.Path, false)
	r.roundTrip(t, "ping")
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a relayed session open")
	}
	if err := r.wait(t); err == nil || err.Error() != "gone" {
		t.Errorf("relay ended with %v, want gone()", err)
	}
	r.in.Close() // the caller's input: its reader ends with it
}

// TestRelayStdio_Cancel: cancelling the relay's context ends it with nil.
func TestRelayStdio_Cancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, _, _ := openSocket(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	r := startRelay(ctx, s.Path, false)
	r.roundTrip(t, "ping")
	cancel()
	if err := r.wait(t); err != nil {
		t.Errorf("cancelled relay ended with %v, want nil", err)
	}
	r.in.Close()
	s.Close()
}

// TestRelayStdio_NoServer: a socket nobody serves is UNAVAILABLE.
func TestRelayStdio_NoServer(t *testing.T) {
	t.Parallel()
	err := remote.RelayStdio(context.Background(), shortDir(t)+"/none.sock", false, strings.NewReader(""), io.Discard, func() error { return nil })
	if graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Errorf("err=%v, want UNAVAILABLE", err)
	}
}

// TestSocketServer_GraphQL: POST /graphql runs with the caller's actor, read-only on a
// read-only server; a malformed body is 400 with a GraphQL error; other methods are 405.
func TestSocketServer_GraphQL(t *testing.T) {
	t.Parallel()
	for _, readOnly := range []bool{false, true} {
		s, _, exec := openSocket(t, readOnly)
		cl := remote.NewClient(s.Path)
		defer cl.Close()
		ctx := graph.WithActor(context.Background(), "mcp:alice")
		resp, err := cl.Post(ctx, "/graphql", "application/json", strings.NewReader(`{"query": "{ stats { identities } }"}`))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 || out["data"] == nil {
			t.Fatalf("read-only %v: %d %v", readOnly, resp.StatusCode, out)
		}
		want := graph.GraphQLReadWrite
		if readOnly {
			want = graph.GraphQLReadOnlyServer
		}
		if len(exec.modes) != 1 || exec.modes[0] != want || exec.actors[0] != "mcp:alice" {
			t.Errorf("read-only %v: modes=%v actors=%v", readOnly, exec.modes, exec.actors)
		}

		resp, err = cl.Post(ctx, "/graphql", "application/json", strings.NewReader(`{"query": `))
		if err != nil {
			t.Fatal(err)
		}
		out = nil
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		errs, _ := out["errors"].([]any)
		if resp.StatusCode != 400 || len(errs) != 1 || !strings.HasPrefix(errs[0].(map[string]any)["message"].(string), "malformed request body: ") {
			t.Errorf("malformed body: %d %v", resp.StatusCode, out)
		}
	}
}
