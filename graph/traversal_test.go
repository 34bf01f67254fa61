package graph_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// memSource is an EdgeSource held in maps: the hand-built graph the traversal tests walk.
// Bind makes devices part of an identity's vertex, as the service does for present bound
// devices.
type memSource struct {
	vertex map[string]*graph.Vertex     // node id → its vertex
	byNode map[string][]*graph.Relation // node id → relations touching it, by id
	delay  time.Duration                // Edges waits this long (honouring ctx)
	calls  int                          // Edges calls
}

func newMem() *memSource {
	return &memSource{vertex: map[string]*graph.Vertex{}, byNode: map[string][]*graph.Relation{}}
}

func kindOf(id string) graph.Kind {
	switch k := graph.KindOf(id); k {
	case graph.KindIdentity, graph.KindDevice, graph.KindClient:
		return k
	}
	return graph.KindDevice
}

// node adds nodes, each its own vertex (unless already there).
func (m *memSource) node(ids ...string) *memSource {
	for _, id := range ids {
		if m.vertex[id] == nil {
			name := id
			if i := strings.LastIndexByte(id, ':'); i >= 0 {
				name = id[i+1:]
			}
			m.vertex[id] = &graph.Vertex{ID: id, Kind: kindOf(id), Name: name}
		}
	}
	return m
}

// bind makes the devices part of the identity's vertex.
func (m *memSource) bind(identity string, devices ...string) *memSource {
	m.node(identity)
	v := m.vertex[identity]
	for _, d := range devices {
		v.Nodes = append(v.Nodes, d)
		m.vertex[d] = v
	}
	return m
}

func (m *memSource) add(r *graph.Relation) *graph.Relation {
	for _, n := range []string{r.From, r.To} {
		if m.vertex[n] == nil {
			m.node(n)
		}
		rs := append(m.byNode[n], r)
		slices.SortFunc(rs, func(a, b *graph.Relation) int { return strings.Compare(a.ID, b.ID) })
		m.byNode[n] = rs
	}
	return r
}

// rel declares a relation "from[:port] -type-> to[:port]" with the given id.
func (m *memSource) rel(id, typ, from, fromPort, to, toPort string) *graph.Relation {
	return m.add(&graph.Relation{ID: id, Type: typ, From: from, FromPort: fromPort, To: to, ToPort: toPort})
}

// obs adds an observed relation, its id derived as the sources derive it.
func (m *memSource) obs(typ, source, from, fromPort, to, toPort string) *graph.Relation {
	return m.add(&graph.Relation{ID: graph.ObservedRelationID(typ, from, fromPort, to, toPort), Type: typ, From: from, FromPort: fromPort,
		To: to, ToPort: toPort, Observed: true, Source: source})
}

func (m *memSource) Vertex(ctx context.Context, node string) (*graph.Vertex, error) {
	if v := m.vertex[node]; v != nil {
		return v, nil
	}
	return nil, graph.Errorf(graph.ENOTFOUND, "node %q not found", node)
}

func (m *memSource) Edges(ctx context.Context, v *graph.Vertex) ([]*graph.Relation, error) {
	m.calls++
	if m.delay > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(m.delay):
		}
	}
	if len(v.Nodes) == 0 {
		return m.byNode[v.ID], nil
	}
	var out []*graph.Relation
	for _, n := range append([]string{v.ID}, v.Nodes...) {
		for _, r := range m.byNode[n] {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// studio is the journey in small: the KeyStep and the JD-Xi are identities bound
// to their USB devices; a declared cable joins them; the JD-Xi's device is subscribed
// (observed, ALSA) to Bitwig Studio; both devices hang off a hub (via) up to the root hub.
func studio() *memSource {
	m := newMem()
	m.bind("identity:keystep", "device:ks")
	m.bind("identity:jdxi", "device:jdxi")
	m.node("device:hub", "device:root", "client:alsa:Bitwig Studio", "identity:speakers")
	m.rel("rel:01", graph.RelCable, "identity:keystep", "MIDI OUT", "identity:jdxi", "MIDI IN")
	m.obs(graph.RelSubscribed, "alsa", "device:jdxi", "JD-Xi MIDI 1", "client:alsa:Bitwig Studio", "Bitwig Studio in")
	m.obs(graph.RelVia, "usb", "device:jdxi", "", "device:hub", "")
	m.obs(graph.RelVia, "usb", "device:ks", "", "device:hub", "")
	m.obs(graph.RelVia, "usb", "device:hub", "", "device:root", "")
	m.rel("rel:02", graph.RelCable, "identity:jdxi", "OUT L", "identity:speakers", "IN L")
	return m
}

func vertexIDs(vs []*graph.Vertex) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%s@%d", v.ID, v.Depth)
	}
	return out
}

func edgeIDs(rs []*graph.Relation) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// traceLines renders a trace's tree one hop a line: depth, parent, from → to, marks.
func traceLines(tr *graph.TraceResult) []string {
	out := make([]string, len(tr.Hops))
	for i, h := range tr.Hops {
		s := fmt.Sprintf("%d^%d %s %s→%s", h.Depth, h.Parent, h.Type, h.From, h.To)
		if h.Cycle {
			s += " cycle"
		}
		if h.End {
			s += " end"
		}
		out[i] = s
	}
	return out
}

