package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

func ctxActor(actor string) context.Context {
	return graph.WithActor(context.Background(), actor)
}

func fp(kind, value string) graph.Fingerprint {
	return graph.Fingerprint{Kind: graph.FingerprintKind(kind), Value: value}
}

func mustCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := graph.ErrorCode(err); got != code {
		t.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
}

func actions(evs []*graph.Event) []string {
	var out []string
	for i := len(evs) - 1; i >= 0; i-- { // oldest first
		out = append(out, evs[i].Action)
	}
	return out
}

func allEvents(t *testing.T, db *store.DB, f graph.EventFilter) []*graph.Event {
	t.Helper()
	f.First = graph.MaxPageSize
	var out []*graph.Event
	for {
		evs, next, err := db.FindEvents(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
		if next == "" {
			return out
		}
		f.After = next
	}
}

func TestIdentity_CreateRenameUpdate(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := graph.WithRequestID(ctxActor("cli:alice"), "req-1")
	ctx = graph.WithMessage(ctx, "new synth")
	id, err := db.CreateIdentity(ctx, graph.IdentityCreate{
		Name: "Roland JD-Xi", Data: json.RawMessage(`{"room": "studio"}`),
		Hints: []graph.Fingerprint{fp("usb_id", "0582:01A9"), fp("usb_serial", "0582:01a9:A1")},
		Tags:  []string{" Role:Synth ", "manufacturer:roland"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := id.ID, "identity:roland-jd-xi"; got != want {
		t.Fatalf("id=%q, want %q", got, want)
	}
	if got, want := string(id.Data), `{"room":"studio"}`; got != want {
		t.Fatalf("data=%s, want %s", got, want)
	}
	evs := allEvents(t, db, graph.EventFilter{})
	if got, want := strings.Join(actions(evs), ","), "identity.create,hint.add,hint.add,tag.add,tag.add"; got != want {
		t.Fatalf("actions=%s, want %s", got, want)
	}
	for _, e := range evs {
		if e.RequestID != "req-1" || e.Actor != "cli:alice" || e.Message != "new synth" || e.Target != id.ID {
			t.Fatalf("event %d: request=%q actor=%q message=%q target=%q", e.Seq, e.RequestID, e.Actor, e.Message, e.Target)
		}
	}

	t.Run("read back", func(t *testing.T) {
		got, err := db.FindIdentityByID(context.Background(), "roland-jd-xi", graph.IdentityParts{Notes: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Roland JD-Xi" || len(got.Hints) != 2 || strings.Join(got.Tags, ",") != "manufacturer:roland,role:synth" {
			t.Fatalf("read %+v", got)
		}
		// unit hints sort first
		if got.Hints[0].Kind != graph.FPUSBSerial || got.Hints[1].Value != "0582:01a9" {
			t.Fatalf("hints %v", got.Hints)
		}
	})
	t.Run("ErrConflict taken slug", func(t *testing.T) {
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "roland jd xi"})
		mustCode(t, err, graph.ECONFLICT)
		if !strings.Contains(err.Error(), "identity:roland-jd-xi") {
			t.Fatalf("message %q does not name the slug", err)
		}
	})
	t.Run("rename", func(t *testing.T) {
		got, err := db.RenameIdentity(ctx, "identity:roland-jd-xi", "JD-Xi (studio)")
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "JD-Xi (studio)" || got.ID != "identity:roland-jd-xi" {
			t.Fatalf("renamed %+v", got)
		}
		evs, _, _ := db.FindEvents(context.Background(), graph.EventFilter{First: 1})
		if evs[0].Action != graph.ActIdentityRename || !strings.Contains(string(evs[0].Before), "Roland JD-Xi") || !strings.Contains(string(evs[0].After), "JD-Xi (studio)") {
			t.Fatalf("rename event %+v", evs[0])
		}
		list, total, _, err := db.FindIdentities(context.Background(), graph.IdentityFilter{Name: "jd-xi"})
		if err != nil || total != 1 || len(list) != 1 {
			t.Fatalf("name index after rename: %d %v %v", total, list, err)
		}
		if _, total, _, _ := db.FindIdentities(context.Background(), graph.IdentityFilter{Name: "roland"}); total != 0 {
			t.Fatalf("old name still indexed")
		}
	})
	t.Run("update data", func(t *testing.T) {
		d := json.RawMessage(`{"room":"rack"}`)
		got, err := db.UpdateIdentity(ctx, "roland-jd-xi", graph.IdentityUpdate{Data: &d})
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Data) != `{"room":"rack"}` {
			t.Fatalf("data %s", got.Data)
		}
		bad := json.RawMessage(`[1,2]`)
		_, err = db.UpdateIdentity(ctx, "roland-jd-xi", graph.IdentityUpdate{Data: &bad})
		mustCode(t, err, graph.EINVALID)
	})
	t.Run("bad input changes nothing", func(t *testing.T) {
		before := len(allEvents(t, db, graph.EventFilter{}))
		cases := []graph.IdentityCreate{
			{Name: ""},
			{Name: "   "},
			{Name: strings.Repeat("x", graph.MaxNameLen+1)},
			{Name: "bad\xffutf8"},
			{Name: "nul\x00byte"},
			{Name: "ok", Slug: "Bad Slug"},
			{Name: "ok", Hints: []graph.Fingerprint{fp("serial_number", "1")}},
			{Name: "ok", Hints: []graph.Fingerprint{fp("usb_id", "nothex")}},
			{Name: "ok", Hints: []graph.Fingerprint{fp("usb_id", "0582:01a9"), fp("usb_id", "0582:01A9")}},
			{Name: "ok", Tags: []string{"notag"}},
			{Name: "ok", Tags: []string{"role:" + strings.Repeat("v", 65)}},
			{Name: "ok", Data: json.RawMessage(`not json`)},
			{Name: "!!!"},
		}
		for i, c := range cases {
			_, err := db.CreateIdentity(ctx, c)
			mustCode(t, err, graph.EINVALID)
			if graph.ErrorMessage(err) == "" {
				t.Fatalf("case %d: empty message", i)
			}
		}
		if _, total, _, _ := db.FindIdentities(context.Background(), graph.IdentityFilter{}); total != 1 {
			t.Fatalf("total=%d after bad input, want 1", total)
		}
		if after := len(allEvents(t, db, graph.EventFilter{})); after != before {
			t.Fatalf("events %d → %d after bad input", before, after)
		}
	})
	t.Run("ErrNotFound suggests", func(t *testing.T) {
		_, err := db.FindIdentityByID(context.Background(), "roland-jd-x1", graph.IdentityParts{})
		mustCode(t, err, graph.ENOTFOUND)
		if !strings.Contains(err.Error(), "did you mean identity:roland-jd-xi?") {
			t.Fatalf("no suggestion in %q", err)
		}
		err = db.DeleteIdentity(ctx, "identity:nothing-like-it-at-all-zzzzzzzz")
		mustCode(t, err, graph.ENOTFOUND)
	})
}

func TestHints_Conflicts(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	serial := fp("usb_serial", "0582:01a9:SN1")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "a", Hints: []graph.Fingerprint{serial, fp("usb_id", "0582:01a9"), fp("alsa_card_id", "JDXi")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	t.Run("model and name hints may be shared", func(t *testing.T) {
		if _, err := db.AddHints(ctx, "b", []graph.Fingerprint{fp("usb_id", "0582:01a9"), fp("alsa_card_id", "JDXi")}, false); err != nil {
			t.Fatal(err)
		}
		h, err := db.FindHintHolders(ctx, []graph.Fingerprint{fp("usb_id", "0582:01a9"), fp("mac", "00:11:22:33:44:55")})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(h[fp("usb_id", "0582:01a9")], ","); got != "identity:a,identity:b" {
			t.Fatalf("holders=%s", got)
		}
		if len(h[fp("mac", "00:11:22:33:44:55")]) != 0 {
			t.Fatal("mac has holders")
		}
	})
	t.Run("ErrConflict unit hint names holder", func(t *testing.T) {
		_, err := db.AddHints(ctx, "b", []graph.Fingerprint{serial}, false)
		mustCode(t, err, graph.ECONFLICT)
		if !strings.Contains(err.Error(), "identity:a") {
			t.Fatalf("message %q does not name the holder", err)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		_, err := db.AddHints(ctx, "a", []graph.Fingerprint{serial}, false)
		mustCode(t, err, graph.EINVALID)
	})
	t.Run("move", func(t *testing.T) {
		b, err := db.AddHints(ctx, "b", []graph.Fingerprint{serial}, true)
		if err != nil {
			t.Fatal(err)
		}
		if !graph.ContainsFingerprint(b.Hints, serial) {
			t.Fatal("b lacks the moved serial")
		}
		a, _ := db.FindIdentityByID(ctx, "a", graph.IdentityParts{})
		if graph.ContainsFingerprint(a.Hints, serial) {
			t.Fatal("a still holds the moved serial")
		}
		h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{serial})
		if got := strings.Join(h[serial], ","); got != "identity:b" {
			t.Fatalf("holders=%s", got)
		}
		// the move shows in both identities' history
		for _, target := range []string{"identity:a", "identity:b"} {
			evs, _, _ := db.FindEvents(ctx, graph.EventFilter{Target: target, Action: "hint.move"})
			if len(evs) != 1 || !strings.Contains(string(evs[0].Before), `"identity":"identity:a"`) {
				t.Fatalf("%s hint.move events: %v", target, evs)
			}
		}
	})
	t.Run("remove", func(t *testing.T) {
		_, err := db.RemoveHints(ctx, "a", []graph.Fingerprint{serial})
		mustCode(t, err, graph.ENOTFOUND)
		got, err := db.RemoveHints(ctx, "a", []graph.Fingerprint{fp("usb_id", "0582:01A9")})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hints) != 1 {
			t.Fatalf("hints %v", got.Hints)
		}
		h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{fp("usb_id", "0582:01a9")})
		if got := strings.Join(h[fp("usb_id", "0582:01a9")], ","); got != "identity:b" {
			t.Fatalf("holders=%s", got)
		}
	})
}

func TestIdentity_DeleteCascadeRestore(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	serial := fp("usb_serial", "0582:01a9:SN1")
	id, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi", Hints: []graph.Fingerprint{serial, fp("usb_id", "0582:01a9")}, Tags: []string{"role:synth"}})
	if err != nil {
		t.Fatal(err)
	}
	note, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "needs a new PSU", Kind: "warning"})
	if err != nil {
		t.Fatal(err)
	}
	observe(t, db, dev("sn:0582:01a9:SN1", "usb:3-3.2", serial))
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", IdentityID: "jdxi"}); err != nil {
		t.Fatal(err)
	}

	ctxDel := graph.WithRequestID(ctx, "del-1")
	if err := db.DeleteIdentity(ctxDel, "jdxi"); err != nil {
		t.Fatal(err)
	}
	evs := allEvents(t, db, graph.EventFilter{})
	var delActs []string
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].RequestID == "del-1" {
			delActs = append(delActs, evs[i].Action+" "+evs[i].Target)
		}
	}
	want := []string{"hint.remove identity:jdxi", "hint.remove identity:jdxi", "tag.remove identity:jdxi", "note.delete " + note.ID, "device.unbind device:sn:0582:01a9:SN1", "identity.delete identity:jdxi"}
	if strings.Join(delActs, "|") != strings.Join(want, "|") {
		t.Fatalf("delete events:\n%s\nwant\n%s", strings.Join(delActs, "\n"), strings.Join(want, "\n"))
	}
	if _, err := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("deleted identity still found: %v", err)
	}
	if h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{serial}); len(h[serial]) != 0 {
		t.Fatal("hint index still holds the deleted identity")
	}
	if tags, _ := db.FindTags(ctx, graph.TagFilter{InUse: true}); len(tags) != 0 {
		t.Fatalf("tag counts after delete: %v", tags)
	}
	if _, total, _, _ := db.FindNotes(ctx, graph.NoteFilter{}); total != 0 {
		t.Fatalf("notes total=%d", total)
	}
	if d, _ := db.FindDeviceByID(ctx, "usb:3-3.2"); d.IdentityID != "" {
		t.Fatalf("device still bound to %s", d.IdentityID)
	}
	mustCode(t, db.DeleteIdentity(ctx, "jdxi"), graph.ENOTFOUND)

	t.Run("restore", func(t *testing.T) {
		got, err := db.RestoreIdentity(ctx, "identity:jdxi")
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != id.Name || len(got.Hints) != 2 || strings.Join(got.Tags, ",") != "role:synth" || !got.CreatedAt.Equal(id.CreatedAt) {
			t.Fatalf("restored %+v, was %+v", got, id)
		}
		if h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{serial}); strings.Join(h[serial], ",") != "identity:jdxi" {
			t.Fatal("restored hints not indexed")
		}
		_, err = db.RestoreIdentity(ctx, "jdxi")
		mustCode(t, err, graph.ECONFLICT)
		_, err = db.RestoreIdentity(ctx, "never-was")
		mustCode(t, err, graph.ENOTFOUND)
	})
	t.Run("restore conflicts on a unit hint taken meanwhile", func(t *testing.T) {
		if err := db.DeleteIdentity(ctx, "jdxi"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "other", Hints: []graph.Fingerprint{serial}}); err != nil {
			t.Fatal(err)
		}
		_, err := db.RestoreIdentity(ctx, "jdxi")
		mustCode(t, err, graph.ECONFLICT)
		if !strings.Contains(err.Error(), "identity:other") {
			t.Fatalf("message %q does not name the holder", err)
		}
		if _, err := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatal("a failed restore left the identity behind")
		}
	})
}

