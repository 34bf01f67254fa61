package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/devgraph/devgraph/graph"
)

// schemaChecker validates structured results against the output schemas the server
// lists, on the client's side: the schemas a client reads are the ones the results keep.
type schemaChecker struct {
	t       *testing.T
	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema
}

func newSchemaChecker(t *testing.T, cn *conn) *schemaChecker {
	t.Helper()
	list, err := cn.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sc := &schemaChecker{t: t, schemas: map[string]*jsonschema.Schema{}}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		c := jsonschema.NewCompiler()
		url := "mem://" + tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: output schema does not compile: %v\n%s", tool.Name, err, raw)
		}
		sc.schemas[tool.Name] = sch
	}
	return sc
}

// ok calls a tool that must succeed, validates its structured result against the
// tool's output schema, and returns it.
func (sc *schemaChecker) ok(cn *conn, tool string, args map[string]any) map[string]any {
	sc.t.Helper()
	m := cn.ok(tool, args)
	raw, _ := json.Marshal(m)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		sc.t.Fatal(err)
	}
	sc.mu.Lock()
	sch := sc.schemas[tool]
	sc.mu.Unlock()
	if sch == nil {
		sc.t.Fatalf("%s: no output schema listed", tool)
	}
	if err := sch.Validate(inst); err != nil {
		sc.t.Fatalf("%s(%v): result breaks its output schema: %v\n%s", tool, args, err, raw)
	}
	return m
}

// demoDevice finds a device of the demo rig by name through graph_find and returns its ref.
func demoDevice(t *testing.T, cn *conn, text string) string {
	t.Helper()
	cn.ok("graph_unbound", nil) // the sources have been read: devices are recorded and indexed
	found := cn.ok("graph_find", map[string]any{"text": text, "kind": "device"})
	ref := str(path(found, "results", 0, "ref"))
	if ref == "" {
		t.Fatalf("graph_find %q found no device: %v", text, found)
	}
	return ref
}

// events returns the changelog's actions (newest first) matching the action glob.
func events(t *testing.T, cn *conn, args map[string]any) []map[string]any {
	t.Helper()
	args["limit"] = 100
	cl := cn.ok("graph_changelog", args)
	var out []map[string]any
	for _, ev := range cl["events"].([]any) {
		out = append(out, ev.(map[string]any))
	}
	return out
}

func hopsOf(m map[string]any) []map[string]any {
	var out []map[string]any
	for _, h := range m["hops"].([]any) {
		out = append(out, h.(map[string]any))
	}
	return out
}

func linesOf(m map[string]any) []string {
	var out []string
	for _, l := range m["lines"].([]any) {
		out = append(out, l.(string))
	}
	return out
}

