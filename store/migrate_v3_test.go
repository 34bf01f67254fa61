package store_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

var genV2 = flag.Bool("gen-v2", false, "regenerate testdata/schema-v2.bolt at schema version 2")

const v2Fixture = "testdata/schema-v2.bolt"

// TestGenerateV2Fixture writes the version-2 fixture: identities with hints, tags, notes,
// a bound device, a robot-like device, a deleted identity. It was first run by the
// version-2 build (before relations existed); run again it writes a version-2 file with
// the version-2 buckets only. Run: go test ./store -run TestGenerateV2Fixture -gen-v2
func TestGenerateV2Fixture(t *testing.T) {
	if !*genV2 {
		t.Skip("fixture generator; pass -gen-v2 to rewrite " + v2Fixture)
	}
	tmp := filepath.Join(t.TempDir(), "v2.db")
	clock := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	db, err := store.Open(tmp, store.WithSchemaVersion(store.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }}, 2))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxActor("cli:fixture")
	mk := func(c graph.IdentityCreate) {
		if _, err := db.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	mk(graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi", Data: json.RawMessage(`{"room":"studio"}`), Hints: []graph.Fingerprint{fp("usb_id", "0582:01a9"), fp("alsa_card_id", "JDXi")}, Tags: []string{"role:synth", "manufacturer:roland"}})
	mk(graph.IdentityCreate{Name: "Arturia KeyStep", Slug: "keystep", Hints: []graph.Fingerprint{fp("usb_id", "1c75:0263")}, Tags: []string{"role:controller"}})
	mk(graph.IdentityCreate{Name: "Focusrite Scarlett 2i2", Hints: []graph.Fingerprint{fp("usb_serial", "1235:8210:Y8ABCDEF")}, Tags: []string{"role:audio-interface"}})
	mk(graph.IdentityCreate{Name: "Old Mixer"})
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "MIDI out is flaky; use **USB**", Kind: "warning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "old-mixer", Body: "lent to Sam"}); err != nil {
		t.Fatal(err)
	}
	snap := &graph.Snapshot{Taken: clock, Devices: []*graph.ObservedDevice{
		dev("sn:1235:8210:Y8ABCDEF", "usb:1-4", fp("usb_serial", "1235:8210:Y8ABCDEF")),
		dev("path:1c75:0263:1-2", "usb:1-2", fp("usb_id", "1c75:0263"), fp("usb_path", "1-2")),
	}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	if _, err := db.ObserveDevices(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:1-4", IdentityID: "focusrite-scarlett-2i2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "usb:1-2", []string{"location:desk"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteIdentity(ctx, "old-mixer"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v2Fixture, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
