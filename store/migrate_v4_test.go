package store_test

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	bolt "go.etcd.io/bbolt"
)

var genV3 = flag.Bool("gen-v3", false, "regenerate testdata/schema-v3.bolt at schema version 3")

const v3Fixture = "testdata/schema-v3.bolt"

// TestGenerateV3Fixture writes the version-3 fixture: identities with hints, tags and a
// note, a bound device, a tagged device with a relation and a note, a robot record. It was
// first run by the version-3 build (before hosts: no device or robot record has a host,
// the meta holds none), then compacted. Run: go test ./store -run TestGenerateV3Fixture -gen-v3
func TestGenerateV3Fixture(t *testing.T) {
	if !*genV3 {
		t.Skip("fixture generator; pass -gen-v3 to rewrite " + v3Fixture)
	}
	tmp := filepath.Join(t.TempDir(), "v3.db")
	clock := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	db, err := store.Open(tmp, store.WithSchemaVersion(store.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }}, 3))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxActor("cli:fixture")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi", Data: json.RawMessage(`{"room":"studio"}`), Hints: []graph.Fingerprint{fp("usb_id", "0582:01a9"), fp("alsa_card_id", "JDXi")}, Tags: []string{"role:synth"}})
	must(err)
	_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Focusrite Scarlett 2i2", Hints: []graph.Fingerprint{fp("usb_serial", "1235:8210:Y8ABCDEF")}})
	must(err)
	snap := &graph.Snapshot{Taken: clock, Devices: []*graph.ObservedDevice{
		dev("sn:1235:8210:Y8ABCDEF", "usb:1-4", fp("usb_serial", "1235:8210:Y8ABCDEF")),
		dev("path:1c75:0263:1-2", "usb:1-2", fp("usb_id", "1c75:0263"), fp("usb_path", "1-2")),
	}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	_, err = db.ObserveDevices(ctx, snap)
	must(err)
	_, err = db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:1-4", IdentityID: "focusrite-scarlett-2i2"})
	must(err)
	_, err = db.UpdateTags(ctx, "usb:1-2", []string{"location:desk"}, nil)
	must(err)
	_, err = db.AddNote(ctx, graph.NoteCreate{Target: "usb:1-2", Body: "the keystep on the desk"})
	must(err)
	_, err = db.Relate(ctx, graph.RelationCreate{From: "usb:1-2", FromPort: "MIDI OUT", Type: "cable", To: "jdxi", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din"}})
	must(err)
	must(db.SaveRobot(ctx, &graph.RobotRecord{Ref: "robot:scout", Serial: "SC-1", Name: "scout", Battery: 80}, "", nil, nil))
	must(db.Close())
	must(store.Compact(tmp, v3Fixture))
}

// The committed version-3 file (written by the version-3 build, before hosts) opens with a
// backup beside it, migrates to the current version, gives every device and robot the
// host it was opened with, fixes that host in the meta, and reads back whole; a later
// open under another host name is refused saying which name the file holds.
func TestMigrate_V3File(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	copyFile(t, v3Fixture, path)
	st, err := migrations.Status(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 3 || len(st.Pending) != migrations.CurrentVersion-3 {
		t.Fatalf("status %+v", st)
	}
	// the fixture really is a version-3 file: relations, but no host anywhere
	b, _ := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	b.View(func(tx *bolt.Tx) error {
		if tx.Bucket(migrations.BucketRelations) == nil {
			t.Fatal("the version-3 fixture has no relations bucket")
		}
		if tx.Bucket(migrations.BucketMeta).Get(migrations.KeyHost) != nil {
			t.Fatal("the version-3 fixture has a host")
		}
		return tx.Bucket(migrations.BucketDevices).ForEach(func(k, v []byte) error {
			if strings.Contains(string(v), `"host"`) {
				t.Fatalf("device %s has a host in the version-3 fixture", k)
			}
			return nil
		})
	})
	b.Close()

	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	db, err := store.Open(path, store.Options{Now: func() time.Time { return now }, Host: "studio-a"})
	if err != nil {
		t.Fatal(err)
	}
	if db.Version() != migrations.CurrentVersion || db.MigratedFrom() != 3 || db.Host() != "studio-a" {
		t.Fatalf("version %d from %d host %q", db.Version(), db.MigratedFrom(), db.Host())
	}
	if got, want := db.BackupPath(), path+".bak-v3-20261128T060000Z"; got != want {
		t.Fatalf("backup %q, want %q", got, want)
	}
	if bst, err := migrations.Status(db.BackupPath()); err != nil || bst.Version != 3 {
		t.Fatalf("backup status %+v %v", bst, err)
	}
	ctx := ctxActor("cli:after")
	verifyDB(t, db)
	devs, total, _, err := db.FindDevices(ctx, graph.DeviceFilter{All: true})
	if err != nil || total != 2 {
		t.Fatalf("devices %d %v", total, err)
	}
	for _, d := range devs {
		if d.Host != "studio-a" {
			t.Errorf("%s: host %q, want studio-a", d.ID, d.Host)
		}
		if strings.Contains(d.ID, "/") || strings.Contains(d.Ref, "/") {
			t.Errorf("a file's ids and refs stay bare: %s %s", d.ID, d.Ref)
		}
	}
	keystep, err := db.FindDeviceByID(ctx, "usb:1-2")
	if err != nil || keystep.ID != "device:path:1c75:0263:1-2" || len(keystep.Tags) != 1 {
		t.Fatalf("keystep %+v %v", keystep, err)
	}
	if rels, total, _, err := db.FindRelations(ctx, graph.RelationFilter{Node: "usb:1-2"}); err != nil || total != 1 || rels[0].To != "identity:jdxi" {
		t.Fatalf("relations %+v %d %v", rels, total, err)
	}
	robots, err := db.FindRobotRecords(ctx)
	if err != nil || len(robots) != 1 || robots[0].Host != "studio-a" || robots[0].Battery != 80 {
		t.Fatalf("robots %+v %v", robots, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	_, err = store.Open(path, store.Options{Host: "studio-b"})
	if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), `belongs to host "studio-a"`) || !strings.Contains(err.Error(), "--host-name studio-a") {
		t.Fatalf("open under another host name: %v", err)
	}
	ro, err := store.Open(path, store.Options{Host: "studio-b", ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open under another host name: %v", err)
	}
	if ro.Host() != "studio-a" {
		t.Errorf("read-only host %q, want the file's", ro.Host())
	}
	ro.Close()
	db, err = store.Open(path, store.Options{}) // no host given: the file's
	if err != nil || db.Host() != "studio-a" {
		t.Fatalf("open without a host: %v", err)
	}
	db.Close()
	if err := store.CheckFile(path); err != nil {
		t.Fatal(err)
	}
}
