package graph_test

import (
	"context"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestTrace_EndBeforeDanglingRelation: a vertex whose only onward relations lead to nodes
// the source does not know is where the signal ends, and is listed as an end, as a vertex
// with no onward relation at all is.
func TestTrace_EndBeforeDanglingRelation(t *testing.T) {
	t.Parallel()
	m := newMem()
	m.rel("rel:1", graph.RelCable, "identity:a", "", "identity:b", "")
	m.rel("rel:2", graph.RelCable, "identity:b", "", "identity:gone", "")
	delete(m.vertex, "identity:gone")
	tr, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "hops", traceLines(tr), []string{"1^-1 cable identity:a→identity:b end"})
	mustEqual(t, "ends", tr.Ends, []string{"identity:b"})
	noTrunc(t, tr.Bounded)
}
