package graph

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// The traversal functions walk an EdgeSource one vertex at a time. They are pure: what
// they see comes from the source, and the answer depends only on it (relations are
// visited in id order at every step). Each call is bounded by depth, by the vertices it
// visits and by time (TraversalTimeout, or the caller's context ending first); a bound
// never makes an error, the result says Truncated and TruncatedBy instead. Options are
// checked first: EINVALID naming the field. An unknown start node is the source's
// ENOTFOUND.

// ValidateNeighborOptions checks the options of Neighbors, Explore and Subgraph.
func ValidateNeighborOptions(o NeighborOptions) error {
	if o.Depth < 0 || o.Depth > MaxNeighborsDepth {
		return FieldErrorf(EINVALID, "depth", "depth %d: want 1-%d hops around the node (for a longer chain, find the path between two nodes)", o.Depth, MaxNeighborsDepth)
	}
	switch o.Direction {
	case "", DirOut, DirIn, DirBoth:
	default:
		return FieldErrorf(EINVALID, "direction", "direction %q: want out, in or both", o.Direction)
	}
	return validateTypes(o.Types)
}

// ValidatePathOptions checks the options of Path.
func ValidatePathOptions(o PathOptions) error {
	if o.MaxDepth < 0 || o.MaxDepth > MaxPathDepth {
		return FieldErrorf(EINVALID, "max_depth", "max_depth %d: want 1-%d hops (leave it out for %d)", o.MaxDepth, MaxPathDepth, MaxPathDepth)
	}
	return validateTypes(o.Types)
}

// ValidateTraceOptions checks the options of Trace.
func ValidateTraceOptions(o TraceOptions) error {
	switch o.Direction {
	case "", DirOut, DirIn:
	default:
		return FieldErrorf(EINVALID, "direction", "direction %q: want out (downstream) or in (upstream)", o.Direction)
	}
	// The same rules as a relation's ports (NormalizePort): a port no relation could
	// hold is refused, not searched for.
	if n := strings.Join(strings.Fields(o.Port), " "); len(n) > MaxPort {
		return FieldErrorf(EINVALID, "port", "port of %d bytes: want at most %d", len(n), MaxPort)
	}
	if _, err := NormalizePort(o.Port); err != nil {
		return err
	}
	return nil
}

func validateTypes(types []string) error {
	for _, t := range types {
		if !relTypeRe.MatchString(normType(t)) {
			return FieldErrorf(EINVALID, "types", "type %q: want a relation type such as cable or via (lowercase letters, digits, - and _, at most %d)", t, MaxRelationType)
		}
	}
	return nil
}

func normType(t string) string { return strings.ToLower(strings.TrimSpace(t)) }

// relFilter decides which relations a traversal follows.
type relFilter struct {
	types    []string // nil: every type
	declared bool
	observed bool
}

func newRelFilter(types []string, declared, observed bool) relFilter {
	f := relFilter{declared: declared || !observed, observed: observed || !declared}
	for _, t := range types {
		t = normType(t)
		if !slices.Contains(f.types, t) {
			f.types = append(f.types, t)
		}
	}
	return f
}

func (f *relFilter) ok(r *Relation) bool {
	if r.Observed && !f.observed || !r.Observed && !f.declared {
		return false
	}
	return f.types == nil || slices.Contains(f.types, r.Type)
}

// walker holds what one traversal has learnt from its source: the vertex of every node
// it met and the edges of every vertex it expanded, so nothing is asked twice.
type walker struct {
	ctx   context.Context
	src   EdgeSource
	verts map[string]*Vertex     // node id (and vertex id) → its vertex; nil: no such node
	edges map[string][]*Relation // vertex id → its relations, sorted by id
	// stopped is set when time ran out (TraversalTimeout or the caller's context).
	stopped bool
}

func newWalker(ctx context.Context, src EdgeSource) *walker {
	return &walker{ctx: ctx, src: src, verts: make(map[string]*Vertex, 64), edges: make(map[string][]*Relation, 64)}
}

// timeUp reports whether the time bound has cut the walk.
func (w *walker) timeUp() bool {
	if !w.stopped && w.ctx.Err() != nil {
		w.stopped = true
	}
	return w.stopped
}

// fail turns a source error into either the time bound (when the context ended, which is
// what made the source fail) or an error to return.
func (w *walker) fail(err error) error {
	if w.ctx.Err() != nil {
		w.stopped = true
		return nil
	}
	return err
}

