package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// `printf '<init>\n<initialized>\n<tools/call graph_tag>\n' | devgraph serve`: stdin ends
// right behind the call; the tag still lands and its answer is printed before exit.
func TestProcess_PipedCallSurvivesEOF(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "piped.db")
	binOK(t, env, "identity", "create", "Piped Synth", "--db", db)
	input := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_tag","arguments":{"target":"piped-synth","add":["role:synth"]}}}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--db", db, "--poll", "0")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
	answered := false
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q is not JSON", line)
		}
		if m["id"] == 2.0 {
			answered = true
			if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
				t.Errorf("graph_tag answer: %v", m)
			}
		}
	}
	if !answered {
		t.Fatalf("serve printed no answer to the call:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	id := storedIdentity(t, db, "piped-synth")
	if !contains(id.Tags, "role:synth") {
		t.Errorf("tags %v: the piped call did not land", id.Tags)
	}
}

// storedIdentity reads identity id straight from the database file db, once the server
// that wrote it has gone.
func storedIdentity(t *testing.T, db, id string) *graph.Identity {
	t.Helper()
	st, err := store.Open(db, store.Options{Host: testHost, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ident, err := st.FindIdentityByID(context.Background(), id, graph.IdentityParts{})
	if err != nil {
		t.Fatal(err)
	}
	return ident
}