// TestRelationTools_Journey is the relation journey an agent takes on the demo rig, through
// a real client on every transport in both protocol eras: bind the KeyStep and the JD-Xi,
// cable the KeyStep's MIDI OUT to the JD-Xi's MIDI IN, trace from the KeyStep through the
// cable and the JD-Xi's sequencer subscription to the DAW, find the path from the robot
// base to its USB controller, delete the KeyStep's identity (the cable's relation.remove is
// in the changelog) and restore it (the cable is back). Every structured result is
// checked against the output schema the client was given.
func TestRelationTools_Journey(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			client := "relations-" + m.transport
			cn := e.dial(m.transport, m.modern, client)
			sc := newSchemaChecker(t, cn)

			keystepRef := demoDevice(t, cn, "keystep")
			sc.ok(cn, "graph_bind", map[string]any{"ref": keystepRef, "new_name": "KeyStep", "slug": "keystep"})
			sc.ok(cn, "graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "JD-Xi", "slug": "jdxi"})

			cable := map[string]any{"op": "add", "from": "keystep", "from_port": "MIDI OUT", "type": "cable",
				"to": "identity:jdxi", "to_port": "MIDI IN", "attrs": map[string]any{"kind": "midi-din"}, "why": "patched today"}

			// A dry run says what would happen and writes nothing.
			dry := map[string]any{}
			for k, v := range cable {
				dry[k] = v
			}
			dry["dry_run"] = true
			d := sc.ok(cn, "graph_relate", dry)
			if d["action"] != "add" || d["dry_run"] != true || d["existed"] != false {
				t.Fatalf("dry run: %v", d)
			}
			if evs := events(t, cn, map[string]any{"action": "relation.*"}); len(evs) != 0 {
				t.Fatalf("a dry run wrote %d relation event(s)", len(evs))
			}

			res := cn.call("graph_relate", cable)
			if res.IsError {
				t.Fatalf("graph_relate add: %s", text(res))
			}
			added := sc.ok(cn, "graph_relate", cable) // the repeat, checked below
			first := structured(t, res)
			relID := str(path(first, "relation", "id"))
			if !strings.HasPrefix(relID, "rel:") || first["action"] != "add" || first["existed"] != false || first["events"] != 1.0 ||
				str(path(first, "relation", "from")) != "identity:keystep" || str(path(first, "relation", "to")) != "identity:jdxi" ||
				str(path(first, "relation", "author")) != "mcp:"+client || str(path(first, "relation", "attrs", "kind")) != "midi-din" {
				t.Fatalf("graph_relate add: %v", first)
			}
			if txt := text(res); !strings.Contains(txt, "KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi {kind=midi-din}") {
				t.Errorf("graph_relate text %q", txt)
			}
			// The repeat: it already existed, nothing written.
			if added["action"] != "none" || added["existed"] != true || added["events"] != 0.0 || str(path(added, "relation", "id")) != relID {
				t.Fatalf("repeated add: %v", added)
			}
			evs := events(t, cn, map[string]any{"action": "relation.*"})
			if len(evs) != 1 || evs[0]["action"] != "relation.add" || evs[0]["target"] != relID ||
				evs[0]["actor"] != "mcp:"+client || evs[0]["message"] != "patched today" || evs[0]["request_id"] != first["request_id"] {
				t.Fatalf("relation events after add, repeat: %v", evs)
			}

			// Trace from the KeyStep: the cable, then the JD-Xi's observed sequencer
			// subscription to the DAW, where the signal ends.
			tr := sc.ok(cn, "graph_trace", map[string]any{"from": "keystep"})
			if tr["mode"] != "trace" || tr["from"] != "identity:keystep" || tr["direction"] != "out" || tr["found"] != true {
				t.Fatalf("trace: %v", tr)
			}
			var viaCable, toDAW bool
			for _, h := range hopsOf(tr) {
				if h["relation"] == relID && h["to"] == "identity:jdxi" && h["observed"] == false && h["from_port"] == "MIDI OUT" && h["depth"] == 1.0 {
					viaCable = true
				}
				if h["type"] == "subscribed" && h["observed"] == true && h["from"] == "identity:jdxi" && h["to_name"] == "Bitwig Studio" {
					toDAW = true
					if h["end"] != true || !strings.HasPrefix(str(h["to"]), "client:alsa:Bitwig Studio") {
						t.Errorf("the DAW hop: %v", h)
					}
				}
			}
			if !viaCable || !toDAW {
				t.Fatalf("trace hops (cable %v, to the DAW %v): %v", viaCable, toDAW, tr["hops"])
			}
			ends, _ := tr["ends"].([]any)
			if !slices.ContainsFunc(ends, func(v any) bool { return strings.HasPrefix(str(v), "client:alsa:Bitwig Studio") }) {
				t.Errorf("trace ends %v lack the DAW", ends)
			}
			wantLine := "KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi"
			var line string
			for _, l := range linesOf(tr) {
				if strings.HasPrefix(l, wantLine) && strings.HasSuffix(l, "Bitwig Studio (end)") && strings.Contains(l, "—subscribed*→") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("trace lines %q lack %q … Bitwig Studio (end)", tr["lines"], wantLine)
			}
			trText := text(cn.call("graph_trace", map[string]any{"from": "keystep"}))
			if !strings.Contains(trText, line) || !strings.Contains(trText, "observed") {
				t.Errorf("trace text %q lacks %q", trText, line)
			}
			// From its port only, and upstream from the DAW's side.
			port := sc.ok(cn, "graph_trace", map[string]any{"from": "keystep", "port": "midi out"})
			if port["port"] != "midi out" || len(hopsOf(port)) == 0 || hopsOf(port)[0]["relation"] != relID {
				t.Errorf("trace from port: %v", port)
			}
			up := sc.ok(cn, "graph_trace", map[string]any{"from": "jdxi", "direction": "in"})
			if !slices.ContainsFunc(hopsOf(up), func(h map[string]any) bool { return h["relation"] == relID && h["to"] == "identity:keystep" }) {
				t.Errorf("upstream trace from the JD-Xi lacks the KeyStep: %v", up["hops"])
			}

			// Path from the robot base (the FTDI adapter) to its USB controller.
			robotBase := demoDevice(t, cn, "FT232R")
			pa := sc.ok(cn, "graph_trace", map[string]any{"from": robotBase, "to": "usb:usb3"})
			if pa["mode"] != "path" || pa["found"] != true || len(hopsOf(pa)) == 0 {
				t.Fatalf("path robot base → controller: %v", pa)
			}
			for _, h := range hopsOf(pa) {
				if h["type"] != "via" || h["observed"] != true {
					t.Errorf("path hop %v: want an observed via", h)
				}
			}
			if last := hopsOf(pa)[len(hopsOf(pa))-1]; last["end"] != true || !strings.HasPrefix(str(pa["to"]), "device:") {
				t.Errorf("path end: %v (to %v)", last, pa["to"])
			}
			if vs := pa["vertices"].([]any); path(vs[len(vs)-1].(map[string]any), "infra") != true {
				t.Errorf("the controller's root hub is not marked infra: %v", vs)
			}
			if l := linesOf(pa); len(l) != 1 || !strings.Contains(l[0], "—via*→") || !strings.HasSuffix(l[0], "(end)") {
				t.Errorf("path lines %q", l)
			}

			// Browse: the cable is a neighbour of both ends, the subscription too.
			br := sc.ok(cn, "graph_browse", map[string]any{"id": "jdxi"})
			var cableEdge, subEdge map[string]any
			for _, ed := range br["edges"].([]any) {
				em := ed.(map[string]any)
				if em["relation"] == relID {
					cableEdge = em
				}
				if em["rel"] == "subscribed" && em["observed"] == true {
					subEdge = em
				}
			}
			if cableEdge == nil || cableEdge["from"] != "identity:keystep" || cableEdge["to"] != "identity:jdxi" || cableEdge["to_port"] != "MIDI IN" {
				t.Errorf("graph_browse jdxi: the cable %v in %v", cableEdge, br["edges"])
			}
			if subEdge == nil {
				t.Errorf("graph_browse jdxi lacks the observed subscription: %v", br["edges"])
			}
			var reached bool
			for _, n := range br["nodes"].([]any) {
				reached = reached || path(n.(map[string]any), "id") == "identity:keystep"
			}
			if !reached {
				t.Errorf("graph_browse jdxi did not reach the KeyStep through the cable: %v", br["nodes"])
			}
			// Deeper, each relation is listed once, though its ends (and the JD-Xi's
			// bound device, the same vertex) are all browsed.
			deep := sc.ok(cn, "graph_browse", map[string]any{"id": "jdxi", "depth": 2})
			listed := map[string]int{}
			for _, ed := range deep["edges"].([]any) {
				if id := str(ed.(map[string]any)["relation"]); id != "" {
					listed[id]++
				}
			}
			for id, n := range listed {
				if n > 1 {
					t.Errorf("graph_browse jdxi depth 2 lists %s %d times", id, n)
				}
			}
			if listed[relID] != 1 {
				t.Errorf("graph_browse jdxi depth 2 lists the cable %d times", listed[relID])
			}
			if txt := text(cn.call("graph_browse", map[string]any{"id": "jdxi", "depth": 2})); strings.Count(txt, "("+relID+")") != 1 {
				t.Errorf("graph_browse jdxi depth 2 text shows the cable %d times:\n%s", strings.Count(txt, "("+relID+")"), txt)
			}
			// The node resource carries the relations.
			var doc struct {
				Relations []relationView `json:"relations"`
				Total     int            `json:"relations_total"`
			}
			if err := json.Unmarshal([]byte(readText(t, cn, NodeURI("identity:keystep"))), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Total < 1 || !slices.ContainsFunc(doc.Relations, func(r relationView) bool { return r.ID == relID && r.ToName == "JD-Xi" }) {
				t.Errorf("node resource relations: %+v", doc)
			}
			// The relation types, to reuse.
			st := sc.ok(cn, "graph_suggest_tags", map[string]any{"namespace": "relation"})
			types := map[string]map[string]any{}
			for _, rt := range st["relation_types"].([]any) {
				types[str(path(rt.(map[string]any), "type"))] = rt.(map[string]any)
			}
			if types["cable"]["count"] != 1.0 || types["controls"] == nil || types["via"]["reserved"] != true {
				t.Errorf("relation types %v", types)
			}

			// Update the attrs; the same values again change nothing.
			up1 := sc.ok(cn, "graph_relate", map[string]any{"op": "update", "id": relID, "attrs": map[string]any{"kind": "midi-din", "colour": "red"}})
			if up1["action"] != "update" || str(path(up1, "relation", "attrs", "colour")) != "red" || up1["events"] != 1.0 {
				t.Fatalf("update: %v", up1)
			}
			up2 := sc.ok(cn, "graph_relate", map[string]any{"op": "update", "id": relID, "attrs": map[string]any{"kind": "midi-din", "colour": "red"}})
			if up2["action"] != "none" || up2["events"] != 0.0 {
				t.Errorf("update to the same values: %v", up2)
			}

			// Delete the KeyStep: its cable goes with it, recorded.
			sc.ok(cn, "graph_identity", map[string]any{"action": "delete", "id": "keystep"})
			rm := events(t, cn, map[string]any{"action": "relation.remove"})
			if len(rm) != 1 || rm[0]["target"] != relID {
				t.Fatalf("relation.remove after deleting the KeyStep: %v", rm)
			}
			if tr := sc.ok(cn, "graph_trace", map[string]any{"from": "jdxi", "direction": "in"}); slices.ContainsFunc(hopsOf(tr), func(h map[string]any) bool { return h["relation"] == relID }) {
				t.Errorf("the cable outlived the KeyStep: %v", tr["hops"])
			}
			// Restore it: the cable is back, with its id.
			sc.ok(cn, "graph_identity", map[string]any{"action": "restore", "id": "identity:keystep"})
			// (A repeat add must bring the attrs it has now; other attrs are a conflict.)
			msg := cn.fails("graph_relate", cable)
			if !strings.Contains(msg, relID) || !strings.Contains(msg, `graph_relate {"op":"update"`) {
				t.Errorf("add with other attrs: %q", msg)
			}
			cable["attrs"] = map[string]any{"kind": "midi-din", "colour": "red"}
			back := sc.ok(cn, "graph_relate", cable)
			if back["existed"] != true || str(path(back, "relation", "id")) != relID || str(path(back, "relation", "attrs", "colour")) != "red" {
				t.Fatalf("after restore: %v", back)
			}
			tr = sc.ok(cn, "graph_trace", map[string]any{"from": "keystep"})
			if !slices.ContainsFunc(linesOf(tr), func(l string) bool { return strings.HasPrefix(l, wantLine) }) {
				t.Errorf("trace after restore: %q", tr["lines"])
			}

			// Remove by tuple; a second remove finds nothing and says where to look.
			gone := sc.ok(cn, "graph_relate", map[string]any{"op": "remove", "from": "keystep", "from_port": "MIDI OUT", "type": "cable", "to": "jdxi", "to_port": "MIDI IN"})
			if gone["action"] != "remove" || str(path(gone, "relation", "id")) != relID || gone["events"] != 1.0 {
				t.Fatalf("remove: %v", gone)
			}
			msg = cn.fails("graph_relate", map[string]any{"op": "remove", "id": relID})
			if !strings.Contains(msg, relID) || !strings.Contains(msg, "graph_browse") {
				t.Errorf("removing it again: %q", msg)
			}
			acts := map[string]int{}
			for _, ev := range events(t, cn, map[string]any{"action": "relation.*"}) {
				acts[str(ev["action"])]++
			}
			if want := map[string]int{"relation.add": 2, "relation.update": 1, "relation.remove": 2}; !mapsEqual(acts, want) {
				// add, update, remove (delete), add back (restore), remove
				t.Errorf("relation events %v, want %v", acts, want)
			}
			// The relation's own history, by its id, after it is gone.
			if hist := events(t, cn, map[string]any{"target": relID}); len(hist) != 5 || hist[0]["action"] != "relation.remove" {
				t.Errorf("changelog of %s: %v", relID, hist)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRelationTools_Errors sends graph_relate and graph_trace every mistake the issue
// lists: each is an isError result naming the field and the next step in tool terms,
// nothing is written, and the server keeps serving.
func TestRelationTools_Errors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("stdio", true, "mistakes")
	sc := newSchemaChecker(t, cn)
	sc.ok(cn, "graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "JD-Xi", "slug": "jdxi"})
	sc.ok(cn, "graph_bind", map[string]any{"ref": "usb:3-3.1", "new_name": "Scarlett", "slug": "scarlett"})
	note := sc.ok(cn, "graph_note", map[string]any{"target": "jdxi", "body": "x"})
	noteID := str(path(note, "note", "id"))
	rel := sc.ok(cn, "graph_relate", map[string]any{"op": "add", "from": "jdxi", "from_port": "Out 1", "type": "cable", "to": "scarlett", "to_port": "Input 1", "attrs": map[string]any{"kind": "audio"}})
	relID := str(path(rel, "relation", "id"))
	before := len(events(t, cn, map[string]any{}))

	// An observed relation and a client to point at.
	var obsID, clientID string
	br := sc.ok(cn, "graph_browse", map[string]any{"id": "jdxi"})
	for _, ed := range br["edges"].([]any) {
		em := ed.(map[string]any)
		if em["observed"] == true && obsID == "" {
			obsID = str(em["relation"])
		}
		for _, end := range []string{str(em["from"]), str(em["to"])} {
			if strings.HasPrefix(end, "client:") && clientID == "" {
				clientID = end
			}
		}
	}
	if obsID == "" || clientID == "" {
		t.Fatalf("the demo rig's JD-Xi shows no observed relation or client: %v", br["edges"])
	}

	add := func(over map[string]any) map[string]any {
		a := map[string]any{"op": "add", "from": "jdxi", "type": "controls", "to": "scarlett"}
		for k, v := range over {
			if v == nil {
				delete(a, k)
			} else {
				a[k] = v
			}
		}
		return a
	}
	long := strings.Repeat("p", graph.MaxPort+1)
	missingID := relID[:len(relID)-1] + "0" // a relation id one character off
	if missingID == relID {
		missingID = relID[:len(relID)-1] + "1"
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"NoOp", "graph_relate", map[string]any{"from": "jdxi"}, []string{`needs the argument "op"`}},
		{"BadOp", "graph_relate", map[string]any{"op": "link"}, []string{`"op"`, "add, update, remove"}},
		{"NoFrom", "graph_relate", add(map[string]any{"from": nil}), []string{"from", "graph_find"}},
		{"NoType", "graph_relate", add(map[string]any{"type": nil}), []string{"type", "graph_suggest_tags"}},
		{"UnknownNode", "graph_relate", add(map[string]any{"to": "scarlet"}), []string{"scarlet", "identity:scarlett", "graph_find"}},
		{"TagEndpoint", "graph_relate", add(map[string]any{"to": "tag:role:synth"}), []string{"to", "tag"}},
		{"NoteEndpoint", "graph_relate", add(map[string]any{"to": noteID}), []string{"to", "note"}},
		{"RelationEndpoint", "graph_relate", add(map[string]any{"to": relID}), []string{"to", "relation"}},
		{"ClientEndpoint", "graph_relate", add(map[string]any{"to": clientID}), []string{"to", "client", "live"}},
		{"SelfLoop", "graph_relate", add(map[string]any{"to": "identity:jdxi"}), []string{"to", "self-loop"}},
		{"UnknownType", "graph_relate", add(map[string]any{"type": "cabel"}), []string{"type", "cabel", `"new_type": true`, "graph_suggest_tags"}},
		{"MalformedType", "graph_relate", add(map[string]any{"type": "Patch Cable!"}), []string{"type"}},
		{"ReservedType", "graph_relate", add(map[string]any{"type": "via"}), []string{"type", "via", "observed"}},
		{"CableWithoutKind", "graph_relate", add(map[string]any{"type": "cable"}), []string{"attrs", "kind", "midi-din"}},
		{"CableBadKind", "graph_relate", add(map[string]any{"type": "cable", "attrs": map[string]any{"kind": "optical"}}), []string{"attrs", "optical", "midi-din"}},
		{"OversizePort", "graph_relate", add(map[string]any{"from_port": long}), []string{"from_port", "64"}},
		{"AttrsNotObject", "graph_relate", add(map[string]any{"attrs": `{"kind":"audio"}`}), []string{`"attrs" must be a JSON object`}},
		{"AttrsNotStrings", "graph_relate", add(map[string]any{"attrs": map[string]any{"channel": 10.0}}), []string{"attrs.channel", `"channel": "10"`}},
		{"TooManyAttrs", "graph_relate", add(map[string]any{"attrs": manyAttrs(graph.MaxRelationAttrs + 1)}), []string{"attrs", "16"}},
		{"ConflictingAttrs", "graph_relate", map[string]any{"op": "add", "from": "jdxi", "from_port": "out 1", "type": "cable", "to": "scarlett", "to_port": "input 1", "attrs": map[string]any{"kind": "cv"}},
			[]string{relID, `graph_relate {"op":"update","id":"` + relID + `"}`}},
		{"AddWithID", "graph_relate", add(map[string]any{"id": relID}), []string{"id", "op update"}},
		{"UpdateNoID", "graph_relate", map[string]any{"op": "update", "attrs": map[string]any{"kind": "audio"}}, []string{"id", "graph_browse"}},
		{"UpdateNothing", "graph_relate", map[string]any{"op": "update", "id": relID}, []string{"attrs", "from_port"}},
		{"UpdateType", "graph_relate", map[string]any{"op": "update", "id": relID, "type": "controls"}, []string{"type", "op remove", "op add"}},
		{"UpdateObserved", "graph_relate", map[string]any{"op": "update", "id": obsID, "attrs": map[string]any{"a": "b"}}, []string{obsID, "observed"}},
		{"RemoveObserved", "graph_relate", map[string]any{"op": "remove", "id": obsID}, []string{obsID, "observed"}},
		{"RemoveMissing", "graph_relate", map[string]any{"op": "remove", "from": "jdxi", "type": "controls", "to": "scarlett"}, []string{"controls", "graph_browse"}},
		{"RemoveUnknownID", "graph_relate", map[string]any{"op": "remove", "id": missingID}, []string{"unknown relation", "graph_browse"}},
		{"UpdateUnknownID", "graph_relate", map[string]any{"op": "update", "id": missingID, "attrs": map[string]any{"kind": "audio"}}, []string{"unknown relation", "graph_browse"}},
		{"RemoveNothing", "graph_relate", map[string]any{"op": "remove"}, []string{"id", "from, type and to"}},
		{"RemoveBoth", "graph_relate", map[string]any{"op": "remove", "id": relID, "from": "jdxi"}, []string{"from", "not both"}},
		{"TraceUnknown", "graph_trace", map[string]any{"from": "identity:jdx1"}, []string{"jdx1", "identity:jdxi", "graph_find"}},
		{"PathUnknown", "graph_trace", map[string]any{"from": "jdxi", "to": "usb:9-9"}, []string{"usb:9-9", "graph_find"}},
		{"TraceBadDirection", "graph_trace", map[string]any{"from": "jdxi", "direction": "both"}, []string{`direction "both"`, "out (downstream) or in"}},
		{"PathDepth", "graph_trace", map[string]any{"from": "jdxi", "to": "scarlett", "max_depth": 9}, []string{"max_depth 9", "1-8 hops"}},
		{"PathDepthZero", "graph_trace", map[string]any{"from": "jdxi", "to": "scarlett", "max_depth": 0}, []string{"max_depth 0", "1-8 hops"}},
		{"TraceWithPathArgs", "graph_trace", map[string]any{"from": "jdxi", "directed": true}, []string{"directed", "give to"}},
		{"PathWithPort", "graph_trace", map[string]any{"from": "jdxi", "to": "scarlett", "port": "Out 1"}, []string{"port", "drop to"}},
	} {
		msg := cn.fails(tc.tool, tc.args)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, w)
			}
		}
		for _, cli := range []string{"devgraph ", "--new-type", "--attr"} {
			if strings.Contains(msg, cli) {
				t.Errorf("%s: %q speaks CLI (%q) to a model", tc.name, msg, cli)
			}
		}
	}
	if after := len(events(t, cn, map[string]any{})); after != before {
		t.Errorf("the mistakes wrote %d event(s)", after-before)
	}
	// A new type is minted only when asked for.
	nt := sc.ok(cn, "graph_relate", add(map[string]any{"type": "clocks", "new_type": true}))
	if nt["action"] != "add" || str(path(nt, "relation", "type")) != "clocks" {
		t.Fatalf("new_type: %v", nt)
	}
	sc.ok(cn, "graph_relate", add(map[string]any{"type": "clocks", "from": "scarlett", "to": "jdxi"})) // in use now
	// Still serving.
	sc.ok(cn, "graph_trace", map[string]any{"from": "jdxi"})
}

