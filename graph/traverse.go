package graph

import (
	"context"
	"time"
)

// Traversal bounds (DESIGN.md, traversal).
const (
	MaxNeighborsDepth    = 4
	MaxNeighborsVertices = 500
	MaxPathDepth         = 8
	MaxPathVisited       = 20000
	MaxTraceHops         = 64
	MaxTraceVertices     = 500
	TraversalTimeout     = 2 * time.Second
	MaxSubgraphDepth     = MaxNeighborsDepth
)

// Why a traversal stopped early (TruncatedBy).
const (
	TruncDepth    = "depth"
	TruncVertices = "vertices"
	TruncTime     = "time"
)

// Vertex is one thing in a traversal: a bound identity together with its present
// devices is one vertex named by the identity; anything else (an unbound device, a
// robot's device, a client) is a vertex of its own.
type Vertex struct {
	ID    string   `json:"id"`              // identity:…, device:…, client:…
	Kind  Kind     `json:"kind"`            // identity, device, client
	Name  string   `json:"name"`            // display name
	Nodes []string `json:"nodes,omitempty"` // an identity vertex's present bound devices
	Infra bool     `json:"infra,omitempty"` // an infrastructure device (a hub, a root hub): drawn apart
	Depth int      `json:"depth"`           // hops from the start (0 for it)
}

// Hop is one relation crossed by a traversal, oriented the way it was walked.
type Hop struct {
	Relation string `json:"relation"` // rel:… or obs:…
	Type     string `json:"type"`
	From     string `json:"from"`                // vertex
	FromNode string `json:"from_node,omitempty"` // the node the relation hangs off, when not the vertex itself (a bound device)
	FromPort string `json:"from_port,omitempty"`
	To       string `json:"to"`
	ToNode   string `json:"to_node,omitempty"`
	ToPort   string `json:"to_port,omitempty"`
	Observed bool   `json:"observed,omitempty"`
	Source   string `json:"source,omitempty"`
	Reverse  bool   `json:"reverse,omitempty"` // walked against the relation's direction
}

// Bounded reports whether and why a traversal stopped early, and how much it saw.
type Bounded struct {
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncated_by,omitempty"` // depth, vertices or time
	Visited     int    `json:"visited"`
}

// NeighborOptions bound and filter Neighbors and Subgraph.
type NeighborOptions struct {
	Depth     int      `json:"depth,omitempty"`     // 1..MaxNeighborsDepth; 0 means 1
	Types     []string `json:"types,omitempty"`     // only these relation types
	Direction string   `json:"direction,omitempty"` // out, in, both (default)
	// Declared / Observed choose the relations followed; both false means both.
	Declared bool `json:"declared,omitempty"`
	Observed bool `json:"observed,omitempty"`
}

// Subgraph is the vertices around a node (or the whole graph) and the relations between
// them, ready to draw; Neighbors and Subgraph return it.
type Subgraph struct {
	Around   string      `json:"around,omitempty"` // the start vertex; "" for the whole graph
	Depth    int         `json:"depth"`
	Vertices []*Vertex   `json:"vertices"` // the start first, then by depth and id
	Edges    []*Relation `json:"edges"`    // relations between listed vertices, by id
	Bounded
}

// PathOptions bound and filter Path.
type PathOptions struct {
	Types    []string `json:"types,omitempty"`
	MaxDepth int      `json:"max_depth,omitempty"` // 1..MaxPathDepth; 0 means MaxPathDepth
	Directed bool     `json:"directed,omitempty"`  // follow relations only from → to
}

// PathResult is the fewest-hop chain between two vertices (ties broken by relation id).
type PathResult struct {
	From     string    `json:"from"` // vertices
	To       string    `json:"to"`
	Found    bool      `json:"found"`
	Hops     []Hop     `json:"hops"`
	Vertices []*Vertex `json:"vertices"` // along the path, From first
	Bounded
}

// TraceOptions say where a trace starts and which way it goes.
type TraceOptions struct {
	Port      string `json:"port,omitempty"`      // only the relations leaving (or entering) this port on the first hop
	Direction string `json:"direction,omitempty"` // out (default: downstream) or in (upstream)
}

// TraceHop is one hop of a trace's tree.
type TraceHop struct {
	Hop
	Depth  int  `json:"depth"`           // 1 for a hop leaving the start
	Parent int  `json:"parent"`          // index in Hops of the hop it continues; -1 from the start
	Cycle  bool `json:"cycle,omitempty"` // To is already on this branch: not followed
	End    bool `json:"end,omitempty"`   // nothing leaves To: the signal ends there
}

// TraceResult is the tree of hops a signal takes from a node, with its ends.
type TraceResult struct {
	From      string     `json:"from"` // vertex
	Port      string     `json:"port,omitempty"`
	Direction string     `json:"direction"`
	Hops      []TraceHop `json:"hops"`     // depth first, in relation-id order at each fork
	Ends      []string   `json:"ends"`     // vertices where a branch ends, sorted
	Vertices  []*Vertex  `json:"vertices"` // every vertex reached, the start first
	Bounded
}

// EdgeSource is what traversal walks: one consistent view of declared relations, the
// live observed ones and the bindings, fed by the service.
type EdgeSource interface {
	// Vertex returns the vertex a node belongs to (a present bound device → its
	// identity's vertex), ENOTFOUND for a node that does not exist.
	Vertex(ctx context.Context, node string) (*Vertex, error)
	// Edges returns every relation touching the vertex — on the vertex's own node and on
	// each node in Vertex.Nodes — declared and observed, both directions.
	Edges(ctx context.Context, v *Vertex) ([]*Relation, error)
}

// TraversalService walks relations: declared ones and what the sources observe.
// Node ids may be typed in any form the Resolver accepts. ENOTFOUND (with a suggestion)
// for an unknown start node; EINVALID for a depth out of range or an unknown direction.
// Bounds never make an error: the result says Truncated and TruncatedBy.
type TraversalService interface {
	Neighbors(ctx context.Context, node string, o NeighborOptions) (*Subgraph, error)
	// Path finds the fewest hops between two nodes; Found false when there is none
	// within the bounds.
	Path(ctx context.Context, from, to string, o PathOptions) (*PathResult, error)
	// Trace follows cable, linked, subscribed and controls relations from a node (or
	// one of its ports) hop by hop to where the signal ends.
	Trace(ctx context.Context, from string, o TraceOptions) (*TraceResult, error)
	// Subgraph returns the vertices within depth of around (the whole graph, bounded by
	// MaxNeighborsVertices, when around is "") and the relations between them.
	Subgraph(ctx context.Context, around string, o NeighborOptions) (*Subgraph, error)
}
