package graph_test

import (
	"context"
	"strings"
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

// TestTrace_PortComparedAsRelationsStoreIt: the port a trace starts from is normalised
// and compared the way relations store and compare ports (white space trimmed and
// collapsed, case folded by PortKey), and a port no relation could hold (a NUL, a control
// character, invalid UTF-8, past MaxPort) is EINVALID naming "port".
func TestTrace_PortComparedAsRelationsStoreIt(t *testing.T) {
	t.Parallel()
	m := newMem()
	m.rel("rel:1", graph.RelCable, "identity:a", "MIDI OUT", "identity:b", "")
	m.rel("rel:2", graph.RelCable, "identity:a", "OUT 2", "identity:c", "")
	for _, port := range []string{"midi out", " MIDI  OUT ", "MIDI\tOUT"} {
		tr, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{Port: port})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops from port "+port, traceLines(tr), []string{"1^-1 cable identity:a→identity:b end"})
	}
	for _, port := range []string{"a\x00b", "a\x07b", "\xff", strings.Repeat("x", graph.MaxPort+1)} {
		_, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{Port: port})
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "port" {
			t.Errorf("port %q: %v, want EINVALID on port", port, err)
		}
		if err := graph.ValidateTraceOptions(graph.TraceOptions{Port: port}); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("ValidateTraceOptions(port %q): %v", port, err)
		}
	}
}

// TestNeighbors_DanglingBeyondLastDepthIsNotTruncation: a relation at the last depth whose
// far end the source does not know leads nowhere; only a vertex that exists beyond the
// depth makes the answer truncated by depth.
func TestNeighbors_DanglingBeyondLastDepthIsNotTruncation(t *testing.T) {
	t.Parallel()
	m := newMem()
	m.rel("rel:1", graph.RelCable, "identity:a", "", "identity:b", "")
	m.rel("rel:2", graph.RelCable, "identity:b", "", "identity:gone", "")
	delete(m.vertex, "identity:gone")
	g, err := graph.Neighbors(context.Background(), m, "identity:a", graph.NeighborOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "vertices", vertexIDs(g.Vertices), []string{"identity:a@0", "identity:b@1"})
	noTrunc(t, g.Bounded)
	m.rel("rel:3", graph.RelCable, "identity:b", "", "identity:c", "")
	g, err = graph.Neighbors(context.Background(), m, "identity:a", graph.NeighborOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	truncBy(t, g.Bounded, graph.TruncDepth)
}
