package store_test

import (
	"bytes"
	"context"
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
	n, err := db.PruneChangelog(context.Background(), time.Date(2026, 1, 1, 5, 0, 0, 0, time.UTC))
	if err != nil || n != 12 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	r, _ := db.VerifyChangelog(context.Background())
	if !r.OK || r.FirstSeq != 13 || r.Checked != 18 || r.Checkpoint == "" {
		t.Fatalf("after prune %+v", r)
	}
	if s, _ := db.Stats(context.Background()); s.Events != 18 {
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
	if r, _ := db.VerifyChangelog(context.Background()); !r.OK || r.HeadSeq != 31 {
		t.Fatalf("after more writes %+v", r)
	}
	_, err = db.PruneChangelog(context.Background(), time.Time{})
	mustCode(t, err, graph.EINVALID)

	// an export of a pruned file carries its checkpoint; imported, the rest still verifies
	var exp bytes.Buffer
	if err := db.Export(context.Background(), &exp); err != nil {
		t.Fatal(err)
	}
	dst := storetest.MustOpen(t)
	if st, err := dst.Import(context.Background(), &exp, nil); err != nil || !st.KeptLog || st.Events != 19 {
		t.Fatalf("import %+v %v", st, err)
	}
	if r, _ := dst.VerifyChangelog(context.Background()); !r.OK || r.FirstSeq != 13 || r.HeadSeq != 31 {
		t.Fatalf("imported pruned log %+v", r)
	}
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
