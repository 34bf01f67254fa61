package store_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"

	bolt "go.etcd.io/bbolt"
)

// openFile opens a store at a fixed path in a temp dir (for tests that reopen it).
func openFile(t *testing.T, path string, o store.Options) *store.DB {
	t.Helper()
	o.NoBackup = true
	db, err := store.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func seed(t *testing.T, db *store.DB, n int) {
	t.Helper()
	ctx := ctxActor("cli:seed")
	for i := 0; i < n; i++ {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("unit %d", i), Hints: []graph.Fingerprint{fp("usb_serial", fmt.Sprintf("0582:01a9:S%d", i))}, Tags: []string{"role:synth"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// rawUpdate changes the closed file behind devgraph's back.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func verify(t *testing.T, path string) *graph.VerifyReport {
	t.Helper()
	db := openFile(t, path, store.Options{})
	defer db.Close()
	r, err := db.VerifyChangelog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerify_Tamper(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	seed(t, db, 5) // 15 events
	db.Close()
	if r := verify(t, path); !r.OK || r.Checked != 15 || r.HeadSeq != 15 {
		t.Fatalf("clean file: %+v", r)
	}

	t.Run("altered event", func(t *testing.T) {
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			b := tx.Bucket(migrations.BucketEvents)
			k := migrations.U64(7)
			e, err := migrations.DecodeEvent(7, b.Get(k))
			if err != nil {
				return err
			}
			e.Actor = "cli:mallory" // rewrite who did it, keep the hash
			v, err := migrations.EncodeEvent(e)
			if err != nil {
				return err
			}
			return b.Put(k, v)
		})
		r := verify(t, path)
		if r.OK || r.BrokenSeq != 7 || r.BrokenID == "" || !strings.Contains(r.Problem, "altered") {
			t.Fatalf("report %+v", r)
		}
	})
	t.Run("flipped byte", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "d.db")
		db := openFile(t, path, store.Options{})
		seed(t, db, 5)
		db.Close()
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			b := tx.Bucket(migrations.BucketEvents)
			v := append([]byte(nil), b.Get(migrations.U64(4))...)
			v[len(v)-1] ^= 0x01
			return b.Put(migrations.U64(4), v)
		})
		r := verify(t, path)
		if r.OK || r.BrokenSeq != 4 || !strings.Contains(r.Problem, "event 4") {
			t.Fatalf("report %+v", r)
		}
	})
	t.Run("newest event dropped", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "d.db")
		db := openFile(t, path, store.Options{})
		seed(t, db, 5)
		db.Close()
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(migrations.BucketEvents).Delete(migrations.U64(15))
		})
		r := verify(t, path)
		if r.OK || r.BrokenSeq != 15 || !strings.Contains(r.Problem, "cut off") {
			t.Fatalf("report %+v", r)
		}
	})
	t.Run("middle event dropped", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "d.db")
		db := openFile(t, path, store.Options{})
		seed(t, db, 5)
		db.Close()
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(migrations.BucketEvents).Delete(migrations.U64(9))
		})
		r := verify(t, path)
		if r.OK || r.BrokenSeq != 9 || !strings.Contains(r.Problem, "missing") {
			t.Fatalf("report %+v", r)
		}
	})
}

func TestPrune_KeepsChainVerifiable(t *testing.T) {
	t.Parallel()
	clock := &storetest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Step: time.Hour}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	seed(t, db, 10) // identity i at hour i+1 (opening read the clock once), 3 events each
	ctx := graph.WithPrunePermission(graph.WithActor(context.Background(), "cli:owner"))
	n, err := db.PruneChangelog(ctx, time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC))
	if err != nil || n != 12 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	// 18 kept and the changelog.prune event
	r, _ := db.VerifyChangelog(context.Background())
	if !r.OK || r.FirstSeq != 13 || r.Checked != 19 || r.Checkpoint == "" {
		t.Fatalf("after prune %+v", r)
	}
	if s, _ := db.Stats(context.Background()); s.Events != 19 {
		t.Fatalf("events counter %d", s.Events)
	}
	if evs, _, _ := db.FindEvents(context.Background(), graph.EventFilter{Target: "unit-0"}); len(evs) != 0 {
		t.Fatalf("pruned events still found by target: %v", actions(evs))
	}
	// writing on after a prune keeps chaining
	seed2 := func() {
		if _, err := db.CreateIdentity(context.Background(), graph.IdentityCreate{Name: "later"}); err != nil {
			t.Fatal(err)
		}
	}
	seed2()
	if r, _ := db.VerifyChangelog(context.Background()); !r.OK || r.HeadSeq != 32 {
		t.Fatalf("after more writes %+v", r)
	}
	_, err = db.PruneChangelog(ctx, time.Time{})
	mustCode(t, err, graph.EINVALID)

	// an export of a pruned file carries its checkpoint; imported, the rest still verifies
	var exp bytes.Buffer
	if err := db.Export(context.Background(), &exp); err != nil {
		t.Fatal(err)
	}
	dst := storetest.MustOpen(t)
	if st, err := dst.Import(context.Background(), &exp, nil); err != nil || !st.KeptLog || st.Events != 20 {
		t.Fatalf("import %+v %v", st, err)
	}
	if r, _ := dst.VerifyChangelog(context.Background()); !r.OK || r.FirstSeq != 13 || r.HeadSeq != 32 || r.PrunedBy == nil || r.PrunedBy.Actor != "cli:owner" {
		t.Fatalf("imported pruned log %+v", r)
	}
}