func mustEqual[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func noTrunc(t *testing.T, b graph.Bounded) {
	t.Helper()
	if b.Truncated || b.TruncatedBy != "" {
		t.Fatalf("truncated by %q, want a whole answer", b.TruncatedBy)
	}
}

func truncBy(t *testing.T, b graph.Bounded, by string) {
	t.Helper()
	if !b.Truncated || b.TruncatedBy != by {
		t.Fatalf("truncated=%v by %q, want by %q", b.Truncated, b.TruncatedBy, by)
	}
}

func TestTrace_AcrossBindingToClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := studio()
	for _, start := range []string{"identity:keystep", "device:ks"} {
		tr, err := graph.Trace(ctx, m, start, graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.From != "identity:keystep" || tr.Direction != graph.DirOut {
			t.Fatalf("from %q direction %q, want identity:keystep out", tr.From, tr.Direction)
		}
		mustEqual(t, "hops", traceLines(tr), []string{
			"1^-1 cable identity:keystep→identity:jdxi",
			// The cable enters the JD-Xi's identity; the signal leaves by the
			// subscription observed on its bound device (obs:… sorts before rel:…).
			"2^0 subscribed identity:jdxi→client:alsa:Bitwig Studio end",
			"2^0 cable identity:jdxi→identity:speakers end",
		})
		sub := tr.Hops[1]
		if sub.FromNode != "device:jdxi" || sub.ToNode != "" || !sub.Observed || sub.Source != "alsa" || sub.FromPort != "JD-Xi MIDI 1" || sub.Reverse {
			t.Fatalf("subscribed hop = %+v, want from node device:jdxi, observed alsa, port JD-Xi MIDI 1", sub.Hop)
		}
		if c := tr.Hops[0]; c.FromNode != "" || c.FromPort != "MIDI OUT" || c.ToPort != "MIDI IN" || c.Observed {
			t.Fatalf("cable hop = %+v", c.Hop)
		}
		mustEqual(t, "ends", tr.Ends, []string{"client:alsa:Bitwig Studio", "identity:speakers"})
		mustEqual(t, "vertices", vertexIDs(tr.Vertices), []string{"identity:keystep@0", "identity:jdxi@1", "client:alsa:Bitwig Studio@2", "identity:speakers@2"})
		noTrunc(t, tr.Bounded)
		if tr.Visited != 4 {
			t.Fatalf("visited %d, want 4", tr.Visited)
		}
	}
}

func TestTrace_ViaNeverTraced(t *testing.T) {
	t.Parallel()
	// The KeyStep's device hangs off the hub (via), which a trace never follows: with no
	// cable the KeyStep's trace is empty.
	m := newMem()
	m.bind("identity:keystep", "device:ks")
	m.obs(graph.RelVia, "usb", "device:ks", "", "device:hub", "")
	m.rel("rel:01", graph.RelMountedOn, "identity:keystep", "", "identity:desk", "")
	tr, err := graph.Trace(context.Background(), m, "identity:keystep", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "hops", traceLines(tr), []string{})
	mustEqual(t, "ends", tr.Ends, []string{})
}

func TestTrace_DirectionIn(t *testing.T) {
	t.Parallel()
	m := studio()
	tr, err := graph.Trace(context.Background(), m, "client:alsa:Bitwig Studio", graph.TraceOptions{Direction: graph.DirIn})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "hops", traceLines(tr), []string{
		"1^-1 subscribed client:alsa:Bitwig Studio→identity:jdxi",
		"2^0 cable identity:jdxi→identity:keystep end",
	})
	h := tr.Hops[0]
	if !h.Reverse || h.FromPort != "Bitwig Studio in" || h.ToNode != "device:jdxi" || h.ToPort != "JD-Xi MIDI 1" {
		t.Fatalf("upstream hop = %+v, want reverse, oriented as walked", h.Hop)
	}
	if tr.Direction != graph.DirIn {
		t.Fatalf("direction %q, want in", tr.Direction)
	}
}

func TestTrace_Cycle(t *testing.T) {
	t.Parallel()
	m := newMem()
	m.rel("rel:1", graph.RelCable, "identity:a", "out", "identity:b", "in")
	m.rel("rel:2", graph.RelCable, "identity:b", "out", "identity:c", "in")
	m.rel("rel:3", graph.RelCable, "identity:c", "out", "identity:a", "in")
	m.rel("rel:4", graph.RelCable, "identity:b", "thru", "identity:b2", "in")
	m.rel("rel:5", graph.RelCable, "identity:b2", "out", "identity:b", "in2")
	tr, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "hops", traceLines(tr), []string{
		"1^-1 cable identity:a→identity:b",
		"2^0 cable identity:b→identity:c",
		"3^1 cable identity:c→identity:a cycle",
		"2^0 cable identity:b→identity:b2",
		"3^3 cable identity:b2→identity:b cycle",
	})
	mustEqual(t, "ends", tr.Ends, []string{})
	noTrunc(t, tr.Bounded)
}

