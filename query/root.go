package query

import (
	"context"
	"fmt"

	"github.com/graphql-go/graphql"

	"github.com/devgraph/devgraph/graph"
)

var identityFilterInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "IdentityFilter",
	Fields: graphql.InputObjectConfigFieldMap{
		"ids":  &graphql.InputObjectFieldConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.ID)), Description: "Only these ids."},
		"name": &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "Case-insensitive prefix of the name (fuzzy search: find)."},
		"tags": &graphql.InputObjectFieldConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Carrying all of these tags."},
		"hint": &graphql.InputObjectFieldConfig{Type: fingerprintInput, Description: "Holding this hint."},
	},
})

var deviceFilterInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "DeviceFilter",
	Fields: graphql.InputObjectConfigFieldMap{
		"all":      &graphql.InputObjectFieldConfig{Type: graphql.Boolean, Description: "Include remembered devices that are not present."},
		"source":   &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "usb, alsa, pipewire or robot."},
		"identity": &graphql.InputObjectFieldConfig{Type: graphql.ID, Description: "Bound to this identity."},
		"tags":     &graphql.InputObjectFieldConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String)), Description: "Carrying all of these tags."},
	},
})

var eventFilterInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "EventFilter",
	Fields: graphql.InputObjectConfigFieldMap{
		"since":  &graphql.InputObjectFieldConfig{Type: TimeScalar, Description: "RFC 3339 or a duration ago (24h)."},
		"until":  &graphql.InputObjectFieldConfig{Type: TimeScalar},
		"target": &graphql.InputObjectFieldConfig{Type: graphql.ID, Description: "Node id."},
		"actor":  &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "Glob, e.g. mcp:*."},
		"action": &graphql.InputObjectFieldConfig{Type: graphql.String, Description: "Glob, e.g. hint.*."},
	},
})

