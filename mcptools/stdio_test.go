package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
)

// rawStdio is a hand-written client over ServeStdio's pipes: every line the server
// writes must be one JSON-RPC message.
type rawStdio struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
}

func startRaw(t *testing.T, srv *Server) *rawStdio {
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	r := &rawStdio{t: t, in: cw, lines: make(chan map[string]any, 1000), done: make(chan error, 1)}
	go func() { r.done <- srv.ServeStdio(context.Background(), cr, sw); sw.Close() }()
	go func() {
		sc := bufio.NewScanner(sr)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Errorf("stdout line is not JSON-RPC: %q", sc.Text())
				continue
			}
			r.lines <- m
		}
		close(r.lines)
	}()
	t.Cleanup(func() { cw.Close(); sr.Close() })
	return r
}

func (r *rawStdio) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// next waits, up to within, for the next line the server writes; what names it in the
// failure.
func (r *rawStdio) next(within time.Duration, what string) map[string]any {
	r.t.Helper()
	select {
	case m := <-r.lines:
		return m
	case <-time.After(within):
		r.t.Fatalf("no answer: %s", what)
		return nil
	}
}

// reply waits for the response to id.
func (r *rawStdio) reply(id float64) map[string]any {
	r.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("stdout closed before the reply to %v", id)
			}
			if m["id"] == id {
				return m
			}
		case <-timeout:
			r.t.Fatalf("no reply to %v", id)
		}
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestServeStdio_Raw(t *testing.T) {
	t.Parallel()
	t.Run("ModernWithoutClientInfoIsUnknown", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		r := startRaw(t, e.srv)
		r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_identity","arguments":{"action":"create","name":"Anon Synth"},` + modernMeta + `}}`)
		if res := r.reply(1); path(res, "result", "isError") == true || res["error"] != nil {
			t.Fatalf("create: %v", res)
		}
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_changelog","arguments":{"target":"anon-synth"},` + modernMeta + `}}`)
		res := r.reply(2)
		if got := path(res, "result", "structuredContent", "events", 0, "actor"); got != "mcp:unknown" {
			t.Fatalf("actor %v, want mcp:unknown (%v)", got, res)
		}
		// With clientInfo in _meta the same era names the client.
		named := strings.Replace(modernMeta, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"Raw Agent","version":"0"},`, 1)
		r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"graph_tag","arguments":{"target":"anon-synth","add":["role:synth"]},` + named + `}}`)
		r.reply(3)
		r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"graph_changelog","arguments":{"action":"tag.*"},` + modernMeta + `}}`)
		if got := path(r.reply(4), "result", "structuredContent", "events", 0, "actor"); got != "mcp:Raw-Agent" {
			t.Fatalf("actor %v, want mcp:Raw-Agent", got)
		}
	})
	t.Run("LegacyWithoutNameIsUnknown", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		r := startRaw(t, e.srv)
		r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"","version":""}}}`)
		if res := r.reply(1); path(res, "result", "protocolVersion") != "2025-11-25" {
			t.Fatalf("initialize: %v", res)
		}
		r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_identity","arguments":{"action":"create","name":"Nameless"}}}`)
		r.reply(2)
		r.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"graph_changelog","arguments":{"target":"nameless"}}}`)
		if got := path(r.reply(3), "result", "structuredContent", "events", 0, "actor"); got != "mcp:unknown" {
			t.Fatalf("actor %v, want mcp:unknown", got)
		}
	})
	t.Run("GarbageThenServing", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		r := startRaw(t, e.srv)
		r.send(`this is not json`)
		if m := r.next(5*time.Second, "a parse error"); path(m, "error", "code") != -32700.0 {
			t.Fatalf("garbage: %v", m)
		}
		// JSON that is no JSON-RPC message: Invalid Request (JSON-RPC 2.0, section 5.1).
		for _, line := range []string{`[1,2]`, `123`, `"x"`, `{}`, `null`} {
			r.send(line)
			if m := r.next(5*time.Second, line); path(m, "error", "code") != -32600.0 || m["id"] != nil {
				t.Fatalf("%s: %v, want -32600 with id null", line, m)
			}
		}
		r.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + modernMeta + `}}`)
		if tools, _ := path(r.reply(9), "result", "tools").([]any); len(tools) != len(graphTools) {
			t.Fatalf("tools/list after garbage: %d tools", len(tools))
		}
	})
	t.Run("EOFEndsPromptlyMidNavigation", func(t *testing.T) {
		t.Parallel()
		re, r := pausedArmedScout(t) // the navigation below cannot finish on its own
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"robot_navigate","arguments":{"robot":"robot:scout","x":0,"y":5},` + modernMeta + `}}`)
		waitFor(t, func() bool { return re.state("robot:scout").State == "navigating" }, "navigating")
		start := time.Now()
		r.in.Close()
		select {
		case err := <-r.done:
			if err != nil {
				t.Fatalf("ServeStdio: %v", err)
			}
		case <-time.After(stdioDrain + 2*time.Second):
			t.Fatal("ServeStdio did not return after EOF")
		}
		t.Logf("returned %v after EOF", time.Since(start))
		if st := re.state("robot:scout"); st.State == "navigating" {
			t.Fatalf("robot still navigating after the session ended: %+v", st)
		}
	})
	t.Run("CancelRightBehindItsRequest", func(t *testing.T) {
		t.Parallel()
		// notifications/cancelled in the same write as its request, read before the
		// request's worker has reached mcp-go: the navigation still ends, cancelled.
		re, r := pausedArmedScout(t) // the navigation below cannot finish on its own
		for id := 2; id < 5; id++ {
			r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"robot_navigate","arguments":{"robot":"robot:scout","x":0,"y":5},`+modernMeta+`}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"changed my mind",`+modernMeta+`}}`, id, id))
			res := r.reply(float64(id)) // no answer: the cancel was lost (the robot is paused)
			if st := re.state("robot:scout"); st.State == "navigating" {
				t.Fatalf("request %d answered %v, robot still navigating", id, res)
			}
		}
	})
	t.Run("ContextCancelEnds", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		ctx, cancel := context.WithCancel(context.Background())
		cr, _ := io.Pipe() // never written, never closed: only the context can end it
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(ctx, cr, io.Discard) }()
		cancel()
		sessionEnds(t, done, 5*time.Second, "ServeStdio did not return on cancel")
	})
}

// A client that sends initialize, notifications/initialized and a write back to back
// (one write on the pipe) gets its change recorded under its own name every time, even
// when initialize is slow.
func TestServeStdio_BackToBackInitializeNamesTheActor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.srv.testInitDelay = 20 * time.Millisecond
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := e.svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Racer"}); err != nil {
		t.Fatal(err)
	}
	const n = 25
	for i := range n {
		cr, cw := io.Pipe()
		sr, sw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(context.Background(), cr, sw); sw.Close() }()
		go func() {
			io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"quick-client","version":"1"}}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
				fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_note","arguments":{"target":"identity:racer","body":"note %d"}}}`, i)+"\n")
		}()
		sc := bufio.NewScanner(sr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["id"] == 2.0 {
				if path(m, "result", "isError") == true || m["error"] != nil {
					t.Fatalf("graph_note: %v", m)
				}
				break
			}
		}
		cw.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		sr.Close()
	}
	evs, _, err := e.svc.FindEvents(ctx, graph.EventFilter{Action: graph.ActNoteAdd, First: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n {
		t.Fatalf("%d note.add events, want %d", len(evs), n)
	}
	for _, ev := range evs {
		if ev.Actor != "mcp:quick-client" {
			t.Errorf("note.add %s recorded by %q, want mcp:quick-client", ev.Target, ev.Actor)
		}
	}
}

// `printf '<initialize>\n<initialized>\n<tools/call>\n' | devgraph serve`: the input ends
// right behind the call, which still lands and is answered before ServeStdio returns.
func TestServeStdio_EOFLetsCallsFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := e.svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Piped"}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"piped","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_tag","arguments":{"target":"identity:piped","add":["project:p%d"]}}}`, i) + "\n")
		var out strings.Builder
		if err := e.srv.ServeStdio(context.Background(), in, &syncWriter{w: &out}); err != nil {
			t.Fatal(err)
		}
		var answered bool
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["id"] == 2.0 {
				answered = true
				if path(m, "result", "isError") == true || m["error"] != nil {
					t.Fatalf("graph_tag: %v", m)
				}
			}
		}
		if !answered {
			t.Fatalf("run %d: no answer to the call before ServeStdio returned:\n%s", i, out.String())
		}
		id, err := e.svc.FindIdentityByID(ctx, "identity:piped", graph.IdentityParts{})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("project:p%d", i); !slicesContains(id.Tags, want) {
			t.Fatalf("run %d: tags %v lack %s: the call was cancelled at EOF", i, id.Tags, want)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// foundWatch is ServeStdio's stdout in TestServeStdio_FoundAfterTheAnswer: as each line
// is written it notes whether the finder's first find had counted as answered yet.
type foundWatch struct {
	io.Writer
	found        <-chan struct{}
	mu           sync.Mutex
	foundAtWrite []bool
}

func (w *foundWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	select {
	case <-w.found:
		w.foundAtWrite = append(w.foundAtWrite, true)
	default:
		w.foundAtWrite = append(w.foundAtWrite, false)
	}
	w.mu.Unlock()
	return w.Writer.Write(p)
}

// TestServeStdio_FoundAfterTheAnswer: a server warms the rest of its index once its
// first find has been answered (search.Finder.Found); over stdio that is once the
// find's answer has been written, so the warming competes with neither.
func TestServeStdio_FoundAfterTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	finder := e.srv.opts.Finder.(*search.Finder)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	out := &foundWatch{Writer: sw, found: finder.Found()}
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(context.Background(), cr, out); sw.Close() }()
	t.Cleanup(func() { cw.Close(); sr.Close(); <-done })
	go io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_find","arguments":{"text":"jd"}}}`+"\n")
	line, err := bufio.NewReader(sr).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("the find's answer: %q, %v", line, err)
	}
	select {
	case <-finder.Found():
	case <-time.After(10 * time.Second):
		t.Fatal("Found still open after the first find was answered")
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if len(out.foundAtWrite) != 1 || out.foundAtWrite[0] {
		t.Fatalf("Found closed when the answer was written: %v, want closed only after it", out.foundAtWrite)
	}
}

