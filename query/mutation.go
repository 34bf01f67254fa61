package query

import (
	"context"
	"encoding/json"

	"github.com/graphql-go/graphql"

	"github.com/devgraph/devgraph/graph"
)

type deletePayload struct {
	id string
}

type tagPayload struct {
	target string
	tags   []string
}

var deletePayloadType = graphql.NewObject(graphql.ObjectConfig{
	Name: "DeletePayload",
	Fields: graphql.Fields{
		"id":      field(nonNull(graphql.ID), "What was deleted.", func(d *deletePayload) any { return d.id }),
		"deleted": field(nonNull(graphql.Boolean), "", func(d *deletePayload) any { return true }),
	},
})

var prunePayloadType = graphql.NewObject(graphql.ObjectConfig{
	Name: "PrunePayload",
	Fields: graphql.Fields{
		"dropped": field(nonNull(graphql.Int), "Events dropped; the rest stays verifiable from a checkpoint.", func(n int) any { return n }),
	},
})

var robotParamsInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name:        "RobotParamsInput",
	Description: "Parameters to set; omitted ones stay.",
	Fields: graphql.InputObjectConfigFieldMap{
		"maxSpeed":         &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "m/s"},
		"maxTurnRate":      &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "rad/s"},
		"maxAccel":         &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "m/s²"},
		"arrivalThreshold": &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "m"},
		"lowBattery":       &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "%"},
		"detectRange":      &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "m"},
		"graspReach":       &graphql.InputObjectFieldConfig{Type: graphql.Float, Description: "m"},
		"geofence":         &graphql.InputObjectFieldConfig{Type: graphql.NewList(graphql.NewNonNull(pointInput)), Description: "Polygon, at least 3 points."},
	},
})

var pointInput = graphql.NewInputObject(graphql.InputObjectConfig{
	Name: "PointInput",
	Fields: graphql.InputObjectConfigFieldMap{
		"x": &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.Float)},
		"y": &graphql.InputObjectFieldConfig{Type: graphql.NewNonNull(graphql.Float)},
	},
})

// mutate wraps a mutation resolver: the optional message goes into the context (the
// changelog's "why"); the store checks it (graph.ValidateMessage) for every interface.
func (b *builder) mutate(fn func(ctx context.Context, p graphql.ResolveParams) (any, error)) graphql.FieldResolveFn {
	return b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
		if msg, ok := p.Args["message"].(string); ok && msg != "" {
			ctx = graph.WithMessage(ctx, msg)
		}
		return fn(ctx, p)
	})
}

func args(more graphql.FieldConfigArgument) graphql.FieldConfigArgument {
	more["message"] = &graphql.ArgumentConfig{Type: graphql.String, Description: "Why, recorded on the changelog events."}
	return more
}

func req(t graphql.Input, desc string) *graphql.ArgumentConfig {
	return &graphql.ArgumentConfig{Type: graphql.NewNonNull(t), Description: desc}
}

func opt(t graphql.Input, desc string) *graphql.ArgumentConfig {
	return &graphql.ArgumentConfig{Type: t, Description: desc}
}

// dataArg turns a JSON argument into the raw JSON the store keeps.
func dataArg(v any) (*json.RawMessage, error) {
	in, ok := v.(jsonInput)
	if !ok {
		return nil, nil
	}
	if _, isObj := in.v.(map[string]any); !isObj && in.v != nil {
		return nil, invalidArg("data", "data must be a JSON object, e.g. {\"room\": \"studio\"}")
	}
	raw, err := json.Marshal(in.v)
	if err != nil {
		return nil, invalidArg("data", "data is not valid JSON")
	}
	if len(raw) > graph.MaxDataLen {
		return nil, invalidArg("data", "data is %d bytes; at most %d allowed", len(raw), graph.MaxDataLen)
	}
	r := json.RawMessage(raw)
	return &r, nil
}

func (b *builder) robotCmd(desc string, fn func(ctx context.Context, robot string) (*graph.RobotState, error)) *graphql.Field {
	return &graphql.Field{Type: b.robot, Description: desc,
		Args: args(graphql.FieldConfigArgument{"robot": req(graphql.ID, "Identity, device id or ref (robot:<name>).")}),
		Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
			return fn(ctx, argString(p, "robot"))
		})}
}