// start returns the vertex of a start node; the source's error (ENOTFOUND) when there is none.
func (w *walker) start(node string) (*Vertex, error) {
	if v, ok := w.verts[node]; ok && v != nil {
		return v, nil
	}
	v, err := w.src.Vertex(w.ctx, node)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, Errorf(ENOTFOUND, "node %q not found", node)
	}
	return w.remember(node, v), nil
}

// vertex returns the vertex a relation's far end belongs to; nil (and no error) for a
// node the source does not know, whose relations are simply not followed.
func (w *walker) vertex(node string) (*Vertex, error) {
	if v, ok := w.verts[node]; ok {
		return v, nil
	}
	v, err := w.src.Vertex(w.ctx, node)
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			w.verts[node] = nil
			return nil, nil
		}
		return nil, err
	}
	if v == nil {
		w.verts[node] = nil
		return nil, nil
	}
	return w.remember(node, v), nil
}

func (w *walker) remember(node string, v *Vertex) *Vertex {
	if have := w.verts[v.ID]; have != nil {
		v = have
	} else {
		w.verts[v.ID] = v
		for _, n := range v.Nodes {
			if _, ok := w.verts[n]; !ok {
				w.verts[n] = v
			}
		}
	}
	w.verts[node] = v
	return v
}

// edgesOf returns a vertex's relations sorted by id (the source's slice when it is
// already sorted; never modified).
func (w *walker) edgesOf(v *Vertex) ([]*Relation, error) {
	if es, ok := w.edges[v.ID]; ok {
		return es, nil
	}
	es, err := w.src.Edges(w.ctx, v)
	if err != nil {
		return nil, err
	}
	if !slices.IsSortedFunc(es, cmpRelID) {
		es = slices.Clone(es)
		slices.SortFunc(es, cmpRelID)
	}
	w.edges[v.ID] = es
	return es, nil
}

func cmpRelID(a, b *Relation) int { return strings.Compare(a.ID, b.ID) }

// in reports whether node belongs to v without asking the source.
func in(v *Vertex, node string) bool {
	return node == v.ID || slices.Contains(v.Nodes, node)
}

// ends orients r as seen from v: out is true when r leaves v (its From is in v); ok is
// false when neither end or both ends are in v (a relation inside one vertex, such as
// one between an identity and its own bound device, is not a hop).
func ends(v *Vertex, r *Relation) (out, ok bool) {
	fromIn, toIn := in(v, r.From), in(v, r.To)
	if fromIn == toIn {
		return false, false
	}
	return fromIn, true
}

// farEnd is ends with the node at r's other end from v.
func farEnd(v *Vertex, r *Relation) (far string, out, ok bool) {
	out, ok = ends(v, r)
	if out {
		return r.To, out, ok
	}
	return r.From, out, ok
}

// across returns the vertex a hop over r from v leads to when r is a hop from v (see
// ends) that keep accepts (out: r leaves v); nv is nil when it is not, or when the source
// does not know the far end. stop is true when the source failed because time ran out
// (the walk is cut by time); err is the source's error otherwise. The breadth-first
// walks of Explore and Path share it.
func (w *walker) across(v *Vertex, r *Relation, keep func(r *Relation, out bool) bool) (nv *Vertex, stop bool, err error) {
	far, out, ok := farEnd(v, r)
	if !ok || !keep(r, out) {
		return nil, false, nil
	}
	if nv, err = w.vertex(far); err != nil {
		if err = w.fail(err); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	return nv, false, nil
}

// hop describes crossing r from vertex a to vertex b, out when along r's direction.
func hop(r *Relation, a, b *Vertex, out bool) Hop {
	h := Hop{Relation: r.ID, Type: r.Type, From: a.ID, To: b.ID, Observed: r.Observed, Source: r.Source, Reverse: !out}
	fromNode, fromPort, toNode, toPort := r.From, r.FromPort, r.To, r.ToPort
	if !out {
		fromNode, fromPort, toNode, toPort = toNode, toPort, fromNode, fromPort
	}
	h.FromPort, h.ToPort = fromPort, toPort
	if fromNode != a.ID {
		h.FromNode = fromNode
	}
	if toNode != b.ID {
		h.ToNode = toNode
	}
	return h
}

func at(v *Vertex, depth int) *Vertex {
	c := *v
	c.Depth = depth
	return &c
}

func (b *Bounded) cut(by string) {
	if !b.Truncated {
		b.Truncated, b.TruncatedBy = true, by
	}
}

// Neighbors returns the vertices within o.Depth hops of node (the start first, then by
// depth and id) and the relations between them. Truncated by depth says vertices lie
// beyond the last depth; by vertices, that MaxNeighborsVertices were listed.
func Neighbors(ctx context.Context, src EdgeSource, node string, o NeighborOptions) (*Subgraph, error) {
	if err := ValidateNeighborOptions(o); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, TraversalTimeout)
	defer cancel()
	w := newWalker(ctx, src)
	v, err := w.start(node)
	if err != nil {
		return nil, err
	}
	g, err := w.explore([]*Vertex{v}, o)
	if err != nil {
		return nil, err
	}
	g.Around = v.ID
	return g, nil
}

