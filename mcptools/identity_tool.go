package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// identityActions are graph_identity's actions: every identity and hint write the
// store can do, so each is reachable from MCP as the design requires.
var identityActions = []string{"create", "rename", "update", "delete", "merge", "restore", "hint_add", "hint_remove"}

type identityIn struct {
	Action string   `json:"action" mcp:"required,enum=create|rename|update|delete|merge|restore|hint_add|hint_remove"`
	ID     string   `json:"id" mcp:"max=100"`
	Name   string   `json:"name" mcp:"max=200,svc"`
	Slug   string   `json:"slug" mcp:"max=64,svc"`
	Data   any      `json:"data" mcp:"type=object,svc"`
	Into   string   `json:"into" mcp:"max=100"`
	Hints  []string `json:"hints" mcp:"max=32,svc"`
	Move   bool     `json:"move"`
	whyIn
}

type identityOut struct {
	Action    string        `json:"action"`
	Identity  *identityView `json:"identity,omitempty" jsonschema:"the identity afterwards"`
	Deleted   string        `json:"deleted,omitempty"`
	RequestID string        `json:"request_id"`
}

func (s *Server) identityTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_identity",
		title: "Create, change, merge or delete identities and their hints",
		desc: "Manage identities and their hints: create {name, slug?, hints?, data?}; rename {id, name}; update {id, name?, data?} " +
			"(data replaces the old); delete {id} (restore {id} undoes it, relations included); merge {id, into}; " +
			"hint_add {id, hints, move?}; hint_remove {id, hints}. Hints are kind=value, e.g. usb_id=0582:01a9; usb_serial, mac and " +
			"robot_serial are unit hints, one identity each (move takes one over).",
		out:   typedSchema[identityOut](map[string][]string{"properties.action": identityActions}),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: false,
	}, s.identity)
}

func (s *Server) identity(ctx context.Context, c *call, in identityIn) (*mcp.CallToolResult, error) {
	action := in.Action
	id := strings.TrimSpace(in.ID)
	need := func(field, what string) error {
		return graph.FieldErrorf(graph.EINVALID, field, "graph_identity %s needs %s: %s", action, field, what)
	}
	if action != "create" && id == "" {
		return nil, need("id", "the identity id, e.g. identity:roland-jd-xi (find it with graph_find)")
	}
	hints, err := parseHints(in.Hints)
	if err != nil {
		return nil, err
	}
	var data json.RawMessage
	if c.has("data") {
		// Whatever was sent: the service checks it is an object within the limit.
		b, err := json.Marshal(in.Data)
		if err != nil {
			return nil, graph.FieldErrorf(graph.EINVALID, "data", "data is not valid JSON")
		}
		data = b
	}
	var ident *graph.Identity
	switch action {
	case "create":
		name := in.Name
		if !c.has("name") {
			return nil, need("name", "the display name, e.g. \"Roland JD-Xi\"")
		}
		ident, err = s.svc.CreateIdentity(ctx, graph.IdentityCreate{Name: name, Slug: strings.TrimSpace(in.Slug), Data: data, Hints: hints})
	case "rename":
		if !c.has("name") {
			return nil, need("name", "the new display name")
		}
		ident, err = s.svc.RenameIdentity(ctx, id, in.Name)
	case "update":
		u := graph.IdentityUpdate{}
		if c.has("name") {
			n := in.Name
			u.Name = &n
		}
		if data != nil {
			u.Data = &data
		}
		if u.Name == nil && u.Data == nil {
			return nil, need("data", "a JSON object to store (and/or name)")
		}
		ident, err = s.svc.UpdateIdentity(ctx, id, u)
	case "delete":
		if err = s.svc.DeleteIdentity(ctx, id); err == nil {
			return result(identityOut{Action: action, Deleted: id, RequestID: c.requestID},
				fmt.Sprintf("Deleted %s with its hints, tags, notes, bindings and relations (graph_identity restore brings them back).", id))
		}
	case "merge":
		into := strings.TrimSpace(in.Into)
		if into == "" {
			return nil, need("into", "the identity that remains, e.g. identity:jdxi")
		}
		ident, err = s.svc.MergeIdentities(ctx, id, into)
	case "restore":
		ident, err = s.svc.RestoreIdentity(ctx, id)
	case "hint_add", "hint_remove":
		if len(hints) == 0 {
			return nil, need("hints", "fingerprints as kind=value, e.g. [\"usb_id=0582:01a9\"]")
		}
		if action == "hint_add" {
			ident, err = s.svc.AddHints(ctx, id, hints, in.Move)
		} else {
			ident, err = s.svc.RemoveHints(ctx, id, hints)
		}
	}
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s: %s %q, %d hint(s), tags [%s].", action, ident.ID, ident.Name, len(ident.Hints), strings.Join(ident.Tags, " "))
	return result(identityOut{Action: action, Identity: viewIdentity(ident, true), RequestID: c.requestID}, text)
}

func parseHints(list []string) ([]graph.Fingerprint, error) {
	var out []graph.Fingerprint
	for _, h := range list {
		fp, err := graph.ParseFingerprint(h)
		if err != nil {
			return nil, err
		}
		out = append(out, fp)
	}
	return out, nil
}
