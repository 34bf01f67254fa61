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

func (s *Server) identityTool() *toolDef {
	return &toolDef{
		name:  "graph_identity",
		title: "Create, change, merge or delete identities and their hints",
		desc: "Manage identities (the stable names of physical things, id identity:<slug>) and their hints (fingerprints kind=value). " +
			"Actions: create {name, slug?, hints?, data?}; rename {id, name}; update {id, data and/or name}; delete {id} (its hints, tags, " +
			"notes, bindings and relations go with it, all recorded; restore brings them back); merge {id, into} (moves id's hints, tags, " +
			"notes, bindings and relations into into, then deletes id); restore {id}; hint_add {id, hints, move?}; hint_remove {id, hints}. " +
			"Hints are kind=value strings; kinds: usb_serial (vid:pid:serial), mac, robot_serial (unit: one physical unit, never on two " +
			"identities — pass move: true to take one over), usb_id (vid:pid), usb_path (3-3.1.2), alsa_card_id, alsa_longname, " +
			"midi_client, pipewire_device. To bind a plugged-in device prefer graph_bind, which copies its fingerprints for you.",
		params: []param{
			{name: "action", typ: "string", required: true, enum: identityActions, desc: "what to do"},
			{name: "id", typ: "string", maxLen: 100, desc: "the identity (identity:<slug> or the slug); every action but create", example: `"identity:roland-jd-xi"`},
			{name: "name", typ: "string", maxLen: graph.MaxNameLen, service: true, desc: "create/rename/update: the display name", example: `"Roland JD-Xi"`},
			{name: "slug", typ: "string", maxLen: 64, desc: "create: the slug ([a-z0-9][a-z0-9._-]{0,63}); default from name", example: `"jdxi"`},
			{name: "data", typ: "object", desc: "create/update: free-form JSON object (replaces the old one on update; ≤ 64 KiB)", example: `{"firmware": "1.53"}`},
			{name: "into", typ: "string", maxLen: 100, desc: "merge: the identity that remains", example: `"identity:jdxi"`},
			{name: "hints", typ: "array", maxLen: graph.MaxHintsPerCall, service: true, desc: "create/hint_add/hint_remove: fingerprints as kind=value", example: `["usb_id=0582:01a9"]`},
			{name: "move", typ: "boolean", desc: "hint_add: move unit hints held by another identity instead of failing"},
			whyParam,
		},
		out: outputSchema(
			outProp{"action", "string", "the action done", true},
			outProp{"identity", "object", "the identity afterwards (absent after delete)", false},
			outProp{"deleted", "string", "the id deleted", false},
			outProp{"request_id", "string", "the request id shared by this call's changelog events", true},
		),
		write: true, destructive: true, idempotent: false,
		handler: s.identity,
	}
}

func (s *Server) identity(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	action := c.str("action")
	id := strings.TrimSpace(c.str("id"))
	need := func(field, what string) error {
		return graph.FieldErrorf(graph.EINVALID, field, "graph_identity %s needs %s: %s", action, field, what)
	}
	if action != "create" && id == "" {
		return nil, need("id", "the identity id, e.g. identity:roland-jd-xi (find it with graph_find)")
	}
	hints, err := parseHints(c.list("hints"))
	if err != nil {
		return nil, err
	}
	var data json.RawMessage
	if c.has("data") {
		b, err := json.Marshal(c.object("data"))
		if err != nil {
			return nil, graph.FieldErrorf(graph.EINVALID, "data", "data must be a JSON object")
		}
		if len(b) > graph.MaxDataLen {
			return nil, graph.FieldErrorf(graph.EINVALID, "data", "data is %d bytes; the limit is %d", len(b), graph.MaxDataLen)
		}
		data = b
	}
	var ident *graph.Identity
	switch action {
	case "create":
		name := c.str("name")
		if name == "" {
			return nil, need("name", "the display name, e.g. \"Roland JD-Xi\"")
		}
		ident, err = s.svc.CreateIdentity(ctx, graph.IdentityCreate{Name: name, Slug: strings.TrimSpace(c.str("slug")), Data: data, Hints: hints})
	case "rename":
		if c.str("name") == "" {
			return nil, need("name", "the new display name")
		}
		ident, err = s.svc.RenameIdentity(ctx, id, c.str("name"))
	case "update":
		u := graph.IdentityUpdate{}
		if c.has("name") {
			n := c.str("name")
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
			return result(map[string]any{"action": action, "deleted": id, "request_id": c.requestID},
				fmt.Sprintf("Deleted %s with its hints, tags, notes, bindings and relations (graph_identity restore brings them back).", id))
		}
	case "merge":
		into := strings.TrimSpace(c.str("into"))
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
			ident, err = s.svc.AddHints(ctx, id, hints, c.boolean("move"))
		} else {
			ident, err = s.svc.RemoveHints(ctx, id, hints)
		}
	}
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s: %s %q, %d hint(s), tags [%s].", action, ident.ID, ident.Name, len(ident.Hints), strings.Join(ident.Tags, " "))
	return result(map[string]any{"action": action, "identity": ident, "request_id": c.requestID}, text)
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