func manyAttrs(n int) map[string]any {
	m := map[string]any{"kind": "audio"}
	for i := 0; len(m) < n; i++ {
		m[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = "v"
	}
	return m
}

// TestRelationTools_CableCycle: a loop of cables terminates, marked, in a trace.
func TestRelationTools_CableCycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "looper")
	sc := newSchemaChecker(t, cn)
	for _, n := range []string{"A", "B", "C"} {
		sc.ok(cn, "graph_identity", map[string]any{"action": "create", "name": "Box " + n, "slug": strings.ToLower(n)})
	}
	for _, pair := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "a"}} {
		sc.ok(cn, "graph_relate", map[string]any{"op": "add", "from": pair[0], "from_port": "out", "type": "cable", "to": pair[1], "to_port": "in", "attrs": map[string]any{"kind": "audio"}})
	}
	tr := sc.ok(cn, "graph_trace", map[string]any{"from": "a"})
	hops := hopsOf(tr)
	if len(hops) != 3 || hops[2]["cycle"] != true || hops[2]["to"] != "identity:a" {
		t.Fatalf("cycle trace: %v", hops)
	}
	if l := linesOf(tr); len(l) != 1 || l[0] != "Box A [out] —cable→ [in] Box B [out] —cable→ [in] Box C [out] —cable→ [in] Box A (cycle: already on this branch)" {
		t.Errorf("cycle lines %q", l)
	}
}

