package mcptools

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestToolsets_RobotsAppear: by default a server over a fleet with no robots offers no
// robot tools; when the first robot appears, every session is sent
// notifications/tools/list_changed and the robot tools are listed.
func TestToolsets_RobotsAppear(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, store.Options{NoSync: true})
	fleet, err := robot.NewFleet(robot.Options{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	live, _ := demoLive(t, false)
	live.ShareWindow = -1
	live.Extra = []sources.Source{fleet}
	svc := identity.New(db, live, fleet)
	svc.PollInterval = 20 * time.Millisecond
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	srv, err := New(svc, Options{Finder: search.NewFinder(db), Devices: db, Notifier: svc, Version: "test",
		RobotEvents: func(fn func(ref string)) func() {
			return fleet.Subscribe(func(ref string, _ graph.RobotState) { fn(ref) })
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e := &env{t: t, svc: svc, srv: srv}
	for _, m := range []struct {
		transport string
		modern    bool
	}{{"inprocess", false}, {"stdio", false}, {"http", false}} {
		cn := e.dial(m.transport, m.modern, "watcher-"+m.transport)
		if got := toolNames(t, cn); !slices.Equal(got, graphTools) {
			t.Fatalf("%s: before any robot: %v", m.transport, got)
		}
		defer func() {
			cn.waitNote("notifications/tools/list_changed", nil, 20*time.Second)
			if got, want := toolNames(t, cn), sorted(graphTools, robotTools); !slices.Equal(got, want) {
				t.Errorf("%s: after the robot appeared: %v\nwant %v", cn.name, got, want)
			}
		}()
	}
	if err := fleet.AddSim("scout", 0, 0); err != nil {
		t.Fatal(err)
	}
}

func toolNames(t *testing.T, cn *conn) []string {
	t.Helper()
	list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestToolsets_Choose: Options.Toolsets (serve --tools) offers exactly the sets named.
func TestToolsets_Choose(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	var edit []string
	for _, n := range graphTools {
		if !slices.Contains(graphReadTools, n) {
			edit = append(edit, n)
		}
	}
	for _, tc := range []struct {
		sets     []string
		readOnly bool
		want     []string
	}{
		{[]string{"graph"}, false, graphReadTools},
		{[]string{"edit"}, false, edit},
		{[]string{"graph", "robots"}, false, sorted(graphReadTools, robotTools)},
		{[]string{"robots"}, true, robotReadTools},
		{[]string{"graph", "edit", "robots"}, true, sorted(graphReadTools, robotReadTools)},
	} {
		srv, err := New(e.svc, Options{Toolsets: tc.sets, ReadOnly: tc.readOnly, Finder: search.NewFinder(nil), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.ToolNames(); !slices.Equal(got, tc.want) {
			t.Errorf("toolsets %v (read-only %v): %v\nwant %v", tc.sets, tc.readOnly, got, tc.want)
		}
		srv.Close()
	}
	for _, bad := range [][]string{{}, {"graph", "robot"}} {
		if _, err := New(e.svc, Options{Toolsets: bad, Finder: search.NewFinder(nil)}); err == nil {
			t.Errorf("toolsets %q accepted", bad)
		}
	}
	if got, err := ParseToolsets(" Graph, robots ,graph"); err != nil || !slices.Equal(got, []string{"graph", "robots"}) {
		t.Errorf("ParseToolsets: %v %v", got, err)
	}
	if _, err := ParseToolsets("graph,tools"); err == nil {
		t.Error("ParseToolsets accepted an unknown toolset")
	}
}

// writeState is a graph.WriteState a test turns read-only and back.
type writeState struct {
	mu   sync.Mutex
	why  string
	subs []func()
}

func (w *writeState) ReadOnly() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

func (w *writeState) OnReadOnly(fn func()) func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs = append(w.subs, fn)
	return func() {}
}

func (w *writeState) set(why string) {
	w.mu.Lock()
	w.why = why
	subs := slices.Clone(w.subs)
	w.mu.Unlock()
	for _, fn := range subs {
		go fn()
	}
}

// TestToolsets_WritableChanges: while Options.Writable says the graph takes no writes (a
// fleet's front end mid-upgrade), the tools are --read-only's (robot_stop stays); when it
// takes writes again every session is sent notifications/tools/list_changed and the
// writing tools are listed, and again when it turns read-only.
func TestToolsets_WritableChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	ws := &writeState{why: "this front end is read-only: the cluster's graph is at schema version 3 …"}
	srv, err := New(e.svc, Options{Toolsets: []string{"graph", "edit", "robots"}, Writable: ws, Finder: search.NewFinder(nil), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e.srv = srv
	readOnly, all := sorted(graphReadTools, robotReadTools), sorted(graphTools, robotTools)
	if !slices.Contains(readOnly, "robot_stop") {
		t.Fatalf("robot_stop is not among the read-only tools %v", readOnly)
	}
	var conns []*conn
	for _, tr := range []string{"inprocess", "stdio"} {
		cn := e.dial(tr, false, "agent-"+tr)
		if got := toolNames(t, cn); !slices.Equal(got, readOnly) {
			t.Fatalf("%s while read-only: %v\nwant %v", tr, got, readOnly)
		}
		conns = append(conns, cn)
	}
	for _, step := range []struct {
		why  string
		want []string
	}{{"", all}, {"this front end is read-only: a migration … is under way", readOnly}, {"", all}} {
		marks := make([]int, len(conns))
		for i, cn := range conns {
			marks[i] = cn.mark()
		}
		ws.set(step.why)
		for i, cn := range conns {
			cn.waitNoteFrom(marks[i], "notifications/tools/list_changed", nil, 20*time.Second)
			if got := toolNames(t, cn); !slices.Equal(got, step.want) {
				t.Errorf("%s after ReadOnly became %q: %v\nwant %v", cn.name, step.why, got, step.want)
			}
		}
	}
}
