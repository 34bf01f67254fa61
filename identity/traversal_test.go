package identity_test

import (
	"slices"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

func vertexIDs(vs []*graph.Vertex) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

// The trace: from the KeyStep along the declared MIDI cable (between identities)
// into the JD-Xi, and on along the JD-Xi's observed sequencer subscription (on its
// device) to the DAW.
func TestTrace_DeclaredCableToObservedSubscription(t *testing.T) {
	s := newStudio(t)
	tr, err := s.svc.Trace(s.ctx, "keystep", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.From != "identity:keystep" || tr.Direction != graph.DirOut {
		t.Fatalf("trace from %s going %s", tr.From, tr.Direction)
	}
	var cable, sub *graph.TraceHop
	for i := range tr.Hops {
		h := &tr.Hops[i]
		switch {
		case h.Relation == s.cable.ID:
			cable = h
		case h.Type == graph.RelSubscribed && h.To == s.bitwig.ID:
			sub = h
		}
		if h.Type == graph.RelVia {
			t.Errorf("a trace followed via %s", h.Relation)
		}
	}
	if cable == nil || cable.From != "identity:keystep" || cable.To != "identity:jdxi" || cable.Observed || cable.Depth != 1 {
		t.Fatalf("no first hop along the declared cable: %+v in %+v", cable, tr.Hops)
	}
	if sub == nil || sub.From != "identity:jdxi" || sub.FromNode != s.jdxiDev || !sub.Observed || sub.Depth != 2 || tr.Hops[sub.Parent].Relation != s.cable.ID {
		t.Fatalf("no observed hop from the JD-Xi (through its device) to Bitwig after the cable: %+v", sub)
	}
	if !slices.Contains(tr.Ends, s.bitwig.ID) {
		t.Errorf("the trace ends at %v, not at %s", tr.Ends, s.bitwig.ID)
	}
	if tr.Vertices[0].ID != "identity:keystep" || tr.Truncated {
		t.Errorf("vertices %v, truncated %v", vertexIDs(tr.Vertices), tr.Truncated)
	}

	// Upstream from the DAW reaches the KeyStep; a port filters the first hop.
	up, err := s.svc.Trace(s.ctx, s.bitwig.ID, graph.TraceOptions{Direction: graph.DirIn})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(vertexIDs(up.Vertices), "identity:keystep") {
		t.Errorf("upstream from %s reaches %v, not the KeyStep", s.bitwig.ID, vertexIDs(up.Vertices))
	}
	none, err := s.svc.Trace(s.ctx, "keystep", graph.TraceOptions{Port: "USB"})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Hops) != 0 {
		t.Errorf("nothing leaves the KeyStep's USB port, yet %+v", none.Hops)
	}
	port, err := s.svc.Trace(s.ctx, "keystep", graph.TraceOptions{Port: "midi out"})
	if err != nil || len(port.Hops) == 0 || port.Hops[0].Relation != s.cable.ID {
		t.Fatalf("trace from the KeyStep's MIDI OUT: %+v, %v", port, err)
	}

	// A cycle of cables ends.
	mustRelate(t, s.ctx, s.svc, graph.RelationCreate{From: "jdxi", FromPort: "MIDI OUT", Type: "cable", To: "keystep", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din"}})
	cyc, err := s.svc.Trace(s.ctx, "keystep", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	looped := false
	for _, h := range cyc.Hops {
		looped = looped || h.Cycle
	}
	if !looped {
		t.Errorf("a cycle of cables is not marked: %+v", cyc.Hops)
	}
}

// Path climbs the observed via chain: the robot base to its controller's root hub, and the
// KeyStep (bound: its identity is the vertex) behind two hubs.
func TestPath_ViaToController(t *testing.T) {
	s := newStudio(t)
	p, err := s.svc.Path(s.ctx, "usb:3-7", s.rootRef, graph.PathOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Found || len(p.Hops) == 0 || p.From != s.robot || p.To != s.rootHub {
		t.Fatalf("path robot base → root hub: %+v", p)
	}
	if last := p.Vertices[len(p.Vertices)-1]; last.ID != s.rootHub || !last.Infra || last.Kind != graph.KindDevice {
		t.Errorf("the path ends at %+v, want the root hub as an infrastructure device", last)
	}
	for _, h := range p.Hops {
		if h.Type != graph.RelVia || !h.Observed {
			t.Errorf("hop %+v is not an observed via", h)
		}
	}
	k, err := s.svc.Path(s.ctx, "keystep", s.rootRef, graph.PathOptions{Types: []string{"via"}, Directed: true})
	if err != nil {
		t.Fatal(err)
	}
	if !k.Found || len(k.Hops) != 3 || k.From != "identity:keystep" || k.Hops[0].FromNode != s.keyDev {
		t.Fatalf("path KeyStep → root hub over two hubs: %+v", k)
	}
	back, err := s.svc.Path(s.ctx, s.rootRef, "keystep", graph.PathOptions{Directed: true, Types: []string{"via"}})
	if err != nil || back.Found {
		t.Fatalf("a directed path against via: %+v, %v", back, err)
	}
	cross, err := s.svc.Path(s.ctx, "keystep", s.bitwig.ID, graph.PathOptions{})
	if err != nil || !cross.Found || len(cross.Hops) != 2 {
		t.Fatalf("path KeyStep → Bitwig across the cable and the subscription: %+v, %v", cross, err)
	}
}

// Neighbours with their filters; the subgraph of everything.
func TestNeighbors_Filters(t *testing.T) {
	s := newStudio(t)
	ids := func(o graph.NeighborOptions) []string {
		t.Helper()
		g, err := s.svc.Neighbors(s.ctx, s.jdxiRef, o)
		if err != nil {
			t.Fatal(err)
		}
		if g.Around != "identity:jdxi" || g.Vertices[0].ID != "identity:jdxi" {
			t.Fatalf("neighbours of the JD-Xi's device around %s: %v", g.Around, vertexIDs(g.Vertices))
		}
		return vertexIDs(g.Vertices)
	}
	all := ids(graph.NeighborOptions{})
	for _, want := range []string{"identity:keystep", s.scarlett, s.bitwig.ID} {
		if !slices.Contains(all, want) {
			t.Errorf("neighbours %v lack %s", all, want)
		}
	}
	cables := ids(graph.NeighborOptions{Types: []string{"cable"}})
	decl := ids(graph.NeighborOptions{Declared: true})
	want := []string{"identity:jdxi", "identity:keystep", s.scarlett}
	slices.Sort(want[1:])
	sortedTail := func(v []string) []string { c := slices.Clone(v); slices.Sort(c[1:]); return c }
	if !slices.Equal(sortedTail(cables), want) || !slices.Equal(sortedTail(decl), want) {
		t.Errorf("cable neighbours %v, declared %v, want %v", cables, decl, want)
	}
	obs := ids(graph.NeighborOptions{Observed: true})
	if slices.Contains(obs, "identity:keystep") || !slices.Contains(obs, s.bitwig.ID) {
		t.Errorf("observed neighbours %v", obs)
	}
	in := ids(graph.NeighborOptions{Direction: graph.DirIn})
	out := ids(graph.NeighborOptions{Direction: graph.DirOut})
	if !slices.Contains(in, "identity:keystep") || slices.Contains(out, "identity:keystep") || !slices.Contains(out, s.bitwig.ID) {
		t.Errorf("in %v, out %v", in, out)
	}
	two, err := s.svc.Neighbors(s.ctx, "keystep", graph.NeighborOptions{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(vertexIDs(two.Vertices), s.bitwig.ID) {
		t.Errorf("two hops from the KeyStep: %v", vertexIDs(two.Vertices))
	}

	whole, err := s.svc.Subgraph(s.ctx, "", graph.NeighborOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"identity:keystep", "identity:jdxi", s.bitwig.ID, s.rootHub} {
		if !slices.Contains(vertexIDs(whole.Vertices), want) {
			t.Errorf("the whole graph %v lacks %s", vertexIDs(whole.Vertices), want)
		}
	}
	if findRel(whole.Edges, func(r *graph.Relation) bool { return r.ID == s.cable.ID }) == nil {
		t.Errorf("the whole graph lacks the cable")
	}
	around, err := s.svc.Subgraph(s.ctx, "keystep", graph.NeighborOptions{Depth: 1})
	if err != nil || around.Around != "identity:keystep" {
		t.Fatalf("subgraph around the KeyStep: %+v, %v", around, err)
	}
}

// Bad input: a clear error before anything is walked.
func TestTraversal_BadInput(t *testing.T) {
	s := newStudio(t)
	_, err := s.svc.Neighbors(s.ctx, "jdxi", graph.NeighborOptions{Depth: graph.MaxNeighborsDepth + 1})
	wantCode(t, err, graph.EINVALID, "depth")
	_, err = s.svc.Neighbors(s.ctx, "jdxi", graph.NeighborOptions{Direction: "up"})
	wantCode(t, err, graph.EINVALID, "direction")
	_, err = s.svc.Subgraph(s.ctx, "", graph.NeighborOptions{Depth: -1})
	wantCode(t, err, graph.EINVALID, "depth")
	_, err = s.svc.Path(s.ctx, "jdxi", "keystep", graph.PathOptions{MaxDepth: graph.MaxPathDepth + 1})
	wantCode(t, err, graph.EINVALID, "depth")
	_, err = s.svc.Trace(s.ctx, "keystep", graph.TraceOptions{Direction: "sideways"})
	wantCode(t, err, graph.EINVALID, "direction")
	_, err = s.svc.Trace(s.ctx, "keystp", graph.TraceOptions{})
	wantCode(t, err, graph.ENOTFOUND, "identity:keystep")
	_, err = s.svc.Path(s.ctx, "jdxi", "client:alsa:Bitwig Studi", graph.PathOptions{})
	wantCode(t, err, graph.ENOTFOUND, s.bitwig.ID)
	if graph.ErrorField(err) != "to" {
		t.Errorf("field %q, want to", graph.ErrorField(err))
	}
	_, err = s.svc.Neighbors(s.ctx, "note:0190a3f2-0000-7000-8000-000000000000", graph.NeighborOptions{})
	wantCode(t, err, graph.EINVALID, "note")
}