// TestTraceRendering renders hand-built traversal results (fan-out, observed and reversed
// hops, a cycle, a cut branch, a path): the lines a model reads carry each hop's ports,
// type, kind and end.
func TestTraceRendering(t *testing.T) {
	t.Parallel()
	v := func(id, name string) *graph.Vertex {
		return &graph.Vertex{ID: id, Kind: graph.KindOf(id), Name: name}
	}
	tr := &graph.TraceResult{
		From: "identity:keystep", Port: "MIDI OUT", Direction: graph.DirOut,
		Hops: []graph.TraceHop{
			{Hop: graph.Hop{Relation: "rel:1", Type: "cable", From: "identity:keystep", FromPort: "MIDI OUT", To: "identity:jdxi", ToPort: "MIDI IN"}, Depth: 1, Parent: -1},
			{Hop: graph.Hop{Relation: "obs:2", Type: "subscribed", From: "identity:jdxi", FromNode: "device:jdxi", FromPort: "JD-Xi MIDI 1", To: "client:alsa:Bitwig Studio", Observed: true, Source: "alsa"}, Depth: 2, Parent: 0, End: true},
			{Hop: graph.Hop{Relation: "rel:3", Type: "cable", From: "identity:jdxi", FromPort: "THRU", To: "identity:keystep", ToPort: "MIDI IN"}, Depth: 2, Parent: 0, Cycle: true},
			{Hop: graph.Hop{Relation: "rel:4", Type: "controls", From: "identity:jdxi", To: "identity:far"}, Depth: 2, Parent: 0},
		},
		Ends:     []string{"client:alsa:Bitwig Studio"},
		Vertices: []*graph.Vertex{v("identity:keystep", "KeyStep"), v("identity:jdxi", "JD-Xi"), v("client:alsa:Bitwig Studio", "Bitwig Studio"), v("identity:far", "")},
		Bounded:  graph.Bounded{Truncated: true, TruncatedBy: graph.TruncDepth, Visited: 4},
	}
	out := viewTrace(tr)
	want := []string{
		"KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi [JD-Xi MIDI 1] —subscribed*→ Bitwig Studio (end)",
		"KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi [THRU] —cable→ [MIDI IN] KeyStep (cycle: already on this branch)",
		"KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi —controls→ identity:far (cut by a bound)",
	}
	if !slices.Equal(out.Lines, want) {
		t.Fatalf("lines\n%q\nwant\n%q", out.Lines, want)
	}
	txt := traceText(out)
	for _, w := range append(want, "Trace downstream from KeyStep [MIDI OUT]: 4 hop(s), 3 branch(es), ends: Bitwig Studio.", "* observed live", "Truncated by the hop limit (truncated_by depth") {
		if !strings.Contains(txt, w) {
			t.Errorf("text %q\nlacks %q", txt, w)
		}
	}
	if h := out.Hops[1]; h.FromName != "JD-Xi" || h.ToName != "Bitwig Studio" || h.FromNode != "device:jdxi" || !h.Observed || h.Source != "alsa" || h.Parent != 0 {
		t.Errorf("hop view %+v", h)
	}

	empty := viewTrace(&graph.TraceResult{From: "identity:jdxi", Direction: graph.DirIn, Vertices: []*graph.Vertex{v("identity:jdxi", "JD-Xi")}})
	if txt := traceText(empty); !strings.Contains(txt, "Nothing leads upstream from JD-Xi") || !strings.Contains(txt, "graph_relate") || empty.Found || empty.Lines == nil || empty.Ends == nil {
		t.Errorf("empty trace %+v: %q", empty, txt)
	}

	pr := &graph.PathResult{From: "device:base", To: "device:root", Found: true,
		Hops: []graph.Hop{
			{Relation: "obs:a", Type: "via", From: "device:base", To: "device:hub", Observed: true, Source: "usb"},
			{Relation: "obs:b", Type: "via", From: "device:hub", To: "device:root", Observed: true, Source: "usb"},
			{Relation: "rel:c", Type: "mounted_on", From: "device:root", To: "identity:x", Reverse: true},
		},
		Vertices: []*graph.Vertex{v("device:base", "FT232R USB UART"), v("device:hub", "USB2.0 Hub"), v("device:root", "xHCI Host Controller")},
	}
	po := viewPath(pr, false)
	if want := []string{"FT232R USB UART —via*→ USB2.0 Hub —via*→ xHCI Host Controller ←mounted_on— identity:x (end)"}; !slices.Equal(po.Lines, want) {
		t.Errorf("path lines %q, want %q", po.Lines, want)
	}
	if txt := pathText(po); !strings.Contains(txt, "Path from FT232R USB UART to xHCI Host Controller, 3 hop(s):") {
		t.Errorf("path text %q", txt)
	}
	if txt := pathText(viewPath(&graph.PathResult{From: "device:base", To: "device:x"}, true)); !strings.Contains(txt, "No path") || !strings.Contains(txt, "without directed") {
		t.Errorf("no path text %q", txt)
	}
}

