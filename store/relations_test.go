package store_test

import (
	"context"
	"encoding/json"
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
	rels, total, _, err := db.FindRelations(ctx, graph.RelationFilter{First: graph.MaxPageSize})
	if err != nil {
		t.Fatal(err)
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
		{"unknown type", graph.RelationCreate{From: "keystep", Type: "cabel", To: "jdxi"}, graph.EINVALID, "type", "--new-type"},
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
