package identity

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/devgraph/devgraph/graph"
)

var _ graph.TraversalService = (*Service)(nil)

// edges is the graph.EdgeSource one traversal walks: one read view of the store, one live
// snapshot, and the bindings of that snapshot's present devices. A bound identity and its
// present devices are one vertex, named by the identity.
type edges struct {
	s  *Service
	rs graph.RelationStore
	w  *liveView

	mu       sync.Mutex
	vertices map[string]*graph.Vertex // node → its vertex
}

var _ graph.EdgeSource = (*edges)(nil)

// Vertex returns the vertex node belongs to; ENOTFOUND for a node that does not exist.
func (e *edges) Vertex(ctx context.Context, node string) (*graph.Vertex, error) {
	e.mu.Lock()
	v, ok := e.vertices[node]
	e.mu.Unlock()
	if !ok {
		var err error
		if v, err = e.vertex(ctx, node); err != nil {
			return nil, err
		}
		e.mu.Lock()
		e.vertices[node] = v
		e.mu.Unlock()
	}
	c := *v // the walk may set Depth on its copy
	return &c, nil
}

func (e *edges) vertex(ctx context.Context, node string) (*graph.Vertex, error) {
	switch graph.KindOf(node) {
	case graph.KindClient:
		if c := e.w.clients[node]; c != nil {
			return &graph.Vertex{ID: node, Kind: graph.KindClient, Name: c.Name}, nil
		}
		return nil, e.w.clientNotFound("node", node)
	case graph.KindDevice:
		if id := e.w.boundOf[node]; id != "" {
			return e.Vertex(ctx, id) // binding is not a hop
		}
		name, ok := e.w.names[node]
		infra := e.w.infra[node]
		if !ok {
			d, err := e.s.store.FindDeviceByID(ctx, node)
			if err != nil {
				return nil, err
			}
			name, infra = d.Name, d.Infra
		}
		return &graph.Vertex{ID: node, Kind: graph.KindDevice, Name: name, Infra: infra}, nil
	case graph.KindIdentity:
		x, err := e.s.store.FindIdentityByID(ctx, node, graph.IdentityParts{})
		if err != nil {
			return nil, err
		}
		return &graph.Vertex{ID: node, Kind: graph.KindIdentity, Name: x.Name, Nodes: e.w.members[node]}, nil
	}
	return nil, graph.FieldErrorf(graph.ENOTFOUND, "node", "%s is not a node relations hang off (an identity, device, robot or client)", node)
}

// Edges returns every relation, declared and observed, touching the vertex's node or any
// of its present bound devices, sorted by id.
func (e *edges) Edges(ctx context.Context, v *graph.Vertex) ([]*graph.Relation, error) {
	nodes := append([]string{v.ID}, v.Nodes...)
	var out []*graph.Relation
	if v.Kind != graph.KindClient {
		decl, err := e.rs.RelationsOf(ctx, nodes)
		if err != nil {
			return nil, err
		}
		out = decl
	}
	obs := e.w.observedOf(nodes)
	if len(obs) == 0 {
		return out, nil
	}
	all := make([]*graph.Relation, 0, len(out)+len(obs))
	all = append(append(all, out...), obs...)
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, nil
}

// traversal opens the one read view a walk sees (readLive) and its edge source. Call
// release when done.
func (s *Service) traversal(ctx context.Context) (context.Context, *edges, func(), error) {
	rs, err := s.relStore()
	if err != nil {
		return nil, nil, nil, err
	}
	vctx, w, release, err := s.readLive(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return vctx, &edges{s: s, rs: rs, w: w, vertices: map[string]*graph.Vertex{}}, release, nil
}

// walk opens the one read view a traversal sees and its edge source, resolves the named
// nodes in it (field and typed text, in order) and runs fn with their ids; the view is
// released when fn returns.
func walk[T any](ctx context.Context, s *Service, fn func(vctx context.Context, e *edges, ids []string) (T, error), nodes ...[2]string) (T, error) {
	var zero T
	vctx, e, release, err := s.traversal(ctx)
	if err != nil {
		return zero, err
	}
	defer release()
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		if ids[i], err = s.resolveNode(vctx, e.w, n[0], n[1]); err != nil {
			return zero, err
		}
	}
	return fn(vctx, e, ids)
}

// Neighbors returns the vertices within o.Depth of node and the relations between them.
func (s *Service) Neighbors(ctx context.Context, node string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	if err := graph.ValidateNeighborOptions(o); err != nil {
		return nil, err
	}
	return walk(ctx, s, func(vctx context.Context, e *edges, ids []string) (*graph.Subgraph, error) {
		return graph.Neighbors(vctx, e, ids[0], o)
	}, [2]string{"node", node})
}

