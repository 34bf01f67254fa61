package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// A replica's backup is an ordinary database: the graph the replica holds, its chain,
// no replica marks, and it takes writes (a replica without its front end refuses them).
func TestBackup_OfAReplicaIsOrdinary(t *testing.T) {
	t.Parallel()
	ctx := graph.WithActor(context.Background(), "cli:alice")
	src := storetest.MustOpen(t)
	if _, err := src.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"}}); err != nil {
		t.Fatal(err)
	}
	want, err := src.VerifyChangelog(ctx)
	if err != nil || !want.OK {
		t.Fatalf("source chain: %v %+v", err, want)
	}
	rep, err := store.Open(filepath.Join(t.TempDir(), "replica.db"), store.Options{ReplicaOf: "etcd:abc/lab"})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	err = rep.ResetReplica(7, func(put func(b, k, v []byte) error) error {
		return src.Records(ctx, func(b, k, v []byte) error { return put(b, k, v) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.CreateIdentity(ctx, graph.IdentityCreate{Name: "Nope"}); err == nil {
		t.Fatal("a replica without its front end took a write")
	}
	var buf bytes.Buffer
	if _, err := rep.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.ReplicaOf() != "" || b.ReplicaRev() != 0 {
		t.Fatalf("the backup is marked a replica of %q at %d", b.ReplicaOf(), b.ReplicaRev())
	}
	got, err := b.VerifyChangelog(ctx)
	if err != nil || !got.OK || got.HeadHash != want.HeadHash {
		t.Fatalf("the backup's chain: %v %+v, want head %s", err, got, want.HeadHash)
	}
	if _, err := b.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateIdentity(ctx, graph.IdentityCreate{Name: "After Restore"}); err != nil {
		t.Fatalf("the backup does not take writes: %v", err)
	}
	if st, _ := rep.Stats(ctx); st.ReplicaOf != "etcd:abc/lab" || st.ReplicaRev != 7 {
		t.Fatalf("a replica's stats: of %q at %d", st.ReplicaOf, st.ReplicaRev)
	}
}

// A fleet's export (its devices qualified already) imported into an empty fleet store
// with QualifyHost keeps each device's own host: only a single-host export's devices
// become QualifyHost's.
func TestImportWith_FleetExportKeepsItsHosts(t *testing.T) {
	t.Parallel()
	ctx := graph.WithActor(context.Background(), "cli:alice")
	src := storetest.MustOpen(t, store.Options{Host: "studio-a", Fleet: true})
	d := &graph.ObservedDevice{Key: "sn:0582:01a9:F1", Ref: "usb:3-3.2", Source: "usb", Sources: []string{"usb"}, Name: "JD-Xi",
		Fingerprints: []graph.Fingerprint{{Kind: "usb_serial", Value: "0582:01a9:F1"}}}
	snap := &graph.Snapshot{Devices: []*graph.ObservedDevice{d}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	if _, err := src.ObserveDevices(graph.WithActor(ctx, "discovery:usb"), snap); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := src.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	dst := storetest.MustOpen(t, store.Options{Host: "admin", Fleet: true})
	if _, err := dst.ImportWith(ctx, bytes.NewReader(buf.Bytes()), nil, store.ImportOptions{QualifyHost: "admin"}); err != nil {
		t.Fatal(err)
	}
	got, err := dst.FindDeviceByID(ctx, "studio-a/usb:3-3.2")
	if err != nil || got.Host != "studio-a" {
		t.Fatalf("the fleet export's device after import: %+v %v", got, err)
	}
	if got.Ref != "studio-a/usb:3-3.2" || strings.Contains(got.ID, "admin") {
		t.Fatalf("the device was qualified twice: ref %s, id %s", got.Ref, got.ID)
	}
}

// A replica filled from a snapshot in any order holds the same records as one filled in
// key order (records read from etcd come in key order and are appended as they come; the
// rest wait and go in at the end), and a second fill replaces the first.
func TestResetReplica_AnyOrder(t *testing.T) {
	t.Parallel()
	ctx := graph.WithActor(context.Background(), "cli:alice")
	src := storetest.MustOpen(t)
	for _, name := range []string{"Roland JD-Xi", "Korg Minilogue", "Moog Subsequent 37", "Arturia KeyStep"} {
		if _, err := src.CreateIdentity(ctx, graph.IdentityCreate{Name: name, Tags: []string{"role:synth", "room:a"}}); err != nil {
			t.Fatal(err)
		}
	}
	type rec struct{ b, k, v []byte }
	dump := func(db *store.DB) []rec {
		var out []rec
		if err := db.Records(ctx, func(b, k, v []byte) error {
			out = append(out, rec{bytes.Clone(b), bytes.Clone(k), bytes.Clone(v)})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	recs := dump(src)
	// In order, reversed, and interleaved (every other record first, then the rest).
	var interleaved []rec
	for i := 0; i < len(recs); i += 2 {
		interleaved = append(interleaved, recs[i])
	}
	for i := 1; i < len(recs); i += 2 {
		interleaved = append(interleaved, recs[i])
	}
	reversed := make([]rec, len(recs))
	for i, r := range recs {
		reversed[len(recs)-1-i] = r
	}
	rep, err := store.Open(filepath.Join(t.TempDir(), "replica.db"), store.Options{ReplicaOf: "etcd:abc/lab"})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	for i, order := range [][]rec{recs, reversed, interleaved} {
		if err := rep.ResetReplica(int64(10+i), func(put func(b, k, v []byte) error) error {
			for _, r := range order {
				if err := put(r.b, r.k, r.v); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got := dump(rep)
		if len(got) != len(recs) {
			t.Fatalf("fill %d: %d records, want %d", i, len(got), len(recs))
		}
		for j := range got {
			if !bytes.Equal(got[j].b, recs[j].b) || !bytes.Equal(got[j].k, recs[j].k) || !bytes.Equal(got[j].v, recs[j].v) {
				t.Fatalf("fill %d: record %d is %s/%q, want %s/%q", i, j, got[j].b, got[j].k, recs[j].b, recs[j].k)
			}
		}
		if v, err := rep.VerifyChangelog(ctx); err != nil || !v.OK {
			t.Fatalf("fill %d: chain %v %+v", i, err, v)
		}
	}
}