func (b *builder) mutationType() *graphql.Object {
	bindResultType := graphql.NewObject(graphql.ObjectConfig{
		Name:        "BindResult",
		Description: "What a bind did (or, with dryRun, would do).",
		Fields: graphql.Fields{
			"device":     field(nonNull(b.device), "", func(r *graph.BindResult) any { return viewOf(r.Device) }),
			"identity":   field(b.identity, "", func(r *graph.BindResult) any { return r.Identity }),
			"created":    field(nonNull(graphql.Boolean), "A new identity was made.", func(r *graph.BindResult) any { return r.Created }),
			"hintsAdded": field(listOf(fingerprintType), "", func(r *graph.BindResult) any { return r.HintsAdded }),
			"hintsMoved": field(listOf(fingerprintType), "", func(r *graph.BindResult) any { return r.HintsMoved }),
			"conflicts":  field(listOf(graphql.String), "Dry run: what would fail, in words.", func(r *graph.BindResult) any { return nonNilStrings(r.Conflicts) }),
			"match":      field(b.matchType(), "How the device reads afterwards.", func(r *graph.BindResult) any { return r.Match }),
			"dryRun":     field(nonNull(graphql.Boolean), "", func(r *graph.BindResult) any { return r.DryRun }),
			"alreadyBound": field(nonNull(graphql.Boolean), "The device was bound to this identity already (a retried bind): nothing was written.",
				func(r *graph.BindResult) any { return r.AlreadyBound }),
			"events": field(nonNull(graphql.Int), "Changelog events written.", func(r *graph.BindResult) any { return r.Events }),
		},
	})
	tagPayloadType := graphql.NewObject(graphql.ObjectConfig{
		Name: "TagPayload",
		Fields: graphql.Fields{
			"targetId": field(nonNull(graphql.ID), "", func(t *tagPayload) any { return t.target }),
			"tags":     field(listOf(b.tag), "The node's tags afterwards.", func(t *tagPayload) any { return tagsOf(t.tags) }),
			"target": {Type: b.nodeIface, Resolve: b.resolve(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
				return b.loadNodeOrNil(ctx, p.Source.(*tagPayload).target)
			})},
		},
	})
	fps := graphql.NewNonNull(graphql.NewList(graphql.NewNonNull(fingerprintInput)))
	svc := b.svc

	return graphql.NewObject(graphql.ObjectConfig{
		Name: "Mutation",
		Fields: withFields(graphql.Fields{
			"createIdentity": {Type: b.identity, Description: "Create an identity; the slug is made from the name unless given (CONFLICT when taken).",
				Args: args(graphql.FieldConfigArgument{
					"name":  req(graphql.String, "e.g. Roland JD-Xi"),
					"slug":  opt(graphql.String, "e.g. jdxi"),
					"data":  opt(JSONScalar, "A JSON object."),
					"hints": opt(graphql.NewList(graphql.NewNonNull(fingerprintInput)), ""),
					"tags":  opt(graphql.NewList(graphql.NewNonNull(graphql.String)), "namespace:value"),
				}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					c := graph.IdentityCreate{Name: argString(p, "name"), Slug: argString(p, "slug"), Tags: argStrings(p.Args["tags"])}
					data, err := dataArg(p.Args["data"])
					if err != nil {
						return nil, err
					}
					if data != nil {
						c.Data = *data
					}
					if c.Hints, err = parseFingerprints("hints", p.Args["hints"]); err != nil {
						return nil, err
					}
					return svc.CreateIdentity(ctx, c)
				})},
			"renameIdentity": {Type: b.identity, Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, ""), "name": req(graphql.String, "The new name (the slug stays).")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.RenameIdentity(ctx, argString(p, "id"), argString(p, "name"))
				})},
			"updateIdentity": {Type: b.identity, Description: "Change name and/or replace the data object.",
				Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, ""), "name": opt(graphql.String, ""), "data": opt(JSONScalar, "Replaces the data object.")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					var u graph.IdentityUpdate
					if n, ok := p.Args["name"].(string); ok {
						u.Name = &n
					}
					data, err := dataArg(p.Args["data"])
					if err != nil {
						return nil, err
					}
					u.Data = data
					if u.Name == nil && u.Data == nil {
						return nil, invalidArg("name", "nothing to update; give name and/or data")
					}
					return svc.UpdateIdentity(ctx, argString(p, "id"), u)
				})},
			"deleteIdentity": {Type: nonNull(deletePayloadType), Description: "Delete an identity with its hints, tags, notes and bindings (restoreIdentity brings it back).",
				Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, "")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					id := argString(p, "id")
					if full, err := svc.ResolveID(ctx, id, graph.KindIdentity); err == nil {
						id = full
					}
					if err := svc.DeleteIdentity(ctx, id); err != nil {
						return nil, err
					}
					return &deletePayload{id: id}, nil
				})},
			"mergeIdentities": {Type: b.identity, Description: "Move from's hints, tags, notes and bindings into into, and delete from.",
				Args: args(graphql.FieldConfigArgument{"from": req(graphql.ID, ""), "into": req(graphql.ID, "")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.MergeIdentities(ctx, argString(p, "from"), argString(p, "into"))
				})},
			"restoreIdentity": {Type: b.identity, Description: "Bring back a deleted identity from its last recorded state.",
				Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, "")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.RestoreIdentity(ctx, argString(p, "id"))
				})},
			"addHints": {Type: b.identity, Description: "Add fingerprints as hints; a unit fingerprint another identity holds is a CONFLICT unless move.",
				Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, ""), "hints": req(fps.OfType.(graphql.Input), ""), "move": opt(graphql.Boolean, "Move unit hints held elsewhere.")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					hs, err := parseFingerprints("hints", p.Args["hints"])
					if err != nil {
						return nil, err
					}
					move, _ := p.Args["move"].(bool)
					return svc.AddHints(ctx, argString(p, "id"), hs, move)
				})},
			"removeHints": {Type: b.identity, Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, ""), "hints": req(fps.OfType.(graphql.Input), "")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					hs, err := parseFingerprints("hints", p.Args["hints"])
					if err != nil {
						return nil, err
					}
					return svc.RemoveHints(ctx, argString(p, "id"), hs)
				})},
			"bind": {Type: nonNull(bindResultType), Description: "Bind a device (by ref) to an identity, or to a new one (newName); copies its fingerprints in as hints.",
				Args: args(graphql.FieldConfigArgument{
					"ref":      req(graphql.String, "Device ref or id, e.g. usb:3-3.2."),
					"identity": opt(graphql.ID, "Existing identity."),
					"newName":  opt(graphql.String, "Create an identity with this name instead."),
					"slug":     opt(graphql.String, "Slug for the new identity."),
					"move":     opt(graphql.Boolean, "Move unit hints another identity holds."),
					"force":    opt(graphql.Boolean, "Bind even though the device's model or unit contradicts the identity's hints."),
					"dryRun":   opt(graphql.Boolean, "Report what would change; write nothing."),
				}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					in := graph.BindInput{Ref: argString(p, "ref"), IdentityID: argString(p, "identity"), NewName: argString(p, "newName"), Slug: argString(p, "slug")}
					in.Move, _ = p.Args["move"].(bool)
					in.Force, _ = p.Args["force"].(bool)
					in.DryRun, _ = p.Args["dryRun"].(bool)
					if in.IdentityID == "" && in.NewName == "" {
						return nil, invalidArg("identity", "give exactly one of identity (an existing identity id) or newName (to create one)")
					}
					return svc.Bind(ctx, in)
				})},
			"unbind": {Type: b.device, Args: args(graphql.FieldConfigArgument{"ref": req(graphql.String, "Device ref or id.")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					d, err := svc.Unbind(ctx, argString(p, "ref"))
					return viewOf(d), err
				})},
			"tag": {Type: nonNull(tagPayloadType), Description: "Add and remove tags (namespace:value, normalised) on an identity or device.",
				Args: args(graphql.FieldConfigArgument{
					"target": req(graphql.ID, "Node id or device ref."),
					"add":    opt(graphql.NewList(graphql.NewNonNull(graphql.String)), "e.g. role:synth"),
					"remove": opt(graphql.NewList(graphql.NewNonNull(graphql.String)), ""),
				}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					target := argString(p, "target")
					if full, err := svc.ResolveID(ctx, target); err == nil {
						target = full
					}
					add, remove := argStrings(p.Args["add"]), argStrings(p.Args["remove"])
					if len(add)+len(remove) == 0 {
						return nil, invalidArg("add", "nothing to do; give add and/or remove, e.g. add: [\"role:synth\"]")
					}
					tags, err := svc.UpdateTags(ctx, target, add, remove)
					if err != nil {
						return nil, err
					}
					return &tagPayload{target: target, tags: tags}, nil
				})},
			"addNote": {Type: b.note, Description: "Leave a note (markdown ≤ 16 KiB) on an identity, device or robot.",
				Args: args(graphql.FieldConfigArgument{
					"target": req(graphql.ID, "Node id or device ref."),
					"body":   req(graphql.String, "Markdown."),
					"kind":   opt(graphql.String, "info (default), success, warning or danger."),
				}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.AddNote(ctx, graph.NoteCreate{Target: argString(p, "target"), Body: argString(p, "body"), Kind: argString(p, "kind")})
				})},
			"deleteNote": {Type: nonNull(deletePayloadType), Args: args(graphql.FieldConfigArgument{"id": req(graphql.ID, "note:<uuid>")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					if err := svc.DeleteNote(ctx, argString(p, "id")); err != nil {
						return nil, err
					}
					return &deletePayload{id: argString(p, "id")}, nil
				})},
			"robotArm":     b.robotCmd("Arm a robot (motion needs it).", svc.RobotArm),
			"robotDisarm":  b.robotCmd("Disarm a robot.", svc.RobotDisarm),
			"robotStop":    b.robotCmd("E-stop: stops at once; needs re-arming.", svc.RobotStop),
			"robotRelease": b.robotCmd("Open the gripper and drop what it holds.", svc.RobotRelease),
			"robotGrasp": {Type: b.robot, Description: "Pick up an object within reach.",
				Args: args(graphql.FieldConfigArgument{"robot": req(graphql.ID, ""), "object": req(graphql.String, "Object id from detect.")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.RobotGrasp(ctx, argString(p, "robot"), argString(p, "object"))
				})},
			"robotNavigate": {Type: nonNull(navResultType), Description: "Drive to (x, y) in metres; returns when it arrives or why it did not.",
				Args: args(graphql.FieldConfigArgument{
					"robot":    req(graphql.ID, ""),
					"x":        req(graphql.Float, "metres"),
					"y":        req(graphql.Float, "metres"),
					"timeoutS": opt(graphql.Float, "Seconds; default below the request time limit."),
				}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					g := graph.Goal{}
					g.X, _ = p.Args["x"].(float64)
					g.Y, _ = p.Args["y"].(float64)
					g.TimeoutS, _ = p.Args["timeoutS"].(float64)
					// The service checks the goal (graph.ValidateGoal) and the robot its range.
					return svc.RobotNavigate(ctx, argString(p, "robot"), g, nil)
				})},
			"robotSetParameters": {Type: b.robot, Description: "Set parameters (validated: ranges, units).",
				Args: args(graphql.FieldConfigArgument{"robot": req(graphql.ID, ""), "params": req(robotParamsInput, "")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					return svc.RobotSetParameters(ctx, argString(p, "robot"), robotParams(p.Args["params"]))
				})},
			"pruneChangelog": {Type: nonNull(prunePayloadType), Description: "Drop events older than before (a past time), keeping the rest verifiable from a checkpoint; records a changelog.prune event. Over HTTP it needs a token marked prune in the server's token file (FORBIDDEN otherwise).",
				Args: args(graphql.FieldConfigArgument{"before": req(TimeScalar, "RFC 3339 or a duration ago, e.g. 720h.")}),
				Resolve: b.mutate(func(ctx context.Context, p graphql.ResolveParams) (any, error) {
					before, err := timeArg("before", p.Args["before"])
					if err != nil {
						return nil, err
					}
					return svc.PruneChangelog(ctx, before)
				})},
		}, b.relationMutationFields()),
	})
}

func robotParams(v any) graph.RobotParamsUpdate {
	m, _ := v.(map[string]any)
	var u graph.RobotParamsUpdate
	f := func(k string) *float64 {
		if x, ok := m[k].(float64); ok {
			return &x
		}
		return nil
	}
	u.MaxSpeed, u.MaxTurnRate, u.MaxAccel = f("maxSpeed"), f("maxTurnRate"), f("maxAccel")
	u.ArrivalThreshold, u.LowBattery = f("arrivalThreshold"), f("lowBattery")
	u.DetectRange, u.GraspReach = f("detectRange"), f("graspReach")
	if l, ok := m["geofence"].([]any); ok {
		pts := make([]graph.Point, 0, len(l))
		for _, x := range l {
			pm, _ := x.(map[string]any)
			px, _ := pm["x"].(float64)
			py, _ := pm["y"].(float64)
			pts = append(pts, graph.Point{X: px, Y: py})
		}
		u.Geofence = &pts
	}
	return u
}
