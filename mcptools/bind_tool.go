package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type unboundIn struct {
	pageIn
	detailIn
}

type unboundOut struct {
	Devices    []deviceView `json:"devices" jsonschema:"each with its best candidate (match)"`
	Total      int          `json:"total" jsonschema:"unbound devices in all pages"`
	NextCursor string       `json:"next_cursor"`
	Next       string       `json:"next,omitempty" jsonschema:"what to do next"`
}

func (s *Server) unboundTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_unbound",
		title: "List devices not yet bound to an identity",
		desc: "List present devices devgraph does not know yet, each with its best candidate identity, score, confidence and why. " +
			"Then bind them with graph_bind.",
		out: typedSchema[unboundOut](nil),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.unbound)
}

const bindNext = "Bind one with graph_bind {ref, identity} or {ref, new_name}."

func (s *Server) unbound(ctx context.Context, c *call, in unboundIn) (*mcp.CallToolResult, error) {
	off, err := decodeOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	devs, err := s.svc.Unbound(ctx)
	if err != nil {
		return nil, err
	}
	page, next := pageOf(devs, off, s.pageLimit(in.Limit, 20))
	out := unboundOut{Devices: make([]deviceView, 0, len(page)), Total: len(devs), NextCursor: next}
	var b strings.Builder
	if len(devs) == 0 {
		b.WriteString("Every present device is bound or recognised.\n")
	} else {
		fmt.Fprintf(&b, "%d unbound device(s):\n", len(devs))
		out.Next = bindNext
	}
	for _, d := range page {
		v := viewDeviceView(d, false, in.Detail)
		v.Nodes = nodePaths(d.Nodes) // where a newly plugged device shows up
		out.Devices = append(out.Devices, v)
		fmt.Fprintf(&b, "- %s %q", d.Ref, d.Name)
		if len(v.Nodes) > 0 {
			fmt.Fprintf(&b, " at %s", strings.Join(v.Nodes, ", "))
		}
		if v.HostOffline {
			b.WriteString(" (its host is offline)")
		}
		if m := v.Match; m != nil {
			if m.Identity != "" {
				fmt.Fprintf(&b, " — best candidate %s (%s, %.2f): %s", m.Identity, m.Confidence, m.Score, m.Why)
			} else if m.Why != "" {
				fmt.Fprintf(&b, " — %s", m.Why)
			}
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	if out.Next != "" {
		b.WriteString(out.Next + "\n")
	}
	return result(out, b.String())
}

type bindIn struct {
	Ref      string `json:"ref" mcp:"required,max=300"`
	Identity string `json:"identity" mcp:"max=100"`
	NewName  string `json:"new_name" mcp:"max=200,svc"`
	Slug     string `json:"slug" jsonschema:"default: from new_name" mcp:"max=64,svc"`
	Move     bool   `json:"move"`
	Force    bool   `json:"force" jsonschema:"bind though its model or unit contradicts the identity's hints"`
	DryRun   bool   `json:"dry_run"`
	whyIn
}

type bindOut struct {
	Device     deviceView    `json:"device"`
	Identity   *identityView `json:"identity"`
	Created    bool          `json:"created" jsonschema:"a new identity was created"`
	HintsAdded []string      `json:"hints_added" jsonschema:"fingerprints copied in as hints (kind=value)"`
	HintsMoved []string      `json:"hints_moved,omitempty" jsonschema:"unit hints taken from another identity"`
	Conflicts  []string      `json:"conflicts,omitempty" jsonschema:"dry run: what would fail"`
	Match      *matchView    `json:"match,omitempty" jsonschema:"how the device reads afterwards"`
	DryRun     bool          `json:"dry_run,omitempty"`
	// AlreadyBound: a retried bind; nothing was written.
	AlreadyBound bool   `json:"already_bound,omitempty" jsonschema:"it was bound so already: nothing written"`
	Events       int    `json:"events" jsonschema:"changelog events written"`
	RequestID    string `json:"request_id"`
	Next         string `json:"next,omitempty" jsonschema:"what to do next"`
}

func (s *Server) bindTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_bind",
		title: "Bind a device to an identity",
		desc: "Bind a device to an existing identity (identity) or a new one (new_name), copying its fingerprints in as hints so " +
			"devgraph recognises it after a re-plug. A unit fingerprint (serial, mac) another identity holds is a conflict naming it; " +
			"move: true takes it over.",
		out:   typedSchema[bindOut](nil),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: true,
	}, s.bind)
}

func (s *Server) bind(ctx context.Context, c *call, a bindIn) (*mcp.CallToolResult, error) {
	in := graph.BindInput{
		Ref: strings.TrimSpace(a.Ref), IdentityID: strings.TrimSpace(a.Identity),
		NewName: a.NewName, Slug: strings.TrimSpace(a.Slug), Move: a.Move, Force: a.Force, DryRun: a.DryRun,
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
	out := bindOut{Identity: viewIdentity(res.Identity, false), Created: res.Created, HintsAdded: fpStrings(res.HintsAdded),
		Conflicts: res.Conflicts, Match: viewMatch(res.Match), DryRun: res.DryRun, AlreadyBound: res.AlreadyBound, Events: res.Events, RequestID: c.requestID}
	if len(res.HintsMoved) > 0 {
		out.HintsMoved = fpStrings(res.HintsMoved)
	}
	if res.Device != nil {
		out.Device = viewDevice(res.Device, nil, false, false)
	} else {
		out.Device = deviceView{Ref: in.Ref}
	}
	var b strings.Builder
	verb := "Bound"
	if res.DryRun {
		verb = "Dry run: would bind"
	}
	identID, identName := "", ""
	if res.Identity != nil {
		identID, identName = res.Identity.ID, res.Identity.Name
	}
	if res.AlreadyBound {
		fmt.Fprintf(&b, "Already bound: %s is bound to %s %q; nothing changed.\n", out.Device.Ref, identID, identName)
		return result(out, b.String())
	}
	fmt.Fprintf(&b, "%s %s to %s %q", verb, out.Device.Ref, identID, identName)
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
	if m := out.Match; m != nil && m.Why != "" {
		fmt.Fprintf(&b, "Match now: %s (%s, %.2f)\n", m.Why, m.Confidence, m.Score)
	}
	if !res.DryRun && identID != "" {
		out.Next = "Tag it with graph_tag (reuse graph_suggest_tags terms) or note it with graph_note on " + identID + "."
		b.WriteString(out.Next + "\n")
	}
	return result(out, b.String())
}

type unbindIn struct {
	Ref string `json:"ref" mcp:"required,max=300"`
	whyIn
}

type unbindOut struct {
	Device    deviceView `json:"device" jsonschema:"the device afterwards"`
	RequestID string     `json:"request_id"`
}

func (s *Server) unbindTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_unbind",
		title: "Remove a device's binding",
		desc:  "Remove a device's explicit binding; its identity keeps the hints (remove them with graph_identity hint_remove).",
		out:   typedSchema[unbindOut](nil),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: true,
	}, func(ctx context.Context, c *call, in unbindIn) (*mcp.CallToolResult, error) {
		d, err := s.svc.Unbind(ctx, strings.TrimSpace(in.Ref))
		if err != nil {
			return nil, err
		}
		return result(unbindOut{Device: viewDevice(d, nil, false, false), RequestID: c.requestID},
			fmt.Sprintf("Unbound %s %q; it is no longer explicitly bound.", d.Ref, d.Name))
	})
}