func (b *builder) queryType() *graphql.Object {
	identityConnection := connectionType("Identity", b.identity, "Identities matching the filter.")
	deviceConnection := connectionType("Device", b.device, "Devices matching the filter.")
	robotConnection := connectionType("Robot", b.robot, "Robots connected.")
	tagConnection := connectionType("Tag", b.tag, "Tags listed.")
	hit := func(get func(h *findHit) any) func(e edge) any {
		return func(e edge) any {
			h, _ := e.item.(*findHit)
			if h == nil {
				return nil
			}
			return get(h)
		}
	}
	findConnection := connectionType("Find", b.nodeIface, fmt.Sprintf("Hits in all pages (find reads at most %d: that many means at least that many).", graph.MaxPageSize), graphql.Fields{
		"kind":    field(nonNull(graphql.String), "identity, device or robot.", hit(func(h *findHit) any { return h.hit.Kind })),
		"name":    field(nonNull(graphql.String), "The name that matched.", hit(func(h *findHit) any { return h.hit.Name })),
		"score":   field(nonNull(graphql.Float), "Fuzzy score; higher is better (it grows fast with runs of adjacent matches).", hit(func(h *findHit) any { return float64(h.hit.Score) })),
		"matched": field(listOf(graphql.Int), "Byte offsets of the name that matched the text.", hit(func(h *findHit) any { return nonNilInts(h.hit.Matched) })),
	})
	idArg := graphql.FieldConfigArgument{"id": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.ID), Description: "Full id, bare slug or device ref."}}

	return graphql.NewObject(graphql.ObjectConfig{
		Name: "Query",
		Fields: withFields(graphql.Fields{
			"node": {Type: b.nodeIface, Args: idArg, Description: "Any node by id: identity:<slug>, device:<key>, a device ref (usb:3-3.2), tag:<ns>:<value>.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.loadNode(ctx, argString(p, "id"))
				})},
			"identity": {Type: b.identity, Args: idArg, Description: "One identity (identity:<slug> or the bare slug).",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.svc.FindIdentityByID(ctx, argString(p, "id"), graph.IdentityParts{})
				})},
			"identities": {Type: nonNull(identityConnection), Description: "Identities sorted by id.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{"filter": &graphql.ArgumentConfig{Type: identityFilterInput}}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					f, err := identityFilter(p.Args["filter"])
					if err != nil {
						return nil, err
					}
					return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]*graph.Identity, int, string, error) {
						g := f
						g.First, g.After = n, after
						return b.svc.FindIdentities(ctx, g)
					})
				})},
			"device": {Type: b.device, Args: idArg, Description: "One device by id, key or ref, with its match.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.svc.Device(ctx, argString(p, "id"))
				})},
			"devices": {Type: nonNull(deviceConnection), Description: "Devices with their match: present ones, or all remembered with filter.all.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{"filter": &graphql.ArgumentConfig{Type: deviceFilterInput}}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					f := deviceFilter(p.Args["filter"])
					return pageList(ctx, b, p, graph.DefaultPageSize, func(ctx context.Context, after string, n int) ([]*graph.DeviceView, int, string, error) {
						g := f
						g.First, g.After = n, after
						return b.svc.Devices(ctx, g)
					})
				})},
			"robots": {Type: nonNull(robotConnection), Args: pageArgs, Description: "Robots connected, by ref.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					rs, err := b.svc.Robots(ctx)
					if err != nil {
						return nil, err
					}
					return pageList(ctx, b, p, graph.DefaultPageSize, sliceFetch(rs))
				})},
			"robot": {Type: b.robot, Args: idArg, Description: "A robot by identity, device id or ref (robot:<name>).",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.svc.Robot(ctx, argString(p, "id"))
				})},
			"tags": {Type: nonNull(tagConnection), Description: "Tags in use with their counts, plus the seeded vocabulary unless inUse, by name.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{
					"namespace": &graphql.ArgumentConfig{Type: graphql.String, Description: "e.g. role"},
					"inUse":     &graphql.ArgumentConfig{Type: graphql.Boolean, Description: "Only tags on at least one node."},
				}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					inUse, _ := p.Args["inUse"].(bool)
					tcs, err := b.svc.FindTags(ctx, graph.TagFilter{Namespace: argString(p, "namespace"), InUse: inUse})
					if err != nil {
						return nil, err
					}
					return pageList(ctx, b, p, graph.DefaultPageSize, sliceFetch(sortedTags(tcs)))
				})},
			"notes": {Type: nonNull(b.noteConnection()), Description: "Notes newest first, on one target or everywhere.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{
					"target": &graphql.ArgumentConfig{Type: graphql.ID, Description: "Node id or device ref."},
					"kind":   &graphql.ArgumentConfig{Type: graphql.String, Description: "info, success, warning or danger."},
				}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.notesConn(ctx, p, argString(p, "target"))
				})},
			"changelog": {Type: nonNull(b.eventConnection()), Description: "The audit changelog, newest first.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{"filter": &graphql.ArgumentConfig{Type: eventFilterInput}}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					f, err := eventFilter(p.Args["filter"])
					if err != nil {
						return nil, err
					}
					if f.Target != "" {
						// As the CLI and MCP do: a slug or ref names its node, a typo is
						// NOT_FOUND with a suggestion, and a deleted node's id still has
						// its history.
						id, err := b.svc.ResolveID(ctx, f.Target)
						if err != nil {
							if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(f.Target) == "" {
								return nil, err
							}
							id = f.Target
						}
						f.Target = id
					}
					return b.eventsConn(ctx, p, f)
				})},
			"unbound": {Type: nonNull(deviceConnection), Args: pageArgs, Description: "Present devices without a binding or a high, unambiguous match, with their best candidate.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					devs, err := b.svc.Unbound(ctx)
					if err != nil {
						return nil, err
					}
					return pageList(ctx, b, p, graph.DefaultPageSize, sliceFetch(devs))
				})},
			"find": {Type: nonNull(findConnection), Description: "Fuzzy search over identity and device names, best first; tags (all of them) and kind narrow it. Each edge carries the hit's score and matched positions.",
				Args: withArgs(pageArgs, graphql.FieldConfigArgument{
					"text":  &graphql.ArgumentConfig{Type: graphql.String, Description: "Letters of the name in order, e.g. jdxi."},
					"tags":  &graphql.ArgumentConfig{Type: graphql.NewList(graphql.NewNonNull(graphql.String))},
					"kind":  &graphql.ArgumentConfig{Type: graphql.String, Description: "identity, device or robot."},
					"first": &graphql.ArgumentConfig{Type: graphql.Int, Description: "Page size, default 20: 0 (only totalCount) up to the server's cap; outside that range is an INVALID error."},
				}),
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					// Finder ranks at most graph.MaxPageSize hits; pages are slices of them, and a
					// hit's node is read only when its page is.
					hits, err := b.finder.Find(ctx, graph.FindQuery{Text: argString(p, "text"), Tags: argStrings(p.Args["tags"]), Kind: argString(p, "kind"), First: graph.MaxPageSize})
					if err != nil {
						return nil, err
					}
					all := sliceFetch(hits)
					return pageList(ctx, b, p, 20, func(ctx context.Context, after string, n int) ([]*findHit, int, string, error) {
						page, total, next, err := all(ctx, after, n)
						if err != nil {
							return nil, 0, "", err
						}
						out := make([]*findHit, 0, len(page))
						for _, h := range page {
							node, err := b.loadNodeOrNil(ctx, h.ID)
							if err != nil {
								return nil, 0, "", err
							}
							if node != nil {
								out = append(out, &findHit{hit: h, node: node})
							}
						}
						return out, total, next, nil
					})
				})},
			"match": {Type: nonNull(b.matchType()), Description: "How fingerprints read against the identities: score, confidence, explanation.",
				Args: graphql.FieldConfigArgument{"fingerprints": &graphql.ArgumentConfig{Type: graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(fingerprintInput)))}},
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					fps, err := parseFingerprints("fingerprints", p.Args["fingerprints"])
					if err != nil {
						return nil, err
					}
					return b.svc.Match(ctx, fps)
				})},
			"sources": {Type: listOf(sourceStatusType), Description: "Each hardware source: ok or why not.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.svc.Sources(ctx)
				})},
			"hosts": {Type: listOf(fleetHostType), Description: "The fleet's hosts, by name: the live ones and those the graph's devices name while they are not live. Empty on one machine.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					if b.hosts == nil {
						return []graph.FleetHost{}, nil
					}
					return b.hosts.FleetHosts(ctx)
				})},
			"stats": {Type: nonNull(statsType), Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.svc.Stats(ctx)
			})},
			"changelogVerify": {Type: nonNull(verifyType), Description: "Checks the changelog's hash chain; names the first broken event.",
				Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return b.svc.VerifyChangelog(ctx)
				})},
		}, b.relationRootFields()),
	})
}

