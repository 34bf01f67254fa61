package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestGraphTools_Journey drives every graph tool through a real client, on every
// transport in both protocol eras, against the demo rig on a fresh database: the
// journey an agent takes (find a new device, bind, tag, note, check it back, audit),
// the identity management around it, and the errors a model makes along the way —
// after each of which the server keeps serving.
func TestGraphTools_Journey(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			client := "journey-" + m.transport
			cn := e.dial(m.transport, m.modern, client)
			actor := "mcp:" + client

			list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil || len(list.Tools) != len(graphTools) {
				t.Fatalf("tools/list: %d tools, %v", len(list.Tools), err)
			}

			// The serial-less JD-Xi is plugged in and unknown.
			ub := cn.ok("graph_unbound", nil)
			var refs []string
			for _, d := range ub["devices"].([]any) {
				refs = append(refs, str(path(d.(map[string]any), "ref")))
			}
			if !slices.Contains(refs, "usb:3-3.2") {
				t.Fatalf("graph_unbound refs=%v, want usb:3-3.2 among them", refs)
			}
			// Pages follow the cursor without repeats.
			u1 := cn.ok("graph_unbound", map[string]any{"limit": 2})
			u2 := cn.ok("graph_unbound", map[string]any{"limit": 2, "cursor": u1["next_cursor"]})
			if len(u1["devices"].([]any)) != 2 || u1["next_cursor"] == "" || path(u1, "devices", 0, "ref") == path(u2, "devices", 0, "ref") {
				t.Errorf("graph_unbound paging: %v / %v", u1["next_cursor"], u2["devices"])
			}
			found := cn.ok("graph_find", map[string]any{"text": "jdxi", "kind": "device"})
			if str(path(found, "results", 0, "ref")) != "usb:3-3.2" {
				t.Fatalf("graph_find jdxi: %v", found)
			}

			// Bind it to a new identity; every event of the call shares its request id.
			bound := cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi", "why": "plugged in today"})
			if str(path(bound, "identity", "id")) != "identity:roland-jd-xi" || bound["created"] != true {
				t.Fatalf("graph_bind: %v", bound)
			}
			bindReq := str(bound["request_id"])
			tagged := cn.ok("graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"Role: Synth", "location:studio"}})
			if tags := tagged["tags"].([]any); !slices.Contains(tags, any("role:synth")) || !slices.Contains(tags, any("location:studio")) {
				t.Fatalf("graph_tag: %v", tagged)
			}
			note := cn.ok("graph_note", map[string]any{"target": "identity:roland-jd-xi", "body": "Firmware **1.53**", "kind": "success"})
			noteID := str(path(note, "note", "id"))
			if !strings.HasPrefix(noteID, "note:") || str(path(note, "note", "author")) != actor {
				t.Fatalf("graph_note: %v", note)
			}

			// Browse it back: binding, tags and note are its neighbours.
			br := cn.ok("graph_browse", map[string]any{"id": "identity:roland-jd-xi", "depth": 2})
			rels := map[string]bool{}
			for _, ed := range br["edges"].([]any) {
				rels[str(path(ed.(map[string]any), "rel"))+" "+str(path(ed.(map[string]any), "to"))] = true
			}
			for _, want := range []string{"tagged tag:role:synth", "note " + noteID} {
				if !rels[want] {
					t.Errorf("graph_browse edges %v lack %q", rels, want)
				}
			}
			hasDevice := false
			for r := range rels {
				hasDevice = hasDevice || strings.HasPrefix(r, "bound_device device:")
			}
			if !hasDevice {
				t.Errorf("graph_browse edges %v lack the bound device", rels)
			}

			byTag := cn.ok("graph_find", map[string]any{"tags": []any{"role:synth"}, "kind": "identity"})
			if str(path(byTag, "results", 0, "id")) != "identity:roland-jd-xi" || byTag["total"] != 1.0 {
				t.Errorf("graph_find by tag: %v", byTag)
			}

			// A limit that cuts the walk says so, with counts.
			cut := cn.ok("graph_browse", map[string]any{"id": "identity:roland-jd-xi", "limit": 1})
			if omitted, _ := cut["omitted"].(float64); cut["truncated"] != true || omitted < 2 || len(cut["edges"].([]any)) != 1 {
				t.Errorf("graph_browse limit 1: truncated=%v omitted=%v edges=%v", cut["truncated"], cut["omitted"], cut["edges"])
			}

			// And through GraphQL.
			q := cn.ok("graph_query", map[string]any{
				"query":     `query($id: ID!) { identity(id: $id) { id name tags { name } } }`,
				"variables": map[string]any{"id": "roland-jd-xi"},
			})
			if str(path(q, "data", "identity", "name")) != "Roland JD-Xi" {
				t.Fatalf("graph_query: %v", q)
			}

			// The changelog shows every step with this client as the actor.
			cl := cn.ok("graph_changelog", map[string]any{"actor": "mcp:*", "limit": 100})
			actions := map[string]bool{}
			for _, ev := range cl["events"].([]any) {
				evm := ev.(map[string]any)
				if evm["actor"] != actor {
					t.Errorf("event %v: actor %v, want %s", evm["action"], evm["actor"], actor)
				}
				actions[str(evm["action"])] = true
				if str(evm["action"]) == "device.bind" && str(evm["request_id"]) != bindReq {
					t.Errorf("device.bind request_id %v, want the bind call's %s", evm["request_id"], bindReq)
				}
				if str(evm["action"]) == "device.bind" && str(evm["message"]) != "plugged in today" {
					t.Errorf("device.bind message %q, want the call's why", evm["message"])
				}
			}
			for _, want := range []string{"identity.create", "hint.add", "device.bind", "tag.add", "note.add"} {
				if !actions[want] {
					t.Errorf("changelog lacks %s: %v", want, actions)
				}
			}
			// Paging: one event per page, following the cursor, never repeats.
			p1 := cn.ok("graph_changelog", map[string]any{"limit": 1})
			p2 := cn.ok("graph_changelog", map[string]any{"limit": 1, "cursor": p1["next_cursor"]})
			if path(p1, "events", 0, "seq") == path(p2, "events", 0, "seq") || p1["next_cursor"] == "" {
				t.Errorf("changelog paging: %v then %v", p1, p2)
			}

			st := cn.ok("graph_suggest_tags", map[string]any{"namespace": "role"})
			var synth map[string]any
			for _, tc := range st["tags"].([]any) {
				if path(tc.(map[string]any), "tag") == "role:synth" {
					synth = tc.(map[string]any)
				}
			}
			if synth == nil || synth["count"] != 1.0 {
				t.Errorf("graph_suggest_tags role:synth = %v", synth)
			}

			// Identity management.
			cr := cn.ok("graph_identity", map[string]any{"action": "create", "name": "Spare Synth", "hints": []any{"usb_id=0582:01a9"}})
			if str(path(cr, "identity", "id")) != "identity:spare-synth" {
				t.Fatalf("create: %v", cr)
			}
			cn.ok("graph_identity", map[string]any{"action": "rename", "id": "spare-synth", "name": "Spare JD-Xi"})
			cn.ok("graph_identity", map[string]any{"action": "update", "id": "spare-synth", "data": map[string]any{"firmware": "1.50"}})
			cn.ok("graph_identity", map[string]any{"action": "hint_add", "id": "spare-synth", "hints": []any{"alsa_card_id=JDXi2"}})
			cn.ok("graph_identity", map[string]any{"action": "hint_remove", "id": "spare-synth", "hints": []any{"alsa_card_id=JDXi2"}})
			cn.ok("graph_identity", map[string]any{"action": "delete", "id": "spare-synth"})
			cn.fails("graph_browse", map[string]any{"id": "identity:spare-synth"})
			rs := cn.ok("graph_identity", map[string]any{"action": "restore", "id": "identity:spare-synth"})
			if str(path(rs, "identity", "name")) != "Spare JD-Xi" {
				t.Fatalf("restore: %v", rs)
			}
			mg := cn.ok("graph_identity", map[string]any{"action": "merge", "id": "spare-synth", "into": "roland-jd-xi"})
			if str(path(mg, "identity", "id")) != "identity:roland-jd-xi" {
				t.Fatalf("merge: %v", mg)
			}

			cn.ok("graph_note", map[string]any{"action": "delete", "note_id": noteID})
			ubd := cn.ok("graph_unbind", map[string]any{"ref": "usb:3-3.2"})
			if path(ubd, "device", "identity") != nil {
				t.Errorf("graph_unbind left a binding: %v", ubd)
			}

			checkErrors(t, cn)
		})
	}
}

