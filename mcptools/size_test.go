package mcptools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// Size caps of issue 13, in bytes of compact JSON. The test prints every figure and
// fails only past a cap, not on noise.
const (
	capToolsWithRobots = 12 << 10
	capToolsNoRobots   = 8 << 10
	capDescription     = 600
	capUnbound         = 3 << 10
	capBind            = 1 << 10
	capBrowse          = 2560
	capSession         = 8 << 10
)

// modelVisible is the part of tools/list a model reads: each tool's name, description
// and input schema, as compact JSON.
func modelVisible(t *testing.T, tools []mcp.Tool) int {
	t.Helper()
	type visible struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var list []visible
	for _, tool := range tools {
		in, err := json.Marshal(tool.InputSchema)
		if tool.RawInputSchema != nil {
			in, err = tool.RawInputSchema, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, visible{tool.Name, tool.Description, in})
		if n := len(tool.Description); n > capDescription {
			t.Errorf("%s: description is %d bytes; the cap is %d", tool.Name, n, capDescription)
		}
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func listTools(t *testing.T, cn *conn) []mcp.Tool {
	t.Helper()
	res, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// structuredSize is the compact JSON size of a result's structured content.
func structuredSize(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func checkCap(t *testing.T, what string, got, limit int) {
	t.Helper()
	t.Logf("%-58s %6d B (cap %d)", what, got, limit)
	if got > limit {
		t.Errorf("%s: %d bytes; the cap is %d", what, got, limit)
	}
}

// TestSize_ToolList measures tools/list as a model sees it, with robots and without.
func TestSize_ToolList(t *testing.T) {
	t.Parallel()
	re := newRobotEnv(t, 0)
	with := modelVisible(t, listTools(t, re.dial("inprocess", false, "size")))
	checkCap(t, "tools/list (name, description, input schema), robots", with, capToolsWithRobots)
	e := newEnv(t, envOpts{})
	without := modelVisible(t, listTools(t, e.dial("inprocess", false, "size")))
	checkCap(t, "tools/list (name, description, input schema), no robots", without, capToolsNoRobots)
}

// TestSize_Results measures the structured results the issue names on the demo rig.
func TestSize_Results(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "claude-code")
	size := func(name string, args map[string]any) int {
		t.Helper()
		res := cn.call(name, args)
		return structuredSize(t, res)
	}
	checkCap(t, "graph_unbound, whole rig", size("graph_unbound", map[string]any{"limit": 100}), capUnbound)

	// The README's short session, in order.
	session := size("graph_unbound", map[string]any{"limit": 4})
	bind := size("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi"})
	checkCap(t, "graph_bind", bind, capBind)
	session += bind
	session += size("graph_suggest_tags", map[string]any{"namespace": "role"})
	session += size("graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"role:synth", "location:studio"}})
	session += size("graph_note", map[string]any{"target": "roland-jd-xi", "body": "Firmware 1.53; MIDI thru works", "kind": "success"})
	session += size("graph_changelog", map[string]any{"actor": "mcp:*", "limit": 5})
	session += size("graph_tag", map[string]any{"target": "roland-jd-x1", "add": []any{"role:synth"}})
	cn.ok("graph_bind", map[string]any{"ref": "usb:3-4.4.1", "new_name": "KeyStep", "slug": "keystep"})
	session += size("graph_relate", map[string]any{"op": "add", "from": "keystep", "from_port": "MIDI OUT", "type": "cable",
		"to": "roland-jd-xi", "to_port": "MIDI IN", "attrs": map[string]any{"kind": "midi-din"}})
	session += size("graph_trace", map[string]any{"from": "keystep"})
	session += size("graph_trace", map[string]any{"from": "usb:3-7", "to": "usb:usb3"})
	session += size("graph_relate", map[string]any{"op": "add", "from": "keystep", "type": "cabel", "to": "roland-jd-xi"})
	checkCap(t, "the README session (A short session), summed", session, capSession)

	// An identity with 3 tags, 2 notes, 2 relations and its device.
	cn.ok("graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"manufacturer:roland"}})
	cn.ok("graph_note", map[string]any{"target": "roland-jd-xi", "body": "Lives on the left shelf."})
	cn.ok("graph_identity", map[string]any{"action": "create", "name": "Studio rack"})
	cn.ok("graph_relate", map[string]any{"op": "add", "from": "roland-jd-xi", "type": "located_in", "to": "studio-rack"})
	checkCap(t, "graph_browse identity (3 tags, 2 notes, 2 relations, device)",
		size("graph_browse", map[string]any{"id": "roland-jd-xi"}), capBrowse)
}
