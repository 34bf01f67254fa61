package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// verify asserts the changelog chain is whole.
func verifyDB(t *testing.T, db *store.DB) {
	t.Helper()
	r, err := db.VerifyChangelog(context.Background())
	if err != nil || !r.OK {
		t.Fatalf("changelog verify: %+v %v", r, err)
	}
}

// written is what a write could change: the event count and every declared relation.
type written struct {
	events uint64
	rels   string
}

func state(t *testing.T, db *store.DB) written {
	t.Helper()
	ctx := context.Background()
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rels []*graph.Relation
	var total int
	for after := ""; ; {
		page, n, next, err := db.FindRelations(ctx, graph.RelationFilter{First: graph.MaxPageSize, After: after})
		if err != nil {
			t.Fatal(err)
		}
		rels, total = append(rels, page...), n
		if after = next; next == "" {
			break
		}
	}
	if total != len(rels) {
		t.Fatalf("relation total %d, listed %d", total, len(rels))
	}
	b, _ := json.Marshal(rels)
	return written{st.Events, string(b)}
}

func mustUnchanged(t *testing.T, db *store.DB, before written, what string) {
	t.Helper()
	if after := state(t, db); after != before {
		t.Fatalf("%s wrote something: events %d → %d, relations %s → %s", what, before.events, after.events, before.rels, after.rels)
	}
}

