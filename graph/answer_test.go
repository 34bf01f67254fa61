package graph_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// TestAfterAnswer: without a hook the work runs at once; with one it waits for the
// answer, runs in the order it was put off, once; after the answer it runs at once.
func TestAfterAnswer(t *testing.T) {
	t.Parallel()
	var ran []string
	graph.AfterAnswer(context.Background(), func() { ran = append(ran, "no hook") })
	if !slices.Equal(ran, []string{"no hook"}) {
		t.Fatalf("without a hook: ran %v, want it at once", ran)
	}
	ran = nil
	ctx, answered := graph.WithAnswerHook(context.Background())
	graph.AfterAnswer(ctx, func() { ran = append(ran, "first") })
	derived, cancel := context.WithCancel(ctx)
	defer cancel()
	graph.AfterAnswer(derived, func() { ran = append(ran, "second") })
	if len(ran) != 0 {
		t.Fatalf("before the answer: ran %v, want nothing", ran)
	}
	answered()
	if !slices.Equal(ran, []string{"first", "second"}) {
		t.Fatalf("after the answer: ran %v, want first, second", ran)
	}
	answered()
	graph.AfterAnswer(ctx, func() { ran = append(ran, "late") })
	if !slices.Equal(ran, []string{"first", "second", "late"}) {
		t.Fatalf("answered twice, then work put off after the answer: ran %v, want first, second, late", ran)
	}
}

// TestCommitHold: without a hold a store keeps its commit (HoldCommit is false); with
// one, settle runs the held waits in order, once, and reports the first error, which
// SettleCommits then gives every later read or write of the request.
func TestCommitHold(t *testing.T) {
	t.Parallel()
	if graph.CanHoldCommit(context.Background()) || graph.HoldCommit(context.Background(), func() error { return nil }) {
		t.Fatal("a context without a hold took a held commit")
	}
	if err := graph.SettleCommits(context.Background()); err != nil {
		t.Fatalf("settling without a hold: %v", err)
	}
	ctx, settle := graph.WithCommitHold(context.Background())
	if !graph.CanHoldCommit(ctx) {
		t.Fatal("CanHoldCommit false under a hold")
	}
	var ran []string
	first := errors.New("disk full")
	graph.HoldCommit(ctx, func() error { ran = append(ran, "a"); return nil })
	graph.HoldCommit(ctx, func() error { ran = append(ran, "b"); return first })
	graph.HoldCommit(ctx, func() error { ran = append(ran, "c"); return errors.New("later") })
	if len(ran) != 0 {
		t.Fatalf("held waits ran before settling: %v", ran)
	}
	if err := settle(); err != first {
		t.Fatalf("settle = %v, want the first failure %v", err, first)
	}
	if !slices.Equal(ran, []string{"a", "b", "c"}) {
		t.Fatalf("waits ran %v, want a, b, c", ran)
	}
	if err := graph.SettleCommits(ctx); err != first || !slices.Equal(ran, []string{"a", "b", "c"}) {
		t.Fatalf("settling again: %v, ran %v; want the same error and no wait run twice", err, ran)
	}
	if graph.CanHoldCommit(ctx) || graph.HoldCommit(ctx, func() error { return nil }) {
		t.Fatal("the hold took a commit after the edge settled it")
	}

	// A store settling before its next read or write does not end the hold.
	mid, settleMid := graph.WithCommitHold(context.Background())
	graph.HoldCommit(mid, func() error { return nil })
	if err := graph.SettleCommits(mid); err != nil || !graph.CanHoldCommit(mid) {
		t.Fatalf("after a store settled: %v, can hold %v; want nil and still holding", err, graph.CanHoldCommit(mid))
	}
	if err := settleMid(); err != nil {
		t.Fatal(err)
	}

	ok, settleOK := graph.WithCommitHold(context.Background())
	graph.HoldCommit(ok, func() error { return nil })
	if err := settleOK(); err != nil {
		t.Fatalf("settle after commits that ended well: %v", err)
	}
}

// TestCommitHold_SettledTogether: a settle that comes while another is waiting for a
// held commit (the edge's settle beside a read the request still runs) waits for that
// commit too, and gets its error.
func TestCommitHold_SettledTogether(t *testing.T) {
	t.Parallel()
	ctx, settle := graph.WithCommitHold(context.Background())
	entered, commit := make(chan struct{}), make(chan struct{})
	var ended atomic.Bool
	failed := errors.New("disk full")
	graph.HoldCommit(ctx, func() error {
		close(entered)
		<-commit
		ended.Store(true)
		return failed
	})
	first := make(chan error, 1)
	go func() { first <- graph.SettleCommits(ctx) }()
	<-entered // the first settle is waiting for the commit
	edge := make(chan error, 1)
	go func() {
		err := settle()
		if !ended.Load() {
			err = errors.New("returned before the held commit ended")
		}
		edge <- err
	}()
	time.Sleep(20 * time.Millisecond) // a settle that did not wait would have returned now
	close(commit)
	if err := <-edge; err != failed {
		t.Fatalf("the edge's settle: %v, want the held commit's error %v", err, failed)
	}
	if err := <-first; err != failed {
		t.Fatalf("the first settle: %v, want %v", err, failed)
	}
}
