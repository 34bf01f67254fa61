package query

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/graphql-go/graphql"

	"github.com/devgraph/devgraph/graph"
)

// relationTypes are the GraphQL types of relations, clients and traversals, built once per
// schema by buildRelationTypes.
type relationTypes struct {
	relation, client                       *graphql.Object
	relationConn                           *graphql.Object
	vertex, subgraph, pathResult, traceRes *graphql.Object
	relationChange                         *graphql.Object
	eventConn                              *graphql.Object // the node types' changelog connection
}

// drawEdge is a relation in a subgraph with its ends named by vertex, so a client can draw
// it between the nodes it was given without knowing which device a vertex stands for.
type drawEdge struct {
	rel      *graph.Relation
	from, to string // vertices
}

var directionDesc = "out (relations leaving the node), in (arriving) or both (default)."

// nodeRelationFields are relations and neighbors, on every node a relation can hang off
// (Identity, Device, Robot, Client); id names the node the source value stands for.
func (b *builder) nodeRelationFields(id func(src any) string) graphql.Fields {
	return graphql.Fields{
		"relations": {Type: nonNull(b.rt.relationConn), Description: "Relations of this node — for a bound identity also those of its present devices, for a bound device also its identity's — declared first (by id), then observed; totalCount counts both.",
			Args: withArgs(pageArgs, graphql.FieldConfigArgument{
				"direction": &graphql.ArgumentConfig{Type: graphql.String, Description: directionDesc},
				"type":      &graphql.ArgumentConfig{Type: graphql.String, Description: "Only this relation type, e.g. cable."},
			}),
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				f := graph.RelationFilter{Node: id(p.Source), Direction: argString(p, "direction")}
				if t := argString(p, "type"); t != "" {
					f.Types = []string{t}
				}
				return b.relationsConn(ctx, p, f)
			})},
		"neighbors": {Type: nonNull(b.rt.subgraph), Description: fmt.Sprintf("The things within depth relations of this node (depth 1..%d, at most %d vertices), and the relations between them.", graph.MaxNeighborsDepth, graph.MaxNeighborsVertices),
			Args: graphql.FieldConfigArgument{
				"depth":     &graphql.ArgumentConfig{Type: graphql.Int, Description: fmt.Sprintf("Hops, 1 (default) to %d.", graph.MaxNeighborsDepth)},
				"types":     &graphql.ArgumentConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Follow only these relation types."},
				"direction": &graphql.ArgumentConfig{Type: graphql.String, Description: directionDesc},
				"declared":  &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Follow only declared relations (neither or both: both kinds)."},
				"observed":  &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Follow only observed relations."},
			},
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				o, err := neighborOptions(p)
				if err != nil {
					return nil, err
				}
				o.Direction = argString(p, "direction")
				return b.svc.Neighbors(ctx, id(p.Source), o)
			})},
	}
}

// neighborOptions reads depth, types, declared and observed (absent depth: 1). A depth below 1 is refused
// here: to the service 0 means "the default", which a caller who typed 0 did not ask for.
func neighborOptions(p graphql.ResolveParams) (graph.NeighborOptions, error) {
	o := graph.NeighborOptions{Depth: 1, Types: argStrings(p.Args["types"])}
	o.Declared, _ = p.Args["declared"].(bool)
	o.Observed, _ = p.Args["observed"].(bool)
	if d, ok := p.Args["depth"].(int); ok {
		if d < 1 {
			return o, invalidArg("depth", "depth %d: want 1-%d hops around the node (for a longer chain, find the path between two nodes)", d, graph.MaxNeighborsDepth)
		}
		o.Depth = d
	}
	return o, nil
}

// relationsConn pages relations: declared first, then observed, as the service orders them.
func (b *builder) relationsConn(ctx context.Context, p graphql.ResolveParams, f graph.RelationFilter) (any, error) {
	switch f.Direction {
	case "", graph.DirOut, graph.DirIn, graph.DirBoth:
	default:
		return nil, invalidArg("direction", "direction %q: want out, in or both", truncate(f.Direction, 40))
	}
	return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]*graph.Relation, int, string, error) {
		g := f
		g.First, g.After = n, after
		return b.svc.FindRelations(ctx, g)
	})
}

