package mcptools

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestServeStdio_ProgressBeforeTheAnswer: the progress notifications a call sends while
// it runs reach the client before the call's answer (the MCP spec ends progress with
// the answer; the TypeScript SDK reports a late one as an error for an unknown token).
// The tool here sends its progress and returns at once, so that nothing but the
// server's own ordering keeps them ahead of the answer.
func TestServeStdio_ProgressBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const steps = 5
	e.srv.mcp.AddTool(mcp.NewTool("test_progress"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := 1; i <= steps; i++ {
			if err := e.srv.mcp.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps}); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText("done"), nil
	})
	r := startRaw(t, e.srv)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"progress","version":"1"}}}`)
	r.reply(1)
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for call := 2; call < 202; call++ {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_progress","arguments":{},"_meta":{"progressToken":"p%d"}}}`, call, call))
		seen := 0
		for m := range r.lines {
			if m["method"] == "notifications/progress" {
				if tok := path(m, "params", "progressToken"); tok != fmt.Sprintf("p%d", call) {
					t.Fatalf("call %d: progress for %v after the answer to its call (%d of %d seen before it)", call, tok, seen, steps)
				}
				seen++
				continue
			}
			if m["id"] == float64(call) {
				if seen != steps {
					t.Fatalf("call %d answered after %d of its %d progress notifications: %v", call, seen, steps, m)
				}
				break
			}
		}
	}
}

// TestServeStdio_EOFEndsListen: an open subscriptions/listen stream (2026-07-28 era)
// never ends by itself, so the end of the input ends it at once, as it does a
// navigation, instead of the session waiting stdioGrace for it: the stream's closing
// result is written and ServeStdio returns well within the grace.
func TestServeStdio_EOFEndsListen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	in, out := io.Pipe()
	var got syncWriter
	var text strings.Builder
	got.w = &text
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(context.Background(), in, &got) }()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["devgraph://changelog/recent"]},` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_find","arguments":{"text":"x"},` + modernMeta + `}}`,
	} {
		if _, err := io.WriteString(out, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// The find's answer shows the listen stream is open (it was read before the find).
	waitFor(t, func() bool { got.mu.Lock(); defer got.mu.Unlock(); return strings.Contains(text.String(), `"id":2`) }, "the answer to the find")
	out.Close()
	sessionEnds(t, done, stdioGrace-time.Second, "ServeStdio still waiting %v after the end of its input with a listen stream open (grace %v)", stdioGrace-time.Second, stdioGrace)
	got.mu.Lock()
	defer got.mu.Unlock()
	if !strings.Contains(text.String(), `"id":1,"result"`) {
		t.Fatalf("the listen stream was not closed with a result:\n%s", text.String())
	}
}

// TestServeStdio_OddParamsStillCheckTheRest: params of another shape than the loop reads
// are mcp-go's to refuse, but the rest of the message is still checked: a numeric method
// after them was taken for a response and not answered at all.
func TestServeStdio_OddParamsStillCheckTheRest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := startRaw(t, e.srv)
	r.send(`{"jsonrpc":"2.0","id":8,"params":[],"method":5,"result":1}`)
	if m := r.next(10*time.Second, "a message with a numeric method after array params"); path(m, "error", "code") != -32600.0 || m["id"] != nil {
		t.Fatalf("answer %v; want -32600 with id null", m)
	}
}