// checkErrors sends the mistakes a model makes; each is a clear error and the server
// keeps serving.
func checkErrors(t *testing.T, cn *conn) {
	// Unknown tool: a protocol error.
	if _, err := cn.callErr(context.Background(), "graph_frobnicate", nil, nil); err == nil || !strings.Contains(err.Error(), "graph_frobnicate") {
		t.Errorf("unknown tool: err=%v", err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"graph_bind", map[string]any{}, []string{`needs the argument "ref"`}},
		{"graph_bind", map[string]any{"ref": "usb:3-3.2"}, []string{"identity", "new_name"}},
		{"graph_find", map[string]any{"limit": "ten"}, []string{`"limit" must be an integer`}},
		{"graph_find", map[string]any{"limit": 1e9}, []string{"above the maximum of 100", "cursor"}},
		{"graph_changelog", map[string]any{"limit": 100000}, []string{"above the maximum"}},
		{"graph_tag", map[string]any{"target": "identity:roland-jd-x1", "add": []any{"role:synth"}}, []string{`roland-jd-x1`, "did you mean identity:roland-jd-xi", "graph_find"}},
		{"graph_browse", map[string]any{"id": "usb:9-9"}, []string{"usb:9-9", "graph_find"}},
		{"graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"no colon"}}, []string{"namespace:value"}},
		{"graph_tag", map[string]any{"target": "roland-jd-xi", "add": anyList(33, "bulk:t%d")}, []string{"add has 33 tags; the limit is 32 per call"}},
		{"graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"role:synth"}, "why": strings.Repeat("w", 2048)}, []string{"message is 2048 bytes; the limit is 1024", "why"}},
		{"graph_identity", map[string]any{"action": "hint_add", "id": "roland-jd-xi", "hints": anyList(33, "usb_serial=0582:01a9:SN%d")}, []string{"hints has 33 hints; the limit is 32 per call"}},
		{"graph_note", map[string]any{"target": "roland-jd-xi", "body": "x", "kind": "shout"}, []string{"info, success, warning, danger"}},
		// A relation type nothing uses would find no path: say so rather than "no path".
		{"graph_trace", map[string]any{"from": "usb:3-3.2", "to": "usb:3-3.1", "types": []any{"wire"}}, []string{`"wire"`, "cable", "via"}},
		// A live client exists but takes neither tags nor notes: say so, not "unknown client".
		{"graph_tag", map[string]any{"target": "client:alsa:Bitwig Studio", "add": []any{"role:daw"}}, []string{"is a client id", "want an identity or a device"}},
		{"graph_note", map[string]any{"target": "client:alsa:Bitwig Studio", "body": "x"}, []string{"is a client id", "want an identity or a device"}},
		{"graph_changelog", map[string]any{"since": "yesterday-ish"}, []string{"since", "RFC 3339", "24h"}},
		{"graph_identity", map[string]any{"action": "hint_add", "id": "roland-jd-xi", "hints": []any{"colour=red"}}, []string{"unknown fingerprint kind"}},
		{"graph_query", map[string]any{"query": `mutation { createIdentity(name: "x") { id } }`}, []string{"graph_query"}},
		{"graph_query", map[string]any{"query": "{ " + strings.Repeat("node(id: \"x\") { ... on Identity { devices { identity { ", 40)}, []string{"graph_query"}},
		{"graph_query", map[string]any{"query": `query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }`}, []string{"graph_query"}},
		{"graph_query", map[string]any{"query": "{ " + strings.Repeat("a: stats { identities } ", 2000) + "}"}, []string{"graph_query"}},
		{"graph_query", map[string]any{"query": "{{{{"}, []string{"graph_query"}},
		{"graph_query", map[string]any{"query": "{ stats { identities } } #" + strings.Repeat("x", 100_000)}, []string{`"query" is 100`, "limit is 65536"}},
		{"graph_query", map[string]any{"query": "query($v: [String]) { stats { identities } }", "variables": map[string]any{"v": hugeList(200_000)}}, []string{"graph_query"}},
	} {
		msg := cn.fails(tc.tool, tc.args)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s(%v): %q lacks %q", tc.tool, tc.args, msg, w)
			}
		}
		if strings.Contains(msg, "&{") || strings.Contains(msg, "map[") {
			t.Errorf("%s: error reads like a Go dump: %q", tc.tool, msg)
		}
	}
	// A unit fingerprint (the Scarlett's serial) cannot sit on two identities: the
	// conflict names the holder and the way out.
	cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.1", "new_name": "Scarlett 2i2"})
	msg := cn.fails("graph_bind", map[string]any{"ref": "usb:3-3.1", "new_name": "Another Scarlett"})
	for _, w := range []string{"identity:scarlett-2i2", "move"} {
		if !strings.Contains(msg, w) {
			t.Errorf("bind conflict %q lacks %q", msg, w)
		}
	}
	// Arguments that are not an object at all.
	raw := mcp.CallToolRequest{}
	raw.Params.Name = "graph_find"
	raw.Params.Arguments = json.RawMessage(`[1,2,3]`)
	if res, err := cn.c.CallTool(context.Background(), raw); err == nil && !res.IsError {
		t.Errorf("array arguments accepted: %s", text(res))
	}
	// Still serving.
	q := cn.ok("graph_query", map[string]any{"query": "{ identity(id: \"roland-jd-xi\") { name } }"})
	if str(path(q, "data", "identity", "name")) != "Roland JD-Xi" {
		t.Fatalf("after errors: %v", q)
	}
	_ = time.Second
}

func hugeList(n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = "xxxxxxxxxx"
	}
	return l
}

// anyList is n strings made from format and their index, as a JSON array argument.
func anyList(n int, format string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}
