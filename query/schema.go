package query

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/graphql-go/graphql"

	"github.com/devgraph/devgraph/graph"
)

// reqState is one request's state, reached from every resolver through the context.
type reqState struct {
	runCtx context.Context // carries the request's deadline; resolvers stop when it ends

	mu        sync.Mutex
	tagCounts map[string]graph.TagCount
}

type stateKey struct{}

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// tagNode is a tag as a node of the graph.
type tagNode struct {
	name   string
	count  int
	seeded bool
	known  bool // count and seeded are filled
}

// findHit is one result of find: the edge shows the hit, its node the node.
type findHit struct {
	hit  graph.FindHit
	node any
}

func (h *findHit) edgeNode() any { return h.node }

// builder holds what resolvers need.
type builder struct {
	svc    graph.Service
	finder graph.Finder
	hosts  graph.FleetHosts // nil on one machine
	rep    errorReporter
	limits Limits

	identity, device, note, tag, event, robot *graphql.Object
	nodeIface                                 *graphql.Interface

	rt relationTypes // relations', clients' and traversals' GraphQL types
}

// run returns the context a resolver should use for service calls, or a LIMIT error when
// the request's time is up (graphql-go keeps calling resolvers after a deadline).
func (b *builder) run(p graphql.ResolveParams) (context.Context, error) {
	st := stateFrom(p.Context)
	if st == nil {
		return p.Context, nil
	}
	if err := st.runCtx.Err(); err != nil {
		return nil, b.rep.wrap(p.Context, p.Info.FieldName, err)
	}
	return st.runCtx, nil
}

// resolve wraps a resolver: the time check, panics turned into INTERNAL errors, and service
// errors translated to codes.
func (b *builder) resolve(fn func(ctx context.Context, p graphql.ResolveParams) (any, error)) graphql.FieldResolveFn {
	return func(p graphql.ResolveParams) (out any, err error) {
		ctx, err := b.run(p)
		if err != nil {
			return nil, err
		}
		defer func() {
			if r := recover(); r != nil {
				b.rep.log.ErrorContext(ctx, "graphql resolver panicked", "field", p.Info.FieldName, "panic", r)
				out, err = nil, &resolverError{code: graph.EINTERNAL, msg: "internal error; see the server log"}
			}
		}()
		out, err = fn(ctx, p)
		if err != nil {
			if _, ok := err.(*resolverError); !ok {
				err = b.rep.wrap(ctx, p.Info.FieldName, err)
			}
			return nil, err
		}
		return out, nil
	}
}

// first reads the first argument of a list field: def when absent, else 0..MaxPageSize;
// either side of that range is an INVALID error naming the range (never silently cut).
func (b *builder) first(p graphql.ResolveParams, def int) (int, error) {
	n, ok := p.Args["first"].(int)
	if !ok {
		return min(def, b.limits.MaxPageSize), nil
	}
	if n < 0 {
		return 0, invalidArg("first", "first=%d is negative: want 0..%d (0 reads only totalCount)", n, b.limits.MaxPageSize)
	}
	if n > b.limits.MaxPageSize {
		return 0, invalidArg("first", "first=%d is above this server's page size cap of %d: ask for at most %d and read on with after: pageInfo.endCursor", n, b.limits.MaxPageSize, b.limits.MaxPageSize)
	}
	return n, nil
}

func argString(p graphql.ResolveParams, name string) string {
	s, _ := p.Args[name].(string)
	return s
}

func argStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func nonNull(t graphql.Output) graphql.Output { return graphql.NewNonNull(t) }
func listOf(t graphql.Output) graphql.Output {
	return graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(t)))
}

// field is a field read from the Go value by a getter.
func field[T any](t graphql.Output, desc string, get func(T) any) *graphql.Field {
	return &graphql.Field{Type: t, Description: desc, Resolve: func(p graphql.ResolveParams) (any, error) {
		v, ok := p.Source.(T)
		if !ok {
			return nil, nil
		}
		return get(v), nil
	}}
}

var pageArgs = graphql.FieldConfigArgument{
	"first": &graphql.ArgumentConfig{Type: graphql.Int, Description: "Page size, default 50: 0 (only totalCount) up to the server's cap (100 unless --max-page); outside that range is an INVALID error."},
	"after": &graphql.ArgumentConfig{Type: graphql.String, Description: "Cursor from pageInfo.endCursor (or an edge) of the previous page."},
}