// TestRelationTools_NodeSubscribers: a relation added or removed is a change of both its
// ends' node resources, so their subscribers hear of it, and each reads the relation
// back (or no longer).
func TestRelationTools_NodeSubscribers(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		t.Run(modeName("http", modern), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			cn := e.dial("http", modern, "watcher")
			ctx := context.Background()
			for _, slug := range []string{"left", "right"} {
				cn.ok("graph_identity", map[string]any{"action": "create", "name": "Box " + slug, "slug": slug})
			}
			uris := []string{NodeURI("left"), NodeURI("identity:right")}
			t.Cleanup(cn.subscribe(ctx, uris...))
			waitFor(t, func() bool { return e.srv.subs.count() >= len(uris) }, "subscriptions recorded")

			rel := cn.ok("graph_relate", map[string]any{"op": "add", "from": "left", "type": "powered_by", "to": "right"})
			relID := str(path(rel, "relation", "id"))
			for _, uri := range uris {
				cn.waitNote(string(mcp.MethodNotificationResourceUpdated), updatedFor(uri), 20*time.Second)
				if txt := readText(t, cn, uri); !strings.Contains(txt, relID) || !strings.Contains(txt, `"relations_total": 1`) {
					t.Errorf("%s after relate: %.400s", uri, txt)
				}
			}
			before := len(cn.notesOf(string(mcp.MethodNotificationResourceUpdated)))
			cn.ok("graph_relate", map[string]any{"op": "remove", "id": relID})
			waitFor(t, func() bool {
				heard := map[string]bool{}
				for _, n := range cn.notesOf(string(mcp.MethodNotificationResourceUpdated))[before:] {
					heard[str(n.Params.AdditionalFields["uri"])] = true
				}
				return heard[uris[0]] && heard[uris[1]]
			}, "updates for both ends after the remove")
			if txt := readText(t, cn, uris[1]); strings.Contains(txt, relID) {
				t.Errorf("%s still shows the removed relation: %.400s", uris[1], txt)
			}
		})
	}
}