// Explore is Neighbors from several starts at once (all at depth 0): the service passes
// every node that has a relation to draw the whole graph. Starts the source does not know
// are left out.
func Explore(ctx context.Context, src EdgeSource, nodes []string, o NeighborOptions) (*Subgraph, error) {
	if err := ValidateNeighborOptions(o); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, TraversalTimeout)
	defer cancel()
	w := newWalker(ctx, src)
	starts := make([]*Vertex, 0, len(nodes))
	for _, n := range nodes {
		if w.timeUp() {
			break
		}
		v, err := w.vertex(n)
		if err != nil {
			if err = w.fail(err); err != nil {
				return nil, err
			}
			break
		}
		if v != nil {
			starts = append(starts, v)
		}
	}
	slices.SortFunc(starts, func(a, b *Vertex) int { return strings.Compare(a.ID, b.ID) })
	starts = slices.CompactFunc(starts, func(a, b *Vertex) bool { return a.ID == b.ID })
	return w.explore(starts, o)
}

func (w *walker) explore(starts []*Vertex, o NeighborOptions) (*Subgraph, error) {
	depth := max(o.Depth, 1)
	dir := o.Direction
	if dir == "" {
		dir = DirBoth
	}
	f := newRelFilter(o.Types, o.Declared, o.Observed)
	g := &Subgraph{Depth: depth, Vertices: []*Vertex{}, Edges: []*Relation{}}
	if w.stopped {
		g.cut(TruncTime)
	}
	listed := make(map[string]int, 64) // vertex id → index in g.Vertices
	add := func(v *Vertex, d int) bool {
		if len(g.Vertices) >= MaxNeighborsVertices {
			g.cut(TruncVertices)
			return false
		}
		listed[v.ID] = len(g.Vertices)
		g.Vertices = append(g.Vertices, at(v, d))
		return true
	}
	for _, v := range starts {
		if _, ok := listed[v.ID]; !ok && !add(v, 0) {
			break
		}
	}
	follows := func(out bool) bool { return dir == DirBoth || (dir == DirOut) == out }
	keep := func(r *Relation, out bool) bool { return f.ok(r) && follows(out) }
	// Breadth first: g.Vertices doubles as the queue.
	for i := 0; i < len(g.Vertices) && !g.Truncated; i++ {
		cur := g.Vertices[i]
		if cur.Depth >= depth {
			break
		}
		if w.timeUp() {
			g.cut(TruncTime)
			break
		}
		es, err := w.edgesOf(w.verts[cur.ID])
		if err != nil {
			if err = w.fail(err); err != nil {
				return nil, err
			}
			g.cut(TruncTime)
			break
		}
		for _, r := range es {
			nv, stop, err := w.across(cur, r, keep)
			if err != nil {
				return nil, err
			}
			if stop {
				g.cut(TruncTime)
				break
			}
			if nv == nil {
				continue
			}
			if _, seen := listed[nv.ID]; !seen && !add(nv, cur.Depth+1) {
				break
			}
		}
	}
	g.Visited = len(g.Vertices)
	// The relations between listed vertices, from either end; the last depth's edges
	// also tell whether anything lies beyond it.
	var edges []*Relation
	for _, lv := range g.Vertices {
		v := w.verts[lv.ID]
		es, ok := w.edges[v.ID]
		if !ok {
			if w.timeUp() {
				g.cut(TruncTime)
				continue
			}
			var err error
			if es, err = w.edgesOf(v); err != nil {
				if err = w.fail(err); err != nil {
					return nil, err
				}
				g.cut(TruncTime)
				continue
			}
		}
		for _, r := range es {
			far, out, ok := farEnd(v, r)
			if !ok || !f.ok(r) {
				continue
			}
			// Every listed vertex's nodes are known to w.verts, so a node it does not
			// hold lies outside the subgraph.
			fv, known := w.verts[far]
			if !known && lv.Depth == depth && follows(out) && !g.Truncated {
				// A node never looked up lies beyond the last depth, if it exists: ask
				// (only until the first such node settles it), since a relation to a
				// node the source does not know leads nowhere.
				var err error
				if fv, err = w.vertex(far); err != nil {
					if err = w.fail(err); err != nil {
						return nil, err
					}
					g.cut(TruncTime)
					continue
				}
			}
			if fv == nil {
				continue
			}
			if _, ok := listed[fv.ID]; ok {
				edges = append(edges, r)
			} else if lv.Depth == depth && follows(out) {
				g.cut(TruncDepth)
			}
		}
	}
	slices.SortFunc(edges, cmpRelID)
	g.Edges = append(g.Edges, slices.CompactFunc(edges, func(a, b *Relation) bool { return a.ID == b.ID })...)
	slices.SortStableFunc(g.Vertices[min(len(starts), len(g.Vertices)):], func(a, b *Vertex) int {
		if a.Depth != b.Depth {
			return a.Depth - b.Depth
		}
		return strings.Compare(a.ID, b.ID)
	})
	return g, nil
}

