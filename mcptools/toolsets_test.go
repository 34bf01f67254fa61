package mcptools

import (
	"context"
	"slices"
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
			cn.waitNote("notifications/tools/list_changed", nil, 5*time.Second)
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
