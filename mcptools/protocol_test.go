package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// TestResources_NotFound: a read of a node or robot that does not exist answers resource
// not found in the code of the request's era (-32002 in 2025-11-25, -32602 in
// 2026-07-28), naming the URI and the problem, on every transport; never -32603.
func TestResources_NotFound(t *testing.T) {
	t.Parallel()
	re := newRobotEnv(t, 0)
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			cn := re.dial(m.transport, m.modern, "reader")
			want := mcp.ErrResourceNotFound
			if m.modern {
				want = mcp.ErrInvalidParams
			}
			for _, tc := range []struct{ uri, says string }{
				{NodeURI("identity:nobody"), "nobody"},
				{NodeURI("usb:9-9.9"), "usb:9-9.9"},
				{nodePrefix, "no id"},
				{RobotStateURI("robot:ghost"), "ghost"},
				{RobotParametersURI("ghost"), "ghost"},
			} {
				_, err := cn.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: tc.uri}})
				if !errors.Is(err, want) {
					t.Errorf("read %s: %v, want %v", tc.uri, err, want)
					continue
				}
				if !strings.Contains(err.Error(), tc.uri) || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("read %s: %q, want the URI and %q", tc.uri, err, tc.says)
				}
				if strings.Contains(err.Error(), "devgraph ") || strings.Contains(err.Error(), "`") {
					t.Errorf("read %s: %q advises a CLI verb; an MCP client is told tool names", tc.uri, err)
				}
			}
			// What exists still reads.
			var p robotParams
			if err := json.Unmarshal([]byte(readText(t, cn, RobotParametersURI("scout"))), &p); err != nil {
				t.Fatal(err)
			}
			if p.Robot != "robot:scout" || p.Params.ArrivalThreshold != 0.15 || p.Params.MaxSpeed <= 0 {
				t.Errorf("parameters of scout: %+v", p)
			}
		})
	}
}

// TestCompletions: completion/complete offers the node and robot templates' ids and
// every prompt argument's values, by prefix as typed.
func TestCompletions(t *testing.T) {
	t.Parallel()
	re := newRobotEnv(t, 0)
	if _, err := re.svc.CreateIdentity(graph.WithActor(context.Background(), "cli:seed"), graph.IdentityCreate{Name: "Roland JD-Xi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := re.svc.UpdateTags(graph.WithActor(context.Background(), "cli:seed"), "identity:roland-jd-xi", []string{"role:synth"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := re.svc.Unbound(context.Background()); err != nil { // the sources have been read: devices are recorded
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			cn := re.dial(m.transport, m.modern, "completer")
			ctx := context.Background()
			complete := func(ref any, arg, value string) []string {
				t.Helper()
				res, err := cn.c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: arg, Value: value}}})
				if err != nil {
					t.Fatalf("complete %v %s=%q: %v", ref, arg, value, err)
				}
				return res.Completion.Values
			}
			node := mcp.ResourceReference{Type: "ref/resource", URI: "devgraph://node/{+id}"}
			robotRef := mcp.ResourceReference{Type: "ref/resource", URI: "devgraph://robot/{+id}/state"}
			for _, tc := range []struct {
				name       string
				ref        any
				arg, typed string
				want       []string // each must be offered
				not        []string // none may be
			}{
				{"NodeBySlug", node, "id", "rol", []string{"identity:roland-jd-xi"}, []string{"robot:scout"}},
				{"NodeByFullID", node, "id", "identity:ROL", []string{"identity:roland-jd-xi"}, nil},
				{"NodeByRef", node, "id", "usb:3-3", []string{"usb:3-3.2"}, []string{"identity:roland-jd-xi"}},
				{"NodeRobot", node, "id", "robot:", []string{"robot:scout"}, []string{"usb:3-3.2"}},
				{"NodeTag", node, "id", "tag:ro", []string{"tag:role:synth"}, []string{"identity:roland-jd-xi"}}, // a tag is a node: its nodes
				{"Robot", robotRef, "id", "sc", []string{"robot:scout"}, nil},
				{"PromptSince", mcp.PromptReference{Type: "ref/prompt", Name: PromptReviewChanges}, "since", "2", []string{"24h"}, []string{"7d"}},
				{"PromptActor", mcp.PromptReference{Type: "ref/prompt", Name: PromptReviewChanges}, "actor", "mcp", []string{"mcp:*"}, []string{"cli:*"}},
				{"PromptRobot", mcp.PromptReference{Type: "ref/prompt", Name: PromptRobotMission}, "robot", "robot:s", []string{"robot:scout"}, nil},
				{"PromptRef", mcp.PromptReference{Type: "ref/prompt", Name: PromptBindNewDevice}, "ref", "usb:", []string{"usb:3-3.2"}, nil},
			} {
				got := complete(tc.ref, tc.arg, tc.typed)
				for _, w := range tc.want {
					if !slices.Contains(got, w) {
						t.Errorf("%s: %q offers %v, want %s among them", tc.name, tc.typed, got, w)
					}
				}
				for _, n := range tc.not {
					if slices.Contains(got, n) {
						t.Errorf("%s: %q offers %v, which should not hold %s", tc.name, tc.typed, got, n)
					}
				}
			}
		})
	}
}

// TestRobots_KnownBeforeFirstAnswer: a robot the fleet drives is a device every tool and
// resource resolves from the first request on — initialize waits for the sources' first
// reading when there are robots — in both eras (the 2026-07-28 one has no initialize).
func TestRobots_KnownBeforeFirstAnswer(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			re := newRobotEnv(t, 0) // a fresh store: nothing observed yet, no poll loop
			cn := re.dial(m.transport, m.modern, "first")
			res := cn.call("graph_browse", map[string]any{"id": "robot:scout"})
			if res.IsError {
				t.Fatalf("graph_browse robot:scout as the first call: %s", text(res))
			}
			if txt := readText(t, cn, NodeURI("robot:scout")); !strings.Contains(txt, "robot:scout") {
				t.Fatalf("node robot:scout: %.300s", txt)
			}
		})
	}
}