func withArgs(base graphql.FieldConfigArgument, more graphql.FieldConfigArgument) graphql.FieldConfigArgument {
	out := graphql.FieldConfigArgument{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var pageInfoType = graphql.NewObject(graphql.ObjectConfig{
	Name: "PageInfo",
	Fields: graphql.Fields{
		"hasNextPage": field(nonNull(graphql.Boolean), "More items follow this page.", func(c *connection) any { return c.hasNext }),
		"endCursor":   field(graphql.String, "Pass as after to read the next page.", func(c *connection) any { return c.end }),
	},
})

// connectionType makes XConnection and XEdge for a node type; edgeFields, when given, are
// more fields of the edge, resolved from the edge (edge.item is the item it was made from).
func connectionType(name string, node graphql.Output, totalDesc string, edgeFields ...graphql.Fields) *graphql.Object {
	fields := graphql.Fields{
		"cursor": field(nonNull(graphql.String), "Resume after this edge.", func(e edge) any { return e.cursor }),
		"node":   field(nonNull(node), "", func(e edge) any { return e.node }),
	}
	for _, more := range edgeFields {
		for k, f := range more {
			fields[k] = f
		}
	}
	edgeType := graphql.NewObject(graphql.ObjectConfig{Name: name + "Edge", Fields: fields})
	return graphql.NewObject(graphql.ObjectConfig{
		Name: name + "Connection",
		Fields: graphql.Fields{
			"edges": field(listOf(edgeType), "", func(c *connection) any { return c.edges }),
			"nodes": field(listOf(node), "The edges' nodes, for when cursors are not needed.", func(c *connection) any {
				out := make([]any, len(c.edges))
				for i, e := range c.edges {
					out[i] = e.node
				}
				return out
			}),
			"pageInfo": field(nonNull(pageInfoType), "", func(c *connection) any { return c }),
			"totalCount": field(graphql.Int, totalDesc, func(c *connection) any {
				if c.total == nil {
					return nil
				}
				return *c.total
			}),
		},
	})
}

// newSchema builds the schema over svc.
// schemaMu serialises graphql.NewSchema (see newSchema).
var schemaMu sync.Mutex

func newSchema(b *builder) (graphql.Schema, error) {
	b.nodeIface = graphql.NewInterface(graphql.InterfaceConfig{
		Name:        "Node",
		Description: "Anything with a graph id: identity:<slug>, device:<key>, note:<uuid>, tag:<namespace>:<value>, rel:<uuid> or obs:<hash> (a relation), client:<source>:<name>.",
		Fields: graphql.Fields{
			"id": &graphql.Field{Type: nonNull(graphql.ID)},
		},
		ResolveType: func(p graphql.ResolveTypeParams) *graphql.Object {
			switch p.Value.(type) {
			case *graph.Identity:
				return b.identity
			case *graph.DeviceView:
				return b.device
			case *graph.Note:
				return b.note
			case *tagNode:
				return b.tag
			case *graph.Relation:
				return b.rt.relation
			case *graph.Client:
				return b.rt.client
			}
			return nil
		},
	})
	b.buildTypes()
	// graphql-go fills in its shared introspection types on the first schema built:
	// two schemas built at once race on them, so builds take turns.
	schemaMu.Lock()
	defer schemaMu.Unlock()
	return graphql.NewSchema(graphql.SchemaConfig{
		Query:    b.queryType(),
		Mutation: b.mutationType(),
		Types:    []graphql.Type{b.identity, b.device, b.note, b.tag, b.rt.relation, b.rt.client},
	})
}

var fingerprintType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "Fingerprint",
	Description: "(kind, value) evidence. A device shows fingerprints; an identity stores them as hints.",
	Fields: graphql.Fields{
		"kind":  field(nonNull(graphql.String), "usb_serial, mac, robot_serial, usb_id, usb_path, alsa_card_id, alsa_longname, midi_client, pipewire_device.", func(f graph.Fingerprint) any { return string(f.Kind) }),
		"value": field(nonNull(graphql.String), "", func(f graph.Fingerprint) any { return f.Value }),
		"class": field(nonNull(graphql.String), "unit, model, place or name: how the kind counts in a match.", func(f graph.Fingerprint) any { return string(f.Class()) }),
	},
})

var deviceNodeType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "DeviceNode",
	Description: "A /dev node a device provides now, with the stable links that point at it.",
	Fields: graphql.Fields{
		"path":  field(nonNull(graphql.String), "The kernel's name under /dev, e.g. /dev/ttyUSB0.", func(n graph.DeviceNode) any { return n.Path }),
		"kind":  field(nonNull(graphql.String), "tty, snd, video, input or hidraw.", func(n graph.DeviceNode) any { return n.Kind }),
		"links": field(listOf(graphql.String), "Stable links to it: /dev/serial/by-id/…, /dev/snd/by-id/…, by-path …", func(n graph.DeviceNode) any { return nonNilStrings(n.Links) }),
	},
})

var fingerprintInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "FingerprintInput",
	Fields: graphql.InputObjectConfigFieldMap{
		"kind":  &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.String), Description: "e.g. usb_id"},
		"value": &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.String), Description: "e.g. 0582:01a9"},
	},
})

func parseFingerprints(field string, v any) ([]graph.Fingerprint, error) {
	l, _ := v.([]any)
	out := make([]graph.Fingerprint, 0, len(l))
	for _, x := range l {
		m, _ := x.(map[string]any)
		k, _ := m["kind"].(string)
		val, _ := m["value"].(string)
		fp, err := graph.NormalizeFingerprint(graph.FingerprintKind(k), val)
		if err != nil {
			return nil, &resolverError{code: graph.EINVALID, field: field, msg: field + ": " + graph.ErrorMessage(err)}
		}
		out = append(out, fp)
	}
	return out, nil
}

// tagsOf turns a node's tag names into tag nodes (counts filled lazily).
func tagsOf(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = &tagNode{name: n}
	}
	return out
}

// tagCount fills a tag's count from one FindTags call per request.
func (b *builder) tagCount(ctx context.Context, p graphql.ResolveParams, t *tagNode) (*tagNode, error) {
	if t.known {
		return t, nil
	}
	st := stateFrom(p.Context)
	var counts map[string]graph.TagCount
	if st != nil {
		st.mu.Lock()
		defer st.mu.Unlock()
		counts = st.tagCounts
	}
	if counts == nil {
		tcs, err := b.svc.FindTags(ctx, graph.TagFilter{})
		if err != nil {
			return nil, err
		}
		counts = make(map[string]graph.TagCount, len(tcs))
		for _, tc := range tcs {
			counts[tc.Tag] = tc
		}
		if st != nil {
			st.tagCounts = counts
		}
	}
	tc := counts[t.name]
	return &tagNode{name: t.name, count: tc.Count, seeded: tc.Seeded, known: true}, nil
}

