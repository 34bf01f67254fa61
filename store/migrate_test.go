package store_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	bolt "go.etcd.io/bbolt"
)

var genV1 = flag.Bool("gen-v1", false, "regenerate testdata/schema-v1.bolt with the version-1 encoder")

const v1Fixture = "testdata/schema-v1.bolt"

// TestGenerateV1Fixture writes the version-1 fixture with the store's version-1 write path
// (events encoded by migrations.EncodeEventV1). Run: go test ./store -run TestGenerateV1Fixture -gen-v1
func TestGenerateV1Fixture(t *testing.T) {
	if !*genV1 {
		t.Skip("fixture generator; pass -gen-v1 to rewrite " + v1Fixture)
	}
	tmp := filepath.Join(t.TempDir(), "v1.db")
	clock := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	db, err := store.Open(tmp, store.WithSchemaVersion(store.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }}, 1))
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
	mk(graph.IdentityCreate{Name: "Focusrite Scarlett 2i2", Hints: []graph.Fingerprint{fp("usb_serial", "1235:8210:Y8ABCDEF")}, Tags: []string{"role:audio-interface"}})
	mk(graph.IdentityCreate{Name: "Old Mixer"})
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "MIDI out is flaky; use **USB**", Kind: "warning"}); err != nil {
		t.Fatal(err)
	}
	snap := &graph.Snapshot{Taken: clock, Devices: []*graph.ObservedDevice{dev("sn:1235:8210:Y8ABCDEF", "usb:1-4", fp("usb_serial", "1235:8210:Y8ABCDEF"))}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	if _, err := db.ObserveDevices(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:1-4", IdentityID: "focusrite-scarlett-2i2"}); err != nil {
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
	if err := os.WriteFile(v1Fixture, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

func TestMigrate_V1File(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "devgraph.db")
	copyFile(t, v1Fixture, path)

	st, err := migrations.Status(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 1 || st.Current != migrations.CurrentVersion || len(st.Pending) != migrations.CurrentVersion-1 {
		t.Fatalf("status %+v", st)
	}
	// the fixture really holds JSON events
	b, _ := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	b.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(migrations.BucketEvents).Get(migrations.U64(1))
		if len(v) == 0 || v[0] != '{' {
			t.Fatalf("fixture event 1 is not JSON: %q", v)
		}
		return nil
	})
	b.Close()

	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	db, err := store.Open(path, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Version() != migrations.CurrentVersion {
		t.Fatalf("version %d", db.Version())
	}
	if got, want := db.BackupPath(), path+".bak-v1-20260304T050607Z"; got != want {
		t.Fatalf("backup %q, want %q", got, want)
	}
	if bst, err := migrations.Status(db.BackupPath()); err != nil || bst.Version != 1 {
		t.Fatalf("backup status %+v %v", bst, err)
	}
	ctx := context.Background()
	r, err := db.VerifyChangelog(ctx)
	if err != nil || !r.OK || r.Checked == 0 {
		t.Fatalf("verify after migration %+v %v", r, err)
	}
	id, err := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{Notes: true})
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != "Roland JD-Xi" || len(id.Hints) != 2 || len(id.Notes) != 1 || !strings.Contains(id.Notes[0].Body, "flaky") {
		t.Fatalf("migrated identity %+v", id)
	}
	evs, _, err := db.FindEvents(ctx, graph.EventFilter{Target: "identity:focusrite-scarlett-2i2", First: 10})
	if err != nil || len(evs) == 0 || evs[0].Action != graph.ActDeviceBind {
		t.Fatalf("events %v %v", evs, err)
	}
	if _, err := db.RestoreIdentity(ctx, "old-mixer"); err != nil { // reads a migrated before
		t.Fatal(err)
	}
	if r, _ := db.VerifyChangelog(ctx); !r.OK {
		t.Fatalf("verify after writing %+v", r)
	}
	// stored as version-2 records now
	db.Close()
	b, _ = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	defer b.Close()
	b.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(migrations.BucketEvents).Get(migrations.U64(1))
		if _, err := migrations.DecodeEvent(1, v); err != nil {
			t.Fatalf("event 1 after migration: %v", err)
		}
		return nil
	})
}

func TestMigrate_NewerRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	db.Close()
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(migrations.BucketMeta).Put(migrations.KeyVersion, []byte("99"))
	})
	_, err := store.Open(path, store.Options{})
	mustCode(t, err, graph.EINVALID)
	if !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), "99") {
		t.Fatalf("message %q", err)
	}
	st, err := migrations.Status(path)
	if err != nil || !st.Newer {
		t.Fatalf("status %+v %v", st, err)
	}
}
