package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runScenario runs one scenario of mcp-issue13.mjs against a fresh database and decodes
// what the client reports.
func runScenario(t *testing.T, scenario string, flags ...string) map[string]any {
	t.Helper()
	return runScenarioEnv(t, scenario, nil, flags...)
}

// runScenarioEnv is runScenario with env added to the client's environment.
func runScenarioEnv(t *testing.T, scenario string, env []string, flags ...string) map[string]any {
	t.Helper()
	node := nodeAndSDK(t)
	bin := devgraphBinary(t)
	db := filepath.Join(t.TempDir(), scenario+".db")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"mcp-issue13.mjs", scenario, bin, db}, flags...)...)
	cmd.Dir = filepath.Join(repoRoot(t), "e2e")
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node mcp-issue13.mjs %s: %v\nstdout: %s\nstderr: %s", scenario, err, stdout.String(), tail(stderr.String(), 4000))
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	return out
}

func stringList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestMCP_TypeScriptSDK_Protocol: through the official SDK over stdio, an unknown node or
// robot is resource-not-found (-32002) naming it, the parameters resource reads, and
// completion/complete offers ids and prompt values by prefix.
func TestMCP_TypeScriptSDK_Protocol(t *testing.T) {
	t.Parallel()
	out := runScenario(t, "protocol", "--demo")
	for _, k := range []string{"unknownNode", "unknownRobot"} {
		e := out[k].(map[string]any)
		if e["code"] != float64(-32002) {
			t.Errorf("%s: %v, want code -32002", k, e)
		}
	}
	if msg := out["unknownNode"].(map[string]any)["message"].(string); !strings.Contains(msg, "nobody") {
		t.Errorf("unknown node message %q does not name it", msg)
	}
	p := out["parameters"].(map[string]any)
	if p["robot"] != "robot:scout" || p["parameters"].(map[string]any)["arrival_threshold"] != 0.15 {
		t.Errorf("parameters resource: %v", p)
	}
	for k, want := range map[string]string{"completeNode": "usb:3-3.2", "completeRobot": "robot:scout", "completeSince": "24h", "completeBindRef": "usb:3-3.2"} {
		if got := stringList(out[k]); !slices.Contains(got, want) {
			t.Errorf("%s offered %v, want %s among them", k, got, want)
		}
	}
}

// TestMCP_TypeScriptSDK_ReadOnly: under --read-only the official SDK is offered
// robot_stop (stopping is always allowed) and the reading tools, no write, and the stop
// works.
func TestMCP_TypeScriptSDK_ReadOnly(t *testing.T) {
	t.Parallel()
	out := runScenario(t, "readonly", "--demo", "--read-only")
	tools := stringList(out["tools"])
	if !slices.Contains(tools, "robot_stop") || !slices.Contains(tools, "graph_find") || slices.Contains(tools, "graph_bind") || slices.Contains(tools, "robot_navigate") {
		t.Errorf("read-only tools: %v", tools)
	}
	if st, _ := out["stop"].(map[string]any); st == nil || st["robot"].(map[string]any)["armed"] != false {
		t.Errorf("robot_stop on a read-only server: %v", out["stop"])
	}
}

// TestMCP_TypeScriptSDK_Toolsets: serve --tools offers exactly the toolsets named;
// by default the robot tools come with a robot and stay away without one.
func TestMCP_TypeScriptSDK_Toolsets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags       []string
		has, hasNot []string
	}{
		{[]string{"--demo", "--tools", "graph"}, []string{"graph_find", "graph_browse"}, []string{"graph_bind", "robot_status"}},
		{[]string{"--demo", "--tools", "edit,robots"}, []string{"graph_bind", "robot_navigate"}, []string{"graph_find"}},
		{[]string{"--demo"}, []string{"graph_find", "graph_bind", "robot_status"}, nil},
		{[]string{"--poll", "0"}, []string{"graph_find", "graph_bind"}, []string{"robot_status"}},
	} {
		tools := stringList(runScenario(t, "list", tc.flags...)["tools"])
		for _, n := range tc.has {
			if !slices.Contains(tools, n) {
				t.Errorf("%v: tools %v lack %s", tc.flags, tools, n)
			}
		}
		for _, n := range tc.hasNot {
			if slices.Contains(tools, n) {
				t.Errorf("%v: tools %v offer %s", tc.flags, tools, n)
			}
		}
	}
}

// TestMCP_TypeScriptSDK_RobotsAppear: a server with no robot offers no robot tools; when
// robots are stored while a client holds a session (an export holding two robots imported
// through the server's socket), the client hears notifications/tools/list_changed and the
// robot tools are offered.
func TestMCP_TypeScriptSDK_RobotsAppear(t *testing.T) {
	t.Parallel()
	bin := devgraphBinary(t)
	dir := t.TempDir()
	// An export holding the demo's robots: a demo server records them; its export, read
	// through its socket, has them once they are stored.
	src := filepath.Join(dir, "robots.db")
	srv := exec.Command(bin, "serve", "--demo", "--db", src)
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var export []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out, err := exec.Command(bin, "export", "--db", src).Output(); err == nil && bytes.Count(out, []byte(`"type":"robot"`)) == 2 {
			export = out
			break
		}
	}
	stdin.Close()
	if err := srv.Wait(); err != nil {
		t.Fatalf("demo serve: %v", err)
	}
	if export == nil {
		t.Fatal("the demo server's export never held its two robots")
	}
	file := filepath.Join(dir, "robots.jsonl")
	if err := os.WriteFile(file, export, 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "no-hardware")
	out := runScenarioEnv(t, "robots", []string{"IMPORT=" + file}, "--sys-root", empty, "--proc-root", empty, "--pw-dump-file", filepath.Join(empty, "pw.json"))
	before, after := stringList(out["before"]), stringList(out["after"])
	if slices.Contains(before, "robot_status") || !slices.Contains(before, "graph_find") {
		t.Errorf("tools before any robot: %v", before)
	}
	for _, want := range []string{"robot_status", "robot_navigate", "robot_stop", "graph_find"} {
		if !slices.Contains(after, want) {
			t.Errorf("tools after robots were stored lack %s: %v", want, after)
		}
	}
	if out["toolsChanged"] != float64(1) {
		t.Errorf("notifications/tools/list_changed heard %v times, want 1", out["toolsChanged"])
	}
}
