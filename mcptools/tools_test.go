package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden tools/list files in testdata/tools")

// The tool sets, so a tool cannot silently appear or vanish.
var (
	graphTools = []string{
		"graph_bind", "graph_browse", "graph_changelog", "graph_find", "graph_identity", "graph_note", "graph_query",
		"graph_relate", "graph_suggest_tags", "graph_tag", "graph_trace", "graph_unbind", "graph_unbound",
	}
	graphReadTools = []string{
		"graph_browse", "graph_changelog", "graph_find", "graph_query", "graph_suggest_tags", "graph_trace", "graph_unbound",
	}
	robotTools = []string{
		"robot_arm", "robot_detect", "robot_disarm", "robot_grasp", "robot_navigate", "robot_parameters",
		"robot_release", "robot_status", "robot_stop",
	}
	// robot_stop stays on a read-only server: stopping is always allowed.
	robotReadTools = []string{"robot_detect", "robot_parameters", "robot_status", "robot_stop"}
	// Tools that move a robot: destructive and open-world.
	robotMoves = []string{"robot_grasp", "robot_navigate", "robot_release"}
)

func sorted(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return out
}

// TestServer_Registration lists the tools of {default, read-only} × {robots, none} and
// compares each tools/list, as a client sees it, with its golden file
// (testdata/tools/*.json; go test -run Registration -update rewrites them).
func TestServer_Registration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		readOnly bool
		robots   bool
		want     []string
	}{
		{"default-none", false, false, graphTools},
		{"default-robots", false, true, sorted(graphTools, robotTools)},
		{"read-only-none", true, false, graphReadTools},
		{"read-only-robots", true, true, sorted(graphReadTools, robotReadTools)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e *env
			if tc.robots {
				e = newRobotEnvOpts(t, envOpts{readOnly: tc.readOnly}).env
			} else {
				e = newEnv(t, envOpts{readOnly: tc.readOnly})
			}
			if got := e.srv.ToolNames(); !slices.Equal(got, tc.want) {
				t.Fatalf("tools=%v\nwant %v", got, tc.want)
			}
			cn := e.dial("inprocess", false, "registration")
			list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != len(tc.want) {
				t.Fatalf("listed %d tools, want %d", len(list.Tools), len(tc.want))
			}
			checkAnnotations(t, list.Tools, tc.readOnly)
			golden(t, filepath.Join("testdata", "tools", tc.name+".json"), list.Tools)
			if tc.readOnly {
				// A write tool is not there to call.
				if _, err := cn.callErr(context.Background(), "graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "x"}, nil); err == nil {
					t.Error("read-only server ran graph_bind")
				}
			}
			if tc.readOnly && tc.robots {
				if msg := cn.fails("robot_parameters", map[string]any{"robot": "robot:scout", "max_speed": 0.5}); !strings.Contains(msg, "max_speed") {
					t.Errorf("read-only robot_parameters set: %q", msg)
				}
				st := cn.ok("robot_stop", map[string]any{"robot": "robot:scout"})
				if path(st, "robot", "armed") != false {
					t.Errorf("read-only robot_stop: %v", st)
				}
			}
		})
	}
}

// checkAnnotations holds every tool's four hints to what it does.
func checkAnnotations(t *testing.T, tools []mcp.Tool, readOnly bool) {
	t.Helper()
	for _, tool := range tools {
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: not all four annotations set: %+v", tool.Name, a)
			continue
		}
		reads := slices.Contains(graphReadTools, tool.Name) || slices.Contains(robotReadTools, tool.Name) && tool.Name != "robot_stop"
		if tool.Name == "robot_parameters" {
			reads = readOnly // the read-only server keeps a reading variant
		}
		if *a.ReadOnlyHint != reads {
			t.Errorf("%s: readOnlyHint=%v, want %v", tool.Name, *a.ReadOnlyHint, reads)
		}
		if *a.ReadOnlyHint && *a.DestructiveHint {
			t.Errorf("%s: read-only and destructive at once", tool.Name)
		}
		if strings.HasPrefix(tool.Name, "robot_") != *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint=%v; robots act in the physical world, graph tools do not", tool.Name, *a.OpenWorldHint)
		}
		if slices.Contains(robotMoves, tool.Name) && !*a.DestructiveHint {
			t.Errorf("%s moves a robot: destructiveHint must be true", tool.Name)
		}
		if tool.Name == "robot_parameters" && !reads && !*a.DestructiveHint {
			t.Errorf("robot_parameters replaces values (geofence [] removes the fence): destructiveHint must be true")
		}
		if tool.Name == "robot_stop" && !strings.Contains(tool.Description, "read-only") {
			t.Errorf("robot_stop does not say it stays on a read-only server: %q", tool.Description)
		}
		if len(tool.Description) < 60 {
			t.Errorf("%s: description too thin to say when to use it: %q", tool.Name, tool.Description)
		}
		if tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
			t.Errorf("%s: no output schema", tool.Name)
		}
		if tool.InputSchema.Type != "object" {
			t.Errorf("%s: input schema type %q", tool.Name, tool.InputSchema.Type)
		}
	}
}

