package mcptools

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestServeStdio_OversizeMessage: a message over the stdio line cap (16 MiB) was cut to
// its first 16 MiB and answered "Parse error: each line must be one JSON-RPC message",
// though it was one; it is refused as too large, as over HTTP, and the session goes on.
// The refusal carries the request's id when the id comes before the part cut short (a
// client waiting for that id would otherwise wait until its own timeout), else null.
func TestServeStdio_OversizeMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := startRaw(t, e.srv)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_note","arguments":{"action":"add","target":"jdxi","body":"` + strings.Repeat("x", maxStdioLine) + `"},` + modernMeta + `}}`)
	refused := func(wantID any) {
		t.Helper()
		m := r.next(20*time.Second, "an oversize message")
		msg, _ := path(m, "error", "message").(string)
		if path(m, "error", "code") != -32600.0 || !strings.Contains(msg, "too large") || m["id"] != wantID {
			t.Fatalf("oversize message: %v, want a -32600 \"too large\" error with id %v", m, wantID)
		}
	}
	refused(1.0)
	r.send(`{"jsonrpc":"2.0","method":"tools/call","id":"big","params":{"name":"graph_note","arguments":{"body":"` + strings.Repeat("y", maxStdioLine) + `"}}}`)
	refused("big")
	r.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"graph_note","arguments":{"body":"` + strings.Repeat("z", maxStdioLine) + `"}},"id":3}`)
	refused(nil)
	r.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + modernMeta + `}}`)
	if tools, _ := path(r.reply(9), "result", "tools").([]any); len(tools) != len(graphTools) {
		t.Fatalf("after an oversize message: %d tools", len(tools))
	}
}

// TestServeStdio_HeldBytesBound: a client that sends large requests and reads no answers
// has at most maxInFlightBytes of request lines held (here 4 MiB, by testInFlightBytes);
// beyond it the server reads no more until answers are written. It read on up to the
// bound on requests in flight (1,024: 16 GiB of 16 MiB lines). Once the client reads
// again, every request is read and answered.
func TestServeStdio_HeldBytesBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.srv.testInFlightBytes = 4 << 20
	cr, cw := io.Pipe()
	t.Cleanup(func() { cw.Close() })
	out := &gateWriter{entered: make(chan struct{}), open: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(context.Background(), cr, out) }()
	const lines, size = 20, 3 << 19 // 1.5 MiB: one whole MiB held each
	var sent atomic.Int32
	sendPings(cw, lines, size, &sent)
	<-out.entered // the first answer is being written, and blocks
	// Four held (4 MiB), one waiting for room, one read behind it: the client's writes
	// stop there. Give it time to go further if it could.
	waitFor(t, func() bool { return sent.Load() >= 4 }, "the first requests to be read")
	time.Sleep(300 * time.Millisecond)
	if n := sent.Load(); n > 7 {
		t.Fatalf("%d requests of 1.5 MiB read with no answer written; want the reading to pause at 4 MiB held", n)
	}
	close(out.open)
	sessionEnds(t, done, stdioGrace+10*time.Second, "ServeStdio did not end after its input")
	out.mu.Lock()
	defer out.mu.Unlock()
	for i := 1; i <= lines; i++ {
		if !strings.Contains(out.buf.String(), fmt.Sprintf(`"id":%d,"result"`, i)) {
			t.Fatalf("no answer to request %d of %d:\n%.2000s", i, lines, out.buf.String())
		}
	}
}

// sendPings writes n pings padded to size bytes into w on a goroutine, counting each in
// sent (when not nil), and closes w after the last; the channel is closed when it stops
// (a write failed, or all were written).
func sendPings(w *io.PipeWriter, n, size int, sent *atomic.Int32) <-chan struct{} {
	written := make(chan struct{})
	go func() {
		defer close(written)
		pad := strings.Repeat("x", size)
		for i := 0; i < n; i++ {
			if _, err := io.WriteString(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":%q}}`+"\n", i+1, pad)); err != nil {
				return
			}
			if sent != nil {
				sent.Add(1)
			}
		}
		w.Close()
	}()
	return written
}

// gateWriter is a client that reads no answers until open is closed, then reads them all.
type gateWriter struct {
	entered chan struct{} // a write has begun
	once    sync.Once
	open    chan struct{}
	mu      sync.Mutex
	buf     strings.Builder
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// TestServeStdio_OversizeIDCutShort: the refusal of an oversize request names its id only
// when the kept head holds the whole id. An id of 123456 cut after "123" was answered as
// id 123, another request's perhaps; a second id member (the last one counts) makes it
// null too.
func TestServeStdio_OversizeIDCutShort(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := startRaw(t, e.srv)
	big := `,"params":{"name":"graph_note","arguments":{"body":"` + strings.Repeat("x", maxStdioLine) + `"}}}`
	pre, mid := `{"jsonrpc":"2.0","method":"tools/call","pad":"`, `","id":`
	pad := strings.Repeat("p", oversizeHead-len(pre)-len(mid)-3) // the head ends after "123"
	for _, line := range []string{
		pre + pad + mid + `123456` + big,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","id":6` + big,
	} {
		r.send(line)
		if m := r.next(20*time.Second, "an oversize message"); path(m, "error", "code") != -32600.0 || m["id"] != nil {
			t.Fatalf("oversize refusal %v; want -32600 with id null (%.80s…)", m, line)
		}
	}
}

// TestServeStdio_HeldBytesBoundSignal: a client that fills the held-bytes bound, reads no
// answers and closes its input leaves the loop waiting for room (the end of its input is
// behind the lines not read), as it does at the bound on requests in flight; a signal
// (here the context) ends the session within the drain bound.
func TestServeStdio_HeldBytesBoundSignal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	e.srv.testInFlightBytes = 4 << 20
	cr, cw := io.Pipe()
	out := &gateWriter{entered: make(chan struct{}), open: make(chan struct{})}
	t.Cleanup(func() { close(out.open) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(ctx, cr, out) }()
	written := sendPings(cw, 6, 3<<19, nil)
	t.Cleanup(func() { cr.Close(); <-written }) // a write the session left unread fails
	<-out.entered
	cancel()
	sessionEnds(t, done, stdioDrain+10*time.Second, "ServeStdio did not return after its context ended, with the held-bytes bound full")
}