func relationOf(src any) *graph.Relation {
	switch r := src.(type) {
	case *graph.Relation:
		return r
	case *drawEdge:
		return r.rel
	}
	return nil
}

func (b *builder) buildRelationTypes() {
	rt := &b.rt
	rel := func(t graphql.Output, desc string, get func(r *graph.Relation) any) *graphql.Field {
		return &graphql.Field{Type: t, Description: desc, Resolve: func(p graphql.ResolveParams) (any, error) {
			r := relationOf(p.Source)
			if r == nil {
				return nil, nil
			}
			return get(r), nil
		}}
	}
	relationFields := func() graphql.Fields {
		return graphql.Fields{
			"id":       rel(nonNull(graphql.ID), "rel:<uuid> (declared) or obs:<hash> (observed).", func(r *graph.Relation) any { return r.ID }),
			"type":     rel(nonNull(graphql.String), "cable, controls, mounted_on, part_of, located_in, powered_by, any type in use; observed: via, linked, subscribed.", func(r *graph.Relation) any { return r.Type }),
			"fromId":   rel(nonNull(graphql.ID), "The node it leaves.", func(r *graph.Relation) any { return r.From }),
			"fromPort": rel(graphql.String, "e.g. MIDI OUT; null when it hangs off the whole node.", func(r *graph.Relation) any { return nilIfEmpty(r.FromPort) }),
			"toId":     rel(nonNull(graphql.ID), "The node it reaches.", func(r *graph.Relation) any { return r.To }),
			"toPort":   rel(graphql.String, "", func(r *graph.Relation) any { return nilIfEmpty(r.ToPort) }),
			"attrs": rel(nonNull(JSONScalar), "A JSON object of strings: cable kind, length, colour, MIDI channel …", func(r *graph.Relation) any {
				if r.Attrs == nil {
					return map[string]string{}
				}
				return r.Attrs
			}),
			"observed":  rel(nonNull(graphql.Boolean), "What a source sees right now (never stored), not what someone declared.", func(r *graph.Relation) any { return r.Observed }),
			"source":    rel(graphql.String, "Observed: usb, alsa or pipewire.", func(r *graph.Relation) any { return nilIfEmpty(r.Source) }),
			"author":    rel(graphql.String, "Declared: the actor who added it.", func(r *graph.Relation) any { return nilIfEmpty(r.Author) }),
			"createdAt": rel(TimeScalar, "Declared: when it was added.", func(r *graph.Relation) any { return r.Created }),
			"updatedAt": rel(TimeScalar, "Declared: its last relation.update.", func(r *graph.Relation) any { return r.Updated }),
			"from": {Type: b.nodeIface, Description: "The node it leaves (null when that is gone).",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.loadNodeOrNil(ctx, relationOf(p.Source).From)
				})},
			"to": {Type: b.nodeIface, Description: "The node it reaches (null when that is gone).",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.loadNodeOrNil(ctx, relationOf(p.Source).To)
				})},
			"changelog": {Type: nonNull(rt.eventConn), Description: "Events that targeted this relation (relation.add, relation.update, relation.remove), newest first; none for an observed relation.",
				Args: withArgs(pageArgs, eventFilterArgs),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.eventsConn(ctx, p, graph.EventFilter{Target: relationOf(p.Source).ID, Action: argString(p, "action"), Actor: argString(p, "actor")})
				})},
		}
	}
	rt.relation = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Relation",
		Description: "A directed, typed edge between two nodes, optionally between named ports: declared (rel:…, stored and audited) or observed (obs:…, what a source sees right now).",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields:      graphql.FieldsThunk(relationFields),
	})
	rt.relationConn = connectionType("Relation", rt.relation, "Declared and observed relations in the whole list.")

	clientID := func(src any) string { return src.(*graph.Client).ID }
	rt.client = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Client",
		Description: "An application a source sees right now (an ALSA sequencer client such as Bitwig Studio, a PipeWire stream such as Firefox): an end of observed relations, never stored.",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			f := graphql.Fields{
				"id":     field(nonNull(graphql.ID), "client:<source>:<name>", func(c *graph.Client) any { return c.ID }),
				"source": field(nonNull(graphql.String), "alsa or pipewire.", func(c *graph.Client) any { return c.Source }),
				"name":   field(nonNull(graphql.String), "", func(c *graph.Client) any { return c.Name }),
				"attrs":  field(JSONScalar, "Per-boot numbers (client number, object id).", func(c *graph.Client) any { return c.Attrs }),
			}
			for k, v := range b.nodeRelationFields(clientID) {
				f[k] = v
			}
			return f
		}),
	})

	rt.vertex = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Vertex",
		Description: "One thing in a traversal: a bound identity together with its present devices is one vertex named by the identity; anything else is a vertex of its own.",
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"id":      field(nonNull(graphql.ID), "identity:…, device:… or client:…", func(v *graph.Vertex) any { return v.ID }),
				"kind":    field(nonNull(graphql.String), "identity, device or client.", func(v *graph.Vertex) any { return string(v.Kind) }),
				"name":    field(nonNull(graphql.String), "Display name.", func(v *graph.Vertex) any { return v.Name }),
				"depth":   field(nonNull(graphql.Int), "Hops from the start (0 for it).", func(v *graph.Vertex) any { return v.Depth }),
				"devices": field(listOf(graphql.ID), "An identity vertex's present bound devices: relations on them are drawn on the vertex.", func(v *graph.Vertex) any { return nonNilStrings(v.Nodes) }),
				"node": {Type: b.nodeIface, Description: "The node the vertex is named by.",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						return b.loadNodeOrNil(ctx, p.Source.(*graph.Vertex).ID)
					})},
			}
		}),
	})

	edgeFields := relationFields()
	edgeFields["from"] = field(nonNull(graphql.ID), "The vertex it leaves (the identity, for a relation on a bound device).", func(e *drawEdge) any { return e.from })
	edgeFields["to"] = field(nonNull(graphql.ID), "The vertex it reaches.", func(e *drawEdge) any { return e.to })
	edgeFields["relation"] = field(nonNull(rt.relation), "The relation itself.", func(e *drawEdge) any { return e.rel })
	delete(edgeFields, "changelog")
	drawEdgeType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "SubgraphEdge",
		Description: "A relation between two vertices of a subgraph, ready to draw: from and to are vertex ids, fromId and toId the nodes the relation hangs off.",
		Fields:      edgeFields,
	})

	bounded := func(get func(src any) graph.Bounded) graphql.Fields {
		return graphql.Fields{
			"truncated":   field(nonNull(graphql.Boolean), "A bound (depth, vertices, time) cut the traversal short.", func(src any) any { return get(src).Truncated }),
			"truncatedBy": field(graphql.String, "depth, vertices or time; null when not truncated.", func(src any) any { return nilIfEmpty(get(src).TruncatedBy) }),
			"visited":     field(nonNull(graphql.Int), "Vertices the traversal looked at.", func(src any) any { return get(src).Visited }),
		}
	}
	merge := func(a, b graphql.Fields) graphql.Fields {
		for k, v := range b {
			a[k] = v
		}
		return a
	}
	rt.subgraph = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Subgraph",
		Description: "Vertices and the relations between them, ready to draw.",
		Fields: merge(graphql.Fields{
			"around": field(graphql.ID, "The start vertex; null for the whole graph.", func(g *graph.Subgraph) any { return nilIfEmpty(g.Around) }),
			"depth":  field(nonNull(graphql.Int), "", func(g *graph.Subgraph) any { return g.Depth }),
			"nodes":  field(listOf(rt.vertex), "The start first, then by depth and id.", func(g *graph.Subgraph) any { return g.Vertices }),
			"edges":  field(listOf(drawEdgeType), "Relations between the vertices listed, by id.", func(g *graph.Subgraph) any { return drawEdges(g.Vertices, g.Edges) }),
		}, bounded(func(src any) graph.Bounded { return src.(*graph.Subgraph).Bounded })),
	})

	hopFields := func() graphql.Fields {
		hop := func(t graphql.Output, desc string, get func(h *graph.Hop) any) *graphql.Field {
			return &graphql.Field{Type: t, Description: desc, Resolve: func(p graphql.ResolveParams) (any, error) {
				switch h := p.Source.(type) {
				case *graph.Hop:
					return get(h), nil
				case *graph.TraceHop:
					return get(&h.Hop), nil
				}
				return nil, nil
			}}
		}
		return graphql.Fields{
			"relationId": hop(nonNull(graphql.ID), "rel:… or obs:…", func(h *graph.Hop) any { return h.Relation }),
			"type":       hop(nonNull(graphql.String), "", func(h *graph.Hop) any { return h.Type }),
			"from":       hop(nonNull(graphql.ID), "The vertex the hop leaves.", func(h *graph.Hop) any { return h.From }),
			"fromNode":   hop(graphql.ID, "The node the relation hangs off when it is not the vertex itself (a bound device).", func(h *graph.Hop) any { return nilIfEmpty(h.FromNode) }),
			"fromPort":   hop(graphql.String, "", func(h *graph.Hop) any { return nilIfEmpty(h.FromPort) }),
			"to":         hop(nonNull(graphql.ID), "The vertex the hop reaches.", func(h *graph.Hop) any { return h.To }),
			"toNode":     hop(graphql.ID, "", func(h *graph.Hop) any { return nilIfEmpty(h.ToNode) }),
			"toPort":     hop(graphql.String, "", func(h *graph.Hop) any { return nilIfEmpty(h.ToPort) }),
			"observed":   hop(nonNull(graphql.Boolean), "", func(h *graph.Hop) any { return h.Observed }),
			"source":     hop(graphql.String, "Observed: usb, alsa or pipewire.", func(h *graph.Hop) any { return nilIfEmpty(h.Source) }),
			"reverse":    hop(nonNull(graphql.Boolean), "Walked against the relation's direction.", func(h *graph.Hop) any { return h.Reverse }),
			"relation": {Type: rt.relation, Description: "The relation crossed (null when it has gone since).",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					var id string
					switch h := p.Source.(type) {
					case *graph.Hop:
						id = h.Relation
					case *graph.TraceHop:
						id = h.Relation
					}
					r, err := b.svc.FindRelationByID(ctx, id)
					if graph.ErrorCode(err) == graph.ENOTFOUND {
						return nil, nil
					}
					return r, err
				})},
		}
	}
	hopType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "Hop",
		Description: "One relation crossed by a traversal, oriented the way it was walked.",
		Fields:      graphql.FieldsThunk(hopFields),
	})
	rt.pathResult = graphql.NewObject(graphql.ObjectConfig{
		Name:        "PathResult",
		Description: "The fewest-hop chain between two nodes (ties broken by relation id).",
		Fields: merge(graphql.Fields{
			"from":   field(nonNull(graphql.ID), "The start vertex.", func(r *graph.PathResult) any { return r.From }),
			"to":     field(nonNull(graphql.ID), "The end vertex.", func(r *graph.PathResult) any { return r.To }),
			"found":  field(nonNull(graphql.Boolean), "false when no chain exists within the bounds.", func(r *graph.PathResult) any { return r.Found }),
			"length": field(nonNull(graphql.Int), "Hops.", func(r *graph.PathResult) any { return len(r.Hops) }),
			"hops": field(listOf(hopType), "From first.", func(r *graph.PathResult) any {
				out := make([]*graph.Hop, len(r.Hops))
				for i := range r.Hops {
					out[i] = &r.Hops[i]
				}
				return out
			}),
			"nodes": field(listOf(rt.vertex), "The vertices along the path, from first.", func(r *graph.PathResult) any { return r.Vertices }),
		}, bounded(func(src any) graph.Bounded { return src.(*graph.PathResult).Bounded })),
	})

	traceHopFields := hopFields()
	traceHopFields["depth"] = field(nonNull(graphql.Int), "1 for a hop leaving the start.", func(h *graph.TraceHop) any { return h.Depth })
	traceHopFields["parent"] = field(nonNull(graphql.Int), "Index in hops of the hop this one continues; -1 from the start.", func(h *graph.TraceHop) any { return h.Parent })
	traceHopFields["cycle"] = field(nonNull(graphql.Boolean), "to is already on this branch: not followed.", func(h *graph.TraceHop) any { return h.Cycle })
	traceHopFields["end"] = field(nonNull(graphql.Boolean), "Nothing leaves to: the signal ends there.", func(h *graph.TraceHop) any { return h.End })
	traceHopType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "TraceHop",
		Description: "One hop of a trace's tree.",
		Fields:      traceHopFields,
	})
	rt.traceRes = graphql.NewObject(graphql.ObjectConfig{
		Name:        "TraceResult",
		Description: "The tree of hops a signal takes from a node, with its ends.",
		Fields: merge(graphql.Fields{
			"from":      field(nonNull(graphql.ID), "The start vertex.", func(r *graph.TraceResult) any { return r.From }),
			"port":      field(graphql.String, "The port the first hop was limited to.", func(r *graph.TraceResult) any { return nilIfEmpty(r.Port) }),
			"direction": field(nonNull(graphql.String), "out (downstream) or in (upstream).", func(r *graph.TraceResult) any { return r.Direction }),
			"hops": field(listOf(traceHopType), "Depth first, in relation-id order at each fork.", func(r *graph.TraceResult) any {
				out := make([]*graph.TraceHop, len(r.Hops))
				for i := range r.Hops {
					out[i] = &r.Hops[i]
				}
				return out
			}),
			"ends":  field(listOf(graphql.ID), "Vertices where a branch ends, sorted.", func(r *graph.TraceResult) any { return nonNilStrings(r.Ends) }),
			"nodes": field(listOf(rt.vertex), "Every vertex reached, the start first.", func(r *graph.TraceResult) any { return r.Vertices }),
		}, bounded(func(src any) graph.Bounded { return src.(*graph.TraceResult).Bounded })),
	})

	rt.relationChange = graphql.NewObject(graphql.ObjectConfig{
		Name:        "RelationChange",
		Description: "What a relation write did (or, with dryRun, would do).",
		Fields: graphql.Fields{
			"relation": field(rt.relation, "The relation added, updated or removed (as it was), or the existing one a repeated add returned.", func(c *graph.RelationChange) any { return c.Relation }),
			"action":   field(nonNull(graphql.String), "add, update or remove; none when nothing was written (a repeated add, an update to the same values).", func(c *graph.RelationChange) any { return c.Action }),
			"dryRun":   field(nonNull(graphql.Boolean), "", func(c *graph.RelationChange) any { return c.DryRun }),
			"events":   field(nonNull(graphql.Int), "Changelog events written.", func(c *graph.RelationChange) any { return c.Events }),
		},
	})
}

