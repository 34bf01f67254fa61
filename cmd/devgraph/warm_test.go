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
	"github.com/devgraph/devgraph/internal/startgc"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
)

// warmFind, once the first find has been answered, ends the start's hold on the
// collector, warms the rest of the index, and leaves the heap's headroom in mapped pages
// (startgc.Prefault): the heap then holds the headroom in pages mapped at least. The
// timer that would end the hold without a find is an hour here.
func TestWarmFind_PrefaultsAfterFirstFind(t *testing.T) {
	// More headroom than the test process has mapped, whatever ran before: only
	// Prefault's allocation maps that much.
	headroom := startgc.MappedHeap() + 64<<20
	defer startgc.KeepHeadroom(func(string) string { return "" }, headroom)()
	db, err := store.Open(filepath.Join(t.TempDir(), "warm.db"), store.Options{Host: testHost, NoSync: true, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.CreateIdentity(graph.WithActor(ctx, "cli:setup"), graph.IdentityCreate{Name: "Moog Subsequent 37"}); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	rt := &runtime{log: slog.New(slog.NewTextHandler(io.Discard, nil)), names: search.NewFinder(db),
		endStart: sync.OnceFunc(func() { close(ended) }), warmRest: time.Hour}
	rt.warmFind()
	defer rt.stopWarmFind()

	fctx, answered := graph.WithAnswerHook(ctx)
	if res, err := rt.names.Find(fctx, graph.FindQuery{Text: "moog", First: 5}); err != nil || len(res) == 0 {
		t.Fatalf("find: %v %v", res, err)
	}
	answered()
	select {
	case <-rt.warmed:
	case <-time.After(30 * time.Second):
		t.Fatal("the warming did not end after the first find")
	}
	select {
	case <-ended:
	default:
		t.Fatal("the first find did not end the hold on the collector")
	}
	if mapped := startgc.MappedHeap(); mapped < headroom {
		t.Fatalf("after warming, the heap holds %d bytes in mapped pages: want the %d of headroom at least", mapped, headroom)
	}
}
