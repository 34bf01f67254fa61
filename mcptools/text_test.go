package mcptools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestText_SameFacts: the text rendering carries the facts of the structured result,
// for clients that show a model only one of them: an unbound device's best candidate,
// its score and why; a note's body in graph_browse.
func TestText_SameFacts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "text")
	// A JD-Xi identity whose hint the plugged-in JD-Xi shares: a candidate, not a match.
	cn.ok("graph_identity", map[string]any{"action": "create", "name": "Studio JD-Xi", "hints": []any{"usb_id=0582:01a9"}})
	res := cn.call("graph_unbound", map[string]any{"limit": 100})
	out, txt := structured(t, res), text(res)
	candidates := 0
	for _, d := range out["devices"].([]any) {
		dm := d.(map[string]any)
		m, _ := dm["match"].(map[string]any)
		if m == nil || str(m["identity"]) == "" {
			continue
		}
		candidates++
		line := lineWith(txt, str(dm["ref"]))
		for _, want := range []string{str(m["identity"]), fmt.Sprintf("%.2f", m["score"].(float64)), str(m["confidence"]), str(m["why"])} {
			if !strings.Contains(line, want) {
				t.Errorf("graph_unbound text for %s lacks %q:\n%s", dm["ref"], want, line)
			}
		}
	}
	if candidates == 0 {
		t.Fatalf("no unbound device has a candidate: %v", out)
	}

	cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.2", "identity": "studio-jd-xi"})
	body := "Firmware 1.53; MIDI thru works"
	cn.ok("graph_note", map[string]any{"target": "studio-jd-xi", "body": body, "kind": "success"})
	br := cn.call("graph_browse", map[string]any{"id": "studio-jd-xi"})
	found := false
	for _, n := range structured(t, br)["nodes"].([]any) {
		if nm := n.(map[string]any); nm["kind"] == "note" {
			found = nm["text"] == body
		}
	}
	if !found || !strings.Contains(text(br), body) {
		t.Errorf("graph_browse does not carry the note's body in both forms:\n%s", text(br))
	}
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestText_RobotLine: a robot's line names its identity when it has one and says
// nothing (not "(-)") when it has none.
func TestText_RobotLine(t *testing.T) {
	t.Parallel()
	st := &graph.RobotState{Ref: "robot:scout", Name: "scout", State: graph.RobotIdle, Gripper: "open", Battery: 100}
	if got, want := robotLine(st), "robot:scout: idle, disarmed, at (0.00, 0.00) heading 0.00 rad, battery 100%, gripper open"; got != want {
		t.Errorf("unbound robot: %q, want %q", got, want)
	}
	st.IdentityID = "identity:scout"
	if got := robotLine(st); !strings.HasPrefix(got, "robot:scout (identity:scout): idle") {
		t.Errorf("bound robot: %q", got)
	}
}

// TestInstructions_IdCase: what the server's instructions say about the case of ids is
// what resolving one does.
func TestInstructions_IdCase(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "ids")
	cn.ok("graph_identity", map[string]any{"action": "create", "name": "Roland JD-Xi"})
	res := cn.call("graph_browse", map[string]any{"id": "identity:ROLAND-JD-XI"})
	if claims := strings.Contains(instructions, "case-insensitive"); claims == res.IsError {
		t.Errorf("instructions claim case-insensitive ids: %v; an upper-case id resolves: %v (%s)", claims, !res.IsError, text(res))
	}
}

// TestText_ChangelogRequest: graph_changelog's text carries each event's request id, by
// which the review_changes prompt groups a user action's events.
func TestText_ChangelogRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "audit")
	cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi", "why": "new synth"})
	res := cn.call("graph_changelog", map[string]any{"actor": "mcp:*"})
	evs := structured(t, res)["events"].([]any)
	if len(evs) < 2 {
		t.Fatalf("bind made %d events", len(evs))
	}
	for _, ev := range evs {
		em := ev.(map[string]any)
		line := lineWith(text(res), "#"+str(em["seq"])+" ")
		if id := str(em["request_id"]); id == "" || !strings.Contains(line, id) {
			t.Errorf("changelog text line %q lacks request id %q", line, id)
		}
	}
}

// TestDevices_Nodes: an agent learns which /dev node a device provides — the robot base's
// FTDI serial adapter is /dev/ttyUSB0 — from graph_unbound and graph_browse, in the
// structured result and in its text, and its stable by-id link with detail: true.
func TestDevices_Nodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "nodes")
	const link = "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"
	res := cn.call("graph_unbound", map[string]any{"limit": 100})
	var ftdi map[string]any
	for _, d := range structured(t, res)["devices"].([]any) {
		dm := d.(map[string]any)
		for _, n := range asList(dm["nodes"]) {
			if n == "/dev/ttyUSB0" {
				ftdi = dm
			}
		}
	}
	if ftdi == nil {
		t.Fatalf("no unbound device is at /dev/ttyUSB0: %s", text(res))
	}
	if line := lineWith(text(res), str(ftdi["ref"])); !strings.Contains(line, "/dev/ttyUSB0") {
		t.Errorf("graph_unbound text for %s lacks its node: %s", ftdi["ref"], line)
	}
	br := cn.call("graph_browse", map[string]any{"id": str(ftdi["ref"]), "detail": true})
	if !strings.Contains(text(br), "/dev/ttyUSB0 ("+link+")") {
		t.Errorf("graph_browse text lacks the node and its link:\n%s", text(br))
	}
	if b, _ := json.Marshal(structured(t, br)); !strings.Contains(string(b), link) {
		t.Errorf("graph_browse detail lacks the by-id link: %s", b)
	}
}

func asList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