func TestTrace_FanOutBranches(t *testing.T) {
	t.Parallel()
	m := newMem()
	m.rel("rel:1", graph.RelCable, "identity:a", "out 1", "identity:b", "")
	m.rel("rel:2", graph.RelCable, "identity:a", "out 2", "identity:c", "")
	m.rel("rel:3", graph.RelCable, "identity:b", "", "identity:d", "")
	m.rel("rel:4", graph.RelControls, "identity:c", "", "identity:d", "")
	m.rel("rel:5", graph.RelCable, "identity:d", "", "identity:e", "")
	tr, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// d is reached by both branches; each branch is listed to its end.
	mustEqual(t, "hops", traceLines(tr), []string{
		"1^-1 cable identity:a→identity:b",
		"2^0 cable identity:b→identity:d",
		"3^1 cable identity:d→identity:e end",
		"1^-1 cable identity:a→identity:c",
		"2^3 controls identity:c→identity:d",
		"3^4 cable identity:d→identity:e end",
	})
	mustEqual(t, "ends", tr.Ends, []string{"identity:e"})
	mustEqual(t, "vertices", vertexIDs(tr.Vertices), []string{"identity:a@0", "identity:b@1", "identity:d@2", "identity:e@3", "identity:c@1"})

	t.Run("Port", func(t *testing.T) {
		// The port filters only the first hop, case-insensitively.
		tr, err := graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{Port: "OUT 2"})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops", traceLines(tr), []string{
			"1^-1 cable identity:a→identity:c",
			"2^0 controls identity:c→identity:d",
			"3^1 cable identity:d→identity:e end",
		})
		if tr.Port != "OUT 2" {
			t.Fatalf("port %q, want OUT 2", tr.Port)
		}
		tr, err = graph.Trace(context.Background(), m, "identity:a", graph.TraceOptions{Port: "nowhere"})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops", traceLines(tr), []string{})
	})
	t.Run("PortIn", func(t *testing.T) {
		m := studio()
		tr, err := graph.Trace(context.Background(), m, "identity:jdxi", graph.TraceOptions{Direction: graph.DirIn, Port: "midi in"})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops", traceLines(tr), []string{"1^-1 cable identity:jdxi→identity:keystep end"})
	})
}

func TestNeighbors_OneVertexPerBoundIdentity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := studio()
	// An observed link on the JD-Xi's device besides the cable on its identity: still one vertex.
	m.obs(graph.RelLinked, "pipewire", "device:ks", "capture_1", "device:jdxi", "playback_1")
	for _, start := range []string{"identity:jdxi", "device:jdxi"} {
		g, err := graph.Neighbors(ctx, m, start, graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.Around != "identity:jdxi" || g.Depth != 1 {
			t.Fatalf("around %q depth %d, want identity:jdxi 1", g.Around, g.Depth)
		}
		mustEqual(t, "vertices", vertexIDs(g.Vertices), []string{
			"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1", "identity:keystep@1", "identity:speakers@1"})
		if g.Vertices[0].Nodes[0] != "device:jdxi" {
			t.Fatalf("start vertex nodes %q, want its bound device", g.Vertices[0].Nodes)
		}
		// Every relation between listed vertices, the KeyStep's via to the hub included.
		var want []string
		for _, r := range []*graph.Relation{m.byNode["device:jdxi"][0], m.byNode["device:jdxi"][1], m.byNode["device:jdxi"][2], m.byNode["device:ks"][0], m.byNode["device:ks"][1]} {
			want = append(want, r.ID)
		}
		want = append(want, "rel:01", "rel:02")
		slices.Sort(want)
		want = slices.Compact(want)
		mustEqual(t, "edges", edgeIDs(g.Edges), want)
		truncBy(t, g.Bounded, graph.TruncDepth) // the root hub lies beyond the hub
	}
}