func nonNilNodes(n []graph.DeviceNode) []graph.DeviceNode {
	if n == nil {
		return []graph.DeviceNode{}
	}
	return n
}

func viewOf(d *graph.Device) *graph.DeviceView {
	if d == nil {
		return nil
	}
	return &graph.DeviceView{Device: *d, BoundTo: d.IdentityID, BoundBy: boundBy(d.IdentityID)}
}

func boundBy(id string) string {
	if id == "" {
		return ""
	}
	return "explicit"
}

// loadNode finds any node by id (or bare slug / device ref).
func (b *builder) loadNode(ctx context.Context, id string) (any, error) {
	kind := graph.KindOf(id)
	if kind == "" {
		full, err := b.svc.ResolveID(ctx, id)
		if err != nil {
			return nil, err
		}
		id, kind = full, graph.KindOf(full)
	}
	switch kind {
	case graph.KindIdentity:
		return b.svc.FindIdentityByID(ctx, id, graph.IdentityParts{})
	case graph.KindDevice:
		return b.svc.Device(ctx, id)
	case graph.KindTag:
		name, err := graph.NormalizeTag(strings.TrimPrefix(id, "tag:"))
		if err != nil {
			return nil, err
		}
		return &tagNode{name: name}, nil
	case graph.KindNote:
		return b.loadNote(ctx, id)
	case graph.KindRelation, graph.KindObserved:
		return b.svc.FindRelationByID(ctx, id)
	case graph.KindClient:
		return b.svc.Client(ctx, id)
	}
	return nil, graph.FieldErrorf(graph.EINVALID, "id", "%q is not a node id; want identity:<slug>, device:<key>, a device ref such as usb:3-3.2, tag:<namespace>:<value>, rel:<uuid>, obs:<hash> or client:<source>:<name>", truncate(id, 80))
}

// loadNote finds a note by id (the store's key lookup; ENOTFOUND suggests the closest).
func (b *builder) loadNote(ctx context.Context, id string) (*graph.Note, error) {
	return b.svc.FindNoteByID(ctx, id)
}

// loadNodeOrNil is loadNode for links whose far end may be gone (deleted identities).
func (b *builder) loadNodeOrNil(ctx context.Context, id string) (any, error) {
	if id == "" {
		return nil, nil
	}
	n, err := b.loadNode(ctx, id)
	if err != nil {
		if c := graph.ErrorCode(err); c == graph.ENOTFOUND || c == graph.EINVALID {
			return nil, nil
		}
		return nil, err
	}
	return n, nil
}

func (b *builder) identityOrNil(ctx context.Context, id string) (any, error) {
	if id == "" {
		return nil, nil
	}
	ident, err := b.svc.FindIdentityByID(ctx, id, graph.IdentityParts{})
	if graph.ErrorCode(err) == graph.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ident, nil
}

func (b *builder) notesConn(ctx context.Context, p graphql.ResolveParams, target string) (any, error) {
	kind := argString(p, "kind")
	return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]*graph.Note, int, string, error) {
		return b.svc.FindNotes(ctx, graph.NoteFilter{Target: target, Kind: kind, First: n, After: after})
	})
}

func (b *builder) eventsConn(ctx context.Context, p graphql.ResolveParams, f graph.EventFilter) (any, error) {
	unfiltered := f == (graph.EventFilter{})
	return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]*graph.Event, int, string, error) {
		total := -1
		if unfiltered {
			if st, err := b.svc.Stats(ctx); err == nil {
				total = int(st.Events)
			}
		}
		g := f
		g.First, g.After = n, after
		evs, next, err := b.svc.FindEvents(ctx, g)
		return evs, total, next, err
	})
}

var eventFilterArgs = graphql.FieldConfigArgument{
	"action": &graphql.ArgumentConfig{Type: graphql.String, Description: "Action glob, e.g. hint.* or tag.add."},
	"actor":  &graphql.ArgumentConfig{Type: graphql.String, Description: "Actor glob, e.g. mcp:*."},
}

