package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/devgraph/devgraph/graph"
	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/fixture"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// env is a real devgraph behind an MCP server: a bbolt file in a temp dir, the demo
// rig read by the real sources, the identity service, the GraphQL executor.
type env struct {
	t    *testing.T
	svc  *identity.Service
	srv  *Server
	rig  string // the demo rig's directory
	live *sources.Live
}

type envOpts struct {
	readOnly bool
	ownRig   bool // the test edits the rig (hot-plug): write a copy of its own
	fleet    graph.Fleet
	robotEvt func(fn func(ref string)) (cancel func())
	extra    int // robot envs: simulated robots besides the demo fleet
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	db := storetest.MustOpen(t, store.Options{NoSync: true}) // no fsync: these tests do not crash the file
	live, dir := demoLive(t, o.ownRig)
	live.ShareWindow = -1 // every snapshot reads the rig afresh: hot-plug tests edit it
	svc := identity.New(db, live, o.fleet)
	svc.PollInterval = 50 * time.Millisecond
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	names := search.NewFinder(db)
	exec, err := newExecutor(svc, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })
	srv, err := New(svc, Options{
		ReadOnly: o.readOnly, Exec: exec, Finder: names, Devices: db, Notifier: svc, RobotEvents: o.robotEvt,
		Version: "test", NotifyInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &env{t: t, svc: svc, srv: srv, rig: dir, live: live}
}

// sharedRig is the demo rig written once for every env that leaves it as it is: writing
// it costs a few hundred file system calls, which dominated these tests' time.
var sharedRig struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain also checks that no goroutine (flush loops, stdio readers, subscriptions,
// HTTP sessions) outlives the tests: each is stopped and waited for by Close.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedRig.dir != "" {
		os.RemoveAll(sharedRig.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines outlived the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// demoLive returns live sources over the demo rig: the shared one, or with own a copy in
// the test's temp dir that the test may edit.
func demoLive(t *testing.T, own bool) (*sources.Live, string) {
	t.Helper()
	if own {
		dir := t.TempDir()
		live, err := sources.NewDemo(dir)
		if err != nil {
			t.Fatal(err)
		}
		return live, dir
	}
	sharedRig.once.Do(func() {
		if sharedRig.dir, sharedRig.err = os.MkdirTemp("", "devgraph-mcptools-rig-"); sharedRig.err == nil {
			sharedRig.err = fixture.DemoRig().Write(sharedRig.dir)
		}
	})
	if sharedRig.err != nil {
		t.Fatalf("demo rig: %v", sharedRig.err)
	}
	return sources.Demo(sharedRig.dir), sharedRig.dir
}

// schemaMu serialises building executors: graphql-go's NewSchema fills in its shared
// introspection types on first use, so two tests building schemas at once race.
var schemaMu sync.Mutex

func newExecutor(svc graph.Service, names graph.Finder) (*query.Executor, error) {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	return query.New(svc, query.Options{Finder: names})
}

// conn is one MCP client connection, recording the notifications it receives.
type conn struct {
	t      *testing.T
	c      *client.Client
	name   string
	modern bool // the 2026-07-28 era
	mu     sync.Mutex
	notes  []mcp.JSONRPCNotification
	notify chan struct{}
	// schemas are the output schemas the server lists, by tool: every structured result
	// a test receives is validated against its tool's (checkOutput).
	schemas map[string]*jsonschema.Schema
}

// transports × eras every behaviour is checked in.
var modes = []struct {
	transport string
	modern    bool
}{
	{"inprocess", false}, {"inprocess", true},
	{"stdio", false}, {"stdio", true},
	{"http", false}, {"http", true},
}

func modeName(transport string, modern bool) string {
	if modern {
		return transport + "/2026-07-28"
	}
	return transport + "/2025-11-25"
}

// dial connects a client named name over transport in the given era.
func (e *env) dial(transportName string, modern bool, name string) *conn {
	t := e.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var opts []client.ClientOption
	if !modern {
		opts = append(opts, legacyProtocolOnly())
	}
	var c *client.Client
	var err error
	switch transportName {
	case "inprocess":
		c, err = client.NewInProcessClientWithOptions(e.srv.MCPServer(), opts...)
	case "stdio":
		cr, cw := io.Pipe() // client → server
		sr, sw := io.Pipe() // server → client
		done := make(chan error, 1)
		go func() { done <- e.srv.ServeStdio(ctx, cr, sw); sw.Close() }()
		t.Cleanup(func() {
			cw.Close()
			sr.Close() // the client is gone: writes fail as on a closed pipe
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("ServeStdio did not return after stdin EOF")
			}
		})
		c = client.NewClient(transport.NewIO(sr, cw, io.NopCloser(strings.NewReader(""))), opts...)
	case "http":
		mux := http.NewServeMux()
		mux.Handle("/mcp", e.srv.HTTPHandler())
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		var topts []transport.StreamableHTTPCOption
		if !modern {
			topts = append(topts, legacyGETStream())
		}
		c, err = client.NewStreamableHttpClient(ts.URL+"/mcp", topts...)
		if err == nil && len(opts) > 0 {
			for _, o := range opts {
				o(c)
			}
		}
	default:
		t.Fatalf("unknown transport %q", transportName)
	}
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	cn := &conn{t: t, c: c, name: name, modern: modern, notify: make(chan struct{}, 1)}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		cn.mu.Lock()
		cn.notes = append(cn.notes, n)
		cn.mu.Unlock()
		select {
		case cn.notify <- struct{}{}:
		default:
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { c.Close(); cancel() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1.0"}
	res, err := c.Initialize(context.Background(), init)
	if err != nil {
		t.Fatalf("initialize (%s): %v", modeName(transportName, modern), err)
	}
	if got := mcp.IsModernProtocol(res.ProtocolVersion); got != modern {
		t.Fatalf("negotiated %s, want modern=%v", res.ProtocolVersion, modern)
	}
	return cn
}

// call calls a tool and fails the test on a protocol error.
func (cn *conn) call(name string, args map[string]any) *mcp.CallToolResult {
	cn.t.Helper()
	res, err := cn.callErr(context.Background(), name, args, nil)
	if err != nil {
		cn.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func (cn *conn) callErr(ctx context.Context, name string, args map[string]any, meta *mcp.Meta) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := cn.c.CallTool(ctx, req)
	if err == nil && res != nil && !res.IsError && res.StructuredContent != nil {
		cn.checkOutput(name, args, res)
	}
	return res, err
}

// checkOutput validates a structured result against the output schema its tool lists
// (santhosh-tekuri/jsonschema, a validator mcp-go does not use): results stay exact.
func (cn *conn) checkOutput(name string, args map[string]any, res *mcp.CallToolResult) {
	cn.mu.Lock()
	sch := cn.schemas[name]
	cn.mu.Unlock()
	if sch == nil {
		list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			cn.t.Errorf("%s: list the tools to check its result: %v", name, err)
			return
		}
		for _, tool := range list.Tools {
			if tool.Name != name {
				continue
			}
			raw, _ := json.Marshal(tool.OutputSchema)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				cn.t.Errorf("%s: output schema: %v", name, err)
				return
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("mem://out.json", doc); err != nil {
				cn.t.Errorf("%s: %v", name, err)
				return
			}
			if sch, err = c.Compile("mem://out.json"); err != nil {
				cn.t.Errorf("%s: output schema does not compile: %v", name, err)
				return
			}
		}
		if sch == nil {
			cn.t.Errorf("%s: no output schema listed", name)
			return
		}
		cn.mu.Lock()
		if cn.schemas == nil {
			cn.schemas = map[string]*jsonschema.Schema{}
		}
		cn.schemas[name] = sch
		cn.mu.Unlock()
	}
	raw, _ := json.Marshal(res.StructuredContent)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		cn.t.Errorf("%s: %v", name, err)
		return
	}
	if err := sch.Validate(inst); err != nil {
		cn.t.Errorf("%s(%v): result breaks its output schema: %v\n%s", name, args, err, raw)
	}
}

// ok calls a tool that must succeed and returns its structured result.
func (cn *conn) ok(name string, args map[string]any) map[string]any {
	cn.t.Helper()
	res := cn.call(name, args)
	if res.IsError {
		cn.t.Fatalf("%s(%v): isError: %s", name, args, text(res))
	}
	return structured(cn.t, res)
}

// fails calls a tool that must give an isError result and returns its text.
func (cn *conn) fails(name string, args map[string]any) string {
	cn.t.Helper()
	res := cn.call(name, args)
	if !res.IsError {
		cn.t.Fatalf("%s(%v): want isError, got %s", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// waitNote waits for a notification with method for which match is true, among all
// the connection has received.
func (cn *conn) waitNote(method string, match func(mcp.JSONRPCNotification) bool, within time.Duration) mcp.JSONRPCNotification {
	cn.t.Helper()
	return cn.waitNoteFrom(0, method, match, within)
}

// mark is how many notifications the connection has received so far: waitNoteFrom(mark,
// …) waits only for those that arrive after it.
func (cn *conn) mark() int {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return len(cn.notes)
}

// waitNoteFrom is waitNote among the notifications received after the first seen ones.
func (cn *conn) waitNoteFrom(seen int, method string, match func(mcp.JSONRPCNotification) bool, within time.Duration) mcp.JSONRPCNotification {
	cn.t.Helper()
	deadline := time.After(within)
	for {
		cn.mu.Lock()
		notes := append([]mcp.JSONRPCNotification(nil), cn.notes[seen:]...)
		cn.mu.Unlock()
		for _, n := range notes {
			seen++
			if n.Method == method && (match == nil || match(n)) {
				return n
			}
		}
		select {
		case <-cn.notify:
		case <-deadline:
			cn.t.Fatalf("no %s notification within %v", method, within)
		}
	}
}

// notesOf returns the notifications received so far with method.
func (cn *conn) notesOf(method string) []mcp.JSONRPCNotification {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range cn.notes {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func path(m map[string]any, keys ...any) any {
	var v any = m
	for _, k := range keys {
		switch kk := k.(type) {
		case string:
			mm, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = mm[kk]
		case int:
			l, ok := v.([]any)
			if !ok || kk >= len(l) {
				return nil
			}
			v = l[kk]
		}
	}
	return v
}

func str(v any) string { s, _ := v.(string); return s }