func TestIdentity_Merge(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	mk := func(c graph.IdentityCreate) {
		if _, err := db.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	mk(graph.IdentityCreate{Name: "from", Hints: []graph.Fingerprint{fp("usb_serial", "0582:01a9:SN1"), fp("usb_id", "0582:01a9")}, Tags: []string{"role:synth", "location:desk"}})
	mk(graph.IdentityCreate{Name: "into", Hints: []graph.Fingerprint{fp("usb_id", "0582:01a9")}, Tags: []string{"role:synth"}})
	n, _ := db.AddNote(ctx, graph.NoteCreate{Target: "from", Body: "hello"})
	observe(t, db, dev("sn:x", "usb:1-1", fp("usb_serial", "0582:01a9:SN1")))
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "device:sn:x", IdentityID: "from", Hints: []graph.Fingerprint{}}); err != nil {
		t.Fatal(err)
	}
	_, err := db.MergeIdentities(ctx, "from", "from")
	mustCode(t, err, graph.EINVALID)
	got, err := db.MergeIdentities(graph.WithRequestID(ctx, "merge"), "from", "into")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hints) != 2 || strings.Join(got.Tags, ",") != "location:desk,role:synth" {
		t.Fatalf("merged %+v", got)
	}
	full, _ := db.FindIdentityByID(ctx, "into", graph.IdentityParts{Notes: true, Devices: true})
	if len(full.Notes) != 1 || full.Notes[0].ID != n.ID || len(full.Devices) != 1 || full.Devices[0].Key != "sn:x" {
		t.Fatalf("notes %v devices %v", full.Notes, full.Devices)
	}
	if _, err := db.FindIdentityByID(ctx, "from", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatal("from still exists")
	}
	tags, _ := db.FindTags(ctx, graph.TagFilter{InUse: true})
	counts := map[string]int{}
	for _, tc := range tags {
		counts[tc.Tag] = tc.Count
	}
	if counts["role:synth"] != 1 || counts["location:desk"] != 1 {
		t.Fatalf("tag counts %v", counts)
	}
	var acts []string
	for _, e := range allEvents(t, db, graph.EventFilter{}) {
		if e.RequestID == "merge" {
			acts = append([]string{e.Action}, acts...)
		}
	}
	if got, want := strings.Join(acts, ","), "hint.move,tag.add,note.move,device.bind,identity.merge,identity.delete"; got != want {
		t.Fatalf("merge events %s, want %s", got, want)
	}
}