// golden compares v, as indented JSON, with the file at name (or rewrites it with -update).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -run Registration -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from tools/list; if the change is meant, run go test ./mcptools -run Registration -update and review the diff\ngot:\n%s", name, got)
	}
}

func TestCheckArgs_Sentences(t *testing.T) {
	t.Parallel()
	params := []param{
		{name: "ref", typ: "string", required: true, desc: "the device ref", example: `"usb:3-3.2"`},
		{name: "limit", typ: "integer", min: f64(1), max: f64(100), desc: "page size"},
		{name: "tags", typ: "array", desc: "tags"},
		{name: "kind", typ: "string", enum: []string{"a", "b"}, desc: "kind"},
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"Missing", map[string]any{}, []string{`needs the argument "ref"`, "a string", `"ref": "usb:3-3.2"`}},
		{"WrongType", map[string]any{"ref": 42.0}, []string{`argument "ref" must be a string, but got the number 42`}},
		{"NotInteger", map[string]any{"ref": "x", "limit": 2.5}, []string{`"limit" must be a whole number`}},
		{"StringForInteger", map[string]any{"ref": "x", "limit": "ten"}, []string{`"limit" must be an integer, but got the string "ten"`}},
		{"HugeLimit", map[string]any{"ref": "x", "limit": 1e9}, []string{`"limit" is 1e+09, above the maximum of 100`, "cursor"}},
		{"Enum", map[string]any{"ref": "x", "kind": "c"}, []string{`"kind" is "c", but must be one of a, b`}},
		{"ArrayItem", map[string]any{"ref": "x", "tags": []any{"a", 3.0}}, []string{`item 1 is the number 3`}},
		{"Unknown", map[string]any{"ref": "x", "colour": "red"}, []string{`does not take the argument "colour"`, "ref (required), limit, tags, kind"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := checkArgs("tool_x", params, tc.args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "&{") || strings.Contains(err.Error(), "map[") {
				t.Errorf("error reads like a Go dump: %q", err)
			}
		})
	}
	a, err := checkArgs("tool_x", params, map[string]any{"ref": "usb:1-1", "limit": 5.0, "tags": "role:synth"})
	if err != nil {
		t.Fatal(err)
	}
	if a.str("ref") != "usb:1-1" || a.integer("limit", 0) != 5 || !slices.Equal(a.list("tags"), []string{"role:synth"}) {
		t.Fatalf("args=%v", a)
	}
}

func TestCleanClientName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Claude Desktop": "Claude-Desktop",
		"":               "unknown",
		"a*b?[c]":        "abc",
		"x\x00y":         "xy",
	} {
		if got := cleanClientName(in); got != want {
			t.Errorf("cleanClientName(%q)=%q, want %q", in, got, want)
		}
	}
}

// TestHTTP_ConcurrentClients has several clients of both eras work over one HTTP
// handler at once; each change is recorded with its own client's name.
func TestHTTP_ConcurrentClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	const perEra = 4
	var conns []*conn
	for i := 0; i < 2*perEra; i++ {
		conns = append(conns, e.dial("http", i%2 == 1, fmt.Sprintf("agent-%d", i)))
	}
	var wg sync.WaitGroup
	for i, cn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				name := fmt.Sprintf("Box %d-%d", i, j)
				res, err := cn.callErr(context.Background(), "graph_identity", map[string]any{"action": "create", "name": name}, nil)
				if err != nil || res.IsError {
					t.Errorf("%s create: %v %v", cn.name, err, res)
					return
				}
				if res, err := cn.callErr(context.Background(), "graph_tag", map[string]any{"target": graphSlug(name), "add": []any{fmt.Sprintf("project:p%d", i)}}, nil); err != nil || res.IsError {
					t.Errorf("%s tag: %v %v", cn.name, err, res)
				}
				if res, err := cn.callErr(context.Background(), "graph_find", map[string]any{"text": "box"}, nil); err != nil || res.IsError {
					t.Errorf("%s find: %v %v", cn.name, err, res)
				}
			}
		}()
	}
	wg.Wait()
	for i, cn := range conns {
		cl := cn.ok("graph_changelog", map[string]any{"actor": "mcp:" + cn.name, "limit": 100})
		evs := cl["events"].([]any)
		if len(evs) != 10 { // 5 × (identity.create + tag.add)
			t.Errorf("client %d: %d events by mcp:%s, want 10", i, len(evs), cn.name)
		}
		for _, ev := range evs {
			if tgt := str(path(ev.(map[string]any), "target")); !strings.HasPrefix(tgt, fmt.Sprintf("identity:box-%d-", i)) {
				t.Errorf("client %d: event on %s", i, tgt)
			}
		}
	}
}

func graphSlug(name string) string {
	return "identity:" + strings.ToLower(strings.ReplaceAll(name, " ", "-"))
}