// A file pruned by a devgraph that wrote no changelog.prune event still verifies from its
// checkpoint; the report has no pruner to name (the CLI says so).
func TestVerify_CheckpointWithoutPruneEvent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	db := openFile(t, path, store.Options{})
	seed(t, db, 2) // 6 events
	db.Close()
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		ev := tx.Bucket(migrations.BucketEvents)
		h, err := migrations.DecodeEventHeader(3, ev.Get(migrations.U64(3)))
		if err != nil {
			return err
		}
		var hash [32]byte
		b, _ := hex.DecodeString(h.Hash)
		copy(hash[:], b)
		for seq := uint64(1); seq <= 3; seq++ {
			if err := ev.Delete(migrations.U64(seq)); err != nil {
				return err
			}
		}
		return tx.Bucket(migrations.BucketMeta).Put(migrations.KeyCheckpoint, migrations.EncodeHead(migrations.Head{Seq: 3, Hash: hash}))
	})
	r := verify(t, path)
	if !r.OK || r.FirstSeq != 4 || !strings.HasPrefix(r.Checkpoint, "3:") || r.PrunedBy != nil {
		t.Fatalf("report %+v", r)
	}
}

// Defect 6 (issue 11): a prune wrote no event (verify stayed green with no trace of who
// cut the log), took a before in the future, and any caller could run it. Now it needs
// the prune permission, refuses a future before, and records the cut as a
// changelog.prune event that verify reports.
func TestPrune_Audited(t *testing.T) {
	t.Parallel()
	clock := &storetest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Step: time.Hour}
	path := filepath.Join(t.TempDir(), "p.db")
	db := openFile(t, path, store.Options{Now: clock.Now})
	seed(t, db, 4) // 12 events, hours 1..4
	head := func() (uint64, string) {
		r, err := db.VerifyChangelog(context.Background())
		if err != nil || !r.OK {
			t.Fatalf("verify %+v %v", r, err)
		}
		return r.HeadSeq, r.HeadHash
	}
	seq0, hash0 := head()

	t.Run("ErrForbidden", func(t *testing.T) {
		_, err := db.PruneChangelog(graph.WithActor(context.Background(), "http:local"), time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC))
		mustCode(t, err, graph.EFORBIDDEN)
		if !strings.Contains(graph.ErrorMessage(err), "name token prune") {
			t.Errorf("message does not say how to mark a token: %q", graph.ErrorMessage(err))
		}
		if s, h := head(); s != seq0 || h != hash0 {
			t.Fatalf("a refused prune changed the chain: %d %s", s, h)
		}
	})
	ctx := graph.WithPrunePermission(graph.WithMessage(graph.WithActor(context.Background(), "cli:owner"), "yearly cleanup"))
	t.Run("ErrFuture", func(t *testing.T) {
		_, err := db.PruneChangelog(ctx, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		mustCode(t, err, graph.EINVALID)
		if graph.ErrorField(err) != "before" || !strings.Contains(graph.ErrorMessage(err), "in the future") {
			t.Errorf("future before: %v (field %q)", err, graph.ErrorField(err))
		}
		if s, h := head(); s != seq0 || h != hash0 {
			t.Fatalf("a refused prune changed the chain: %d %s", s, h)
		}
	})
	t.Run("NothingToDrop", func(t *testing.T) {
		if n, err := db.PruneChangelog(ctx, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil || n != 0 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		if s, h := head(); s != seq0 || h != hash0 {
			t.Fatalf("an empty prune wrote: %d %s", s, h)
		}
	})
	t.Run("OK", func(t *testing.T) {
		// events 1..6 are older than hour 3; their last hash is the checkpoint
		evs, _, _ := db.FindEvents(context.Background(), graph.EventFilter{First: 100})
		var cutHash string
		for _, e := range evs {
			if e.Seq == 6 {
				cutHash = e.Hash
			}
		}
		n, err := db.PruneChangelog(ctx, time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC))
		if err != nil || n != 6 {
			t.Fatalf("pruned %d, %v", n, err)
		}
		evs, _, err = db.FindEvents(context.Background(), graph.EventFilter{Target: graph.ChangelogTarget})
		if err != nil || len(evs) != 1 {
			t.Fatalf("events on the changelog: %v %v", evs, err)
		}
		e := evs[0]
		if e.Action != graph.ActChangelogPrune || e.Seq != seq0+1 || e.Actor != "cli:owner" || e.Message != "yearly cleanup" || e.PrevHash != hash0 {
			t.Fatalf("prune event %+v", e)
		}
		var p graph.Prune
		if err := json.Unmarshal(e.After, &p); err != nil {
			t.Fatal(err)
		}
		if p.FirstSeq != 1 || p.LastSeq != 6 || p.Checkpoint != cutHash || p.Dropped != 6 || !p.Before.Equal(time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)) {
			t.Fatalf("prune record %+v, want 1..6 at %s", p, cutHash)
		}
		r, _ := db.VerifyChangelog(context.Background())
		if !r.OK || r.FirstSeq != 7 || r.Checkpoint != "6:"+cutHash || r.PrunedBy == nil ||
			r.PrunedBy.Actor != "cli:owner" || r.PrunedBy.EventSeq != e.Seq || !r.PrunedBy.Time.Equal(e.Time) || r.PrunedBy.LastSeq != 6 {
			t.Fatalf("verify after prune %+v %+v", r, r.PrunedBy)
		}
	})
	t.Run("CheckpointMovedOutsideDevgraph", func(t *testing.T) {
		// Someone with the file cuts further and moves the checkpoint: verify no longer
		// matches the last prune event.
		db.Close()
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			ev := tx.Bucket(migrations.BucketEvents)
			v := ev.Get(migrations.U64(7))
			h, err := migrations.DecodeEventHeader(7, v)
			if err != nil {
				return err
			}
			var hash [32]byte
			b, _ := hex.DecodeString(h.Hash)
			copy(hash[:], b)
			if err := ev.Delete(migrations.U64(7)); err != nil {
				return err
			}
			return tx.Bucket(migrations.BucketMeta).Put(migrations.KeyCheckpoint, migrations.EncodeHead(migrations.Head{Seq: 7, Hash: hash}))
		})
		r := verify(t, path)
		if r.OK || !strings.Contains(r.Problem, "not the one the last prune recorded") {
			t.Fatalf("report %+v", r)
		}
	})
}