func TestTagsNotesPaging(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	for i := 0; i < 25; i++ {
		tags := []string{"role:synth"}
		if i%2 == 0 {
			tags = append(tags, "location:desk")
		}
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Synth %02d", i), Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("identities paging", func(t *testing.T) {
		var seen []string
		after := ""
		for pages := 0; ; pages++ {
			list, total, next, err := db.FindIdentities(ctx, graph.IdentityFilter{First: 10, After: after})
			if err != nil {
				t.Fatal(err)
			}
			if total != 25 {
				t.Fatalf("total=%d", total)
			}
			for _, id := range list {
				seen = append(seen, id.ID)
			}
			if next == "" {
				if pages != 2 {
					t.Fatalf("pages=%d", pages+1)
				}
				break
			}
			after = next
		}
		if len(seen) != 25 || seen[0] != "identity:synth-00" || seen[24] != "identity:synth-24" {
			t.Fatalf("seen %v", seen)
		}
	})
	t.Run("filtered paging", func(t *testing.T) {
		list, total, next, err := db.FindIdentities(ctx, graph.IdentityFilter{Tags: []string{"location:desk", "role:synth"}, First: 5})
		if err != nil || total != 13 || len(list) != 5 || next != "identity:synth-08" {
			t.Fatalf("total=%d len=%d next=%q err=%v", total, len(list), next, err)
		}
		list, _, _, _ = db.FindIdentities(ctx, graph.IdentityFilter{Tags: []string{"location:desk"}, First: 5, After: next})
		if list[0].ID != "identity:synth-10" {
			t.Fatalf("second page starts at %s", list[0].ID)
		}
		list, total, _, _ = db.FindIdentities(ctx, graph.IdentityFilter{Name: "synth 1"})
		if total != 10 || len(list) != 10 {
			t.Fatalf("name prefix total=%d", total)
		}
	})
	t.Run("tags both ways", func(t *testing.T) {
		tags, err := db.FindTags(ctx, graph.TagFilter{Namespace: "location"})
		if err != nil {
			t.Fatal(err)
		}
		var desk graph.TagCount
		for _, tc := range tags {
			if tc.Tag == "location:desk" {
				desk = tc
			}
		}
		if desk.Count != 13 || !desk.Seeded {
			t.Fatalf("location:desk %+v", desk)
		}
		ids, total, next, err := db.FindTagged(ctx, "location:desk", 10, "")
		if err != nil || total != 13 || len(ids) != 10 || next == "" {
			t.Fatalf("tagged %v %d %q %v", ids, total, next, err)
		}
		ids, _, next, _ = db.FindTagged(ctx, "location:desk", 10, next)
		if len(ids) != 3 || next != "" {
			t.Fatalf("page 2 %v %q", ids, next)
		}
		got, err := db.UpdateTags(ctx, "synth-00", []string{"Status:OK", "role:synth"}, []string{"location:desk", "project:absent"})
		if err != nil || strings.Join(got, ",") != "role:synth,status:ok" {
			t.Fatalf("tags %v %v", got, err)
		}
		evs, _, _ := db.FindEvents(ctx, graph.EventFilter{Target: "synth-00", Action: "tag.*"})
		if len(evs) != 4 { // 2 tag.add at create, remove location:desk, add status:ok (no-ops write nothing)
			t.Fatalf("tag events %v", actions(evs))
		}
		_, err = db.UpdateTags(ctx, "synth-00", []string{"bad tag"}, nil)
		mustCode(t, err, graph.EINVALID)
	})
	t.Run("notes", func(t *testing.T) {
		for i := 0; i < 7; i++ {
			kind := "info"
			if i%3 == 0 {
				kind = "danger"
			}
			if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "synth-01", Body: fmt.Sprintf("note %d", i), Kind: kind}); err != nil {
				t.Fatal(err)
			}
		}
		notes, total, next, err := db.FindNotes(ctx, graph.NoteFilter{Target: "identity:synth-01", First: 4})
		if err != nil || total != 7 || len(notes) != 4 || notes[0].Body != "note 6" || next == "" {
			t.Fatalf("notes %d %d %q %v", total, len(notes), next, err)
		}
		notes, _, next, _ = db.FindNotes(ctx, graph.NoteFilter{Target: "synth-01", First: 4, After: next})
		if len(notes) != 3 || notes[2].Body != "note 0" || next != "" {
			t.Fatalf("page 2: %d %q", len(notes), next)
		}
		notes, total, _, _ = db.FindNotes(ctx, graph.NoteFilter{Target: "synth-01", Kind: "danger"})
		if total != 3 || len(notes) != 3 {
			t.Fatalf("danger notes %d", total)
		}
		_, total, _, _ = db.FindNotes(ctx, graph.NoteFilter{})
		if total != 7 {
			t.Fatalf("all notes total %d", total)
		}
		for _, c := range []graph.NoteCreate{
			{Target: "synth-01", Body: ""},
			{Target: "synth-01", Body: strings.Repeat("x", graph.MaxNoteLen+1)},
			{Target: "synth-01", Body: "x", Kind: "shout"},
			{Target: "synth-01", Body: "bad \xff"},
		} {
			_, err := db.AddNote(ctx, c)
			mustCode(t, err, graph.EINVALID)
		}
		_, err = db.AddNote(ctx, graph.NoteCreate{Target: "synth-99", Body: "x"})
		mustCode(t, err, graph.ENOTFOUND)
		mustCode(t, db.DeleteNote(ctx, "note:0190a000-0000-7000-8000-000000000000"), graph.ENOTFOUND)
		if err := db.DeleteNote(ctx, notes[0].ID); err != nil {
			t.Fatal(err)
		}
		_, total, _, _ = db.FindNotes(ctx, graph.NoteFilter{Target: "synth-01"})
		if total != 6 {
			t.Fatalf("after delete total %d", total)
		}
		// every note, newest first, three to a page
		var bodies []string
		after := ""
		for {
			page, total, next, err := db.FindNotes(ctx, graph.NoteFilter{First: 3, After: after})
			if err != nil || total != 6 {
				t.Fatalf("total %d %v", total, err)
			}
			for _, n := range page {
				bodies = append(bodies, n.Body)
			}
			if next == "" {
				break
			}
			after = next
		}
		if got := strings.Join(bodies, ","); got != "note 5,note 4,note 3,note 2,note 1,note 0" {
			t.Fatalf("all notes paged: %s", got)
		}
	})
}

