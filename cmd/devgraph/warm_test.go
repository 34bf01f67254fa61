package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
)

// subscribeNow is a graph.Notifier that calls its subscriber at once, from the test.
type subscribeNow struct {
	fn        func([]*graph.Event)
	cancelled int
}

func (n *subscribeNow) Subscribe(fn func([]*graph.Event)) func() {
	n.fn = fn
	return func() { n.cancelled++ }
}

// firstClientWrite: discovery's and robots' own events (which a start may write) do not
// count; the first event anyone else made closes the channel, once.
func TestFirstClientWrite(t *testing.T) {
	n := &subscribeNow{}
	wrote, stop := firstClientWrite(n)
	closed := func() bool {
		select {
		case <-wrote:
			return true
		default:
			return false
		}
	}
	n.fn([]*graph.Event{{Actor: "discovery:usb"}, {Actor: "robot:scout"}})
	n.fn(nil) // a dropped subscription's last call
	if closed() {
		t.Fatal("discovery's and a robot's events ended the wait for a client's write")
	}
	n.fn([]*graph.Event{{Actor: "discovery:alsa"}, {Actor: "mcp:claude-code"}})
	if !closed() {
		t.Fatal("a client's event did not end the wait")
	}
	n.fn([]*graph.Event{{Actor: "cli:ana"}}) // no second close
	stop()
	stop()
	if n.cancelled != 2 {
		t.Fatalf("stop cancelled the subscription %d times, want each call passed on (the store's cancel is safe twice)", n.cancelled)
	}
}

// warmFind ends the start's hold on the collector at a client's first write when no find
// has come, without waiting for warmRestAfter (made an hour here).
func TestWarmFind_EndsHoldAtFirstWrite(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "warm.db"), store.Options{Host: testHost, NoSync: true, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	id, err := db.CreateIdentity(graph.WithActor(ctx, "cli:setup"), graph.IdentityCreate{Name: "Moog Subsequent 37"})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	rt := &runtime{log: slog.New(slog.NewTextHandler(io.Discard, nil)), names: search.NewFinder(db),
		endStart: sync.OnceFunc(func() { close(ended) }), warmRest: time.Hour}
	rt.warmFind(db)
	defer rt.stopWarmFind()

	if _, err := db.AddNote(graph.WithActor(ctx, "discovery:usb"), graph.NoteCreate{Target: id.ID, Body: "seen on usb 1-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddNote(graph.WithActor(ctx, "mcp:claude-code"), graph.NoteCreate{Target: id.ID, Body: "patched to the mixer"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("a client's write did not end the hold on the collector")
	}
}