func (b *builder) buildTypes() {
	var (
		noteConnection  *graphql.Object
		eventConnection *graphql.Object
	)
	identityFields := func() graphql.Fields {
		f := graphql.Fields{
			"id":        field(nonNull(graphql.ID), "identity:<slug>", func(i *graph.Identity) any { return i.ID }),
			"slug":      field(nonNull(graphql.String), "", func(i *graph.Identity) any { return strings.TrimPrefix(i.ID, "identity:") }),
			"name":      field(nonNull(graphql.String), "", func(i *graph.Identity) any { return i.Name }),
			"data":      field(JSONScalar, "Free-form JSON object.", func(i *graph.Identity) any { return i.Data }),
			"hints":     field(listOf(fingerprintType), "Fingerprints this identity is recognised by.", func(i *graph.Identity) any { return i.Hints }),
			"createdAt": field(TimeScalar, "", func(i *graph.Identity) any { return i.CreatedAt }),
			"updatedAt": field(TimeScalar, "", func(i *graph.Identity) any { return i.UpdatedAt }),
			"tags": {Type: listOf(b.tag), Resolve: func(p graphql.ResolveParams) (any, error) {
				return tagsOf(p.Source.(*graph.Identity).Tags), nil
			}},
			"notes": {Type: nonNull(noteConnection), Description: "Notes on this identity, newest first.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{"kind": &graphql.ArgumentConfig{Type: graphql.String}}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.notesConn(ctx, p, p.Source.(*graph.Identity).ID)
				})},
			"devices": {Type: listOf(b.device), Description: "Devices bound to this identity, present or remembered, with their match.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					devs, _, _, err := b.svc.Devices(ctx, graph.DeviceFilter{All: true, IdentityID: p.Source.(*graph.Identity).ID, First: graph.MaxPageSize})
					return devs, err
				})},
			"changelog": {Type: nonNull(eventConnection), Description: "Events that targeted this identity, newest first.",
				Args: withArgs(pageArgs, eventFilterArgs),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.eventsConn(ctx, p, graph.EventFilter{Target: p.Source.(*graph.Identity).ID, Action: argString(p, "action"), Actor: argString(p, "actor")})
				})},
		}
		return withFields(f, b.nodeRelationFields(func(src any) string { return src.(*graph.Identity).ID }))
	}
	b.identity = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Identity",
		Description: "The stable name of one physical thing (robots are identities too).",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields:      graphql.FieldsThunk(identityFields),
	})

	candidateType := graphql.NewObject(graphql.ObjectConfig{
		Name: "Candidate",
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"identityId": field(nonNull(graphql.ID), "", func(c graph.Candidate) any { return c.IdentityID }),
				"name":       field(graphql.String, "", func(c graph.Candidate) any { return c.Name }),
				"score":      field(nonNull(graphql.Float), "", func(c graph.Candidate) any { return c.Score }),
				"confidence": field(nonNull(graphql.String), "", func(c graph.Candidate) any { return string(c.Confidence) }),
				"reasons":    field(listOf(matchReasonType), "", func(c graph.Candidate) any { return c.Reasons }),
				"identity": {Type: b.identity, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.identityOrNil(ctx, p.Source.(graph.Candidate).IdentityID)
				})},
			}
		}),
	})
	matchType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "Match",
		Description: "How a device (or a set of fingerprints) reads against the identities.",
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"identityId":  field(graphql.ID, "Best candidate, null when none.", func(m *graph.Match) any { return nilIfEmpty(m.IdentityID) }),
				"name":        field(graphql.String, "", func(m *graph.Match) any { return nilIfEmpty(m.Name) }),
				"score":       field(nonNull(graphql.Float), "In [0, 1].", func(m *graph.Match) any { return m.Score }),
				"confidence":  field(nonNull(graphql.String), "high, medium or low.", func(m *graph.Match) any { return string(m.Confidence) }),
				"ambiguous":   field(nonNull(graphql.Boolean), "Two identities claim the evidence.", func(m *graph.Match) any { return m.Ambiguous }),
				"summary":     field(nonNull(graphql.String), "One sentence.", func(m *graph.Match) any { return m.Summary }),
				"explanation": field(listOf(matchReasonType), "Each hint that counted.", func(m *graph.Match) any { return m.Explanation }),
				"candidates":  field(listOf(candidateType), "", func(m *graph.Match) any { return m.Candidates }),
				"identity": {Type: b.identity, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.identityOrNil(ctx, p.Source.(*graph.Match).IdentityID)
				})},
			}
		}),
	})
	b.device = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Device",
		Description: "One physical piece of hardware as the sources see it, present or remembered.",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return withFields(graphql.Fields{
				"id":           field(nonNull(graphql.ID), "device:<key>", func(d *graph.DeviceView) any { return d.ID }),
				"key":          field(nonNull(graphql.String), "Most stable evidence (serial; else vid:pid + path; …).", func(d *graph.DeviceView) any { return d.Key }),
				"ref":          field(nonNull(graphql.String), "Where it is now (or was last), e.g. usb:3-3.2.", func(d *graph.DeviceView) any { return d.Ref }),
				"aliases":      field(listOf(graphql.String), "Refs it has had.", func(d *graph.DeviceView) any { return nonNilStrings(d.Aliases) }),
				"host":         field(graphql.String, "The machine it is attached to (--host-name); null for a record older than hosts.", func(d *graph.DeviceView) any { return nilIfEmpty(d.Host) }),
				"source":       field(nonNull(graphql.String), "", func(d *graph.DeviceView) any { return d.Source }),
				"sources":      field(listOf(graphql.String), "", func(d *graph.DeviceView) any { return nonNilStrings(d.Sources) }),
				"name":         field(nonNull(graphql.String), "", func(d *graph.DeviceView) any { return d.Name }),
				"fingerprints": field(listOf(fingerprintType), "", func(d *graph.DeviceView) any { return d.Fingerprints }),
				"attrs":        field(JSONScalar, "Manufacturer, product, driver, per-boot numbers…", func(d *graph.DeviceView) any { return d.Attrs }),
				"infra":        field(nonNull(graphql.Boolean), "Hubs and other infrastructure: shown, never bound.", func(d *graph.DeviceView) any { return d.Infra }),
				"present":      field(nonNull(graphql.Boolean), "", func(d *graph.DeviceView) any { return d.Present }),
				"hostOffline": field(nonNull(graphql.Boolean), "True when its host is a fleet host that is not live (its lease expired): the device is remembered as that host last recorded it (present is what it last saw, not unplugged), without nodes or observed relations. Always false on one machine.",
					func(d *graph.DeviceView) any { return d.HostOffline }),
				"nodes": {Type: listOf(deviceNodeType), Description: "The /dev nodes it provides now (live, like present; empty when not present).",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						d := p.Source.(*graph.DeviceView)
						if d.Nodes != nil || !d.Present {
							return nonNilNodes(d.Nodes), nil
						}
						// The service gives every present device a non-nil list; a view
						// loaded from the record (node(id)) has none: ask the service.
						v, err := b.svc.Device(ctx, d.ID)
						if err != nil {
							return nil, err
						}
						return nonNilNodes(v.Nodes), nil
					})},
				"firstSeen": field(TimeScalar, "", func(d *graph.DeviceView) any { return d.FirstSeen }),
				"lastSeen":  field(TimeScalar, "", func(d *graph.DeviceView) any { return d.LastSeen }),
				"boundBy":   field(graphql.String, "explicit (bind) or match (high, unambiguous); null when unbound.", func(d *graph.DeviceView) any { return nilIfEmpty(d.BoundBy) }),
				"identity": {Type: b.identity, Description: "The identity it is bound to (explicitly, or by a high unambiguous match).",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						d := p.Source.(*graph.DeviceView)
						id := d.BoundTo
						if id == "" {
							id = d.IdentityID
						}
						return b.identityOrNil(ctx, id)
					})},
				"match": {Type: matchType, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					d := p.Source.(*graph.DeviceView)
					if d.Match != nil {
						return d.Match, nil
					}
					v, err := b.svc.Device(ctx, d.ID)
					if err != nil || v.Match == nil {
						return nil, err
					}
					return v.Match, nil
				})},
				"tags": {Type: listOf(b.tag), Resolve: func(p graphql.ResolveParams) (any, error) {
					return tagsOf(p.Source.(*graph.DeviceView).Tags), nil
				}},
				"notes": {Type: nonNull(noteConnection), Args: withArgs(pageArgs, graphql.FieldConfigArgument{"kind": &graphql.ArgumentConfig{Type: graphql.String}}),
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						return b.notesConn(ctx, p, p.Source.(*graph.DeviceView).ID)
					})},
				"changelog": {Type: nonNull(eventConnection), Args: withArgs(pageArgs, eventFilterArgs),
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						return b.eventsConn(ctx, p, graph.EventFilter{Target: p.Source.(*graph.DeviceView).ID, Action: argString(p, "action"), Actor: argString(p, "actor")})
					})},
			}, b.nodeRelationFields(func(src any) string { return src.(*graph.DeviceView).ID }))
		}),
	})

	var nodeConnection *graphql.Object
	b.tag = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Tag",
		Description: "namespace:value, e.g. role:synth.",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"id":        field(nonNull(graphql.ID), "tag:<namespace>:<value>", func(t *tagNode) any { return "tag:" + t.name }),
				"name":      field(nonNull(graphql.String), "namespace:value", func(t *tagNode) any { return t.name }),
				"namespace": field(nonNull(graphql.String), "", func(t *tagNode) any { ns, _, _ := strings.Cut(t.name, ":"); return ns }),
				"value":     field(nonNull(graphql.String), "", func(t *tagNode) any { _, v, _ := strings.Cut(t.name, ":"); return v }),
				"count": {Type: nonNull(graphql.Int), Description: "Nodes carrying it.", Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					t, err := b.tagCount(ctx, p, p.Source.(*tagNode))
					if err != nil {
						return nil, err
					}
					return t.count, nil
				})},
				"seeded": {Type: nonNull(graphql.Boolean), Description: "Part of the seeded vocabulary.", Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					t, err := b.tagCount(ctx, p, p.Source.(*tagNode))
					if err != nil {
						return nil, err
					}
					return t.seeded, nil
				})},
				"nodes": {Type: nonNull(nodeConnection), Args: pageArgs, Description: "Identities and devices carrying it.",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						tag := p.Source.(*tagNode).name
						return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]any, int, string, error) {
							ids, total, next, err := b.svc.FindTagged(ctx, tag, n, after)
							if err != nil {
								return nil, 0, "", err
							}
							out := make([]any, 0, len(ids))
							for _, id := range ids {
								node, err := b.loadNodeOrNil(ctx, id)
								if err != nil {
									return nil, 0, "", err
								}
								if node != nil {
									out = append(out, node)
								}
							}
							return out, total, next, nil
						})
					})},
			}
		}),
	})
	nodeConnection = connectionType("Node", b.nodeIface, "Nodes in the whole list.")

	b.note = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Note",
		Description: "A message on an identity, device or robot.",
		Interfaces:  []*graphql.Interface{b.nodeIface},
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return graphql.Fields{
				"id":       field(nonNull(graphql.ID), "note:<uuid>", func(n *graph.Note) any { return n.ID }),
				"targetId": field(nonNull(graphql.ID), "", func(n *graph.Note) any { return n.Target }),
				"kind":     field(nonNull(graphql.String), "info, success, warning or danger.", func(n *graph.Note) any { return n.Kind }),
				"body":     field(nonNull(graphql.String), "Markdown.", func(n *graph.Note) any { return n.Body }),
				"author":   field(nonNull(graphql.String), "The actor who wrote it.", func(n *graph.Note) any { return n.Author }),
				"time":     field(TimeScalar, "", func(n *graph.Note) any { return n.Time }),
				"target": {Type: b.nodeIface, Description: "The node it is on (null when that is gone).",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						return b.loadNodeOrNil(ctx, p.Source.(*graph.Note).Target)
					})},
			}
		}),
	})
	noteConnection = connectionType("Note", b.note, "Notes in the whole list.")

	b.event = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Event",
		Description: "One changelog entry: one node changed.",
		Fields: graphql.Fields{
			"seq":       field(nonNull(Int64Scalar), "Monotonic sequence number.", func(e *graph.Event) any { return e.Seq }),
			"id":        field(nonNull(graphql.ID), "uuidv7", func(e *graph.Event) any { return e.ID }),
			"time":      field(TimeScalar, "", func(e *graph.Event) any { return e.Time }),
			"actor":     field(nonNull(graphql.String), "cli:<user>, mcp:<client>, http:<token>, discovery:<source>, robot:<id>.", func(e *graph.Event) any { return e.Actor }),
			"action":    field(nonNull(graphql.String), "<kind>.<verb>, e.g. tag.add.", func(e *graph.Event) any { return e.Action }),
			"targetId":  field(nonNull(graphql.ID), "", func(e *graph.Event) any { return e.Target }),
			"before":    field(JSONScalar, "The node before (absent on create).", func(e *graph.Event) any { return e.Before }),
			"after":     field(JSONScalar, "The node after (absent on delete).", func(e *graph.Event) any { return e.After }),
			"message":   field(graphql.String, "Why, when given.", func(e *graph.Event) any { return nilIfEmpty(e.Message) }),
			"requestId": field(nonNull(graphql.String), "Shared by every event of one request.", func(e *graph.Event) any { return e.RequestID }),
			"prevHash":  field(nonNull(graphql.String), "", func(e *graph.Event) any { return e.PrevHash }),
			"hash":      field(nonNull(graphql.String), "", func(e *graph.Event) any { return e.Hash }),
			"target": {Type: b.nodeIface, Description: "The node it changed, when it still exists.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.loadNodeOrNil(ctx, p.Source.(*graph.Event).Target)
				})},
		},
	})
	eventConnection = connectionType("Event", b.event, "Events in the whole log (null when a filter is set: not cheap).")
	b.rt.eventConn = eventConnection
	b.buildRelationTypes()

	b.robot = graphql.NewObject(graphql.ObjectConfig{
		Name:        "Robot",
		Description: "An identity whose device accepts commands.",
		Fields: graphql.FieldsThunk(func() graphql.Fields {
			return withFields(graphql.Fields{
				"ref":        field(nonNull(graphql.String), "robot:<name>", func(r *graph.RobotState) any { return r.Ref }),
				"host":       field(graphql.String, "The machine that drives it (--host-name).", func(r *graph.RobotState) any { return nilIfEmpty(r.Host) }),
				"deviceId":   field(graphql.ID, "", func(r *graph.RobotState) any { return nilIfEmpty(r.DeviceID) }),
				"identityId": field(graphql.ID, "", func(r *graph.RobotState) any { return nilIfEmpty(r.IdentityID) }),
				"name":       field(nonNull(graphql.String), "", func(r *graph.RobotState) any { return r.Name }),
				"serial":     field(nonNull(graphql.String), "", func(r *graph.RobotState) any { return r.Serial }),
				"pose":       field(nonNull(poseType), "", func(r *graph.RobotState) any { return r.Pose }),
				"state":      field(nonNull(graphql.String), "idle, navigating, sensing, manipulating, stopped or error.", func(r *graph.RobotState) any { return r.State }),
				"battery":    field(nonNull(graphql.Float), "%", func(r *graph.RobotState) any { return r.Battery }),
				"armed":      field(nonNull(graphql.Boolean), "", func(r *graph.RobotState) any { return r.Armed }),
				"gripper":    field(nonNull(graphql.String), "open or closed.", func(r *graph.RobotState) any { return r.Gripper }),
				"holding":    field(graphql.String, "Object id.", func(r *graph.RobotState) any { return nilIfEmpty(r.Holding) }),
				"goal": field(pointType, "", func(r *graph.RobotState) any {
					if r.Goal == nil {
						return nil
					}
					return *r.Goal
				}),
				"params": field(nonNull(robotParamsType), "", func(r *graph.RobotState) any { return r.Params }),
				"identity": {Type: b.identity, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.identityOrNil(ctx, p.Source.(*graph.RobotState).IdentityID)
				})},
				"device": {Type: b.device, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					r := p.Source.(*graph.RobotState)
					id := r.DeviceID
					if id == "" {
						id = r.Ref
					}
					d, err := b.svc.Device(ctx, id)
					if graph.ErrorCode(err) == graph.ENOTFOUND {
						return nil, nil
					}
					return d, err
				})},
				"detect": {Type: listOf(detectedType), Description: "Objects its sensors report now.",
					Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
						return b.svc.RobotDetect(ctx, p.Source.(*graph.RobotState).Ref)
					})},
			}, b.nodeRelationFields(robotNode))
		}),
	})
}

