package graph_test

import (
	"context"
	"slices"
	"testing"

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