// drawEdges names each relation's ends by the vertex they belong to (a bound device's
// relation is drawn on its identity's vertex).
func drawEdges(vs []*graph.Vertex, rels []*graph.Relation) []*drawEdge {
	vertexOf := make(map[string]string, len(vs))
	for _, v := range vs {
		vertexOf[v.ID] = v.ID
		for _, n := range v.Nodes {
			vertexOf[n] = v.ID
		}
	}
	out := make([]*drawEdge, len(rels))
	for i, r := range rels {
		e := &drawEdge{rel: r, from: vertexOf[r.From], to: vertexOf[r.To]}
		if e.from == "" {
			e.from = r.From
		}
		if e.to == "" {
			e.to = r.To
		}
		out[i] = e
	}
	return out
}

// robotNode is the node a robot's relations hang off: its identity, else its device.
func robotNode(src any) string {
	r := src.(*graph.RobotState)
	switch {
	case r.IdentityID != "":
		return r.IdentityID
	case r.DeviceID != "":
		return r.DeviceID
	}
	return r.Ref
}

var relationFilterInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "RelationFilter",
	Fields: graphql.InputObjectConfigFieldMap{
		"node":      &graphql.InputObjectFieldConfig{Type: graphql.ID, Description: "Relations touching this node (any id form: jdxi, usb:3-3.2, client:alsa:Bitwig Studio)."},
		"direction": &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "With node: " + directionDesc},
		"type":      &graphql.InputObjectFieldConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Only these types: one (type: \"cable\") or several."},
		"declared":  &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Only declared relations (with observed: both; neither: both)."},
		"observed":  &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Only observed relations; without node, the whole live set."},
	},
})

