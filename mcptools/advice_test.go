package mcptools

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/advicetest"
)

var adviceCallRe = regexp.MustCompile(`call ([a-z_]+) (\{[^{}]*\})`)

// TestAdvice_CallsCarryRequiredArguments: every tool call any step advises names a tool
// the server lists, with every argument that tool requires and none it does not take, as
// tools/list shows them to a model; and the text a model reads holds the same calls.
func TestAdvice_CallsCarryRequiredArguments(t *testing.T) {
	t.Parallel()
	re := newRobotEnv(t, 0) // robots stored: every tool is offered
	cn := re.dial("inprocess", false, "advice")
	list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	for _, s := range advicetest.Every() {
		text := adviceText("graph_bind", []graph.Step{s})
		if text == "" {
			t.Errorf("%+v renders as nothing", s)
		}
		calls := adviceCalls("graph_bind", []graph.Step{s})
		if got := len(adviceCallRe.FindAllString(text, -1)); got != len(calls) {
			t.Errorf("%+v: text %q shows %d calls, want %d", s, text, got, len(calls))
		}
		for _, m := range adviceCallRe.FindAllStringSubmatch(text, -1) {
			tl, ok := tools[m[1]]
			if !ok {
				t.Errorf("%+v advises %s, which the server does not list", s, m[1])
				continue
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(m[2]), &args); err != nil {
				t.Errorf("%+v: arguments %s are not JSON: %v", s, m[2], err)
				continue
			}
			for _, req := range tl.InputSchema.Required {
				if _, ok := args[req]; !ok {
					t.Errorf("%+v: %s %s lacks the required %q", s, m[1], m[2], req)
				}
			}
			for k := range args {
				if _, ok := tl.InputSchema.Properties[k]; !ok {
					t.Errorf("%+v: %s takes no argument %q", s, m[1], k)
				}
			}
		}
	}
}

// TestAdvice_FitsTheSituation: over MCP, the advice is tool calls chosen from what
// happened: an empty gripper is told to detect and grasp (never to pass move), a disarmed
// robot to arm, an object out of reach its distance and where to drive; a contradicting
// bind how to force it; a retried bind and a repeated note are no-ops that say so.
func TestAdvice_FitsTheSituation(t *testing.T) {
	t.Parallel()
	re := newRobotEnv(t, 0)
	cn := re.dial("inprocess", false, "advice")

	msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scout", "x": 1.0, "y": 0.0})
	if !strings.Contains(msg, `Next: call robot_arm {"robot":"robot:scout"}`) {
		t.Errorf("navigate disarmed: %q", msg)
	}
	cn.ok("robot_arm", map[string]any{"robot": "robot:scout"})
	msg = cn.fails("robot_release", map[string]any{"robot": "robot:scout"})
	if !strings.Contains(msg, `call robot_detect {"robot":"robot:scout"}`) || !strings.Contains(msg, `call robot_grasp {"robot":"robot:scout"`) || strings.Contains(msg, "move") {
		t.Errorf("release with an empty gripper: %q", msg)
	}
	det := cn.ok("robot_detect", map[string]any{"robot": "robot:scout"})
	objs, _ := det["objects"].([]any)
	far := ""
	for _, o := range objs {
		if d, _ := o.(map[string]any)["distance"].(float64); d > 1 {
			far = str(o.(map[string]any)["id"])
		}
	}
	if far == "" {
		t.Fatalf("no object beyond reach in %v", det)
	}
	msg = cn.fails("robot_grasp", map[string]any{"robot": "robot:scout", "object": far})
	if !strings.Contains(msg, " m away") || !strings.Contains(msg, `call robot_navigate {"robot":"robot:scout","x":`) {
		t.Errorf("grasp out of reach: %q", msg)
	}

	// Binding: a retry is a no-op; a contradiction is refused with how to force it.
	first := cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi", "slug": "jdxi"})
	if first["already_bound"] == true {
		t.Fatalf("first bind: %v", first)
	}
	res := cn.call("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi", "slug": "jdxi"})
	again := structured(t, res)
	if again["already_bound"] != true || again["events"] != 0.0 || !strings.Contains(text(res), "Already bound") {
		t.Errorf("retried bind: %v %q", again, text(res))
	}
	msg = cn.fails("graph_bind", map[string]any{"ref": "usb:3-3.1", "identity": "jdxi"})
	if !strings.Contains(msg, "another model") || !strings.Contains(msg, `call graph_bind {"ref":"usb:3-3.1","identity":"identity:jdxi","force":true}`) {
		t.Errorf("contradicting bind: %q", msg)
	}
	forced := cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.1", "identity": "jdxi", "force": true})
	if path(forced, "identity", "id") != "identity:jdxi" {
		t.Errorf("forced bind: %v", forced)
	}

	// An unknown id: the suggestion in the problem, the listing tool in the advice.
	msg = cn.fails("graph_note", map[string]any{"target": "jdx1", "body": "hello"})
	if !strings.Contains(msg, "did you mean identity:jdxi?") || !strings.Contains(msg, `Next: call graph_find {"kind":"identity"}`) || strings.Contains(msg, "devgraph ") {
		t.Errorf("unknown target: %q", msg)
	}

	// An unknown note: browse its target (a note has no ends), with the placeholder as a
	// model reads it, not JSON-escaped.
	msg = cn.fails("graph_note", map[string]any{"action": "delete", "note_id": "note:0000"})
	if !strings.Contains(msg, `call graph_browse {"id":"<`) || strings.Contains(msg, `\u003c`) || strings.Contains(msg, "end") {
		t.Errorf("unknown note: %q", msg)
	}

	// A repeated note.
	n1 := cn.ok("graph_note", map[string]any{"target": "jdxi", "body": "firmware 1.53"})
	res = cn.call("graph_note", map[string]any{"target": "jdxi", "body": "firmware 1.53"})
	n2 := structured(t, res)
	if path(n2, "note", "id") != path(n1, "note", "id") || n2["existed"] != true || !strings.HasPrefix(text(res), "Already there") {
		t.Errorf("repeated note: %v %q", n2, text(res))
	}
}