func TestAtomicity_InjectedFailure(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	defer db.Close()
	ctx := ctxActor("cli:t")
	observe(t, db, dev("sn:1", "usb:1-1", fp("usb_serial", "0582:01a9:X"), fp("usb_id", "0582:01a9")))
	seed(t, db, 1)
	before, _ := db.Stats(ctx)
	boom := errors.New("injected failure")
	for _, point := range []string{"bind.hints", "identity.created"} {
		store.SetTestHook(db, func(p string) error {
			if p == point {
				return boom
			}
			return nil
		})
		_, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:1-1", New: &graph.IdentityCreate{Name: "Half Done"}})
		if !errors.Is(err, boom) {
			t.Fatalf("%s: err=%v", point, err)
		}
	}
	store.SetTestHook(db, func(p string) error {
		if p == "identity.delete.cascade" {
			return boom
		}
		return nil
	})
	if err := db.DeleteIdentity(ctx, "unit-0"); !errors.Is(err, boom) {
		t.Fatalf("delete err=%v", err)
	}
	store.SetTestHook(db, nil)
	after, _ := db.Stats(ctx)
	if *after != *before {
		t.Fatalf("stats changed: %+v → %+v", before, after)
	}
	if _, err := db.FindIdentityByID(ctx, "half-done", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatal("half-done identity persisted")
	}
	if h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{fp("usb_id", "0582:01a9")}); len(h[fp("usb_id", "0582:01a9")]) != 0 {
		t.Fatal("hints of the failed bind persisted")
	}
	if id, _ := db.FindIdentityByID(ctx, "unit-0", graph.IdentityParts{}); id == nil || len(id.Hints) != 1 {
		t.Fatal("failed delete removed hints")
	}
	if evs := allEvents(t, db, graph.EventFilter{Action: "identity.create"}); len(evs) != 1 {
		t.Fatalf("identity.create events %d", len(evs))
	}
	if r, _ := db.VerifyChangelog(ctx); !r.OK {
		t.Fatalf("verify %+v", r)
	}
}

func TestGroupCommit_FailureIsolated(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("n%d", i)
			if i%4 == 0 {
				name = "" // invalid: must fail alone
			}
			_, errs[i] = db.CreateIdentity(ctx, graph.IdentityCreate{Name: name, Hints: []graph.Fingerprint{fp("usb_id", "0582:01a9")}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%4 == 0) != (err != nil) {
			t.Fatalf("write %d: err=%v", i, err)
		}
	}
	_, total, _, _ := db.FindIdentities(ctx, graph.IdentityFilter{})
	if total != 48 {
		t.Fatalf("total=%d, want 48", total)
	}
	if h, _ := db.FindHintHolders(ctx, []graph.Fingerprint{fp("usb_id", "0582:01a9")}); len(h[fp("usb_id", "0582:01a9")]) != 48 {
		t.Fatal("hint holders")
	}
	if evs := allEvents(t, db, graph.EventFilter{}); len(evs) != 96 {
		t.Fatalf("events=%d", len(evs))
	}
}