// withFields adds more fields to f.
func withFields(f graphql.Fields, more graphql.Fields) graphql.Fields {
	for k, v := range more {
		f[k] = v
	}
	return f
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

var matchReasonType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "MatchReason",
	Description: "One line of a match's explanation.",
	Fields: graphql.Fields{
		"kind":   field(nonNull(graphql.String), "", func(r graph.MatchReason) any { return string(r.Kind) }),
		"value":  field(nonNull(graphql.String), "", func(r graph.MatchReason) any { return r.Value }),
		"class":  field(nonNull(graphql.String), "", func(r graph.MatchReason) any { return string(r.Class) }),
		"weight": field(nonNull(graphql.Float), "How much it counted.", func(r graph.MatchReason) any { return r.Weight }),
		"note":   field(nonNull(graphql.String), "Why, in words.", func(r graph.MatchReason) any { return r.Note }),
	},
})

var poseType = graphql.NewObject(graphql.ObjectConfig{
	Name: "Pose",
	Fields: graphql.Fields{
		"x":       field(nonNull(graphql.Float), "metres", func(p graph.Pose) any { return p.X }),
		"y":       field(nonNull(graphql.Float), "metres", func(p graph.Pose) any { return p.Y }),
		"heading": field(nonNull(graphql.Float), "radians", func(p graph.Pose) any { return p.Heading }),
	},
})