// relFixture opens a real file with three identities and two devices, one of them bound.
func relFixture(t *testing.T) (*store.DB, context.Context) {
	t.Helper()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:alice")
	for _, c := range []graph.IdentityCreate{
		{Name: "Arturia KeyStep", Slug: "keystep"},
		{Name: "Roland JD-Xi", Slug: "jdxi"},
		{Name: "Scout", Slug: "scout"},
	} {
		if _, err := db.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	snap := &graph.Snapshot{Devices: []*graph.ObservedDevice{
		dev("path:1c75:0263:3-3.1", "usb:3-3.1", fp("usb_id", "1c75:0263"), fp("usb_path", "3-3.1")),
		dev("path:0582:01a9:3-3.2", "usb:3-3.2", fp("usb_id", "0582:01a9"), fp("usb_path", "3-3.2")),
	}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	if _, err := db.ObserveDevices(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", IdentityID: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	return db, ctx
}

func cable(from, fromPort, to, toPort, kind string) graph.RelationCreate {
	return graph.RelationCreate{From: from, FromPort: fromPort, Type: "cable", To: to, ToPort: toPort, Attrs: map[string]string{"kind": kind}}
}

func relEvents(t *testing.T, db *store.DB, target string) []*graph.Event {
	t.Helper()
	return allEvents(t, db, graph.EventFilter{Target: target, Action: "relation.*"})
}

func TestRelation_AddRepeatUpdateRemove(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	ctx = graph.WithRequestID(ctx, "req-add")

	ch, err := db.Relate(ctx, cable("keystep", " MIDI  OUT ", "identity:jdxi", "MIDI IN", "MIDI-DIN"))
	if err != nil {
		t.Fatal(err)
	}
	r := ch.Relation
	if ch.Action != "add" || ch.Events != 1 || !strings.HasPrefix(r.ID, "rel:") || r.From != "identity:keystep" || r.To != "identity:jdxi" ||
		r.FromPort != "MIDI OUT" || r.ToPort != "MIDI IN" || r.Attrs["kind"] != "midi-din" || r.Author != "cli:alice" || r.Created.IsZero() {
		t.Fatalf("add: %+v %+v", ch, r)
	}
	evs := relEvents(t, db, r.ID)
	if len(evs) != 1 || evs[0].Action != graph.ActRelationAdd || evs[0].RequestID != "req-add" || evs[0].Before != nil || evs[0].Target != r.ID {
		t.Fatalf("add events %+v", evs)
	}
	var after graph.Relation
	if err := json.Unmarshal(evs[0].After, &after); err != nil || after.ID != r.ID || after.FromPort != "MIDI OUT" {
		t.Fatalf("after %s %v", evs[0].After, err)
	}
	// indexed under both ends too
	for _, n := range []string{"identity:keystep", "identity:jdxi"} {
		if evs := relEvents(t, db, n); len(evs) != 1 || evs[0].Target != r.ID {
			t.Fatalf("events of %s: %+v", n, evs)
		}
	}
	verifyDB(t, db)

	// A repeat (ports in another case, same attrs) returns it and writes nothing.
	before := state(t, db)
	again, err := db.Relate(ctx, cable("identity:keystep", "midi out", "jdxi", "midi in", "midi-din"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Action != "none" || again.Events != 0 || again.Relation.ID != r.ID || again.Relation.FromPort != "MIDI OUT" {
		t.Fatalf("repeat: %+v %+v", again, again.Relation)
	}
	mustUnchanged(t, db, before, "a repeat add")
	// Same tuple, other attrs: a conflict naming the existing relation.
	_, err = db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "trs-midi"))
	mustCode(t, err, graph.ECONFLICT)
	if !strings.Contains(err.Error(), r.ID) || !strings.Contains(err.Error(), "update") {
		t.Fatalf("conflict message %q", err)
	}
	mustUnchanged(t, db, before, "a conflicting add")

	// Found by id (with or without its prefix), and on both nodes.
	for _, id := range []string{r.ID, strings.TrimPrefix(r.ID, "rel:")} {
		got, err := db.FindRelationByID(ctx, id)
		if err != nil || got.ID != r.ID || got.Attrs["kind"] != "midi-din" {
			t.Fatalf("FindRelationByID(%s) %+v %v", id, got, err)
		}
	}

	// Update attrs and a port.
	ctx2 := graph.WithRequestID(ctxActor("mcp:claude"), "req-upd")
	port := "MIDI Out 1"
	up, err := db.UpdateRelation(ctx2, r.ID, graph.RelationUpdate{FromPort: &port, Attrs: map[string]string{"kind": "midi-din", "Length": " 2m "}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Action != "update" || up.Relation.ID != r.ID || up.Relation.FromPort != "MIDI Out 1" || up.Relation.Attrs["length"] != "2m" || up.Relation.Updated.IsZero() || up.Relation.Author != "cli:alice" {
		t.Fatalf("update %+v %+v", up, up.Relation)
	}
	evs = relEvents(t, db, r.ID)
	if len(evs) != 2 || evs[0].Action != graph.ActRelationUpdate || evs[0].RequestID != "req-upd" || evs[0].Before == nil || evs[0].After == nil || evs[0].Actor != "mcp:claude" {
		t.Fatalf("update events %+v", evs)
	}
	// the old tuple is free, the new one taken
	if again, err := db.Relate(ctx, graph.RelationCreate{From: "keystep", FromPort: "midi out 1", Type: "cable", To: "jdxi", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din", "length": "2m"}}); err != nil || again.Action != "none" {
		t.Fatalf("repeat of updated %+v %v", again, err)
	}
	// an update to the same values writes nothing
	before = state(t, db)
	same, err := db.UpdateRelation(ctx2, r.ID, graph.RelationUpdate{FromPort: &port})
	if err != nil || same.Action != "none" {
		t.Fatalf("same update %+v %v", same, err)
	}
	mustUnchanged(t, db, before, "an update to the same values")
	// a cable keeps its kind
	_, err = db.UpdateRelation(ctx2, r.ID, graph.RelationUpdate{Attrs: map[string]string{}})
	mustCode(t, err, graph.EINVALID)
	mustUnchanged(t, db, before, "an update dropping the cable kind")
	verifyDB(t, db)

	// Dry runs write nothing but say what they would do.
	dry, err := db.Relate(ctx, graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi", DryRun: true})
	if err != nil || dry.Action != "add" || !dry.DryRun || dry.Relation.ID == "" {
		t.Fatalf("dry add %+v %v", dry, err)
	}
	mustUnchanged(t, db, before, "a dry-run add")
	dry, err = db.Unrelate(ctx, graph.RelationRemove{ID: r.ID, DryRun: true})
	if err != nil || dry.Action != "remove" || !dry.DryRun {
		t.Fatalf("dry remove %+v %v", dry, err)
	}
	mustUnchanged(t, db, before, "a dry-run remove")

	// A tuple without the ports names the relation that has them, rather than saying
	// there is none.
	_, err = db.Unrelate(ctx, graph.RelationRemove{From: "keystep", Type: "cable", To: "jdxi"})
	mustCode(t, err, graph.ENOTFOUND)
	if msg := graph.ErrorMessage(err); !strings.Contains(msg, r.ID) || !strings.Contains(strings.ToLower(msg), "midi out 1") {
		t.Errorf("remove without ports: %q, want the cable's id %s and its ports", msg, r.ID)
	}
	mustUnchanged(t, db, before, "a remove without the ports")

	// Remove by tuple.
	ctx3 := graph.WithRequestID(ctx, "req-rm")
	rm, err := db.Unrelate(ctx3, graph.RelationRemove{From: "keystep", FromPort: "MIDI OUT 1", Type: "Cable", To: "jdxi", ToPort: "midi in"})
	if err != nil || rm.Action != "remove" || rm.Relation.ID != r.ID {
		t.Fatalf("remove %+v %v", rm, err)
	}
	evs = relEvents(t, db, r.ID)
	if len(evs) != 3 || evs[0].Action != graph.ActRelationRemove || evs[0].After != nil || evs[0].Before == nil || evs[0].RequestID != "req-rm" {
		t.Fatalf("remove events %+v", evs)
	}
	_, err = db.FindRelationByID(ctx, r.ID)
	mustCode(t, err, graph.ENOTFOUND)
	before = state(t, db)
	_, err = db.Unrelate(ctx, graph.RelationRemove{ID: r.ID})
	mustCode(t, err, graph.ENOTFOUND)
	_, err = db.Unrelate(ctx, graph.RelationRemove{From: "keystep", Type: "cable", To: "jdxi"})
	mustCode(t, err, graph.ENOTFOUND)
	mustUnchanged(t, db, before, "removing a missing relation")
	if rels, total, _, err := db.FindRelations(ctx, graph.RelationFilter{}); err != nil || total != 0 || len(rels) != 0 {
		t.Fatalf("after remove %v %d %v", rels, total, err)
	}
	verifyDB(t, db)
}

func TestRelation_IndexesCountersTypes(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	add := func(c graph.RelationCreate) *graph.Relation {
		t.Helper()
		ch, err := db.Relate(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return ch.Relation
	}
	a := add(cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	b := add(graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi"})
	c := add(graph.RelationCreate{From: "usb:3-3.1", Type: "mounted_on", To: "scout"})
	d := add(graph.RelationCreate{From: "jdxi", Type: "sits_on", To: "scout", NewType: true})
	e := add(cable("usb:3-3.2", "USB", "keystep", "", "usb"))

	ids := func(rs []*graph.Relation) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	join := func(rs ...*graph.Relation) string { return ids(rs) }
	list := func(f graph.RelationFilter) ([]*graph.Relation, int, string) {
		t.Helper()
		rs, total, next, err := db.FindRelations(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return rs, total, next
	}
	// both ways, sorted by id
	if rs, total, _ := list(graph.RelationFilter{Node: "keystep"}); ids(rs) != join(a, b, e) || total != 3 {
		t.Fatalf("keystep both: %s (%d)", ids(rs), total)
	}
	if rs, total, _ := list(graph.RelationFilter{Node: "keystep", Direction: "out"}); ids(rs) != join(a, b) || total != 2 {
		t.Fatalf("keystep out: %s (%d)", ids(rs), total)
	}
	if rs, total, _ := list(graph.RelationFilter{Node: "identity:keystep", Direction: "in"}); ids(rs) != join(e) || total != 1 {
		t.Fatalf("keystep in: %s (%d)", ids(rs), total)
	}
	if rs, total, _ := list(graph.RelationFilter{Node: "jdxi", Direction: "in"}); ids(rs) != join(a, b) || total != 2 {
		t.Fatalf("jdxi in: %s (%d)", ids(rs), total)
	}
	// a device's own relations (no vertex expansion in the store)
	if rs, total, _ := list(graph.RelationFilter{Node: "usb:3-3.2"}); ids(rs) != join(e) || total != 1 {
		t.Fatalf("device: %s (%d)", ids(rs), total)
	}
	if rs, total, _ := list(graph.RelationFilter{Node: "scout", Types: []string{"Mounted_On"}}); ids(rs) != join(c) || total != 1 {
		t.Fatalf("scout mounted_on: %s (%d)", ids(rs), total)
	}
	// paging, a node and the whole set
	rs, total, next := list(graph.RelationFilter{Node: "keystep", First: 2})
	if ids(rs) != join(a, b) || total != 3 || next != b.ID {
		t.Fatalf("page 1: %s %d %s", ids(rs), total, next)
	}
	if rs, total, next := list(graph.RelationFilter{Node: "keystep", First: 2, After: next}); ids(rs) != join(e) || total != 3 || next != "" {
		t.Fatalf("page 2: %s %d %s", ids(rs), total, next)
	}
	rs, total, next = list(graph.RelationFilter{First: 3})
	if ids(rs) != join(a, b, c) || total != 5 || next != c.ID {
		t.Fatalf("all page 1: %s %d %s", ids(rs), total, next)
	}
	if rs, _, next := list(graph.RelationFilter{First: 3, After: next}); ids(rs) != join(d, e) || next != "" {
		t.Fatalf("all page 2: %s %s", ids(rs), next)
	}
	if rs, total, _ := list(graph.RelationFilter{Types: []string{"cable"}}); ids(rs) != join(a, e) || total != 2 {
		t.Fatalf("cables: %s (%d)", ids(rs), total)
	}
	if rs, total, _ := list(graph.RelationFilter{Types: []string{"cable", "controls"}, First: 2}); ids(rs) != join(a, b) || total != 3 {
		t.Fatalf("cables+controls: %s (%d)", ids(rs), total)
	}
	// RelationsOf: both directions, several nodes, no duplicates, unknown nodes none
	got, err := db.RelationsOf(ctx, []string{"identity:keystep", "identity:scout", "identity:nope", "identity:jdxi"})
	if err != nil || ids(got) != join(a, b, c, d, e) {
		t.Fatalf("RelationsOf: %s %v", ids(got), err)
	}
	// type counts: seeded and reserved listed, new type counted
	types, err := db.RelationTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tc := map[string]graph.RelationTypeCount{}
	for _, x := range types {
		tc[x.Type] = x
	}
	if tc["cable"].Count != 2 || !tc["cable"].Seeded || tc["sits_on"].Count != 1 || tc["sits_on"].Seeded || !tc["via"].Reserved || tc["part_of"].Count != 0 || !tc["part_of"].Seeded {
		t.Fatalf("types %+v", types)
	}
	// a type in use needs no --new-type any more
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "keystep", Type: "sits_on", To: "scout"}); err != nil {
		t.Fatal(err)
	}
	// the last of a type removed: it is no longer in use
	if _, err := db.Unrelate(ctx, graph.RelationRemove{ID: d.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Unrelate(ctx, graph.RelationRemove{From: "keystep", Type: "sits_on", To: "scout"}); err != nil {
		t.Fatal(err)
	}
	types, _ = db.RelationTypes(ctx)
	for _, x := range types {
		if x.Type == "sits_on" {
			t.Fatalf("sits_on still listed: %+v", x)
		}
	}
	_, err = db.Relate(ctx, graph.RelationCreate{From: "keystep", Type: "sits_on", To: "scout"})
	mustCode(t, err, graph.EINVALID)
	verifyDB(t, db)
}

func TestRelation_BadInput(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "jdxi", []string{"role:synth"}, nil); err != nil {
		t.Fatal(err)
	}
	ok, err := db.Relate(ctx, graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi"})
	if err != nil {
		t.Fatal(err)
	}
	notes, _, _, _ := db.FindNotes(ctx, graph.NoteFilter{Target: "jdxi"})
	long := strings.Repeat("x", 65)
	big := map[string]string{}
	for i := 0; i < 17; i++ {
		big[string(rune('a'+i))] = "v"
	}
	cases := []struct {
		name  string
		c     graph.RelationCreate
		code  string
		field string
		want  string
	}{
		{"unknown from", graph.RelationCreate{From: "keystap", Type: "controls", To: "jdxi"}, graph.ENOTFOUND, "from", "did you mean identity:keystep"},
		{"unknown to", graph.RelationCreate{From: "keystep", Type: "controls", To: "identity:jdx"}, graph.ENOTFOUND, "to", "did you mean identity:jdxi"},
		{"to a tag", graph.RelationCreate{From: "keystep", Type: "controls", To: "tag:role:synth"}, graph.EINVALID, "to", "tags are not"},
		{"from a note", graph.RelationCreate{From: notes[0].ID, Type: "controls", To: "jdxi"}, graph.EINVALID, "from", "notes are not"},
		{"to a relation", graph.RelationCreate{From: "keystep", Type: "controls", To: ok.Relation.ID}, graph.EINVALID, "to", "relations are not"},
		{"to a client", graph.RelationCreate{From: "keystep", Type: "controls", To: "client:alsa:Bitwig Studio"}, graph.EINVALID, "to", "live endpoints cannot be declared"},
		{"self-loop", graph.RelationCreate{From: "keystep", Type: "controls", To: "identity:keystep"}, graph.EINVALID, "to", "self-loop"},
		{"self-loop through a device", graph.RelationCreate{From: "usb:3-3.2", Type: "controls", To: "device:path:0582:01a9:3-3.2"}, graph.EINVALID, "to", "self-loop"},
		{"reserved type", graph.RelationCreate{From: "keystep", Type: "via", To: "jdxi"}, graph.EINVALID, "type", "via is observed only; the sources add it"},
		{"unknown type", graph.RelationCreate{From: "keystep", Type: "cabel", To: "jdxi"}, graph.EINVALID, "type", "ask for a new type"},
		{"malformed type", graph.RelationCreate{From: "keystep", Type: "plugs into", To: "jdxi", NewType: true}, graph.EINVALID, "type", "a-z 0-9"},
		{"empty type", graph.RelationCreate{From: "keystep", To: "jdxi"}, graph.EINVALID, "type", "type is empty"},
		{"long type", graph.RelationCreate{From: "keystep", Type: strings.Repeat("a", 33), To: "jdxi", NewType: true}, graph.EINVALID, "type", ""},
		{"oversize port", graph.RelationCreate{From: "keystep", FromPort: long, Type: "controls", To: "jdxi"}, graph.EINVALID, "from_port", "limit is 64"},
		{"NUL port", graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi", ToPort: "a\x00b"}, graph.EINVALID, "to_port", "NUL"},
		{"bad UTF-8 port", graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi", ToPort: "a\xffb"}, graph.EINVALID, "to_port", "UTF-8"},
		{"too many attrs", graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi", Attrs: big}, graph.EINVALID, "attrs", "17 keys"},
		{"oversize attr", graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi", Attrs: map[string]string{"colour": strings.Repeat("r", 257)}}, graph.EINVALID, "attrs", "limit is 256"},
		{"cable without kind", graph.RelationCreate{From: "keystep", Type: "cable", To: "jdxi"}, graph.EINVALID, "attrs", "needs attrs.kind"},
		{"cable of an unknown kind", cable("keystep", "", "jdxi", "", "hdmi"), graph.EINVALID, "attrs", "midi-din"},
		{"empty from", graph.RelationCreate{Type: "controls", To: "jdxi"}, graph.EINVALID, "from", "from is empty"},
	}
	before := state(t, db)
	for _, tc := range cases {
		for _, dry := range []bool{false, true} {
			c := tc.c
			c.DryRun = dry
			_, err := db.Relate(ctx, c)
			if graph.ErrorCode(err) != tc.code || graph.ErrorField(err) != tc.field || !strings.Contains(graph.ErrorMessage(err), tc.want) {
				t.Errorf("%s (dry %v): code %s field %q message %q; want %s %q containing %q", tc.name, dry, graph.ErrorCode(err), graph.ErrorField(err), graph.ErrorMessage(err), tc.code, tc.field, tc.want)
			}
			if tc.name == "unknown type" && !slices.Contains(graph.ErrorSteps(err), graph.PassStep("new_type", "true")) {
				t.Errorf("unknown type: steps %+v lack passing new_type", graph.ErrorSteps(err))
			}
		}
	}
	mustUnchanged(t, db, before, "bad input")
	// update and remove
	_, err = db.UpdateRelation(ctx, "rel:0190aaaa-0000-7000-8000-000000000000", graph.RelationUpdate{Attrs: map[string]string{"a": "b"}})
	mustCode(t, err, graph.ENOTFOUND)
	_, err = db.UpdateRelation(ctx, "obs:0123456789abcdef", graph.RelationUpdate{Attrs: map[string]string{"a": "b"}})
	mustCode(t, err, graph.EINVALID)
	_, err = db.UpdateRelation(ctx, ok.Relation.ID, graph.RelationUpdate{ToPort: &long})
	mustCode(t, err, graph.EINVALID)
	if graph.ErrorField(err) != "to_port" {
		t.Errorf("field %q", graph.ErrorField(err))
	}
	_, err = db.Unrelate(ctx, graph.RelationRemove{ID: "obs:0123456789abcdef"})
	mustCode(t, err, graph.EINVALID)
	_, err = db.Unrelate(ctx, graph.RelationRemove{})
	mustCode(t, err, graph.EINVALID)
	typo := ok.Relation.ID[:len(ok.Relation.ID)-1] + "0"
	if typo == ok.Relation.ID {
		typo = ok.Relation.ID[:len(ok.Relation.ID)-1] + "1"
	}
	_, err = db.Unrelate(ctx, graph.RelationRemove{ID: typo})
	mustCode(t, err, graph.ENOTFOUND)
	if !strings.Contains(err.Error(), "did you mean "+ok.Relation.ID) {
		t.Errorf("no suggestion: %v", err)
	}
	_, _, _, err = db.FindRelations(ctx, graph.RelationFilter{Node: "keystep", Direction: "sideways"})
	mustCode(t, err, graph.EINVALID)
	_, _, _, err = db.FindRelations(ctx, graph.RelationFilter{Node: "nope"})
	mustCode(t, err, graph.ENOTFOUND)
	mustUnchanged(t, db, before, "bad updates and removes")
	verifyDB(t, db)
}

func TestRelation_DeleteAndRestoreCascade(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	a, _ := db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	b, _ := db.Relate(ctx, graph.RelationCreate{From: "scout", Type: "controls", To: "keystep"})
	dv, err := db.Relate(ctx, graph.RelationCreate{From: "usb:3-3.2", Type: "mounted_on", To: "scout"})
	if err != nil || a == nil || b == nil {
		t.Fatal(a, b, err)
	}
	// a relation on jdxi's bound device is unaffected by deleting jdxi
	del := graph.WithRequestID(ctx, "req-del")
	if err := db.DeleteIdentity(del, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindRelationByID(ctx, a.Relation.ID); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("jdxi's cable survived its delete: %v", err)
	}
	if r, err := db.FindRelationByID(ctx, dv.Relation.ID); err != nil || r.From != "device:path:0582:01a9:3-3.2" {
		t.Fatalf("device relation %+v %v", r, err)
	}
	evs := relEvents(t, db, a.Relation.ID)
	if len(evs) != 2 || evs[0].Action != graph.ActRelationRemove || evs[0].RequestID != "req-del" {
		t.Fatalf("cable events %+v", evs)
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "keystep"}); total != 1 || rs[0].ID != b.Relation.ID {
		t.Fatalf("keystep after delete: %+v %d", rs, total)
	}
	verifyDB(t, db)
	// a second delete-and-restore cycle must find the right request's relations
	res := graph.WithRequestID(ctx, "req-restore")
	if _, err := db.RestoreIdentity(res, "jdxi"); err != nil {
		t.Fatal(err)
	}
	r, err := db.FindRelationByID(ctx, a.Relation.ID)
	if err != nil || r.From != "identity:keystep" || r.To != "identity:jdxi" || r.FromPort != "MIDI OUT" || r.Author != "cli:alice" || !r.Created.Equal(a.Relation.Created) || r.Attrs["kind"] != "midi-din" {
		t.Fatalf("restored cable %+v %v", r, err)
	}
	evs = relEvents(t, db, a.Relation.ID)
	if len(evs) != 3 || evs[0].Action != graph.ActRelationAdd || evs[0].RequestID != "req-restore" {
		t.Fatalf("cable events after restore %+v", evs)
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "jdxi", Direction: "in"}); total != 1 || rs[0].ID != a.Relation.ID {
		t.Fatalf("jdxi in after restore: %+v %d", rs, total)
	}
	// the repeat add is a no-op again: the tuple index is back
	if again, err := db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din")); err != nil || again.Action != "none" || again.Relation.ID != a.Relation.ID {
		t.Fatalf("repeat after restore %+v %v", again, err)
	}
	verifyDB(t, db)

	// deleting keystep now removes the restored cable and the controls relation
	if err := db.DeleteIdentity(graph.WithRequestID(ctx, "req-del2"), "keystep"); err != nil {
		t.Fatal(err)
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 1 || rs[0].ID != dv.Relation.ID {
		t.Fatalf("after deleting keystep: %+v %d", rs, total)
	}
	// scout is deleted too: restoring keystep brings back the cable only
	if err := db.DeleteIdentity(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 1 || rs[0].ID != a.Relation.ID {
		t.Fatalf("after restoring keystep: %+v %d", rs, total)
	}
	types, _ := db.RelationTypes(ctx)
	for _, x := range types {
		if (x.Type == "cable" && x.Count != 1) || (x.Type == "controls" && x.Count != 0) || (x.Type == "mounted_on" && x.Count != 0) {
			t.Fatalf("type counts %+v", types)
		}
	}
	verifyDB(t, db)
}

func TestRelation_MergeMovesCollapses(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi duplicate", Slug: "jdxi-2"}); err != nil {
		t.Fatal(err)
	}
	add := func(c graph.RelationCreate) *graph.Relation {
		t.Helper()
		ch, err := db.Relate(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return ch.Relation
	}
	keep := add(cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))        // the survivor's
	dup := add(cable("keystep", "midi out", "jdxi-2", "midi in", "midi-din"))       // becomes keep: collapses
	loop := add(graph.RelationCreate{From: "jdxi-2", Type: "controls", To: "jdxi"}) // becomes a self-loop
	moved := add(graph.RelationCreate{From: "jdxi-2", Type: "mounted_on", To: "scout"})
	in := add(graph.RelationCreate{From: "usb:3-3.1", Type: "controls", To: "jdxi-2"})

	if _, err := db.MergeIdentities(graph.WithRequestID(ctx, "req-merge"), "jdxi-2", "jdxi"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []*graph.Relation{dup, loop} {
		if _, err := db.FindRelationByID(ctx, gone.ID); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("%s survived the merge: %v", gone.ID, err)
		}
		evs := relEvents(t, db, gone.ID)
		if evs[0].Action != graph.ActRelationRemove || evs[0].RequestID != "req-merge" {
			t.Fatalf("%s events %+v", gone.ID, evs)
		}
	}
	for _, m := range []*graph.Relation{moved, in} {
		r, err := db.FindRelationByID(ctx, m.ID)
		if err != nil || (r.From != "identity:jdxi" && r.To != "identity:jdxi") || r.Updated.IsZero() {
			t.Fatalf("%s after merge %+v %v", m.ID, r, err)
		}
		evs := relEvents(t, db, m.ID)
		if len(evs) != 2 || evs[0].Action != graph.ActRelationUpdate || evs[0].RequestID != "req-merge" || evs[0].Before == nil || evs[0].After == nil {
			t.Fatalf("%s events %+v", m.ID, evs)
		}
		var before graph.Relation
		json.Unmarshal(evs[0].Before, &before)
		if before.From != "identity:jdxi-2" && before.To != "identity:jdxi-2" {
			t.Fatalf("before %+v", before)
		}
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "jdxi"}); total != 3 || len(rs) != 3 {
		t.Fatalf("jdxi after merge %d %+v", total, rs)
	}
	if rs, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "keystep"}); total != 1 || rs[0].ID != keep.ID {
		t.Fatalf("keystep after merge %d %+v", total, rs)
	}
	if rs, err := db.RelationsOf(ctx, []string{"identity:jdxi-2"}); err != nil || len(rs) != 0 {
		t.Fatalf("merged-away identity keeps %+v %v", rs, err)
	}
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 3 {
		t.Fatalf("total %d", total)
	}
	// the moved relation's tuple index moved with it
	if again, err := db.Relate(ctx, graph.RelationCreate{From: "jdxi", Type: "mounted_on", To: "scout"}); err != nil || again.Action != "none" || again.Relation.ID != moved.ID {
		t.Fatalf("repeat of moved %+v %v", again, err)
	}
	if again, err := db.Relate(ctx, graph.RelationCreate{From: "jdxi-2", Type: "mounted_on", To: "scout"}); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("merged-away endpoint %+v %v", again, err)
	}
	verifyDB(t, db)
}

func TestRelation_Caps(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	// 500 notes fit; the 501st is ELIMIT and writes nothing
	for i := 0; i < graph.MaxNotesPerNode; i++ {
		if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "scout", Body: fmt.Sprint("n", i)}); err != nil {
			t.Fatalf("note %d: %v", i, err)
		}
	}
	before := state(t, db)
	_, err := db.AddNote(ctx, graph.NoteCreate{Target: "scout", Body: "one too many"})
	mustCode(t, err, graph.ELIMIT)
	mustUnchanged(t, db, before, "the 501st note")
	// a merge that would give a node more than 500 notes is refused whole
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "one more"}); err != nil {
		t.Fatal(err)
	}
	before = state(t, db)
	_, err = db.MergeIdentities(ctx, "jdxi", "scout")
	mustCode(t, err, graph.ELIMIT)
	mustUnchanged(t, db, before, "a merge past the note cap")
	if notes, total, _, _ := db.FindNotes(ctx, graph.NoteFilter{Target: "jdxi"}); total != 1 || len(notes) != 1 {
		t.Fatalf("jdxi notes after the refused merge: %d", total)
	}

	// 1,000 relations on one node (either end); the 1,001st is ELIMIT
	for i := 0; i < graph.MaxRelationsPerNode; i++ {
		c := graph.RelationCreate{From: "keystep", FromPort: "p" + strconv.Itoa(i), Type: "controls", To: "jdxi"}
		if i%2 == 1 {
			c.From, c.To = "jdxi", "keystep"
		}
		if _, err := db.Relate(ctx, c); err != nil {
			t.Fatalf("relation %d: %v", i, err)
		}
	}
	before = state(t, db)
	_, err = db.Relate(ctx, graph.RelationCreate{From: "scout", Type: "controls", To: "keystep"})
	mustCode(t, err, graph.ELIMIT)
	if graph.ErrorField(err) != "to" || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("cap error %v (%s)", err, graph.ErrorField(err))
	}
	mustUnchanged(t, db, before, "the 1,001st relation")
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "keystep", First: 1}); total != graph.MaxRelationsPerNode {
		t.Fatalf("keystep total %d", total)
	}
	// a merge that would take a node past the cap is refused whole
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "scout", Type: "controls", To: "usb:3-3.1"}); err != nil {
		t.Fatal(err)
	}
	before = state(t, db)
	_, err = db.MergeIdentities(ctx, "scout", "keystep")
	mustCode(t, err, graph.ELIMIT)
	mustUnchanged(t, db, before, "a merge past the cap")
	// delete and restore of a node at the cap fit one transaction
	if err := db.DeleteIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 1 {
		t.Fatalf("total after delete %d", total)
	}
	if _, err := db.RestoreIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{Node: "jdxi"}); total != graph.MaxRelationsPerNode {
		t.Fatalf("jdxi total after restore %d", total)
	}
	verifyDB(t, db)
}