func relationFilter(v any) graph.RelationFilter {
	m, _ := v.(map[string]any)
	var f graph.RelationFilter
	f.Node, _ = m["node"].(string)
	f.Direction, _ = m["direction"].(string)
	f.Types = argStrings(m["type"])
	f.Declared, _ = m["declared"].(bool)
	f.Observed, _ = m["observed"].(bool)
	return f
}

var relationTypeType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "RelationType",
	Description: "A relation type with the number of declared relations using it.",
	Fields: graphql.Fields{
		"type":     field(nonNull(graphql.String), "", func(t graph.RelationTypeCount) any { return t.Type }),
		"count":    field(nonNull(graphql.Int), "Declared relations of this type.", func(t graph.RelationTypeCount) any { return t.Count }),
		"seeded":   field(nonNull(graphql.Boolean), "Part of the seeded vocabulary.", func(t graph.RelationTypeCount) any { return t.Seeded }),
		"reserved": field(nonNull(graphql.Boolean), "Only sources produce it (via, linked, subscribed): never declared.", func(t graph.RelationTypeCount) any { return t.Reserved }),
	},
})

// relationRootFields are the root query fields of relations and traversal.
func (b *builder) relationRootFields() graphql.Fields {
	rt := &b.rt
	return graphql.Fields{
		"relation": {Type: rt.relation, Description: "One relation: declared (rel:<uuid>) or observed (obs:<hash>).",
			Args: graphql.FieldConfigArgument{"id": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)}},
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.svc.FindRelationByID(ctx, argString(p, "id"))
			})},
		"relations": {Type: nonNull(rt.relationConn), Description: "Relations: declared first (by id), then observed; totalCount counts both. Without filter.node, every declared relation (filter.observed: the live set).",
			Args: withArgs(pageArgs, graphql.FieldConfigArgument{"filter": &graphql.ArgumentConfig{Type: relationFilterInput}}),
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.relationsConn(ctx, p, relationFilter(p.Args["filter"]))
			})},
		"relationTypes": {Type: listOf(relationTypeType), Description: "The seeded and reserved relation types and every type in use, with counts: reuse these before minting one (relate newType).",
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.svc.RelationTypes(ctx)
			})},
		"path": {Type: nonNull(rt.pathResult), Description: fmt.Sprintf("The fewest hops between two nodes over declared and observed relations (undirected unless directed; depth ≤ %d, ≤ %d vertices visited).", graph.MaxPathDepth, graph.MaxPathVisited),
			Args: graphql.FieldConfigArgument{
				"from":     &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)},
				"to":       &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)},
				"types":    &graphql.ArgumentConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Follow only these relation types."},
				"maxDepth": &graphql.ArgumentConfig{Type: graphql.Int, Description: fmt.Sprintf("1..%d (default %d).", graph.MaxPathDepth, graph.MaxPathDepth)},
				"directed": &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Follow relations only from → to."},
			},
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				o := graph.PathOptions{Types: argStrings(p.Args["types"])}
				o.Directed, _ = p.Args["directed"].(bool)
				if m, ok := p.Args["maxDepth"].(int); ok {
					if m < 1 {
						// 0 means "the default" to the service; typed, it is out of range.
						return nil, invalidArg("maxDepth", "maxDepth %d: want 1-%d hops (omit it for %d)", m, graph.MaxPathDepth, graph.MaxPathDepth)
					}
					o.MaxDepth = m
				}
				return b.svc.Path(ctx, argString(p, "from"), argString(p, "to"), o)
			})},
		"trace": {Type: nonNull(rt.traceRes), Description: fmt.Sprintf("Follow cable, linked, subscribed and controls relations from a node (or only those leaving one port) hop by hop to where the signal ends (≤ %d hops, ≤ %d vertices).", graph.MaxTraceHops, graph.MaxTraceVertices),
			Args: graphql.FieldConfigArgument{
				"from":      &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID)},
				"port":      &graphql.ArgumentConfig{Type: graphql.String, Description: "Only the relations leaving (in: entering) this port on the first hop, e.g. MIDI OUT."},
				"direction": &graphql.ArgumentConfig{Type: graphql.String, Description: "out (downstream, default) or in (upstream)."},
			},
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.svc.Trace(ctx, argString(p, "from"), graph.TraceOptions{Port: argString(p, "port"), Direction: argString(p, "direction")})
			})},
		"subgraph": {Type: nonNull(rt.subgraph), Description: fmt.Sprintf("Vertices within depth of around (the whole graph when around is absent, ≤ %d vertices) and the relations between them, ready to draw.", graph.MaxNeighborsVertices),
			Args: graphql.FieldConfigArgument{
				"around":   &graphql.ArgumentConfig{Type: graphql.ID, Description: "The node in the middle; absent for the whole graph."},
				"depth":    &graphql.ArgumentConfig{Type: graphql.Int, Description: fmt.Sprintf("Hops from around, 1 (default) to %d.", graph.MaxSubgraphDepth)},
				"types":    &graphql.ArgumentConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Follow only these relation types."},
				"declared": &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Only declared relations (neither or both: both kinds)."},
				"observed": &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Only observed relations."},
			},
			Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				o, err := neighborOptions(p)
				if err != nil {
					return nil, err
				}
				return b.svc.Subgraph(ctx, argString(p, "around"), o)
			})},
	}
}

var relateInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name:        "RelateInput",
	Description: "A relation to declare: from (+ fromPort) → to (+ toPort), of a type.",
	Fields: graphql.InputObjectConfigFieldMap{
		"from":     &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.ID), Description: "Identity, device or robot (any id form: keystep, usb:3-3.1)."},
		"fromPort": &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "e.g. MIDI OUT (≤ 64 bytes, compared case-insensitively)."},
		"type":     &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.String), Description: "cable, controls, mounted_on, part_of, located_in, powered_by, or a type in use (relationTypes)."},
		"to":       &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.ID)},
		"toPort":   &graphql.InputObjectFieldConfig{Type: graphql.String},
		"attrs":    &graphql.InputObjectFieldConfig{Type: JSONScalar, Description: `A JSON object of strings, e.g. {"kind": "midi-din", "length": "1.5m"}; a cable needs kind.`},
		"newType":  &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Allow a type neither seeded nor in use (so a typo does not mint one)."},
		"dryRun":   &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Report what would change; write nothing."},
	},
})

var relationUpdateInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name:        "RelationUpdateInput",
	Description: "Changes to a declared relation's attrs or ports; omitted fields stay.",
	Fields: graphql.InputObjectConfigFieldMap{
		"attrs":    &graphql.InputObjectFieldConfig{Type: JSONScalar, Description: "Replaces the whole attrs object ({} clears it)."},
		"fromPort": &graphql.InputObjectFieldConfig{Type: graphql.String, Description: `"" clears the port.`},
		"toPort":   &graphql.InputObjectFieldConfig{Type: graphql.String, Description: `"" clears the port.`},
		"dryRun":   &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Report what would change; write nothing."},
	},
})

