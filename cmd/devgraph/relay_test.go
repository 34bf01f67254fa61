package main

import (
	"path/filepath"
	"strings"
	"testing"
)

const relayInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"relay-test","version":"1.0"}}}`

// A `serve --read-only` relaying to a read-write server gets the read-only tool set and
// its write calls are refused; it says which of its flags do not apply.
func TestProcess_ReadOnlyRelay(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "relay.db")
	binOK(t, env, "identity", "create", "Relay Synth", "--db", db)
	srv := startServe(t, env, "--db", db, "--poll", "0", "--sim-robot", "scout@1,1")
	sock := strings.TrimPrefix(srv.waitLine("socket: "), "socket: ")

	relay := startServe(t, env, "--db", db, "--read-only", "--sim-robot", "other@2,2", "--poll", "1s")
	l := relay.waitLine("devgraph: ")
	for _, want := range []string{"relays to the server at " + sock, "(pid ", "--sim-robot", "--poll"} {
		if !strings.Contains(l, want) {
			t.Errorf("relay line %q lacks %q", l, want)
		}
	}
	relay.send(relayInit)
	relay.reply(1)
	relay.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	relay.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	res, _ := relay.reply(2)["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.(map[string]any)["name"].(string)] = true
	}
	for _, ro := range []string{"graph_find", "graph_query", "graph_browse", "robot_status"} {
		if !names[ro] {
			t.Errorf("read-only relay lacks %s: %v", ro, names)
		}
	}
	for _, w := range []string{"graph_tag", "graph_bind", "graph_note", "robot_navigate", "robot_arm"} {
		if names[w] {
			t.Errorf("read-only relay offers the write tool %s", w)
		}
	}
	relay.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"graph_tag","arguments":{"target":"relay-synth","add":["role:synth"]}}}`)
	call := relay.reply(3)
	if r, _ := call["result"].(map[string]any); call["error"] == nil && (r == nil || r["isError"] != true) {
		t.Errorf("graph_tag through a read-only relay was not refused: %v", call)
	}
	relay.stdin.Close()
	if err := relay.wait(); err != nil {
		t.Errorf("relay ended with %v:\n%s", err, relay.log())
	}
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
	id := storedIdentity(t, db, "relay-synth")
	if len(id.Tags) != 0 {
		t.Errorf("a read-only relay tagged: %v", id.Tags)
	}
}

// When the server a session relays to stops, the relay ends at once with a one-line
// reason and a non-zero status.
func TestProcess_RelayEndsWithItsServer(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "gone.db")
	srv := startServe(t, env, "--db", db, "--poll", "0")
	srv.waitLine("socket: ")
	relay := startServe(t, env, "--db", db)
	relay.waitLine("devgraph: ")
	relay.send(relayInit)
	relay.reply(1)

	srv.stdin.Close() // the first server ends
	if err := srv.wait(); err != nil {
		t.Fatalf("serve ended with %v:\n%s", err, srv.log())
	}
	err := relay.wait()
	if err == nil {
		t.Fatalf("the relay exited 0 after its server stopped:\n%s", relay.log())
	}
	if !strings.Contains(relay.log(), "devgraph: the server holding "+db+" (pid ") ||
		!strings.Contains(relay.log(), "stopped; this relayed session ends — restart the MCP client to start a new server") {
		t.Errorf("relay stderr lacks the reason:\n%s", relay.log())
	}
}

// Two MCP clients configured with `serve --http ADDR --stdio` on one database: the second
// cannot have the port the first holds, and still relays its stdio session (HTTP beside a
// relay is a bonus, never a reason to end it).
func TestProcess_RelayWithHTTPPortTaken(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "twoclients.db")
	srv := startServe(t, env, "--db", db, "--poll", "0", "--http", "127.0.0.1:0", "--stdio")
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.waitLine("MCP: http://"), "MCP: http://"), "/mcp")
	relay := startServe(t, env, "--db", db, "--http", addr, "--stdio")
	relay.waitLine("devgraph: ")
	relay.send(relayInit)
	if res, _ := relay.reply(1)["result"].(map[string]any); res == nil {
		t.Fatalf("the relay did not answer initialize:\n%s", relay.log())
	}
	relay.stdin.Close()
	if err := relay.wait(); err != nil {
		t.Errorf("relay ended with %v:\n%s", err, relay.log())
	}
	if !strings.Contains(relay.log(), "not serving HTTP here") {
		t.Errorf("the relay does not say it serves no HTTP:\n%s", relay.log())
	}
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}