// noteConnection and eventConnection return the types the node types built.
func (b *builder) noteConnection() graphql.Output {
	return b.identity.Fields()["notes"].Type.(*graphql.NonNull).OfType
}

func (b *builder) eventConnection() graphql.Output {
	return b.identity.Fields()["changelog"].Type.(*graphql.NonNull).OfType
}

func (b *builder) matchType() graphql.Output {
	return b.device.Fields()["match"].Type
}

func identityFilter(v any) (graph.IdentityFilter, error) {
	m, _ := v.(map[string]any)
	var f graph.IdentityFilter
	f.IDs = argStrings(m["ids"])
	f.Name, _ = m["name"].(string)
	f.Tags = argStrings(m["tags"])
	if h, ok := m["hint"]; ok && h != nil {
		fps, err := parseFingerprints("filter.hint", []any{h})
		if err != nil {
			return f, err
		}
		f.Hint = &fps[0]
	}
	return f, nil
}

func deviceFilter(v any) graph.DeviceFilter {
	m, _ := v.(map[string]any)
	var f graph.DeviceFilter
	f.All, _ = m["all"].(bool)
	f.Source, _ = m["source"].(string)
	f.IdentityID, _ = m["identity"].(string)
	f.Tags = argStrings(m["tags"])
	return f
}

func eventFilter(v any) (graph.EventFilter, error) {
	m, _ := v.(map[string]any)
	var f graph.EventFilter
	var err error
	if f.Since, err = timeArg("since", m["since"]); err != nil {
		return f, err
	}
	if f.Until, err = timeArg("until", m["until"]); err != nil {
		return f, err
	}
	f.Target, _ = m["target"].(string)
	f.Actor, _ = m["actor"].(string)
	f.Action, _ = m["action"].(string)
	return f, nil
}