// relationAttrs turns a JSON argument into relation attrs through graph's one decoder, so
// "attrs is not a JSON object" reads the same on every interface. ok is false when absent.
func relationAttrs(v any) (attrs map[string]string, ok bool, err error) {
	in, present := v.(jsonInput)
	if !present {
		return nil, false, nil
	}
	if in.v == nil {
		return map[string]string{}, true, nil
	}
	raw, merr := json.Marshal(in.v)
	if merr != nil {
		return nil, false, invalidArg("attrs", "attrs is not valid JSON; give a JSON object of strings, e.g. {\"kind\": \"midi-din\"}")
	}
	attrs, err = graph.DecodeRelationAttrs(raw)
	if err != nil {
		return nil, false, fieldErr("attrs", err)
	}
	if attrs == nil {
		attrs = map[string]string{} // {} clears an update's attrs
	}
	return attrs, true, nil
}

// fieldErr keeps a graph error's code and message and names field when it names none.
func fieldErr(field string, err error) error {
	f := graph.ErrorField(err)
	if f == "" {
		f = field
	}
	msg, next := graphqlAdvice(spellField(graph.ErrorField(err), graph.ErrorMessage(err)), graph.ErrorSteps(err))
	return &resolverError{code: graph.ErrorCode(err), field: camelField(f), msg: msg, next: next}
}