// Path finds the fewest hops between two nodes' vertices, along relations either way
// (only from → to when o.Directed). Of several shortest chains it returns the one whose
// relation ids, read from the start, sort first. Found is false when none lies within
// o.MaxDepth hops and MaxPathVisited vertices; Truncated says whether a bound, not the
// graph, is why.
func Path(ctx context.Context, src EdgeSource, from, to string, o PathOptions) (*PathResult, error) {
	if err := ValidatePathOptions(o); err != nil {
		return nil, err
	}
	maxDepth := o.MaxDepth
	if maxDepth == 0 {
		maxDepth = MaxPathDepth
	}
	ctx, cancel := context.WithTimeout(ctx, TraversalTimeout)
	defer cancel()
	w := newWalker(ctx, src)
	s, err := w.start(from)
	if err != nil {
		return nil, err
	}
	t, err := w.start(to)
	if err != nil {
		return nil, err
	}
	p := &PathResult{From: s.ID, To: t.ID, Hops: []Hop{}, Vertices: []*Vertex{}}
	if s.ID == t.ID {
		p.Found, p.Vertices, p.Visited = true, []*Vertex{at(s, 0)}, 1
		return p, nil
	}
	f := newRelFilter(o.Types, false, false)
	// follows says whether r may be walked from the side it is seen from: forward
	// along r (out) or, searching back from t, against it.
	follows := func(out, forward bool) bool { return !o.Directed || out == forward }

	// Bidirectional breadth first search, a whole level at a time on the smaller side.
	type side struct {
		dist   map[string]int // vertex id → hops from this side's start
		levels [][]*Vertex
	}
	fw := &side{dist: map[string]int{s.ID: 0}, levels: [][]*Vertex{{s}}}
	bw := &side{dist: map[string]int{t.ID: 0}, levels: [][]*Vertex{{t}}}
	visited := 2
	best := -1
	for best < 0 {
		df, db := len(fw.levels)-1, len(bw.levels)-1
		if df+db >= maxDepth {
			if len(fw.levels[df]) > 0 && len(bw.levels[db]) > 0 {
				p.cut(TruncDepth)
			}
			break
		}
		cur, other, forward := fw, bw, true
		if len(bw.levels[db]) < len(fw.levels[df]) {
			cur, other, forward = bw, fw, false
		}
		front := cur.levels[len(cur.levels)-1]
		if len(front) == 0 {
			break // that side has nowhere left to go: no path
		}
		d := len(cur.levels)
		keep := func(r *Relation, out bool) bool { return f.ok(r) && follows(out, forward) }
		var next []*Vertex
	level:
		for _, v := range front {
			if w.timeUp() {
				p.cut(TruncTime)
				break
			}
			es, err := w.edgesOf(v)
			if err != nil {
				if err = w.fail(err); err != nil {
					return nil, err
				}
				p.cut(TruncTime)
				break
			}
			for _, r := range es {
				nv, stop, err := w.across(v, r, keep)
				if err != nil {
					return nil, err
				}
				if stop {
					p.cut(TruncTime)
					break level
				}
				if nv == nil {
					continue
				}
				if _, seen := cur.dist[nv.ID]; seen {
					continue
				}
				if visited >= MaxPathVisited {
					p.cut(TruncVertices)
					break level
				}
				visited++
				cur.dist[nv.ID] = d
				next = append(next, nv)
				if od, ok := other.dist[nv.ID]; ok && (best < 0 || d+od < best) {
					best = d + od
				}
			}
		}
		cur.levels = append(cur.levels, next)
		if p.Truncated {
			break
		}
	}
	p.Visited = visited
	if best < 0 {
		return p, nil
	}
	// Some vertex reached on this level completes a shortest chain, so best equals the
	// two depths together. Mark the forward region's vertices that lie on a shortest
	// chain, from the meeting level back to s; beyond the meeting level the distance to
	// t alone says whether a vertex lies on one.
	df := len(fw.levels) - 1
	db := best - df
	on := make(map[string]bool)
	for _, v := range fw.levels[df] {
		if bd, ok := bw.dist[v.ID]; ok && bd == db {
			on[v.ID] = true
		}
	}
	for k := df - 1; k >= 0; k-- {
		for _, v := range fw.levels[k] {
			es := w.edges[v.ID]
			for _, r := range es {
				far, out, ok := farEnd(v, r)
				if !ok || !f.ok(r) || !follows(out, true) {
					continue
				}
				if nv := w.verts[far]; nv != nil && on[nv.ID] && fw.dist[nv.ID] == k+1 {
					on[v.ID] = true
					break
				}
			}
		}
	}
	// Walk from s, taking at each step the lowest relation id that stays on a shortest chain.
	cur := s
	p.Vertices = append(p.Vertices, at(s, 0))
	for k := 0; k < best; k++ {
		es, err := w.edgesOf(cur)
		if err != nil {
			if err = w.fail(err); err != nil {
				return nil, err
			}
			p.cut(TruncTime)
			p.Hops, p.Vertices = []Hop{}, []*Vertex{}
			return p, nil
		}
		var next *Vertex
		for _, r := range es {
			far, out, ok := farEnd(cur, r)
			if !ok || !f.ok(r) || !follows(out, true) {
				continue
			}
			nv, err := w.vertex(far)
			if err != nil || nv == nil {
				continue
			}
			if k+1 <= df {
				if fd, ok := fw.dist[nv.ID]; !ok || fd != k+1 || !on[nv.ID] {
					continue
				}
			} else if bd, ok := bw.dist[nv.ID]; !ok || bd != best-k-1 {
				continue
			}
			p.Hops = append(p.Hops, hop(r, cur, nv, out))
			next = nv
			break
		}
		if next == nil {
			if w.timeUp() {
				p.cut(TruncTime)
				p.Hops, p.Vertices = []Hop{}, []*Vertex{}
				return p, nil
			}
			return nil, errors.New("path: lost the shortest chain at hop " + strconv.Itoa(k+1))
		}
		p.Vertices = append(p.Vertices, at(next, k+1))
		cur = next
	}
	// A chain found before a bound cut the search is still a shortest one.
	p.Found, p.Truncated, p.TruncatedBy = true, false, ""
	return p, nil
}