func TestRelation_ExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	src, ctx := relFixture(t)
	a, _ := src.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	if _, err := src.Relate(ctx, graph.RelationCreate{From: "usb:3-3.1", Type: "mounted_on", To: "scout", Attrs: map[string]string{"position": "front left"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Relate(ctx, graph.RelationCreate{From: "scout", Type: "charges_at", To: "jdxi", NewType: true}); err != nil {
		t.Fatal(err)
	}
	l := "1m"
	if _, err := src.UpdateRelation(ctx, a.Relation.ID, graph.RelationUpdate{Attrs: map[string]string{"kind": "midi-din", "length": l}}); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteIdentity(ctx, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, err := src.RestoreIdentity(ctx, "jdxi"); err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if err := src.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(exp.String(), `{"type":"relation"`); n != 3 {
		t.Fatalf("export has %d relation lines", n)
	}
	srcRels := state(t, src)

	dst := storetest.MustOpen(t)
	st, err := dst.Import(ctx, bytes.NewReader(exp.Bytes()), nil)
	if err != nil || !st.KeptLog {
		t.Fatalf("import %+v %v", st, err)
	}
	var again bytes.Buffer
	if err := dst.Export(ctx, &again); err != nil {
		t.Fatal(err)
	}
	strip := func(b []byte) string { return string(b[bytes.IndexByte(b, '\n'):]) }
	if strip(again.Bytes()) != strip(exp.Bytes()) {
		t.Fatal("re-export differs from the original export")
	}
	if got := state(t, dst); got != srcRels {
		t.Fatalf("imported state %+v, source %+v", got, srcRels)
	}
	verifyDB(t, dst)
	// indexes and counters were rebuilt
	for _, f := range []graph.RelationFilter{{Node: "jdxi", Direction: "in"}, {Node: "keystep", Direction: "out"}, {Node: "usb:3-3.1"}, {Types: []string{"charges_at"}}} {
		r1, t1, _, err1 := src.FindRelations(ctx, f)
		r2, t2, _, err2 := dst.FindRelations(ctx, f)
		j1, _ := json.Marshal(r1)
		j2, _ := json.Marshal(r2)
		if err1 != nil || err2 != nil || t1 != t2 || string(j1) != string(j2) || t1 == 0 {
			t.Fatalf("%+v: %s (%d) vs %s (%d) %v %v", f, j1, t1, j2, t2, err1, err2)
		}
	}
	ty1, _ := src.RelationTypes(ctx)
	ty2, _ := dst.RelationTypes(ctx)
	if fmt.Sprint(ty1) != fmt.Sprint(ty2) {
		t.Fatalf("types %v vs %v", ty1, ty2)
	}
	if ch, err := dst.Relate(ctx, graph.RelationCreate{From: "keystep", FromPort: "midi out", Type: "cable", To: "jdxi", ToPort: "midi in", Attrs: map[string]string{"kind": "midi-din", "length": "1m"}}); err != nil || ch.Action != "none" || ch.Relation.ID != a.Relation.ID {
		t.Fatalf("tuple index not rebuilt: %+v %v", ch, err)
	}
	// the imported changelog still restores: delete and restore on the copy
	if err := dst.DeleteIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.RestoreIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.FindRelationByID(ctx, a.Relation.ID); err != nil {
		t.Fatal(err)
	}
	verifyDB(t, dst)

	// Into a non-empty database: the relations come in through the ordinary path, with
	// relation.add events and their ids kept; a second import of the same file clashes.
	other := storetest.MustOpen(t)
	if _, err := other.CreateIdentity(ctx, graph.IdentityCreate{Name: "Already Here"}); err != nil {
		t.Fatal(err)
	}
	if st, err := other.Import(ctx, bytes.NewReader(exp.Bytes()), nil); err != nil || st.KeptLog {
		t.Fatalf("import into non-empty %+v %v", st, err)
	}
	if got, want := state(t, other).rels, srcRels.rels; got != want {
		t.Fatalf("relations %s, want %s", got, want)
	}
	if evs := relEvents(t, other, a.Relation.ID); len(evs) != 1 || evs[0].Action != graph.ActRelationAdd {
		t.Fatalf("events %+v", evs)
	}
	verifyDB(t, other)
}

func TestRelation_ImportBadRelationChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := ctxActor("cli:t")
	hdr := `{"type":"header","format":"devgraph","version":3}` + "\n"
	ident := `{"type":"identity","identity":{"id":"identity:a","name":"A","hints":[],"tags":[],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}}` + "\n" +
		`{"type":"identity","identity":{"id":"identity:b","name":"B","hints":[],"tags":[],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}}` + "\n"
	rel := func(body string) string { return `{"type":"relation","relation":` + body + "}\n" }
	for name, line := range map[string]string{
		"bad id":       rel(`{"id":"note:1","type":"controls","from":"identity:a","to":"identity:b"}`),
		"reserved":     rel(`{"id":"rel:1","type":"via","from":"identity:a","to":"identity:b"}`),
		"self-loop":    rel(`{"id":"rel:1","type":"controls","from":"identity:a","to":"identity:a"}`),
		"client end":   rel(`{"id":"rel:1","type":"controls","from":"identity:a","to":"client:alsa:x"}`),
		"cable kind":   rel(`{"id":"rel:1","type":"cable","from":"identity:a","to":"identity:b"}`),
		"not normal":   rel(`{"id":"rel:1","type":"Controls","from":"identity:a","to":"identity:b"}`),
		"attrs number": rel(`{"id":"rel:1","type":"controls","from":"identity:a","to":"identity:b","attrs":{"a":1}}`),
		"duplicate id": rel(`{"id":"rel:1","type":"controls","from":"identity:a","to":"identity:b"}`) + rel(`{"id":"rel:1","type":"part_of","from":"identity:a","to":"identity:b"}`),
	} {
		for _, empty := range []bool{true, false} {
			db := storetest.MustOpen(t)
			if !empty {
				if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Here"}); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, db)
			_, err := db.Import(ctx, strings.NewReader(hdr+ident+line), nil)
			if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "nothing was imported") {
				t.Errorf("%s (empty %v): %v", name, empty, err)
			}
			if after := snapshot(t, db); after != before {
				t.Errorf("%s (empty %v): import wrote %s → %s", name, empty, before, after)
			}
			if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 0 {
				t.Errorf("%s: relations written", name)
			}
		}
	}
}

// Robots are devices (ref robot:<name>) bound to identities: relations reach them by ref,
// and a relation on a robot's device survives its identity's delete.
func TestRelation_RobotEnds(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	snap := &graph.Snapshot{Devices: []*graph.ObservedDevice{dev("robot:sn-42", "robot:scout", fp("robot_serial", "sn-42"))}, Sources: []graph.SourceStatus{{Name: "robot", OK: true}}}
	if _, err := db.ObserveDevices(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "robot:scout", IdentityID: "scout"}); err != nil {
		t.Fatal(err)
	}
	ch, err := db.Relate(ctx, graph.RelationCreate{From: "usb:3-3.1", Type: "mounted_on", To: "robot:scout"})
	if err != nil || ch.Relation.To != "device:robot:sn-42" {
		t.Fatalf("%+v %v", ch, err)
	}
	// the event is indexed under the robot's identity too
	if evs := relEvents(t, db, "identity:scout"); len(evs) != 1 || evs[0].Target != ch.Relation.ID {
		t.Fatalf("events under the identity %+v", evs)
	}
	if err := db.DeleteIdentity(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	if r, err := db.FindRelationByID(ctx, ch.Relation.ID); err != nil || r.To != "device:robot:sn-42" {
		t.Fatalf("robot device relation after identity delete %+v %v", r, err)
	}
	verifyDB(t, db)
}

// An update that would give a relation another relation's tuple is a conflict naming it;
// a dry-run update writes nothing.
func TestRelation_UpdateConflictAndDryRun(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	a, err := db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Relate(ctx, cable("keystep", "MIDI THRU", "jdxi", "MIDI IN", "midi-din"))
	if err != nil {
		t.Fatal(err)
	}
	before := state(t, db)
	out := "midi out"
	_, err = db.UpdateRelation(ctx, b.Relation.ID, graph.RelationUpdate{FromPort: &out})
	mustCode(t, err, graph.ECONFLICT)
	if !strings.Contains(err.Error(), a.Relation.ID) {
		t.Fatalf("conflict does not name %s: %v", a.Relation.ID, err)
	}
	mustUnchanged(t, db, before, "a conflicting update")
	other := "MIDI OUT 2"
	dry, err := db.UpdateRelation(ctx, b.Relation.ID, graph.RelationUpdate{FromPort: &other, DryRun: true})
	if err != nil || dry.Action != "update" || !dry.DryRun || dry.Relation.FromPort != other {
		t.Fatalf("dry update %+v %v", dry, err)
	}
	mustUnchanged(t, db, before, "a dry-run update")
	// only the port's case changes: the tuple stays, the display changes
	lower := "midi thru"
	up, err := db.UpdateRelation(ctx, b.Relation.ID, graph.RelationUpdate{FromPort: &lower})
	if err != nil || up.Action != "update" || up.Relation.FromPort != "midi thru" {
		t.Fatalf("case update %+v %v", up, err)
	}
	verifyDB(t, db)
}
