package store_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	bolt "go.etcd.io/bbolt"
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

// The committed version-2 file (written by the version-2 build, before relations) opens
// with a backup beside it, migrates to the current version, reads back whole, verifies,
// and takes relations.
func TestMigrate_V2File(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	copyFile(t, v2Fixture, path)
	st, err := migrations.Status(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 2 || len(st.Pending) != migrations.CurrentVersion-2 {
		t.Fatalf("status %+v", st)
	}
	// the fixture really is a version-2 file: no relation buckets yet
	b, _ := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	b.View(func(tx *bolt.Tx) error {
		if tx.Bucket(migrations.BucketRelations) != nil || tx.Bucket(migrations.BucketRelAdj) != nil {
			t.Fatal("the version-2 fixture has relation buckets")
		}
		if tx.Bucket(migrations.BucketIdentities) == nil {
			t.Fatal("the fixture has no identities bucket")
		}
		return nil
	})
	b.Close()

	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	db, err := store.Open(path, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Version() != migrations.CurrentVersion || db.MigratedFrom() != 2 {
		t.Fatalf("version %d from %d", db.Version(), db.MigratedFrom())
	}
	if got, want := db.BackupPath(), path+".bak-v2-20261124T060000Z"; got != want {
		t.Fatalf("backup %q, want %q", got, want)
	}
	if bst, err := migrations.Status(db.BackupPath()); err != nil || bst.Version != 2 {
		t.Fatalf("backup status %+v %v", bst, err)
	}
	ctx := ctxActor("cli:after")
	verifyDB(t, db)

	// everything the version-2 build wrote reads back
	stats, err := db.Stats(ctx)
	if err != nil || stats.Identities != 3 || stats.Devices != 2 || stats.Notes != 1 || stats.SchemaVersion != migrations.CurrentVersion {
		t.Fatalf("stats %+v %v", stats, err)
	}
	jdxi, err := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{Notes: true})
	if err != nil || jdxi.Name != "Roland JD-Xi" || len(jdxi.Hints) != 2 || len(jdxi.Tags) != 2 || len(jdxi.Notes) != 1 || string(jdxi.Data) != `{"room":"studio"}` {
		t.Fatalf("jdxi %+v %v", jdxi, err)
	}
	scarlett, err := db.FindIdentityByID(ctx, "focusrite-scarlett-2i2", graph.IdentityParts{Devices: true})
	if err != nil || len(scarlett.Devices) != 1 || scarlett.Devices[0].Ref != "usb:1-4" {
		t.Fatalf("scarlett %+v %v", scarlett, err)
	}
	if ids, total, _, err := db.FindTagged(ctx, "location:desk", 10, ""); err != nil || total != 1 || ids[0] != "device:path:1c75:0263:1-2" {
		t.Fatalf("tagged %v %d %v", ids, total, err)
	}
	if rels, total, _, err := db.FindRelations(ctx, graph.RelationFilter{}); err != nil || total != 0 || len(rels) != 0 {
		t.Fatalf("relations %v %d %v", rels, total, err)
	}
	types, err := db.RelationTypes(ctx)
	if err != nil || len(types) != len(graph.SeedRelationTypes)+len(graph.ReservedRelationTypes) {
		t.Fatalf("types %+v %v", types, err)
	}

	// and the migrated file takes relations, cascades and all
	ch, err := db.Relate(ctx, cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din"))
	if err != nil || ch.Action != "add" {
		t.Fatalf("relate %+v %v", ch, err)
	}
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "usb:1-2", Type: "controls", To: "usb:1-4"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreIdentity(ctx, "old-mixer"); err != nil { // a before written by version 2
		t.Fatal(err)
	}
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "old-mixer", Type: "located_in", To: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteIdentity(ctx, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 1 {
		t.Fatalf("after delete: %d relations", total)
	}
	if _, err := db.RestoreIdentity(ctx, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 3 {
		t.Fatalf("after restore: %d relations", total)
	}
	verifyDB(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(path); err != nil {
		t.Fatal(err)
	}
}