// Path finds the fewest hops between two nodes.
func (s *Service) Path(ctx context.Context, from, to string, o graph.PathOptions) (*graph.PathResult, error) {
	if err := graph.ValidatePathOptions(o); err != nil {
		return nil, err
	}
	if err := s.knownTypes(ctx, o.Types); err != nil {
		return nil, err
	}
	return walk(ctx, s, func(vctx context.Context, e *edges, ids []string) (*graph.PathResult, error) {
		return graph.Path(vctx, e, ids[0], ids[1], o)
	}, [2]string{"from", from}, [2]string{"to", to})
}

// knownTypes refuses a type filter naming a type no relation can have (neither seeded,
// observed nor in use): it would find nothing, and "no path" would hide the typo.
func (s *Service) knownTypes(ctx context.Context, types []string) error {
	if len(types) == 0 {
		return nil
	}
	known, err := s.RelationTypes(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(known)+len(graph.SeedRelationTypes))
	names = append(names, graph.SeedRelationTypes...)
	for _, k := range known {
		if !slices.Contains(names, k.Type) {
			names = append(names, k.Type)
		}
	}
	for _, t := range types {
		if !slices.Contains(names, strings.ToLower(strings.TrimSpace(t))) {
			return graph.FieldErrorf(graph.EINVALID, "types", "unknown relation type %q; the types are %s", t, strings.Join(names, ", "))
		}
	}
	return nil
}

// Trace follows the signal relations from a node (or one of its ports) to where they end.
func (s *Service) Trace(ctx context.Context, from string, o graph.TraceOptions) (*graph.TraceResult, error) {
	if err := graph.ValidateTraceOptions(o); err != nil {
		return nil, err
	}
	return walk(ctx, s, func(vctx context.Context, e *edges, ids []string) (*graph.TraceResult, error) {
		return graph.Trace(vctx, e, ids[0], o)
	}, [2]string{"from", from})
}

// Subgraph returns the vertices within o.Depth of around, or with around "" the whole
// graph: every vertex with a relation, bounded by graph.MaxNeighborsVertices.
func (s *Service) Subgraph(ctx context.Context, around string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	if err := graph.ValidateNeighborOptions(o); err != nil {
		return nil, err
	}
	if around != "" {
		return walk(ctx, s, func(vctx context.Context, e *edges, ids []string) (*graph.Subgraph, error) {
			return graph.Neighbors(vctx, e, ids[0], o)
		}, [2]string{"around", around})
	}
	return walk(ctx, s, func(vctx context.Context, e *edges, _ []string) (*graph.Subgraph, error) {
		// Listing the related nodes is part of the walk: it runs within the walk's time
		// bound, and a walk whose time ran out while listing says so (truncated by time).
		tctx, cancel := context.WithTimeout(vctx, graph.TraversalTimeout)
		defer cancel()
		starts, err := e.related(tctx)
		if err != nil {
			return nil, err
		}
		g, err := graph.Explore(tctx, e, starts, o)
		if err == nil && tctx.Err() != nil && !g.Truncated {
			g.Truncated, g.TruncatedBy = true, graph.TruncTime // cut while listing
		}
		return g, err
	})
}

// related lists the vertices of every node with a relation, declared then observed, in
// the order their relations' ids come, stopping once there are more than a subgraph may
// hold or ctx ends (the walk then says it was truncated).
func (e *edges) related(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(node string) error {
		v, err := e.Vertex(ctx, node)
		if err != nil {
			if graph.ErrorCode(err) == graph.ENOTFOUND {
				return nil // an observed end the store has not recorded yet
			}
			return err
		}
		if !seen[v.ID] {
			seen[v.ID] = true
			out = append(out, v.ID)
		}
		return nil
	}
	// cut keeps what was listed when the time bound made a read fail.
	cut := func(err error) ([]string, error) {
		if ctx.Err() != nil {
			return out, nil
		}
		return nil, err
	}
	enough := func() bool { return len(out) > graph.MaxNeighborsVertices || ctx.Err() != nil }
	f := graph.RelationFilter{Declared: true, First: graph.MaxPageSize}
	for !enough() {
		page, _, next, err := e.rs.FindRelations(ctx, f)
		if err != nil {
			return cut(err)
		}
		for _, r := range page {
			if err := add(r.From); err != nil {
				return cut(err)
			}
			if err := add(r.To); err != nil {
				return cut(err)
			}
		}
		if next == "" || len(page) == 0 {
			break
		}
		f.After = next
	}
	for _, r := range e.w.obs {
		if enough() {
			break
		}
		if err := add(r.From); err != nil {
			return cut(err)
		}
		if err := add(r.To); err != nil {
			return cut(err)
		}
	}
	return out, nil
}
