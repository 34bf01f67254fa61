package store_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

var genHostExport = flag.Bool("gen-host-export", false, "regenerate testdata/export-single-host.jsonl")

const hostExport = "testdata/export-single-host.jsonl"

// TestGenerateHostExport writes the single-host export: a bbolt file's identity with a
// usb_path hint, its bound device with a tag, a note and a relation, and the changelog
// that made them. Run: go test ./store -run TestGenerateHostExport -gen-host-export
func TestGenerateHostExport(t *testing.T) {
	if !*genHostExport {
		t.Skip("fixture generator; pass -gen-host-export to rewrite " + hostExport)
	}
	clock := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	db, err := store.Open(filepath.Join(t.TempDir(), "one.db"), store.Options{Host: "studio-a", NoBackup: true, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := ctxActor("cli:alice")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.ObserveDevices(ctx, &graph.Snapshot{Taken: clock, Devices: []*graph.ObservedDevice{
		dev("path:0582:01a9:3-3.2", "usb:3-3.2", fp("usb_id", "0582:01a9"), fp("usb_path", "3-3.2")),
	}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}})
	must(err)
	_, err = db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi"}})
	must(err)
	_, err = db.UpdateTags(ctx, "usb:3-3.2", []string{"location:desk"}, nil)
	must(err)
	_, err = db.AddNote(ctx, graph.NoteCreate{Target: "usb:3-3.2", Body: "the front USB port is loose"})
	must(err)
	_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk"})
	must(err)
	_, err = db.Relate(ctx, graph.RelationCreate{From: "usb:3-3.2", Type: "located_in", To: "desk"})
	must(err)
	var buf bytes.Buffer
	must(db.Export(ctx, &buf))
	must(os.WriteFile(hostExport, buf.Bytes(), 0o644))
}

// A single-host export imported into an empty fleet store with QualifyHost comes in as
// that host's: device keys, refs, usb_path hints and fingerprints, the note's target, the
// tag's node and the relation's end carry the host; the events stay exactly as exported
// (the chain verifies), and the target index finds their history by the qualified id.
func TestImport_QualifyHost(t *testing.T) {
	t.Parallel()
	export, err := os.ReadFile(hostExport)
	if err != nil {
		t.Fatal(err)
	}
	open := func(o store.Options) *store.DB {
		t.Helper()
		o.NoBackup = true
		db, err := store.Open(filepath.Join(t.TempDir(), "replica.db"), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	ctx := context.Background()
	db := open(store.Options{Host: "studio-a", Fleet: true})
	st, err := db.ImportWith(ctx, bytes.NewReader(export), nil, store.ImportOptions{QualifyHost: "studio-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !st.KeptLog || st.Events == 0 {
		t.Fatalf("stats %+v", st)
	}
	verifyDB(t, db)

	const id, ref = "device:studio-a/path:0582:01a9:3-3.2", "studio-a/usb:3-3.2"
	for _, name := range []string{"usb:3-3.2", ref, id, "device:path:0582:01a9:3-3.2"} {
		d, err := db.FindDeviceByID(ctx, name)
		if err != nil || d.ID != id || d.Ref != ref || d.Host != "studio-a" {
			t.Fatalf("%s: %+v %v", name, d, err)
		}
		if !graph.ContainsFingerprint(d.Fingerprints, fp("usb_path", "studio-a/3-3.2")) || len(d.Tags) != 1 {
			t.Fatalf("%s: fingerprints %v tags %v", name, d.Fingerprints, d.Tags)
		}
	}
	jdxi, err := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{Devices: true})
	if err != nil || !graph.ContainsFingerprint(jdxi.Hints, fp("usb_path", "studio-a/3-3.2")) || len(jdxi.Devices) != 1 || jdxi.Devices[0].ID != id {
		t.Fatalf("jdxi %+v %v", jdxi, err)
	}
	if ids, total, _, err := db.FindTagged(ctx, "location:desk", 10, ""); err != nil || total != 1 || ids[0] != id {
		t.Fatalf("tagged %v %d %v", ids, total, err)
	}
	notes, _, _, err := db.FindNotes(ctx, graph.NoteFilter{Target: ref})
	if err != nil || len(notes) != 1 || notes[0].Target != id {
		t.Fatalf("notes %+v", notes)
	}
	rels, total, _, err := db.FindRelations(ctx, graph.RelationFilter{Node: ref})
	if err != nil || total != 1 || rels[0].From != id || rels[0].To != "identity:desk" {
		t.Fatalf("relations %+v %d %v", rels, total, err)
	}
	evs := allEvents(t, db, graph.EventFilter{Target: id})
	actions := map[string]bool{}
	for _, e := range evs {
		actions[e.Action] = true
		if strings.Contains(e.Target, "studio-a/") {
			t.Errorf("event %d's payload was rewritten: target %s", e.Seq, e.Target)
		}
	}
	for _, a := range []string{graph.ActDeviceAppear, graph.ActDeviceBind, "tag.add", graph.ActNoteAdd, graph.ActRelationAdd} {
		if !actions[a] {
			t.Errorf("the qualified id's history lacks %s (has %v)", a, actions)
		}
	}
	// the events are the exported bytes: exporting again gives the same event lines
	var again bytes.Buffer
	if err := db.Export(ctx, &again); err != nil {
		t.Fatal(err)
	}
	if got, want := eventLines(again.String()), eventLines(string(export)); got != want {
		t.Errorf("event lines changed on the way in:\n%s\nwant\n%s", got, want)
	}

	t.Run("ErrNotFleet", func(t *testing.T) {
		db := open(store.Options{Host: "studio-a"})
		_, err := db.ImportWith(ctx, bytes.NewReader(export), nil, store.ImportOptions{QualifyHost: "studio-a"})
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "fleet store") {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("ErrNotEmpty", func(t *testing.T) {
		_, err := db.ImportWith(ctx, bytes.NewReader(export), nil, store.ImportOptions{QualifyHost: "studio-a"})
		if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "empty store") {
			t.Fatalf("err=%v", err)
		}
	})
	t.Run("ErrBadHost", func(t *testing.T) {
		db := open(store.Options{Host: "studio-a", Fleet: true})
		_, err := db.ImportWith(ctx, bytes.NewReader(export), nil, store.ImportOptions{QualifyHost: "Studio A"})
		if graph.ErrorCode(err) != graph.EINVALID {
			t.Fatalf("err=%v", err)
		}
	})
}

// eventLines are an export's events, in order, without the ids each is also indexed
// under (the index, not the hashed event, which a qualifying import rewrites).
func eventLines(export string) string {
	var out []string
	for _, l := range strings.Split(export, "\n") {
		if strings.HasPrefix(l, `{"type":"event"`) {
			ev, _, _ := strings.Cut(l, `,"also":[`)
			out = append(out, strings.TrimRight(ev, "}"))
		}
	}
	return strings.Join(out, "\n")
}
