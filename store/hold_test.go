package store_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// commitGate holds a DB's commits at the "commit" test point (after the transaction's
// work, before bbolt commits) until released, with the error the commit then fails with.
type commitGate struct {
	entered chan struct{}
	release chan error
}

func gateCommits(db *store.DB) *commitGate {
	g := &commitGate{entered: make(chan struct{}, 1), release: make(chan error)}
	store.SetTestHook(db, func(point string) error {
		if point != "commit" {
			return nil
		}
		g.entered <- struct{}{}
		return <-g.release
	})
	return g
}

// addNote adds a note and fails the test if the call does not return while the
// commit is held at the gate.
func addNote(t *testing.T, db *store.DB, g *commitGate, ctx context.Context, body string) *graph.Note {
	t.Helper()
	type res struct {
		n   *graph.Note
		err error
	}
	got := make(chan res, 1)
	go func() {
		n, err := db.AddNote(ctx, graph.NoteCreate{Target: "identity:desk-mixer", Body: body})
		got <- res{n, err}
	}()
	<-g.entered
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("AddNote under a hold: %v", r.err)
		}
		return r.n
	case <-time.After(10 * time.Second):
		t.Fatal("AddNote under a hold did not return before its commit")
	}
	return nil
}

// TestUpdate_HeldCommit: under a commit hold (graph.WithCommitHold) a write returns its
// results once only the commit is left; what it wrote is in the file once settle
// returns nil; a read for the same request sees its write (it settles first); a commit
// that fails is settle's error, leaves nothing written and fails the request's next
// write.
func TestUpdate_HeldCommit(t *testing.T) {
	db := storetest.MustOpen(t, store.Options{NoSync: true})
	plain := graph.WithActor(context.Background(), "mcp:test")
	if _, err := db.CreateIdentity(plain, graph.IdentityCreate{Name: "Desk Mixer"}); err != nil {
		t.Fatal(err)
	}
	g := gateCommits(db)
	exists := func(id string) bool {
		t.Helper()
		n, err := db.FindNoteByID(plain, id)
		if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatal(err)
		}
		return n != nil
	}

	// Committed: the results come first, the commit after.
	ctx, settle := graph.WithCommitHold(plain)
	n := addNote(t, db, g, ctx, "held then committed")
	if n.ID == "" || n.Body != "held then committed" {
		t.Fatalf("the held write's result: %+v", n)
	}
	if exists(n.ID) {
		t.Fatal("the note is readable before its commit")
	}
	g.release <- nil
	if err := settle(); err != nil {
		t.Fatalf("settle after a commit that went through: %v", err)
	}
	if !exists(n.ID) {
		t.Fatal("the note is not in the file after settle")
	}

	// The request's own read waits for its write.
	ctx, settle = graph.WithCommitHold(plain)
	n = addNote(t, db, g, ctx, "read back by its request")
	read := make(chan *graph.Note, 1)
	go func() {
		got, _ := db.FindNoteByID(ctx, n.ID)
		read <- got
	}()
	time.Sleep(20 * time.Millisecond) // a read that did not settle first would run now
	g.release <- nil
	if got := <-read; got == nil {
		t.Fatal("a read for the request that wrote the note did not see it")
	}
	if err := settle(); err != nil {
		t.Fatal(err)
	}

	// Once the edge has settled, a write made under the request's context (work the
	// request left running) is not held: it returns after its commit.
	ctx, settle = graph.WithCommitHold(plain)
	if err := settle(); err != nil {
		t.Fatal(err)
	}
	late := make(chan *graph.Note, 1)
	go func() {
		n, err := db.AddNote(ctx, graph.NoteCreate{Target: "identity:desk-mixer", Body: "after the answer"})
		if err != nil {
			t.Error(err)
		}
		late <- n
	}()
	<-g.entered
	select {
	case n := <-late:
		t.Fatalf("a write after the edge settled returned before its commit: %v", n)
	case <-time.After(20 * time.Millisecond): // a held write would have returned by now
	}
	g.release <- nil
	if n := <-late; n == nil || !exists(n.ID) {
		t.Fatalf("the late write: %v, want it committed when it returns", n)
	}

	// The commit fails (a full disk): settle says so, nothing is written, and the
	// request's next write is refused with the same error.
	ctx, settle = graph.WithCommitHold(plain)
	n = addNote(t, db, g, ctx, "held then lost")
	g.release <- fmt.Errorf("write %s: %w", "devgraph.db", syscall.ENOSPC)
	err := settle()
	if err == nil {
		t.Fatal("settle = nil after the commit failed")
	}
	if exists(n.ID) {
		t.Fatal("a note whose commit failed is in the file")
	}
	store.SetTestHook(db, nil)
	if _, again := db.AddNote(ctx, graph.NoteCreate{Target: "identity:desk-mixer", Body: "after the failure"}); again == nil || graph.ErrorMessage(again) != graph.ErrorMessage(err) {
		t.Fatalf("the request's next write: %v, want the failed commit's error %v", again, err)
	}
}

// fixedLive is a source that always shows the same snapshot (sources.Live shares one
// snapshot between requests for a while in the same way).
type fixedLive struct{ snap *graph.Snapshot }

func (l fixedLive) Snapshot(context.Context) (*graph.Snapshot, error) { return l.snap, nil }

// TestObserve_HeldCommit: an edit tool's request that records a new snapshot first
// (graph_bind, graph_unbind, graph_relate over stdio, under a commit hold) counts it as
// recorded only once its commit has ended: not before (another request sharing the
// snapshot would skip recording it and miss its devices), and not when the commit failed
// (the snapshot is then recorded by the next request).
func TestObserve_HeldCommit(t *testing.T) {
	db := storetest.MustOpen(t, store.Options{NoSync: true})
	snap := &graph.Snapshot{Taken: time.Now().UTC(), Devices: []*graph.ObservedDevice{{
		Key: "usb-synth", Ref: "usb:1-1", Source: "usb", Name: "Synth",
		Fingerprints: []graph.Fingerprint{{Kind: "usb_id", Value: "0582:01ab"}},
	}}}
	svc := identity.New(db, fixedLive{snap}, nil)
	plain := graph.WithActor(context.Background(), "mcp:b")
	g := gateCommits(db)

	ctx, settle := graph.WithCommitHold(graph.WithActor(context.Background(), "mcp:a"))
	observed := make(chan error, 1)
	go func() {
		_, err := svc.Observe(ctx)
		observed <- err
	}()
	<-g.entered // only bbolt's commit of the snapshot is left
	select {
	case err := <-observed:
		g.release <- nil // the commit, so that the store can close
		t.Fatalf("Observe returned (%v) before the snapshot's held commit ended", err)
	case <-time.After(20 * time.Millisecond): // it would have returned by now
	}
	g.release <- fmt.Errorf("write devgraph.db: %w", syscall.ENOSPC)
	if err := <-observed; err != nil {
		t.Fatalf("Observe: %v (a failed record leaves reads the live snapshot)", err)
	}
	if err := settle(); err == nil {
		t.Fatal("settle = nil after the snapshot's commit failed")
	}
	store.SetTestHook(db, nil)
	if _, err := svc.Observe(plain); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindDeviceByID(plain, "usb:1-1"); err != nil {
		t.Fatalf("after the held record failed, the next request did not record the snapshot: %v", err)
	}
}