// Trace follows cable, linked, subscribed and controls relations from a node hop by hop
// in one direction: out (downstream, along relations) by default, in (upstream). A signal
// entering a vertex may leave by any of its relations; o.Port limits only the first hop
// to the relations leaving (in: entering) that port. The result is a tree, depth first
// in relation-id order at each fork; a hop back to a vertex already on its branch is
// marked Cycle and not followed; a hop to a vertex nothing leaves is End. Bounded by
// MaxTraceHops deep and MaxTraceVertices vertices reached (a vertex reached by two
// branches counts twice, so fan-in cannot multiply the work).
func Trace(ctx context.Context, src EdgeSource, from string, o TraceOptions) (*TraceResult, error) {
	if err := ValidateTraceOptions(o); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, TraversalTimeout)
	defer cancel()
	w := newWalker(ctx, src)
	s, err := w.start(from)
	if err != nil {
		return nil, err
	}
	dir := o.Direction
	if dir == "" {
		dir = DirOut
	}
	port, _ := NormalizePort(o.Port) // checked above
	tr := &traceRun{
		w:      w,
		res:    &TraceResult{From: s.ID, Port: o.Port, Direction: dir, Hops: []TraceHop{}, Ends: []string{}, Vertices: []*Vertex{at(s, 0)}},
		out:    dir == DirOut,
		port:   PortKey(port),
		depth:  map[string]int{s.ID: 0},
		branch: []string{s.ID},
	}
	tr.res.Visited = 1
	if err := tr.walk(s, -1, 1); err != nil {
		return nil, err
	}
	res := tr.res
	slices.Sort(res.Ends)
	res.Ends = slices.Compact(res.Ends)
	for _, v := range res.Vertices {
		v.Depth = tr.depth[v.ID]
	}
	return res, nil
}