var pointType = graphql.NewObject(graphql.ObjectConfig{
	Name: "Point",
	Fields: graphql.Fields{
		"x": field(nonNull(graphql.Float), "metres", func(p graph.Point) any { return p.X }),
		"y": field(nonNull(graphql.Float), "metres", func(p graph.Point) any { return p.Y }),
	},
})

var robotParamsType = graphql.NewObject(graphql.ObjectConfig{
	Name: "RobotParams",
	Fields: graphql.Fields{
		"maxSpeed":         field(nonNull(graphql.Float), "m/s", func(p graph.RobotParams) any { return p.MaxSpeed }),
		"maxTurnRate":      field(nonNull(graphql.Float), "rad/s", func(p graph.RobotParams) any { return p.MaxTurnRate }),
		"maxAccel":         field(nonNull(graphql.Float), "m/s²", func(p graph.RobotParams) any { return p.MaxAccel }),
		"arrivalThreshold": field(nonNull(graphql.Float), "m", func(p graph.RobotParams) any { return p.ArrivalThreshold }),
		"lowBattery":       field(nonNull(graphql.Float), "%", func(p graph.RobotParams) any { return p.LowBattery }),
		"detectRange":      field(nonNull(graphql.Float), "m", func(p graph.RobotParams) any { return p.DetectRange }),
		"graspReach":       field(nonNull(graphql.Float), "m", func(p graph.RobotParams) any { return p.GraspReach }),
		"geofence":         field(listOf(pointType), "", func(p graph.RobotParams) any { return p.Geofence }),
	},
})