// pausedArmedScout is a stdio session (2026-07-28 era) on a robot fleet whose simulation
// stands still, so that no navigation ends by itself, with robot:scout armed by request 1.
func pausedArmedScout(t *testing.T) (*robotEnv, *rawStdio) {
	t.Helper()
	re := newRobotEnv(t, 0)
	re.paused.Store(true)
	r := startRaw(t, re.srv)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"robot_arm","arguments":{"robot":"robot:scout"},` + modernMeta + `}}`)
	r.reply(1)
	return re, r
}

// blockedWriter is a client that stopped reading its input: every write blocks until
// the test ends.
type blockedWriter struct {
	entered chan struct{} // a write has begun
	once    sync.Once
	unblock chan struct{}
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.unblock
	return len(p), nil
}

// brokenWriter is a client that closed its input: every write fails with EPIPE.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestServeStdio_ClientStopsReading: a client that no longer reads the answers cannot
// keep the session from ending. When it stops reading, the answers the loop makes
// itself (here to lines that are not JSON) no longer hold the loop, so the session ends
// when asked (a signal, here the context), within the drain bound; when it closes its
// end (EPIPE), the session ends by itself.
func TestServeStdio_ClientStopsReading(t *testing.T) {
	t.Parallel()
	t.Run("Blocked", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		cr, cw := io.Pipe()
		t.Cleanup(func() { cw.Close() })
		out := &blockedWriter{entered: make(chan struct{}), unblock: make(chan struct{})}
		t.Cleanup(func() { close(out.unblock) })
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(ctx, cr, out) }()
		go func() {
			for i := 0; i < 3; i++ {
				if _, err := io.WriteString(cw, "not json\n"); err != nil {
					return // the session has ended
				}
			}
		}()
		<-out.entered // an answer is being written, and blocks
		cancel()
		sessionEnds(t, done, stdioDrain+10*time.Second, "ServeStdio did not return after its context ended, with the output blocked")
	})
	t.Run("Closed", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, envOpts{})
		cr, cw := io.Pipe()
		t.Cleanup(func() { cw.Close() })
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(context.Background(), cr, brokenWriter{}) }()
		if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`+"\n"); err != nil {
			t.Fatal(err)
		}
		sessionEnds(t, done, stdioDrain+10*time.Second, "ServeStdio did not end when its output's reader was gone (EPIPE), the input still open")
	})
}

// sessionEnds waits for ServeStdio's result on done: it fails the test if ServeStdio
// returned an error, or (with the message) if it has not returned within the bound.
func sessionEnds(t *testing.T, done <-chan error, within time.Duration, format string, args ...any) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(within):
		t.Fatalf(format, args...)
	}
}