type traceRun struct {
	w      *walker
	res    *TraceResult
	out    bool
	port   string
	depth  map[string]int // vertex id → fewest hops it was reached at
	branch []string       // vertex ids from the start to the current vertex
}

// leaving calls fn with the trace relations leaving v in the trace's direction (on the
// first hop, only those on the port asked for) and the vertex each leads to, and reports
// whether there was any. A relation whose far end the source does not know, or that
// leads back into v, leads nowhere: the signal ends at v if nothing else leaves it.
// With fn nil it only reports whether any relation leaves.
func (tr *traceRun) leaving(v *Vertex, first bool, fn func(r *Relation, nv *Vertex) bool) (bool, error) {
	es, err := tr.w.edgesOf(v)
	if err != nil {
		return false, err
	}
	any := false
	for _, r := range es {
		if !isTraceType(r.Type) {
			continue
		}
		far, out, ok := farEnd(v, r)
		if !ok || out != tr.out {
			continue
		}
		port := r.FromPort
		if !out {
			port = r.ToPort
		}
		if first && tr.port != "" && !samePort(port, tr.port) {
			continue
		}
		nv, err := tr.w.vertex(far)
		if err != nil {
			return any, err
		}
		if nv == nil || nv.ID == v.ID {
			continue
		}
		any = true
		if fn == nil {
			return true, nil
		}
		if !fn(r, nv) {
			break
		}
	}
	return any, nil
}

// samePort compares a relation's port with a trace's (already a PortKey of a normalised
// port) as relations compare ports: normalised, then by PortKey. A declared relation's
// port is stored normalised; an observed one is as its source names it.
func samePort(relPort, key string) bool {
	if PortKey(relPort) == key {
		return true
	}
	n, err := NormalizePort(relPort)
	return err == nil && PortKey(n) == key
}

func isTraceType(t string) bool {
	return t == RelCable || t == RelLinked || t == RelSubscribed || t == RelControls
}

// walk lists the hops leaving v (at depth d for each) and follows them depth first.
func (tr *traceRun) walk(v *Vertex, parent, d int) error {
	res := tr.res
	if tr.w.timeUp() {
		res.cut(TruncTime)
		return nil
	}
	var ferr error
	_, err := tr.leaving(v, parent < 0, func(r *Relation, nv *Vertex) bool {
		if res.Truncated {
			return false
		}
		if tr.w.timeUp() {
			res.cut(TruncTime)
			return false
		}
		if res.Visited >= MaxTraceVertices {
			res.cut(TruncVertices)
			return false
		}
		res.Visited++
		th := TraceHop{Hop: hop(r, v, nv, tr.out), Depth: d, Parent: parent}
		if od, seen := tr.depth[nv.ID]; !seen {
			tr.depth[nv.ID] = d
			res.Vertices = append(res.Vertices, at(nv, d))
		} else if d < od {
			tr.depth[nv.ID] = d
		}
		if slices.Contains(tr.branch, nv.ID) {
			th.Cycle = true
			res.Hops = append(res.Hops, th)
			return true
		}
		more, err := tr.leaving(nv, false, nil)
		if err != nil {
			ferr = err
			return false
		}
		if !more {
			th.End = true
			res.Hops = append(res.Hops, th)
			res.Ends = append(res.Ends, nv.ID)
			return true
		}
		res.Hops = append(res.Hops, th)
		if d >= MaxTraceHops {
			res.cut(TruncDepth)
			return true
		}
		tr.branch = append(tr.branch, nv.ID)
		ferr = tr.walk(nv, len(res.Hops)-1, d+1)
		tr.branch = tr.branch[:len(tr.branch)-1]
		return ferr == nil
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		if err = tr.w.fail(err); err != nil {
			return err
		}
		res.cut(TruncTime)
	}
	return nil
}