// relationMutationFields are relate, updateRelation and unrelate.
func (b *builder) relationMutationFields() graphql.Fields {
	change := nonNull(b.rt.relationChange)
	return graphql.Fields{
		"relate": {Type: change, Description: "Declare a relation. Adding the same (from, fromPort, type, to, toPort) again returns the existing one (action none) and writes nothing; the same tuple with other attrs is a CONFLICT naming it.",
			Args: args(graphql.FieldConfigArgument{"input": req(relateInput, "")}),
			Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				m, _ := p.Args["input"].(map[string]any)
				c := graph.RelationCreate{}
				c.From, _ = m["from"].(string)
				c.FromPort, _ = m["fromPort"].(string)
				c.Type, _ = m["type"].(string)
				c.To, _ = m["to"].(string)
				c.ToPort, _ = m["toPort"].(string)
				c.NewType, _ = m["newType"].(bool)
				c.DryRun, _ = m["dryRun"].(bool)
				attrs, _, err := relationAttrs(m["attrs"])
				if err != nil {
					return nil, err
				}
				c.Attrs = attrs
				return b.svc.Relate(ctx, c)
			})},
		"updateRelation": {Type: change, Description: "Change a declared relation's attrs or ports (relation.update); the id stays.",
			Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, "rel:<uuid>"), "input": req(relationUpdateInput, "")}),
			Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				m, _ := p.Args["input"].(map[string]any)
				var u graph.RelationUpdate
				if s, ok := m["fromPort"].(string); ok {
					u.FromPort = &s
				}
				if s, ok := m["toPort"].(string); ok {
					u.ToPort = &s
				}
				u.DryRun, _ = m["dryRun"].(bool)
				attrs, ok, err := relationAttrs(m["attrs"])
				if err != nil {
					return nil, err
				}
				if ok {
					u.Attrs = attrs
				}
				if !ok && u.FromPort == nil && u.ToPort == nil {
					return nil, invalidArg("input", "nothing to update; give attrs, fromPort and/or toPort")
				}
				return b.svc.UpdateRelation(ctx, argString(p, "id"), u)
			})},
		"unrelate": {Type: change, Description: "Remove a declared relation, by id or by its (from, fromPort, type, to, toPort).",
			Args: args(graphql.FieldConfigArgument{
				"id":       opt(graphql.ID, "rel:<uuid>; or give from, type and to instead."),
				"from":     opt(graphql.ID, ""),
				"fromPort": opt(graphql.String, ""),
				"type":     opt(graphql.String, ""),
				"to":       opt(graphql.ID, ""),
				"toPort":   opt(graphql.String, ""),
				"dryRun":   opt(graphql.Boolean, "Report what would change; write nothing."),
			}),
			Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				r := graph.RelationRemove{ID: argString(p, "id"), From: argString(p, "from"), FromPort: argString(p, "fromPort"),
					Type: argString(p, "type"), To: argString(p, "to"), ToPort: argString(p, "toPort")}
				r.DryRun, _ = p.Args["dryRun"].(bool)
				tuple := r.From != "" || r.FromPort != "" || r.Type != "" || r.To != "" || r.ToPort != ""
				switch {
				case r.ID != "" && tuple:
					return nil, invalidArg("id", "give either id or the tuple (from, type, to and any ports), not both")
				case r.ID == "" && !tuple:
					return nil, invalidArg("id", "which relation? give id (rel:<uuid>) or from, type and to")
				case r.ID == "":
					for _, f := range []struct{ name, v string }{{"from", r.From}, {"type", r.Type}, {"to", r.To}} {
						if strings.TrimSpace(f.v) == "" {
							return nil, invalidArg(f.name, "%s is missing: a relation is named by id, or by from, type and to (with its ports, if it has any)", f.name)
						}
					}
				}
				return b.svc.Unrelate(ctx, r)
			})},
	}
}
