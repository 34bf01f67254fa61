package mcptools

import (
	"strings"
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
		select {
		case m := <-r.lines:
			msg, _ := path(m, "error", "message").(string)
			if path(m, "error", "code") != -32600.0 || !strings.Contains(msg, "too large") || m["id"] != wantID {
				t.Fatalf("oversize message: %v, want a -32600 \"too large\" error with id %v", m, wantID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no answer to an oversize message")
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