func TestNeighbors_Filters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := studio()
	for _, tc := range []struct {
		name string
		o    graph.NeighborOptions
		want []string
	}{
		{"Declared", graph.NeighborOptions{Declared: true}, []string{"identity:jdxi@0", "identity:keystep@1", "identity:speakers@1"}},
		{"Observed", graph.NeighborOptions{Observed: true}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1"}},
		{"Both", graph.NeighborOptions{Declared: true, Observed: true}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1", "identity:keystep@1", "identity:speakers@1"}},
		{"Types", graph.NeighborOptions{Types: []string{" Via ", "subscribed"}}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1"}},
		{"Out", graph.NeighborOptions{Direction: graph.DirOut}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1", "identity:speakers@1"}},
		{"In", graph.NeighborOptions{Direction: graph.DirIn}, []string{"identity:jdxi@0", "identity:keystep@1"}},
		{"Depth3Out", graph.NeighborOptions{Direction: graph.DirOut, Depth: 3}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1", "identity:speakers@1", "device:root@2"}},
		{"Depth2", graph.NeighborOptions{Depth: 2}, []string{"identity:jdxi@0", "client:alsa:Bitwig Studio@1", "device:hub@1", "identity:keystep@1", "identity:speakers@1", "device:root@2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.Neighbors(ctx, m, "identity:jdxi", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "vertices", vertexIDs(g.Vertices), tc.want)
			for _, r := range g.Edges {
				if tc.o.Declared && !tc.o.Observed && r.Observed || tc.o.Observed && !tc.o.Declared && !r.Observed {
					t.Fatalf("edge %s (observed %v) passes the filter %+v", r.ID, r.Observed, tc.o)
				}
			}
		})
	}
	t.Run("WholeGraphNotTruncated", func(t *testing.T) {
		g, err := graph.Neighbors(ctx, m, "identity:jdxi", graph.NeighborOptions{Depth: 4})
		if err != nil {
			t.Fatal(err)
		}
		noTrunc(t, g.Bounded)
		if g.Visited != 6 || len(g.Edges) != 6 {
			t.Fatalf("visited %d, %d edges; want 6 and 6", g.Visited, len(g.Edges))
		}
	})
}

func TestExplore(t *testing.T) {
	t.Parallel()
	m := studio()
	m.rel("rel:09", graph.RelPartOf, "identity:x", "", "identity:y", "")
	g, err := graph.Explore(context.Background(), m, []string{"identity:y", "device:ks", "identity:keystep", "identity:gone"}, graph.NeighborOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.Around != "" {
		t.Fatalf("around %q, want the whole graph", g.Around)
	}
	mustEqual(t, "vertices", vertexIDs(g.Vertices), []string{"identity:keystep@0", "identity:y@0", "device:hub@1", "identity:jdxi@1", "identity:x@1"})
}

func TestPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := studio()
	t.Run("AcrossKinds", func(t *testing.T) {
		p, err := graph.Path(ctx, m, "client:alsa:Bitwig Studio", "device:root", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || p.From != "client:alsa:Bitwig Studio" || p.To != "device:root" {
			t.Fatalf("path %+v, want found", p)
		}
		var hops []string
		for _, h := range p.Hops {
			hops = append(hops, fmt.Sprintf("%s %s[%s]→%s[%s] rev=%v", h.Type, h.From, h.FromNode, h.To, h.ToNode, h.Reverse))
		}
		mustEqual(t, "hops", hops, []string{
			"subscribed client:alsa:Bitwig Studio[]→identity:jdxi[device:jdxi] rev=true",
			"via identity:jdxi[device:jdxi]→device:hub[] rev=false",
			"via device:hub[]→device:root[] rev=false",
		})
		mustEqual(t, "vertices", vertexIDs(p.Vertices), []string{"client:alsa:Bitwig Studio@0", "identity:jdxi@1", "device:hub@2", "device:root@3"})
		noTrunc(t, p.Bounded)
	})
	t.Run("UndirectedVsDirected", func(t *testing.T) {
		// keystep → jdxi → speakers one way; the hub is only reachable against via's direction.
		p, err := graph.Path(ctx, m, "identity:speakers", "identity:keystep", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || len(p.Hops) != 2 {
			t.Fatalf("undirected: found %v in %d hops, want 2", p.Found, len(p.Hops))
		}
		p, err = graph.Path(ctx, m, "identity:speakers", "identity:keystep", graph.PathOptions{Directed: true})
		if err != nil {
			t.Fatal(err)
		}
		if p.Found || len(p.Hops) != 0 {
			t.Fatalf("directed against the cables: found %v, %d hops; want none", p.Found, len(p.Hops))
		}
		noTrunc(t, p.Bounded)
		p, err = graph.Path(ctx, m, "identity:keystep", "identity:speakers", graph.PathOptions{Directed: true})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || len(p.Hops) != 2 || p.Hops[0].Relation != "rel:01" || p.Hops[1].Relation != "rel:02" {
			t.Fatalf("directed along the cables: %+v", p)
		}
	})
	t.Run("Types", func(t *testing.T) {
		// Only via: the KeyStep reaches the JD-Xi through the hub, not over the cable.
		p, err := graph.Path(ctx, m, "identity:keystep", "identity:jdxi", graph.PathOptions{Types: []string{"via"}})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || len(p.Hops) != 2 || p.Hops[0].Type != "via" || p.Hops[0].FromNode != "device:ks" {
			t.Fatalf("via-only path: %+v", p.Hops)
		}
	})
	t.Run("SameVertex", func(t *testing.T) {
		// Binding is not a hop.
		p, err := graph.Path(ctx, m, "device:jdxi", "identity:jdxi", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || len(p.Hops) != 0 || len(p.Vertices) != 1 {
			t.Fatalf("bound device to its identity: %+v", p)
		}
	})
	t.Run("TieBreak", func(t *testing.T) {
		m := newMem()
		// Two 2-hop chains s → t; the one whose first relation id sorts first wins even
		// though its second sorts last.
		m.rel("rel:2", graph.RelCable, "identity:s", "", "identity:x", "")
		m.rel("rel:3", graph.RelCable, "identity:x", "", "identity:t", "")
		m.rel("rel:1", graph.RelCable, "identity:s", "", "identity:y", "")
		m.rel("rel:9", graph.RelCable, "identity:y", "", "identity:t", "")
		// Parallel relations between the same pair: the lower id.
		m.rel("rel:8", graph.RelControls, "identity:t", "", "identity:u", "")
		m.rel("rel:7", graph.RelCable, "identity:t", "", "identity:u", "")
		p, err := graph.Path(ctx, m, "identity:s", "identity:u", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range p.Hops {
			got = append(got, h.Relation)
		}
		mustEqual(t, "relations", got, []string{"rel:1", "rel:9", "rel:7"})
		p, err = graph.Path(ctx, m, "identity:u", "identity:s", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, h := range p.Hops {
			got = append(got, h.Relation)
		}
		mustEqual(t, "relations backwards", got, []string{"rel:7", "rel:3", "rel:2"})
	})
	t.Run("Unknown", func(t *testing.T) {
		_, err := graph.Path(ctx, m, "identity:keystep", "identity:nope", graph.PathOptions{})
		if graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("err %v, want NOT_FOUND", err)
		}
	})
}

// shortestLex is the reference Path: every shortest chain by exhaustive search, the one
// whose relation ids sort first.
func shortestLex(m *memSource, s, t string, directed bool) []string {
	type state struct {
		v    string
		rels []string
	}
	frontier := []state{{v: s}}
	seen := map[string]bool{s: true}
	for d := 0; d <= graph.MaxPathDepth && len(frontier) > 0; d++ {
		var done [][]string
		for _, st := range frontier {
			if st.v == t {
				done = append(done, st.rels)
			}
		}
		if len(done) > 0 {
			slices.SortFunc(done, slices.Compare)
			return done[0]
		}
		var next []state
		reached := map[string]bool{}
		for _, st := range frontier {
			for _, r := range m.byNode[st.v] {
				far := r.To
				if r.To == st.v {
					if directed {
						continue
					}
					far = r.From
				}
				if seen[far] {
					continue
				}
				reached[far] = true
				next = append(next, state{far, append(slices.Clip(st.rels), r.ID)})
			}
		}
		for v := range reached {
			seen[v] = true
		}
		frontier = next
	}
	return nil
}

func TestPath_MatchesExhaustiveSearch(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(10))
	found, none := 0, 0
	defer func() {
		// Both answers must have been exercised, or the comparison proves little.
		if found < 100 || none < 20 {
			t.Errorf("%d paths found and %d not: the random graphs test too little", found, none)
		}
	}()
	for round := 0; round < 60; round++ {
		m := newMem()
		n := 8 + rnd.Intn(30)
		for i := 0; i < n*2; i++ {
			a, b := rnd.Intn(n), rnd.Intn(n)
			if a == b {
				continue
			}
			m.rel(fmt.Sprintf("rel:%03d", rnd.Intn(1000)*1000+i), graph.RelCable, fmt.Sprintf("identity:%d", a), "", fmt.Sprintf("identity:%d", b), "")
		}
		for q := 0; q < 20; q++ {
			s, e := fmt.Sprintf("identity:%d", rnd.Intn(n)), fmt.Sprintf("identity:%d", rnd.Intn(n))
			if m.vertex[s] == nil || m.vertex[e] == nil || s == e {
				continue
			}
			for _, directed := range []bool{false, true} {
				want := shortestLex(m, s, e, directed)
				p, err := graph.Path(context.Background(), m, s, e, graph.PathOptions{Directed: directed})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, h := range p.Hops {
					got = append(got, h.Relation)
				}
				if p.Found != (want != nil) || !slices.Equal(got, want) {
					t.Fatalf("round %d %s→%s directed=%v: found %v %q, want %q", round, s, e, directed, p.Found, got, want)
				}
				if !p.Found {
					none++
				} else {
					found++
					for i, h := range p.Hops {
						if h.From != p.Vertices[i].ID || h.To != p.Vertices[i+1].ID {
							t.Fatalf("hop %d %s→%s does not join vertices %s, %s", i, h.From, h.To, p.Vertices[i].ID, p.Vertices[i+1].ID)
						}
					}
				}
			}
		}
	}
}

// chain builds identity:c0 → c1 → … → cn by cables.
func chain(m *memSource, n int) {
	for i := 0; i < n; i++ {
		m.rel(fmt.Sprintf("rel:c%05d", i), graph.RelCable, fmt.Sprintf("identity:c%d", i), "out", fmt.Sprintf("identity:c%d", i+1), "in")
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("NeighborsVertices", func(t *testing.T) {
		m := newMem()
		for i := 0; i < 600; i++ {
			m.rel(fmt.Sprintf("rel:%04d", i), graph.RelPartOf, fmt.Sprintf("identity:leaf%04d", i), "", "identity:hub", "")
		}
		g, err := graph.Neighbors(ctx, m, "identity:hub", graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, g.Bounded, graph.TruncVertices)
		if len(g.Vertices) != graph.MaxNeighborsVertices || g.Visited != graph.MaxNeighborsVertices || len(g.Edges) != graph.MaxNeighborsVertices-1 {
			t.Fatalf("%d vertices (visited %d), %d edges; want %d, %d", len(g.Vertices), g.Visited, len(g.Edges), graph.MaxNeighborsVertices, graph.MaxNeighborsVertices-1)
		}
	})
	t.Run("NeighborsDepth", func(t *testing.T) {
		m := newMem()
		chain(m, 10)
		g, err := graph.Neighbors(ctx, m, "identity:c0", graph.NeighborOptions{Depth: 4})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, g.Bounded, graph.TruncDepth)
		mustEqual(t, "vertices", vertexIDs(g.Vertices), []string{"identity:c0@0", "identity:c1@1", "identity:c2@2", "identity:c3@3", "identity:c4@4"})
		g, err = graph.Neighbors(ctx, m, "identity:c7", graph.NeighborOptions{Depth: 3, Direction: graph.DirOut})
		if err != nil {
			t.Fatal(err)
		}
		noTrunc(t, g.Bounded) // c10 ends the chain at depth 3: nothing lies beyond
	})
	t.Run("PathDepth", func(t *testing.T) {
		m := newMem()
		chain(m, 12)
		p, err := graph.Path(ctx, m, "identity:c0", "identity:c12", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Found {
			t.Fatal("found a 12-hop path with depth 8")
		}
		truncBy(t, p.Bounded, graph.TruncDepth)
		p, err = graph.Path(ctx, m, "identity:c0", "identity:c8", graph.PathOptions{})
		if err != nil || !p.Found || len(p.Hops) != 8 {
			t.Fatalf("8-hop path: %v %+v", err, p)
		}
		p, err = graph.Path(ctx, m, "identity:c0", "identity:c4", graph.PathOptions{MaxDepth: 3})
		if err != nil || p.Found {
			t.Fatalf("4-hop path within 3: %v %+v", err, p)
		}
		truncBy(t, p.Bounded, graph.TruncDepth)
	})
	t.Run("PathVertices", func(t *testing.T) {
		m := newMem()
		for i := 0; i < 15000; i++ {
			m.rel(fmt.Sprintf("rel:s%05d", i), graph.RelPartOf, fmt.Sprintf("identity:s%d", i), "", "identity:s", "")
			m.rel(fmt.Sprintf("rel:t%05d", i), graph.RelPartOf, fmt.Sprintf("identity:t%d", i), "", "identity:t", "")
		}
		p, err := graph.Path(ctx, m, "identity:s", "identity:t", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Found || p.Visited != graph.MaxPathVisited {
			t.Fatalf("found %v visited %d, want not found after %d", p.Found, p.Visited, graph.MaxPathVisited)
		}
		truncBy(t, p.Bounded, graph.TruncVertices)
	})
	t.Run("TraceDepth", func(t *testing.T) {
		m := newMem()
		chain(m, 70)
		tr, err := graph.Trace(ctx, m, "identity:c0", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, tr.Bounded, graph.TruncDepth)
		if len(tr.Hops) != graph.MaxTraceHops || len(tr.Ends) != 0 {
			t.Fatalf("%d hops, ends %q; want %d and none", len(tr.Hops), tr.Ends, graph.MaxTraceHops)
		}
		tr, err = graph.Trace(ctx, m, "identity:c6", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		noTrunc(t, tr.Bounded) // exactly 64 hops to the end
		mustEqual(t, "ends", tr.Ends, []string{"identity:c70"})
	})
	t.Run("TraceVertices", func(t *testing.T) {
		m := newMem()
		for i := 0; i < 600; i++ {
			m.rel(fmt.Sprintf("rel:%04d", i), graph.RelCable, "identity:splitter", fmt.Sprintf("out %d", i), fmt.Sprintf("identity:amp%04d", i), "in")
		}
		tr, err := graph.Trace(ctx, m, "identity:splitter", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, tr.Bounded, graph.TruncVertices)
		if tr.Visited != graph.MaxTraceVertices || len(tr.Hops) != graph.MaxTraceVertices-1 {
			t.Fatalf("visited %d with %d hops, want %d", tr.Visited, len(tr.Hops), graph.MaxTraceVertices)
		}
	})
	t.Run("TimeCancelled", func(t *testing.T) {
		m := studio()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		g, err := graph.Neighbors(cctx, m, "identity:jdxi", graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, g.Bounded, graph.TruncTime)
		if g.Around != "identity:jdxi" || len(g.Vertices) != 1 {
			t.Fatalf("cancelled neighbours: %+v", g)
		}
		p, err := graph.Path(cctx, m, "identity:keystep", "device:root", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, p.Bounded, graph.TruncTime)
		tr, err := graph.Trace(cctx, m, "identity:keystep", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, tr.Bounded, graph.TruncTime)
		g, err = graph.Explore(cctx, m, []string{"identity:jdxi"}, graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, g.Bounded, graph.TruncTime)
	})
	t.Run("TimeSlowSource", func(t *testing.T) {
		// Each Edges call takes a tenth of TraversalTimeout: a 30-hop chain cannot be
		// traced within it, and the trace stops where the time ran out.
		m := newMem()
		chain(m, 30)
		m.delay = graph.TraversalTimeout / 10
		tr, err := graph.Trace(ctx, m, "identity:c0", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		truncBy(t, tr.Bounded, graph.TruncTime)
		if len(tr.Hops) == 0 || len(tr.Hops) >= 30 {
			t.Fatalf("%d hops, want some but not all 30", len(tr.Hops))
		}
	})
	t.Run("TimeDeadline", func(t *testing.T) {
		m := newMem()
		chain(m, 30)
		m.delay = 20 * time.Millisecond
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		p, err := graph.Path(dctx, m, "identity:c0", "identity:c8", graph.PathOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Found {
			t.Fatal("found the path although the deadline cut the search")
		}
		truncBy(t, p.Bounded, graph.TruncTime)
	})
}

func TestTraversal_BadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := studio()
	for _, tc := range []struct {
		name, field, msg string
		run              func() error
	}{
		{"NeighborsDepth", "depth", "depth 9: want 1-4", func() error {
			_, err := graph.Neighbors(ctx, m, "identity:jdxi", graph.NeighborOptions{Depth: 9})
			return err
		}},
		{"NeighborsNegativeDepth", "depth", "depth -1: want 1-4", func() error {
			_, err := graph.Explore(ctx, m, nil, graph.NeighborOptions{Depth: -1})
			return err
		}},
		{"NeighborsDirection", "direction", `direction "up": want out, in or both`, func() error {
			_, err := graph.Neighbors(ctx, m, "identity:jdxi", graph.NeighborOptions{Direction: "up"})
			return err
		}},
		{"NeighborsType", "types", `type "cable!"`, func() error {
			_, err := graph.Neighbors(ctx, m, "identity:jdxi", graph.NeighborOptions{Types: []string{"cable!"}})
			return err
		}},
		{"PathDepth", "max_depth", "max_depth 9: want 1-8", func() error {
			_, err := graph.Path(ctx, m, "identity:jdxi", "identity:keystep", graph.PathOptions{MaxDepth: 9})
			return err
		}},
		{"PathType", "types", `type ""`, func() error {
			_, err := graph.Path(ctx, m, "identity:jdxi", "identity:keystep", graph.PathOptions{Types: []string{""}})
			return err
		}},
		{"TraceDirection", "direction", `direction "both": want out (downstream) or in (upstream)`, func() error {
			_, err := graph.Trace(ctx, m, "identity:jdxi", graph.TraceOptions{Direction: graph.DirBoth})
			return err
		}},
		{"TracePort", "port", "port of 65 bytes: want at most 64", func() error {
			_, err := graph.Trace(ctx, m, "identity:jdxi", graph.TraceOptions{Port: strings.Repeat("p", 65)})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := m.calls
			err := tc.run()
			if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != tc.field || !strings.Contains(graph.ErrorMessage(err), tc.msg) {
				t.Fatalf("err %v (code %s field %q), want INVALID on %s saying %q", err, graph.ErrorCode(err), graph.ErrorField(err), tc.field, tc.msg)
			}
			if m.calls != calls {
				t.Fatal("bad options reached the source")
			}
		})
	}
	t.Run("UnknownStart", func(t *testing.T) {
		if _, err := graph.Trace(ctx, m, "identity:nobody", graph.TraceOptions{}); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("trace from an unknown node: %v, want NOT_FOUND", err)
		}
		if _, err := graph.Neighbors(ctx, m, "identity:nobody", graph.NeighborOptions{}); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("neighbours of an unknown node: %v, want NOT_FOUND", err)
		}
	})
}

func TestTrace_ObservedIntoDeclared(t *testing.T) {
	t.Parallel()
	// Firefox's stream is linked (observed, PipeWire) to the Scarlett's device; the
	// Scarlett's identity is cabled (declared) to the monitors: the trace crosses from
	// the observed link to the declared cable through the binding.
	m := newMem()
	m.bind("identity:scarlett", "device:scarlett-usb")
	m.obs(graph.RelLinked, "pipewire", "client:pipewire:Firefox", "output_FL", "device:scarlett-usb", "playback_FL")
	m.obs(graph.RelLinked, "pipewire", "client:pipewire:Firefox", "output_FR", "device:scarlett-usb", "playback_FR")
	m.rel("rel:01", graph.RelCable, "identity:scarlett", "LINE OUT 1", "identity:monitors", "IN")
	tr, err := graph.Trace(context.Background(), m, "client:pipewire:Firefox", graph.TraceOptions{Port: "output_fr"})
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "hops", traceLines(tr), []string{
		"1^-1 linked client:pipewire:Firefox→identity:scarlett",
		"2^0 cable identity:scarlett→identity:monitors end",
	})
	if h := tr.Hops[0]; h.ToNode != "device:scarlett-usb" || h.FromPort != "output_FR" || h.ToPort != "playback_FR" {
		t.Fatalf("linked hop = %+v", h.Hop)
	}
	// Without a port both links leave Firefox: two branches to the same end.
	tr, err = graph.Trace(context.Background(), m, "client:pipewire:Firefox", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Hops) != 4 || len(tr.Ends) != 1 || tr.Ends[0] != "identity:monitors" {
		t.Fatalf("hops %q ends %q, want two branches ending at the monitors", traceLines(tr), tr.Ends)
	}
}

// unsortedSource hands out each vertex's relations in reverse id order, in a slice the
// traversal must not reorder.
type unsortedSource struct{ *memSource }

func (u unsortedSource) Edges(ctx context.Context, v *graph.Vertex) ([]*graph.Relation, error) {
	es, err := u.memSource.Edges(ctx, v)
	out := slices.Clone(es)
	slices.Reverse(out)
	return out, err
}

func TestTraversal_SourceQuirks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("UnsortedEdges", func(t *testing.T) {
		m := newMem()
		m.rel("rel:2", graph.RelCable, "identity:a", "", "identity:c", "")
		m.rel("rel:1", graph.RelCable, "identity:a", "", "identity:b", "")
		m.rel("rel:3", graph.RelCable, "identity:b", "", "identity:c", "")
		src := unsortedSource{m}
		tr, err := graph.Trace(ctx, src, "identity:a", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops", traceLines(tr), []string{
			"1^-1 cable identity:a→identity:b",
			"2^0 cable identity:b→identity:c end",
			"1^-1 cable identity:a→identity:c end",
		})
		g, err := graph.Neighbors(ctx, src, "identity:a", graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "edges", edgeIDs(g.Edges), []string{"rel:1", "rel:2", "rel:3"})
		if got := edgeIDs(m.byNode["identity:a"]); !slices.Equal(got, []string{"rel:1", "rel:2"}) {
			t.Fatalf("the source's own slice was reordered: %q", got)
		}
	})
	t.Run("DanglingEnd", func(t *testing.T) {
		// A relation whose far end the source no longer knows is not followed.
		m := newMem()
		m.rel("rel:1", graph.RelCable, "identity:a", "", "identity:gone", "")
		m.rel("rel:2", graph.RelCable, "identity:a", "", "identity:b", "")
		delete(m.vertex, "identity:gone")
		g, err := graph.Neighbors(ctx, m, "identity:a", graph.NeighborOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "vertices", vertexIDs(g.Vertices), []string{"identity:a@0", "identity:b@1"})
		mustEqual(t, "edges", edgeIDs(g.Edges), []string{"rel:2"})
		noTrunc(t, g.Bounded)
		tr, err := graph.Trace(ctx, m, "identity:a", graph.TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "hops", traceLines(tr), []string{"1^-1 cable identity:a→identity:b end"})
	})
	t.Run("SourceError", func(t *testing.T) {
		// A fault of the source (not the clock) is the caller's error, not a truncation.
		m := studio()
		src := failingSource{m}
		if _, err := graph.Neighbors(ctx, src, "identity:jdxi", graph.NeighborOptions{}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("neighbours: %v, want the source's error", err)
		}
		if _, err := graph.Path(ctx, src, "identity:jdxi", "identity:keystep", graph.PathOptions{}); err == nil {
			t.Fatal("path: the source's error was lost")
		}
		if _, err := graph.Trace(ctx, src, "identity:keystep", graph.TraceOptions{}); err == nil {
			t.Fatal("trace: the source's error was lost")
		}
	})
}

type failingSource struct{ *memSource }

func (failingSource) Edges(context.Context, *graph.Vertex) ([]*graph.Relation, error) {
	return nil, fmt.Errorf("read relations: disk on fire")
}

func TestPath_BoundDeviceHops(t *testing.T) {
	t.Parallel()
	// The robot base is an identity bound to its USB device; the device hangs off a hub
	// (via) that hangs off the root hub: the path names the device it left from.
	m := newMem()
	m.bind("identity:base", "device:base-usb")
	m.obs(graph.RelVia, "usb", "device:base-usb", "", "device:hub", "")
	m.obs(graph.RelVia, "usb", "device:hub", "", "device:usb3", "")
	m.rel("rel:01", graph.RelMountedOn, "identity:lidar", "", "identity:base", "")
	p, err := graph.Path(context.Background(), m, "identity:lidar", "device:usb3", graph.PathOptions{Directed: true})
	if err != nil {
		t.Fatal(err)
	}
	var hops []string
	for _, h := range p.Hops {
		hops = append(hops, fmt.Sprintf("%s %s(%s)→%s(%s)", h.Type, h.From, h.FromNode, h.To, h.ToNode))
	}
	mustEqual(t, "hops", hops, []string{
		"mounted_on identity:lidar()→identity:base()",
		"via identity:base(device:base-usb)→device:hub()",
		"via device:hub()→device:usb3()",
	})
	if p.Visited < 4 {
		t.Fatalf("visited %d, want at least the 4 vertices on the path", p.Visited)
	}
}

// Every interface refuses an explicit max_depth 0 (the CLI, MCP, GraphQL), so the
// service's refusal of another depth does not offer it.
func TestValidatePathOptions_DepthAdvice(t *testing.T) {
	msg := graph.ErrorMessage(graph.ValidatePathOptions(graph.PathOptions{MaxDepth: 99}))
	if strings.Contains(msg, "0 means") || !strings.Contains(msg, "leave it out for 8") {
		t.Fatalf("message %q; want the advice to leave max_depth out, not to give 0", msg)
	}
}