func TestChangelog_Filters(t *testing.T) {
	t.Parallel()
	clock := &storetest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Step: time.Minute}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	for i := 0; i < 30; i++ {
		actor := "cli:alice"
		if i%3 == 0 {
			actor = "mcp:claude"
		}
		if _, err := db.CreateIdentity(ctxActor(actor), graph.IdentityCreate{Name: fmt.Sprintf("n%02d", i), Tags: []string{"role:synth"}}); err != nil {
			t.Fatal(err)
		}
	}
	all := allEvents(t, db, graph.EventFilter{})
	if len(all) != 60 || all[0].Seq != 60 || all[59].Seq != 1 {
		t.Fatalf("newest first: %d events, first seq %d", len(all), all[0].Seq)
	}
	mcp := allEvents(t, db, graph.EventFilter{Actor: "mcp:*"})
	if len(mcp) != 20 {
		t.Fatalf("mcp:* → %d", len(mcp))
	}
	tags := allEvents(t, db, graph.EventFilter{Action: "tag.*", Actor: "cli:*"})
	if len(tags) != 20 {
		t.Fatalf("tag.* by cli:* → %d", len(tags))
	}
	since := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	until := time.Date(2026, 1, 1, 0, 19, 0, 0, time.UTC)
	win := allEvents(t, db, graph.EventFilter{Since: since, Until: until})
	if len(win) != 20 { // identities 10..19 were created at minutes 10..19 (one clock reading per write), 2 events each
		t.Fatalf("window → %d", len(win))
	}
	for _, e := range win {
		if e.Time.Before(since) || e.Time.After(until) {
			t.Fatalf("event at %s outside window", e.Time)
		}
	}
	tgt := allEvents(t, db, graph.EventFilter{Target: "n07"})
	if len(tgt) != 2 || tgt[0].Action != "tag.add" || tgt[1].Action != "identity.create" {
		t.Fatalf("target n07 → %v", actions(tgt))
	}
	// paging by target
	page, next, _ := db.FindEvents(context.Background(), graph.EventFilter{Target: "identity:n07", First: 1})
	if len(page) != 1 || next == "" {
		t.Fatalf("page %v next %q", page, next)
	}
	page, next, _ = db.FindEvents(context.Background(), graph.EventFilter{Target: "identity:n07", First: 1, After: next})
	if len(page) != 1 || page[0].Action != "identity.create" || next != "" {
		t.Fatalf("page 2 %v next %q", actions(page), next)
	}
	_, _, err := db.FindEvents(context.Background(), graph.EventFilter{Actor: "[bad"})
	mustCode(t, err, graph.EINVALID)
	_, _, err = db.FindEvents(context.Background(), graph.EventFilter{After: "xyz"})
	mustCode(t, err, graph.EINVALID)
}