// TestRelationTools_BrowseFellowDevice: browsing one of an identity's two devices walks a
// relation on the other device on to its far end, not to that fellow device (the two are
// one vertex with the identity).
func TestRelationTools_BrowseFellowDevice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "browser")
	sc := newSchemaChecker(t, cn)
	keystepRef := demoDevice(t, cn, "keystep")
	sc.ok(cn, "graph_bind", map[string]any{"ref": keystepRef, "new_name": "KeyStep", "slug": "keystep"})
	sc.ok(cn, "graph_bind", map[string]any{"ref": "usb:3-7", "identity": "keystep", "force": true})
	sc.ok(cn, "graph_identity", map[string]any{"action": "create", "name": "Power strip", "slug": "strip"})
	sc.ok(cn, "graph_relate", map[string]any{"op": "add", "from": "strip", "type": "controls", "to": "usb:3-7"})
	br := sc.ok(cn, "graph_browse", map[string]any{"id": keystepRef})
	var ids []string
	for _, n := range br["nodes"].([]any) {
		ids = append(ids, str(path(n.(map[string]any), "id")))
	}
	if !slices.Contains(ids, "identity:strip") {
		t.Errorf("graph_browse %s did not reach the power strip through its fellow device's relation: %v", keystepRef, ids)
	}
}
