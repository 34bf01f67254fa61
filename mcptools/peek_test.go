package mcptools
import ("testing";"encoding/json";"fmt")
func TestPeek(t *testing.T){
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "claude-code")
	show := func(name string, args map[string]any) {
		res := cn.call(name, args)
		b,_ := json.Marshal(res.StructuredContent)
		fmt.Printf("== %s %d\n%s\n-- text:\n%s\n", name, len(b), b, text(res))
	}
	show("graph_unbound", map[string]any{"limit": 3})
	show("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi"})
	cn.ok("graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"role:synth", "location:studio", "manufacturer:roland"}})
	cn.ok("graph_note", map[string]any{"target": "roland-jd-xi", "body": "Firmware 1.53; MIDI thru works", "kind": "success"})
	cn.ok("graph_note", map[string]any{"target": "roland-jd-xi", "body": "Lives on the left shelf."})
	cn.ok("graph_bind", map[string]any{"ref": "usb:3-4.4.1", "new_name": "KeyStep", "slug": "keystep"})
	cn.ok("graph_relate", map[string]any{"op": "add", "from": "keystep", "from_port": "MIDI OUT", "type": "cable", "to": "roland-jd-xi", "to_port": "MIDI IN", "attrs": map[string]any{"kind": "midi-din"}})
	cn.ok("graph_identity", map[string]any{"action": "create", "name": "Studio rack"})
	cn.ok("graph_relate", map[string]any{"op": "add", "from": "roland-jd-xi", "type": "located_in", "to": "studio-rack"})
	show("graph_browse", map[string]any{"id": "roland-jd-xi"})
	show("graph_trace", map[string]any{"from": "keystep"})
	show("graph_changelog", map[string]any{"actor": "mcp:*", "limit": 5})
}