var detectedType = graphql.NewObject(graphql.ObjectConfig{
	Name: "DetectedObject",
	Fields: graphql.Fields{
		"id":       field(nonNull(graphql.String), "", func(o graph.DetectedObject) any { return o.ID }),
		"kind":     field(nonNull(graphql.String), "", func(o graph.DetectedObject) any { return o.Kind }),
		"x":        field(nonNull(graphql.Float), "", func(o graph.DetectedObject) any { return o.X }),
		"y":        field(nonNull(graphql.Float), "", func(o graph.DetectedObject) any { return o.Y }),
		"distance": field(nonNull(graphql.Float), "m", func(o graph.DetectedObject) any { return o.Distance }),
		"bearing":  field(nonNull(graphql.Float), "radians, relative to heading", func(o graph.DetectedObject) any { return o.Bearing }),
	},
})

var navResultType = graphql.NewObject(graphql.ObjectConfig{
	Name: "NavResult",
	Fields: graphql.Fields{
		"status":            field(nonNull(graphql.String), "arrived, timeout, cancelled, blocked, geofence, low_battery, disarmed or preempted.", func(r *graph.NavResult) any { return r.Status }),
		"pose":              field(nonNull(poseType), "", func(r *graph.NavResult) any { return r.Pose }),
		"distanceRemaining": field(nonNull(graphql.Float), "m", func(r *graph.NavResult) any { return r.DistanceRemaining }),
		"elapsedS":          field(nonNull(graphql.Float), "", func(r *graph.NavResult) any { return r.ElapsedS }),
		"battery":           field(nonNull(graphql.Float), "%", func(r *graph.NavResult) any { return r.Battery }),
		"message":           field(graphql.String, "", func(r *graph.NavResult) any { return nilIfEmpty(r.Message) }),
	},
})

var fleetHostType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "Host",
	Description: "A host of a fleet (an etcd store): live, or named by devices the graph remembers.",
	Fields: graphql.Fields{
		"name":   field(nonNull(graphql.String), "Its host name (--host-name).", func(h graph.FleetHost) any { return h.Name }),
		"online": field(nonNull(graphql.Boolean), "True while its claim is live (its front end holds its lease); an offline host's devices are remembered, not unplugged.", func(h graph.FleetHost) any { return h.Online }),
		"since": field(TimeScalar, "When it claimed its name (online hosts).", func(h graph.FleetHost) any {
			if h.Since.IsZero() {
				return nil
			}
			return h.Since
		}),
		"version": field(graphql.String, "Its devgraph's version (online hosts).", func(h graph.FleetHost) any { return nilIfEmpty(h.Version) }),
		"schema": field(graphql.Int, "The schema version its devgraph writes (online hosts).", func(h graph.FleetHost) any {
			if h.Schema == 0 {
				return nil
			}
			return h.Schema
		}),
		"devices": field(nonNull(graphql.Int), "Devices the graph holds of it, present or remembered.", func(h graph.FleetHost) any { return h.Devices }),
	},
})

