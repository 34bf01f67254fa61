package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// The issue-11 target: no write at its caps holds the writer for more than 100 ms beyond
// its fsync. BenchmarkCappedWriteHold makes each capped write in turn and reports how long
// its transaction held the writer (store.SetTxObserver: from bbolt's Update to its return,
// commit included, on a NoSync file so the fsync is left out): hold-µs/op is the mean,
// max-hold-µs the worst single write.
//
//	go test -run '^$' -bench CappedWriteHold -benchtime=100x ./store/
func BenchmarkCappedWriteHold(b *testing.B) {
	ctx := graph.WithMessage(graph.WithActor(context.Background(), "cli:bench"), strings.Repeat("w", graph.MaxMsgLen))
	open := func(b *testing.B) *store.DB {
		db, err := store.Open(filepath.Join(b.TempDir(), "hold.db"), store.Options{NoBackup: true, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	must := func(b *testing.B, err error) {
		if err != nil {
			b.Helper()
			b.Fatal(err)
		}
	}
	// measure runs op b.N times and reports the hold of the write transactions op makes;
	// setup (may be nil) runs before each op, unmeasured.
	measure := func(b *testing.B, db *store.DB, setup, op func(i int) error) {
		var total, worst time.Duration
		var n int
		on := false
		var t0 time.Time
		store.SetTxObserver(db, func(begin bool) {
			switch {
			case !on:
			case begin:
				t0 = time.Now()
			default:
				d := time.Since(t0)
				total += d
				worst = max(worst, d)
				n++
			}
		})
		defer store.SetTxObserver(db, nil)
		i := 0
		for b.Loop() {
			if setup != nil {
				must(b, setup(i))
			}
			on = true
			must(b, op(i))
			on = false
			i++
		}
		if n == 0 {
			b.Fatal("no write transaction observed")
		}
		b.ReportMetric(float64(total.Microseconds())/float64(n), "hold-µs/op")
		b.ReportMetric(float64(worst.Microseconds()), "max-hold-µs")
	}
	// longTag is a tag at the grammar's limits: a 32-char namespace, a 64-char value.
	longTag := func(set, i int) string {
		ns := fmt.Sprintf("ns%d-%s", set, strings.Repeat("n", 32))[:graph.MaxTagNamespace]
		return ns + ":" + fmt.Sprintf("v%02d-%s", i, strings.Repeat("v", 64))[:graph.MaxTagValue]
	}

	b.Run("Tag32Add32Remove", func(b *testing.B) {
		db := open(b)
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Tagged", Slug: "tagged"})
		must(b, err)
		sets := [2][]string{}
		for s := range sets {
			for i := 0; i < graph.MaxTagsPerCall; i++ {
				sets[s] = append(sets[s], longTag(s, i))
			}
		}
		_, err = db.UpdateTags(ctx, "tagged", sets[0], nil)
		must(b, err)
		measure(b, db, nil, func(i int) error {
			// Swap every tag: 32 removed and 32 added, 64 events.
			_, err := db.UpdateTags(ctx, "tagged", sets[(i+1)%2], sets[i%2])
			return err
		})
	})

	b.Run("Note16KiB", func(b *testing.B) {
		db := open(b)
		body := strings.Repeat("x", graph.MaxNoteLen)
		target := ""
		measure(b, db, func(i int) error {
			if i%graph.MaxNotesPerNode != 0 { // a node holds at most 500 notes
				return nil
			}
			target = fmt.Sprintf("noted-%d", i)
			_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: target, Slug: target})
			return err
		}, func(i int) error {
			_, err := db.AddNote(ctx, graph.NoteCreate{Target: target, Kind: "info", Body: body})
			return err
		})
	})

	b.Run("Hints32", func(b *testing.B) {
		db := open(b)
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Hinted", Slug: "hinted"})
		must(b, err)
		fps := make([]graph.Fingerprint, graph.MaxHintsPerCall)
		for i := range fps {
			// Unit hints: each add looks its holders up in the index.
			fps[i] = graph.Fingerprint{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:%s%02d", strings.Repeat("S", 200), i)}
		}
		measure(b, db, nil, func(i int) error {
			var err error
			if i%2 == 0 {
				_, err = db.AddHints(ctx, "hinted", fps, false)
			} else {
				_, err = db.RemoveHints(ctx, "hinted", fps)
			}
			return err
		})
	})

	b.Run("BindNew", func(b *testing.B) {
		db := open(b)
		var dev graph.ObservedDevice
		dev.Key, dev.Ref, dev.Source, dev.Name = "usb:serial:0582:01a9:BIND", "usb:3-3.2", "usb", "Bound Synth"
		dev.Sources = []string{"usb", "alsa", "pipewire"}
		dev.Fingerprints = []graph.Fingerprint{
			{Kind: graph.FPUSBSerial, Value: "0582:01a9:BIND"}, {Kind: graph.FPUSBID, Value: "0582:01a9"},
			{Kind: graph.FPUSBPath, Value: "3-3.2"}, {Kind: graph.FPALSACardID, Value: "JDXi"},
			{Kind: graph.FPALSALongname, Value: "Roland JD-Xi at usb-0000:00:14.0-3.2, high speed"},
			{Kind: graph.FPMIDIClient, Value: "JD-Xi"}, {Kind: graph.FPPipeWireDevice, Value: "alsa_card.usb-Roland_JD-Xi-00"},
		}
		_, err := db.ObserveDevices(graph.WithActor(context.Background(), "discovery:usb"), &graph.Snapshot{
			Taken: time.Now(), Devices: []*graph.ObservedDevice{&dev}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}})
		must(b, err)
		d, err := db.FindDeviceByID(ctx, "usb:3-3.2")
		must(b, err)
		measure(b, db, nil, func(i int) error {
			// Each bind makes a new identity and moves the unit hint from the last one.
			name := fmt.Sprintf("Bound %d", i)
			_, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: d.ID, New: &graph.IdentityCreate{Name: name}, Hints: dev.Fingerprints, Move: true})
			return err
		})
	})

	b.Run("RelateMaxAttrs", func(b *testing.B) {
		db := open(b)
		attrs := map[string]string{"kind": "midi-din"}
		for k := 1; len(attrs) < graph.MaxRelationAttrs; k++ {
			attrs[fmt.Sprintf("attr-%02d", k)] = strings.Repeat("a", (graph.MaxRelationAttrSize-16*9)/graph.MaxRelationAttrs)
		}
		must(b, graph.ValidateRelationAttrs(attrs))
		node := func(i int) string { return fmt.Sprintf("node-%d", i) }
		for i := 0; i < 2; i++ {
			_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: node(i), Slug: node(i)})
			must(b, err)
		}
		pair := 0
		measure(b, db, func(i int) error {
			// A node holds at most 1,000 relations: move on to a fresh pair before that.
			if i == 0 || i%(graph.MaxRelationsPerNode-1) != 0 {
				return nil
			}
			pair += 2
			for j := pair; j < pair+2; j++ {
				if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: node(j), Slug: node(j)}); err != nil {
					return err
				}
			}
			return nil
		}, func(i int) error {
			_, err := db.Relate(ctx, graph.RelationCreate{From: node(pair), FromPort: fmt.Sprintf("MIDI OUT %d", i),
				Type: "cable", To: node(pair + 1), ToPort: fmt.Sprintf("MIDI IN %d", i), Attrs: attrs})
			return err
		})
	})
}
