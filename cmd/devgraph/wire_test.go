package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// Defect 1, the wire half, end to end: `-m` through a running server's socket. A
// two-line message and one of 1,024 bytes reach the changelog as typed (in an HTTP
// header the two-line one failed with a false "server is not answering"); one of 1,025
// bytes and one that is not valid UTF-8 are refused with the same words as when the
// CLI opens the file itself, and write nothing.
func TestProcess_MessageThroughServer(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	r := newTestRig(t)
	db := filepath.Join(t.TempDir(), "wire.db")
	srv := startServe(t, env, append([]string{"--db", db, "--poll", "200ms"}, r.flags()...)...)
	srv.waitLine("socket: ")
	cli := func(a ...string) (string, string, int) { return runBin(t, env, append(a, "--db", db)...) }
	if out, errs, code := cli("identity", "create", "Roland JD-Xi"); code != 0 {
		t.Fatalf("create through the server: exit %d %q %q", code, out, errs)
	}
	// Discovery writes its own events in the background; the callers' are these.
	lastEvent := func(actor string) *graph.Event {
		t.Helper()
		out, errs, code := cli("changelog", "--json", "--limit", "1", "--actor", actor)
		var evs eventList
		if code != 0 || json.Unmarshal([]byte(out), &evs) != nil {
			t.Fatalf("changelog: exit %d %q %q", code, out, errs)
		}
		if len(evs.Items) == 0 {
			return &graph.Event{}
		}
		return evs.Items[0]
	}
	for i, msg := range []string{"moved to the studio\nfor the session on friday", strings.Repeat("ü", graph.MaxMsgLen/2)} {
		tag := []string{"+location:studio", "+location:rack"}[i]
		if out, errs, code := cli("tag", "roland-jd-xi", tag, "-m", msg); code != 0 {
			t.Fatalf("tag with a %d-byte message through the server: exit %d %q %q", len(msg), code, out, errs)
		}
		if ev := lastEvent("cli:*"); ev.Message != msg || ev.Action != graph.ActTagAdd {
			t.Fatalf("event %s message %q, want %q", ev.Action, ev.Message, msg)
		}
	}
	refused := map[string]string{}
	before := lastEvent("cli:*").ID
	for _, msg := range []string{strings.Repeat("x", graph.MaxMsgLen+1), "why\xff"} {
		out, errs, code := cli("tag", "roland-jd-xi", "+role:synth", "-m", msg)
		if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("a %d-byte message through the server: exit %d %q %q, want exit 1 and one line", len(msg), code, out, errs)
		}
		refused[msg] = errs
	}
	if lastEvent("cli:*").ID != before {
		t.Error("a refused message wrote an event")
	}
	// Defect 7 on the real binary's MCP stdio: a raw 0xff in a tool's arguments is refused
	// naming the field, and nothing is written.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	srv.send("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"graph_tag\",\"arguments\":{\"target\":\"roland-jd-xi\",\"add\":[\"role:synth\"],\"why\":\"bad \xff byte\"}," + meta + "}}")
	res := srv.reply(7)
	if r, _ := res["result"].(map[string]any); r == nil || r["isError"] != true || !strings.Contains(mustText(r), "arguments.why is not valid UTF-8") {
		t.Errorf("MCP stdio with 0xff in why: %v", res)
	}
	if ev := lastEvent("mcp:*"); ev.ID != "" {
		t.Errorf("a refused MCP call wrote an event: %+v", ev)
	}
	// The same commands with the CLI opening the file.
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.log())
	}
	for msg, viaServer := range refused {
		_, errs, code := cli("tag", "roland-jd-xi", "+role:synth", "-m", msg)
		if code != 1 || errs != viaServer {
			t.Errorf("a %d-byte message: opening the file exit %d %q, through the server %q", len(msg), code, errs, viaServer)
		}
	}
}

// mustText is the text of a tool result's first content item.
func mustText(r map[string]any) string {
	c, _ := r["content"].([]any)
	if len(c) == 0 {
		return ""
	}
	m, _ := c[0].(map[string]any)
	s, _ := m["text"].(string)
	return s
}