var sourceStatusType = graphql.NewObject(graphql.ObjectConfig{
	Name: "SourceStatus",
	Fields: graphql.Fields{
		"name":       field(nonNull(graphql.String), "usb, alsa, pipewire, robot", func(s graph.SourceStatus) any { return s.Name }),
		"ok":         field(nonNull(graphql.Boolean), "", func(s graph.SourceStatus) any { return s.OK }),
		"error":      field(graphql.String, "Why not, in words.", func(s graph.SourceStatus) any { return nilIfEmpty(s.Error) }),
		"devices":    field(nonNull(graphql.Int), "", func(s graph.SourceStatus) any { return s.Devices }),
		"durationMs": field(nonNull(graphql.Float), "", func(s graph.SourceStatus) any { return float64(s.Duration.Microseconds()) / 1000 }),
		"root":       field(graphql.String, "Where it reads from.", func(s graph.SourceStatus) any { return nilIfEmpty(s.Root) }),
	},
})

var statsType = graphql.NewObject(graphql.ObjectConfig{
	Name: "Stats",
	Fields: graphql.Fields{
		"identities":    field(nonNull(graphql.Int), "", func(s *graph.Stats) any { return s.Identities }),
		"devices":       field(nonNull(graphql.Int), "", func(s *graph.Stats) any { return s.Devices }),
		"notes":         field(nonNull(graphql.Int), "", func(s *graph.Stats) any { return s.Notes }),
		"relations":     field(nonNull(graphql.Int), "Declared relations (observed ones are live: relations(filter: {observed: true}) counts them).", func(s *graph.Stats) any { return s.Relations }),
		"events":        field(nonNull(Int64Scalar), "", func(s *graph.Stats) any { return s.Events }),
		"schemaVersion": field(nonNull(graphql.Int), "", func(s *graph.Stats) any { return s.SchemaVersion }),
		"fileBytes":     field(nonNull(Int64Scalar), "", func(s *graph.Stats) any { return s.FileBytes }),
	},
})

var verifyType = graphql.NewObject(graphql.ObjectConfig{
	Name: "VerifyReport",
	Fields: graphql.Fields{
		"ok":         field(nonNull(graphql.Boolean), "", func(v *graph.VerifyReport) any { return v.OK }),
		"checked":    field(nonNull(Int64Scalar), "", func(v *graph.VerifyReport) any { return v.Checked }),
		"firstSeq":   field(nonNull(Int64Scalar), "", func(v *graph.VerifyReport) any { return v.FirstSeq }),
		"headSeq":    field(nonNull(Int64Scalar), "", func(v *graph.VerifyReport) any { return v.HeadSeq }),
		"headHash":   field(nonNull(graphql.String), "", func(v *graph.VerifyReport) any { return v.HeadHash }),
		"brokenSeq":  field(Int64Scalar, "First broken event.", func(v *graph.VerifyReport) any { return optSeq(v.BrokenSeq, v.OK) }),
		"brokenId":   field(graphql.String, "", func(v *graph.VerifyReport) any { return nilIfEmpty(v.BrokenID) }),
		"problem":    field(graphql.String, "", func(v *graph.VerifyReport) any { return nilIfEmpty(v.Problem) }),
		"checkpoint": field(graphql.String, "After a prune, <seq>:<hash> of the last dropped event: the retained chain begins after it.", func(v *graph.VerifyReport) any { return nilIfEmpty(v.Checkpoint) }),
		"prunedBy": field(pruneReportType, "The last prune (who, when, which events); null when never pruned or when no changelog.prune event records it.", func(v *graph.VerifyReport) any {
			if v.PrunedBy == nil {
				return nil
			}
			return v.PrunedBy
		}),
	},
})

var pruneReportType = graphql.NewObject(graphql.ObjectConfig{
	Name:        "PruneReport",
	Description: "A prune of the changelog, as its changelog.prune event records it.",
	Fields: graphql.Fields{
		"eventSeq":   field(nonNull(Int64Scalar), "The changelog.prune event.", func(p *graph.PruneReport) any { return p.EventSeq }),
		"actor":      field(nonNull(graphql.String), "Who pruned.", func(p *graph.PruneReport) any { return p.Actor }),
		"time":       field(nonNull(TimeScalar), "When.", func(p *graph.PruneReport) any { return p.Time }),
		"firstSeq":   field(nonNull(Int64Scalar), "The first event dropped.", func(p *graph.PruneReport) any { return p.FirstSeq }),
		"lastSeq":    field(nonNull(Int64Scalar), "The last event dropped: the checkpoint.", func(p *graph.PruneReport) any { return p.LastSeq }),
		"checkpoint": field(nonNull(graphql.String), "The last dropped event's hash: the head at the cut.", func(p *graph.PruneReport) any { return p.Checkpoint }),
		"dropped":    field(nonNull(graphql.Int), "", func(p *graph.PruneReport) any { return p.Dropped }),
		"before":     field(nonNull(TimeScalar), "Events older than this were dropped.", func(p *graph.PruneReport) any { return p.Before }),
	},
})

func optSeq(n uint64, ok bool) any {
	if ok {
		return nil
	}
	return n
}

// sortedTags orders tag counts by namespace then value.
func sortedTags(tcs []graph.TagCount) []any {
	sort.Slice(tcs, func(i, j int) bool { return tcs[i].Tag < tcs[j].Tag })
	out := make([]any, len(tcs))
	for i, tc := range tcs {
		out[i] = &tagNode{name: tc.Tag, count: tc.Count, seeded: tc.Seeded, known: true}
	}
	return out
}

func nonNilInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}
