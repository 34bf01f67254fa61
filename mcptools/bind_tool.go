package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

func (s *Server) unboundTool() *toolDef {
	return &toolDef{
		name:  "graph_unbound",
		title: "List devices not yet bound to an identity",
		desc: "List present devices that have no explicit binding and no high, unambiguous match: what is plugged in that devgraph " +
			"does not know yet. Each comes with its ref, fingerprints, best candidate identity, score, confidence and an explanation. " +
			"Use it after a device is plugged in, then graph_bind. Paged (limit, cursor).",
		params: []param{s.limitParam(20), cursorParam},
		out: outputSchema(
			outProp{"devices", "array", "unbound devices with ref, fingerprints and match", true},
			outProp{"total", "integer", "unbound devices in all pages", true},
			outProp{"next_cursor", "string", "pass as cursor for the next page", false},
		),
		readOnly: true, idempotent: true,
		handler: s.unbound,
	}
}

func (s *Server) unbound(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	off, err := decodeOffset(c.str("cursor"))
	if err != nil {
		return nil, err
	}
	devs, err := s.svc.Unbound(ctx)
	if err != nil {
		return nil, err
	}
	page, next := pageOf(devs, off, s.pageLimit(c, 20))
	var b strings.Builder
	if len(devs) == 0 {
		b.WriteString("Every present device is bound or recognised.\n")
	} else {
		fmt.Fprintf(&b, "%d unbound device(s):\n", len(devs))
	}
	for _, d := range page {
		fmt.Fprintf(&b, "- %s %q", d.Ref, d.Name)
		if d.Match != nil && d.Match.IdentityID != "" {
			fmt.Fprintf(&b, " — best candidate %s (%s, %.2f)", d.Match.IdentityID, d.Match.Confidence, d.Match.Score)
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	if len(devs) > 0 {
		b.WriteString("Bind one with graph_bind {ref, identity} or {ref, new_name}.\n")
	}
	return result(map[string]any{"devices": nonNil(page), "total": len(devs), "next_cursor": next}, b.String())
}

func (s *Server) bindTool() *toolDef {
	return &toolDef{
		name:  "graph_bind",
		title: "Bind a device to an identity",
		desc: "Bind a device (by ref such as usb:3-3.2, or device id) to an existing identity (identity) or to a new one (new_name, " +
			"optional slug; the slug defaults to the name made lowercase with dashes, e.g. \"Roland JD-Xi\" → identity:roland-jd-xi). " +
			"The device's fingerprints are copied in as hints so devgraph recognises it again after a re-plug. A unit fingerprint " +
			"(serial, mac) held by another identity is a conflict naming it; pass move: true to take it over. dry_run: true reports " +
			"what would change and writes nothing. Find refs with graph_unbound or graph_find.",
		params: []param{
			{name: "ref", typ: "string", required: true, maxLen: 300, desc: "the device: its ref (usb:3-3.2) or id (device:…)", example: `"usb:3-3.2"`},
			{name: "identity", typ: "string", maxLen: 100, desc: "an existing identity id or slug to bind to", example: `"identity:roland-jd-xi"`},
			{name: "new_name", typ: "string", maxLen: graph.MaxNameLen, service: true, desc: "create a new identity with this name and bind to it", example: `"Roland JD-Xi"`},
			{name: "slug", typ: "string", maxLen: 64, service: true, desc: "slug for the new identity ([a-z0-9][a-z0-9._-]{0,63})", example: `"jdxi"`},
			{name: "move", typ: "boolean", desc: "move unit hints held by another identity instead of failing"},
			{name: "force", typ: "boolean", desc: "bind even though the device's model or unit contradicts the identity's hints"},
			{name: "dry_run", typ: "boolean", desc: "report what would change; write nothing"},
			whyParam,
		},
		out: outputSchema(
			outProp{"device", "object", "the device after binding", true},
			outProp{"identity", "object", "the identity it is bound to", true},
			outProp{"created", "boolean", "a new identity was created", true},
			outProp{"hints_added", "array", "fingerprints copied in as hints", true},
			outProp{"hints_moved", "array", "unit hints taken from another identity", false},
			outProp{"conflicts", "array", "dry run: what would fail", false},
			outProp{"match", "object", "how the device reads afterwards", false},
			outProp{"dry_run", "boolean", "nothing was written", false},
			outProp{"already_bound", "boolean", "the device was bound to it already: nothing was written", false},
			outProp{"events", "integer", "changelog events written", true},
			outProp{"request_id", "string", "the request id every event of this call carries", true},
		),
		write: true, destructive: true, idempotent: true,
		handler: s.bind,
	}
}

func (s *Server) bind(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	in := graph.BindInput{
		Ref: strings.TrimSpace(c.str("ref")), IdentityID: strings.TrimSpace(c.str("identity")),
		NewName: c.str("new_name"), Slug: strings.TrimSpace(c.str("slug")),
		Move: c.boolean("move"), Force: c.boolean("force"), DryRun: c.boolean("dry_run"),
	}
	switch {
	case in.IdentityID == "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "identity", "graph_bind needs either identity (an existing identity id, e.g. identity:roland-jd-xi; find one with graph_find) or new_name (to create one, e.g. \"Roland JD-Xi\")")
	case in.Slug != "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "slug", "slug names a new identity; give new_name with it, or drop slug")
	}
	if in.Slug != "" {
		if err := graph.ValidateSlug(in.Slug); err != nil {
			return nil, err
		}
	}
	res, err := s.svc.Bind(ctx, in)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	verb := "Bound"
	if res.DryRun {
		verb = "Dry run: would bind"
	}
	devRef, identID, identName := in.Ref, "", ""
	if res.Device != nil {
		devRef = res.Device.Ref
	}
	if res.Identity != nil {
		identID, identName = res.Identity.ID, res.Identity.Name
	}
	if res.AlreadyBound {
		fmt.Fprintf(&b, "Already bound: %s is bound to %s %q; nothing changed.\n", devRef, identID, identName)
		out := structOf(res)
		out["request_id"] = c.requestID
		out["hints_added"] = nonNil(res.HintsAdded)
		return result(out, b.String())
	}
	fmt.Fprintf(&b, "%s %s to %s %q", verb, devRef, identID, identName)
	if res.Created {
		b.WriteString(" (new identity)")
	}
	fmt.Fprintf(&b, "; %d hint(s) added", len(res.HintsAdded))
	if len(res.HintsMoved) > 0 {
		fmt.Fprintf(&b, ", %d moved", len(res.HintsMoved))
	}
	b.WriteString(".\n")
	for _, cf := range res.Conflicts {
		fmt.Fprintf(&b, "Conflict: %s\n", cf)
	}
	if res.Match != nil && res.Match.Summary != "" {
		fmt.Fprintf(&b, "Match now: %s\n", res.Match.Summary)
	}
	out := structOf(res)
	out["request_id"] = c.requestID
	out["hints_added"] = nonNil(res.HintsAdded)
	return result(out, b.String())
}

func (s *Server) unbindTool() *toolDef {
	return &toolDef{
		name:  "graph_unbind",
		title: "Remove a device's binding",
		desc: "Remove the explicit binding of a device (by ref or device id) to its identity. The identity and its hints stay " +
			"(remove hints with graph_identity hint_remove if the device should no longer be recognised as it).",
		params: []param{
			{name: "ref", typ: "string", required: true, maxLen: 300, desc: "the device: its ref (usb:3-3.2) or id", example: `"usb:3-3.2"`},
			whyParam,
		},
		out: outputSchema(
			outProp{"device", "object", "the device after unbinding", true},
			outProp{"request_id", "string", "the request id of the change", true},
		),
		write: true, destructive: true, idempotent: true,
		handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			d, err := s.svc.Unbind(ctx, strings.TrimSpace(c.str("ref")))
			if err != nil {
				return nil, err
			}
			return result(map[string]any{"device": d, "request_id": c.requestID},
				fmt.Sprintf("Unbound %s %q; it is no longer explicitly bound.", d.Ref, d.Name))
		},
	}
}
