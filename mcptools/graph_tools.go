package mcptools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

const idForms = "Ids: identity:<slug> (or the bare slug), device:<key>, a device ref such as usb:3-3.2, alsa:card:PCH, robot:scout, note:<uuid>, tag:<ns>:<value>."

var whyParam = param{name: "why", typ: "string", maxLen: graph.MaxMsgLen,
	desc: "optional reason, recorded as the changelog message of this change", example: `"user asked to label the studio synths"`}

func (s *Server) graphTools() []*toolDef {
	return []*toolDef{
		s.findTool(),
		s.browseTool(),
		s.unboundTool(),
		s.bindTool(),
		s.unbindTool(),
		s.tagTool(),
		s.noteTool(),
		s.identityTool(),
		s.suggestTagsTool(),
		s.changelogTool(),
		s.queryTool(),
	}
}

// ---- graph_find ----

type findHit struct {
	ID         string   `json:"id"`
	Kind       string   `json:"kind"` // identity, device, robot
	Name       string   `json:"name"`
	Ref        string   `json:"ref,omitempty"`
	Present    *bool    `json:"present,omitempty"`
	IdentityID string   `json:"identity_id,omitempty"`
	Tags       []string `json:"tags"`
}

func (s *Server) findTool() *toolDef {
	return &toolDef{
		name:  "graph_find",
		title: "Find identities, devices and robots",
		desc: "Find nodes by name (fuzzy), tags and kind. Use it first whenever you need an id: it returns identity ids " +
			"(identity:<slug>), device ids and refs (usb:3-3.2, robot:scout). All given tags must match (tags are namespace:value, " +
			"see graph_suggest_tags). kind is identity, device, robot or any. Results are paged (limit, cursor).",
		params: []param{
			{name: "text", typ: "string", maxLen: 200, desc: "part of a name, fuzzy matched; omit to list by tags or kind", example: `"jd-xi"`},
			{name: "tags", typ: "array", maxLen: 16, desc: "tags that must all be present, e.g. [\"role:synth\"]", example: `["role:synth"]`},
			{name: "kind", typ: "string", enum: []string{"any", "identity", "device", "robot"}, desc: "what to look for (default any)"},
			s.limitParam(20), cursorParam,
		},
		out: outputSchema(
			outProp{"results", "array", "matches: id, kind, name, ref, present, identity_id, tags", true},
			outProp{"total", "integer", "matches found (the index stops counting at 500)", true},
			outProp{"next_cursor", "string", "pass as cursor for the next page; empty on the last", false},
		),
		readOnly: true, idempotent: true,
		handler: s.find,
	}
}

func (s *Server) find(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	text := strings.TrimSpace(c.str("text"))
	if err := graph.ValidateText("text", text, 0, 200); err != nil {
		return nil, err
	}
	var tags []string
	for _, t := range c.list("tags") {
		n, err := graph.NormalizeTag(tidyTag(t))
		if err != nil {
			return nil, err
		}
		tags = append(tags, n)
	}
	kind := c.str("kind")
	if kind == "" {
		kind = "any"
	}
	limit := s.pageLimit(c, 20)
	off, err := decodeOffset(c.str("cursor"))
	if err != nil {
		return nil, err
	}
	var page []findHit
	var total int
	var next string
	if f := s.finder(); f != nil {
		if page, total, next, err = s.findIndexed(ctx, f, text, tags, kind, off, limit); err != nil {
			return nil, err
		}
	} else {
		hits, err := s.findAll(ctx, text, tags, kind)
		if err != nil {
			return nil, err
		}
		total = len(hits)
		page, next = pageOf(hits, off, limit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d match(es)", total)
	if len(page) < total {
		fmt.Fprintf(&b, ", showing %d", len(page))
	}
	b.WriteString(":\n")
	for _, h := range page {
		fmt.Fprintf(&b, "- %s %q (%s)", h.ID, h.Name, h.Kind)
		if h.Ref != "" && h.Ref != h.ID {
			fmt.Fprintf(&b, " ref %s", h.Ref)
		}
		if len(h.Tags) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(h.Tags, " "))
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	return result(map[string]any{"results": nonNil(page), "total": total, "next_cursor": next}, b.String())
}

// findAll collects every match, identities first, then devices, each ranked by how
// well the name matches.
func (s *Server) findAll(ctx context.Context, text string, tags []string, kind string) ([]findHit, error) {
	const scanCap = 5000 // never walk more than this many nodes per kind for one call
	var hits []findHit
	if kind == "any" || kind == "identity" {
		f := graph.IdentityFilter{Tags: tags, First: graph.MaxPageSize}
		for n := 0; n < scanCap; n += graph.MaxPageSize {
			ids, _, next, err := s.svc.FindIdentities(ctx, f)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if text == "" || nameMatches(text, id.Name, id.ID) {
					hits = append(hits, findHit{ID: id.ID, Kind: "identity", Name: id.Name, Tags: nonNil(id.Tags)})
				}
			}
			if next == "" {
				break
			}
			f.After = next
		}
	}
	if kind != "identity" {
		f := graph.DeviceFilter{All: true, Tags: tags, First: graph.MaxPageSize}
		if kind == "robot" {
			f.Source = "robot"
		}
		for n := 0; n < scanCap; n += graph.MaxPageSize {
			devs, _, next, err := s.svc.Devices(ctx, f)
			if err != nil {
				return nil, err
			}
			for _, d := range devs {
				k := "device"
				if d.Source == "robot" || strings.HasPrefix(d.Ref, "robot:") {
					k = "robot"
				}
				if kind == "robot" && k != "robot" {
					continue
				}
				if text != "" && !nameMatches(text, d.Name, d.Ref, d.ID, d.Identity) {
					continue
				}
				present := d.Present
				hits = append(hits, findHit{ID: d.ID, Kind: k, Name: d.Name, Ref: d.Ref, Present: &present,
					IdentityID: d.BoundTo, Tags: nonNil(d.Tags)})
			}
			if next == "" {
				break
			}
			f.After = next
		}
	}
	if text != "" {
		sort.SliceStable(hits, func(i, j int) bool {
			return matchRank(text, hits[i].Name) < matchRank(text, hits[j].Name)
		})
	}
	return hits, nil
}

// nameMatches is a forgiving match: case-insensitive, ignoring spaces, dashes and
// underscores, substring or in-order subsequence of the name or any id.
func nameMatches(text string, names ...string) bool {
	q := squash(text)
	if q == "" {
		return true
	}
	for _, n := range names {
		sn := squash(n)
		if strings.Contains(sn, q) || subsequence(q, sn) {
			return true
		}
	}
	return false
}

func matchRank(text, name string) int {
	q, n := squash(text), squash(name)
	switch {
	case n == q:
		return 0
	case strings.HasPrefix(n, q):
		return 1
	case strings.Contains(n, q):
		return 2
	}
	return 3
}

func squash(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '.', '\t':
			return -1
		}
		return r
	}, s)
}

func subsequence(q, s string) bool {
	i := 0
	for _, r := range s {
		if i < len(q) && rune(q[i]) == r {
			i++
		}
	}
	return i == len(q) && len(q) >= 3
}

// ---- graph_browse ----

type browseNode struct {
	ID     string   `json:"id"`
	Kind   string   `json:"kind"`
	Name   string   `json:"name,omitempty"`
	Detail string   `json:"detail,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Depth  int      `json:"depth"`
}

type browseEdge struct {
	From string `json:"from"`
	Rel  string `json:"rel"`
	To   string `json:"to"`
}

const maxBrowseNodes = 200

func (s *Server) browseTool() *toolDef {
	return &toolDef{
		name:  "graph_browse",
		title: "Browse a node and its neighbours",
		desc: "Show one node and its neighbours to a depth: an identity's hints, tags, notes and bound devices; a device's identity, " +
			"tags and notes; a tag's nodes. Use after graph_find to understand a thing before changing it. " + idForms +
			fmt.Sprintf(" depth 1-3 (default 1); limit caps neighbours per node; at most %d nodes per call — when a limit cuts the walk, truncated is true and counts say how much was left out.", maxBrowseNodes),
		params: []param{
			{name: "id", typ: "string", required: true, maxLen: 300, desc: "the node to start from", example: `"identity:roland-jd-xi"`},
			{name: "depth", typ: "integer", min: f64(1), max: f64(3), desc: "how many hops to follow (default 1)", example: "1"},
			s.limitParam(20),
		},
		out: outputSchema(
			outProp{"root", "object", "the starting node with its full record", true},
			outProp{"nodes", "array", "nodes reached: id, kind, name, detail, tags, depth", true},
			outProp{"edges", "array", "edges: from, rel, to", true},
			outProp{"truncated", "boolean", "true when a limit cut the walk", true},
			outProp{"counts", "object", "nodes, edges, omitted (neighbours left out)", true},
		),
		readOnly: true, idempotent: true,
		handler: s.browse,
	}
}

func (s *Server) browse(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	rootID, err := s.svc.ResolveID(ctx, strings.TrimSpace(c.str("id")))
	if err != nil {
		return nil, err
	}
	depth := c.integer("depth", 1)
	per := s.pageLimit(c, 20)
	seen := map[string]*browseNode{}
	var nodes []*browseNode
	var edges []browseEdge
	omitted := 0
	truncated := false
	var root any

	frontier := []string{rootID}
	for d := 0; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, id := range frontier {
			if seen[id] != nil {
				continue
			}
			if len(nodes) >= maxBrowseNodes {
				truncated = true
				omitted++
				continue
			}
			n, rec, nbrs, more, err := s.neighbours(ctx, id, per)
			if err != nil {
				if graph.ErrorCode(err) == graph.ENOTFOUND && id != rootID {
					continue // a dangling link; the walk goes on
				}
				return nil, err
			}
			n.Depth = d
			seen[id] = n
			nodes = append(nodes, n)
			if id == rootID {
				root = rec
			}
			if d == depth {
				continue // the depth asked for, not a cut
			}
			if more > 0 {
				truncated = true
				omitted += more
			}
			for _, e := range nbrs {
				edges = append(edges, e)
				if seen[e.To] == nil {
					next = append(next, e.To)
				}
			}
		}
		frontier = next
	}
	var b strings.Builder
	r := seen[rootID]
	fmt.Fprintf(&b, "%s %q (%s)", r.ID, r.Name, r.Kind)
	if r.Detail != "" {
		fmt.Fprintf(&b, " — %s", r.Detail)
	}
	b.WriteByte('\n')
	for _, e := range edges {
		name := ""
		if n := seen[e.To]; n != nil && n.Name != "" {
			name = fmt.Sprintf(" %q", n.Name)
		}
		fmt.Fprintf(&b, "  %s -%s-> %s%s\n", e.From, e.Rel, e.To, name)
	}
	if truncated {
		fmt.Fprintf(&b, "(truncated: %d neighbour(s) left out; raise limit, lower depth, or browse from a neighbour)\n", omitted)
	}
	out := map[string]any{
		"root": root, "nodes": nonNil(nodes), "edges": nonNil(edges), "truncated": truncated,
		"counts": map[string]int{"nodes": len(nodes), "edges": len(edges), "omitted": omitted},
	}
	return result(out, b.String())
}

// neighbours describes one node and lists up to limit of its links; more says how many
// were left out.
func (s *Server) neighbours(ctx context.Context, id string, limit int) (*browseNode, any, []browseEdge, int, error) {
	var edges []browseEdge
	more := 0
	addEdge := func(rel, to string) {
		if len(edges) >= limit {
			more++
			return
		}
		edges = append(edges, browseEdge{From: id, Rel: rel, To: to})
	}
	switch graph.KindOf(id) {
	case graph.KindIdentity:
		ident, err := s.svc.FindIdentityByID(ctx, id, graph.IdentityParts{Notes: true, Devices: true})
		if err != nil {
			return nil, nil, nil, 0, err
		}
		n := &browseNode{ID: id, Kind: "identity", Name: ident.Name, Tags: ident.Tags,
			Detail: fmt.Sprintf("%d hint(s): %s", len(ident.Hints), graph.FormatFingerprints(ident.Hints))}
		for _, d := range ident.Devices {
			addEdge("bound_device", d.ID)
		}
		for _, t := range ident.Tags {
			addEdge("tagged", "tag:"+t)
		}
		for _, nt := range ident.Notes {
			addEdge("note", nt.ID)
		}
		return n, ident, edges, more, nil
	case graph.KindDevice:
		dv, err := s.svc.Device(ctx, id)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		state := "unplugged"
		if dv.Present {
			state = "present"
		}
		n := &browseNode{ID: id, Kind: "device", Name: dv.Name, Tags: dv.Tags, Detail: fmt.Sprintf("ref %s, %s", dv.Ref, state)}
		if dv.Match != nil && dv.Match.Summary != "" {
			n.Detail += "; " + dv.Match.Summary
		}
		if dv.BoundTo != "" {
			addEdge("identity", dv.BoundTo)
		}
		for _, t := range dv.Tags {
			addEdge("tagged", "tag:"+t)
		}
		notes, total, _, err := s.svc.FindNotes(ctx, graph.NoteFilter{Target: id, First: limit})
		if err == nil {
			for _, nt := range notes {
				addEdge("note", nt.ID)
			}
			if total > len(notes) {
				more += total - len(notes)
			}
		}
		return n, dv, edges, more, nil
	case graph.KindTag:
		tag := strings.TrimPrefix(id, "tag:")
		ids, total, _, err := s.svc.FindTagged(ctx, tag, limit, "")
		if err != nil {
			return nil, nil, nil, 0, err
		}
		n := &browseNode{ID: id, Kind: "tag", Name: tag, Detail: fmt.Sprintf("on %d node(s)", total)}
		for _, nid := range ids {
			addEdge("tags", nid)
		}
		if total > len(ids) {
			more += total - len(ids)
		}
		return n, map[string]any{"tag": tag, "count": total}, edges, more, nil
	case graph.KindNote:
		// Notes are reached from their target; on their own they carry no links we can
		// look up by id, so show the id.
		return &browseNode{ID: id, Kind: "note"}, map[string]any{"id": id}, nil, 0, nil
	}
	return nil, nil, nil, 0, graph.FieldErrorf(graph.EINVALID, "id", "cannot browse %q; give an identity, device, tag or note id. %s", id, idForms)
}

// ---- graph_unbound ----

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

// ---- graph_bind / graph_unbind ----

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
			{name: "new_name", typ: "string", maxLen: graph.MaxNameLen, desc: "create a new identity with this name and bind to it", example: `"Roland JD-Xi"`},
			{name: "slug", typ: "string", maxLen: 64, desc: "slug for the new identity ([a-z0-9][a-z0-9._-]{0,63})", example: `"jdxi"`},
			{name: "move", typ: "boolean", desc: "move unit hints held by another identity instead of failing"},
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
		Move: c.boolean("move"), DryRun: c.boolean("dry_run"),
	}
	switch {
	case in.IdentityID == "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "identity", "graph_bind needs either identity (an existing identity id, e.g. identity:roland-jd-xi; find one with graph_find) or new_name (to create one, e.g. \"Roland JD-Xi\")")
	case in.IdentityID != "" && in.NewName != "":
		return nil, graph.FieldErrorf(graph.EINVALID, "new_name", "graph_bind takes identity or new_name, not both; drop new_name to bind to %s", in.IdentityID)
	case in.Slug != "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "slug", "slug names a new identity; give new_name with it, or drop slug")
	}
	if in.NewName != "" {
		if err := graph.ValidateText("new_name", in.NewName, 1, graph.MaxNameLen); err != nil {
			return nil, err
		}
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

// ---- graph_tag ----

func (s *Server) tagTool() *toolDef {
	return &toolDef{
		name:  "graph_tag",
		title: "Add or remove tags",
		desc: "Add and/or remove tags on an identity, device or robot. Tags are namespace:value, lowercase, [a-z0-9][a-z0-9._-]* " +
			"on each side (namespace ≤ 32, value ≤ 64 chars); input is normalised (\"Role: Synth\" → role:synth). Call " +
			"graph_suggest_tags first and reuse existing terms. Adding a tag already there or removing one absent changes nothing. " + idForms,
		params: []param{
			{name: "target", typ: "string", required: true, maxLen: 300, desc: "the node to tag", example: `"identity:roland-jd-xi"`},
			{name: "add", typ: "array", maxLen: 32, desc: "tags to add", example: `["role:synth", "location:studio"]`},
			{name: "remove", typ: "array", maxLen: 32, desc: "tags to remove", example: `["status:loaned"]`},
			whyParam,
		},
		out: outputSchema(
			outProp{"target", "string", "the node's full id", true},
			outProp{"tags", "array", "the node's tags afterwards", true},
			outProp{"request_id", "string", "the request id of the change", true},
		),
		write: true, destructive: true, idempotent: true,
		handler: s.tag,
	}
}

func (s *Server) tag(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	add, remove := c.list("add"), c.list("remove")
	if len(add) == 0 && len(remove) == 0 {
		return nil, graph.FieldErrorf(graph.EINVALID, "add", "graph_tag needs add or remove (arrays of namespace:value tags), e.g. \"add\": [\"role:synth\"]")
	}
	for _, list := range [][]string{add, remove} {
		for i, t := range list {
			list[i] = tidyTag(t)
			if _, err := graph.NormalizeTag(list[i]); err != nil {
				return nil, err
			}
		}
	}
	target, err := s.svc.ResolveID(ctx, strings.TrimSpace(c.str("target")))
	if err != nil {
		return nil, err
	}
	tags, err := s.svc.UpdateTags(ctx, target, add, remove)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s now has tags: %s", target, strings.Join(tags, " "))
	if len(tags) == 0 {
		text = target + " now has no tags."
	}
	return result(map[string]any{"target": target, "tags": nonNil(tags), "request_id": c.requestID}, text)
}

// ---- graph_note ----

func (s *Server) noteTool() *toolDef {
	return &toolDef{
		name:  "graph_note",
		title: "Add or delete a note",
		desc: "Leave a note on an identity, device or robot (action add: target, body as markdown ≤ 16 KiB, kind info|success|warning|danger, " +
			"default info), or delete one (action delete: note_id, note:<uuid>, as returned by add or shown by graph_browse). " +
			"Notes record who wrote them (this client).",
		params: []param{
			{name: "action", typ: "string", enum: []string{"add", "delete"}, desc: "add (default) or delete"},
			{name: "target", typ: "string", maxLen: 300, desc: "add: the node to annotate", example: `"identity:roland-jd-xi"`},
			{name: "body", typ: "string", maxLen: graph.MaxNoteLen, desc: "add: the note, markdown", example: `"Firmware updated to 1.53"`},
			{name: "kind", typ: "string", enum: graph.NoteKinds, desc: "add: info (default), success, warning or danger"},
			{name: "note_id", typ: "string", maxLen: 100, desc: "delete: the note's id", example: `"note:0190…"`},
			whyParam,
		},
		out: outputSchema(
			outProp{"note", "object", "the note added", false},
			outProp{"deleted", "string", "the id of the note deleted", false},
			outProp{"request_id", "string", "the request id of the change", true},
		),
		write: true, destructive: true, idempotent: false,
		handler: s.note,
	}
}

func (s *Server) note(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	if c.str("action") == "delete" {
		id := strings.TrimSpace(c.str("note_id"))
		if id == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "note_id", "graph_note delete needs note_id (note:<uuid>, from graph_browse or the add result)")
		}
		if err := s.svc.DeleteNote(ctx, id); err != nil {
			return nil, err
		}
		return result(map[string]any{"deleted": id, "request_id": c.requestID}, "Deleted "+id+".")
	}
	target, body := strings.TrimSpace(c.str("target")), c.str("body")
	if target == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "target", "graph_note add needs target, the node to annotate (e.g. identity:roland-jd-xi; find ids with graph_find)")
	}
	if err := graph.ValidateText("body", body, 1, graph.MaxNoteLen); err != nil {
		return nil, err
	}
	resolved, err := s.svc.ResolveID(ctx, target)
	if err != nil {
		return nil, err
	}
	n, err := s.svc.AddNote(ctx, graph.NoteCreate{Target: resolved, Kind: c.str("kind"), Body: body})
	if err != nil {
		return nil, err
	}
	return result(map[string]any{"note": n, "request_id": c.requestID},
		fmt.Sprintf("Added %s note %s on %s.", n.Kind, n.ID, n.Target))
}

// ---- graph_suggest_tags ----

func (s *Server) suggestTagsTool() *toolDef {
	return &toolDef{
		name:  "graph_suggest_tags",
		title: "Suggest tags to reuse",
		desc: "List the tag vocabulary: the seeded tags (role, capability, manufacturer, form-factor, location, status, project) and " +
			"every tag in use with how many nodes carry it, most used first. Call it before graph_tag so you reuse existing terms " +
			"instead of inventing synonyms. Filter by namespace and/or a text fragment.",
		params: []param{
			{name: "namespace", typ: "string", maxLen: 32, desc: "only this namespace, e.g. role", example: `"role"`},
			{name: "text", typ: "string", maxLen: 64, desc: "only tags containing this text", example: `"synth"`},
			s.limitParam(50), cursorParam,
		},
		out: outputSchema(
			outProp{"tags", "array", "tag, count (nodes carrying it), seeded", true},
			outProp{"namespaces", "array", "the seeded namespaces", true},
			outProp{"total", "integer", "tags in all pages", true},
			outProp{"next_cursor", "string", "pass as cursor for the next page", false},
		),
		readOnly: true, idempotent: true,
		handler: s.suggestTags,
	}
}

func (s *Server) suggestTags(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	ns := strings.ToLower(strings.TrimSpace(c.str("namespace")))
	tags, err := s.svc.FindTags(ctx, graph.TagFilter{Namespace: ns})
	if err != nil {
		return nil, err
	}
	text := strings.ToLower(strings.TrimSpace(c.str("text")))
	var list []graph.TagCount
	for _, t := range tags {
		if text == "" || strings.Contains(t.Tag, text) {
			list = append(list, t)
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Count != list[j].Count {
			return list[i].Count > list[j].Count
		}
		return list[i].Tag < list[j].Tag
	})
	off, err := decodeOffset(c.str("cursor"))
	if err != nil {
		return nil, err
	}
	page, next := pageOf(list, off, s.pageLimit(c, 50))
	var b strings.Builder
	fmt.Fprintf(&b, "%d tag(s):", len(list))
	for _, t := range page {
		fmt.Fprintf(&b, " %s(%d)", t.Tag, t.Count)
	}
	b.WriteByte('\n')
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	return result(map[string]any{"tags": nonNil(page), "namespaces": graph.SeedNamespaces, "total": len(list), "next_cursor": next}, b.String())
}

// ---- graph_changelog ----

type eventView struct {
	Seq       string          `json:"seq"` // 64-bit, as a string
	ID        string          `json:"id"`
	Time      time.Time       `json:"time"`
	Actor     string          `json:"actor"`
	Action    string          `json:"action"`
	Target    string          `json:"target"`
	Message   string          `json:"message,omitempty"`
	RequestID string          `json:"request_id"`
	Before    json.RawMessage `json:"before,omitempty"`
	After     json.RawMessage `json:"after,omitempty"`
}

func viewEvent(ev *graph.Event, bodies bool) eventView {
	v := eventView{Seq: strconv.FormatUint(ev.Seq, 10), ID: ev.ID, Time: ev.Time, Actor: ev.Actor, Action: ev.Action,
		Target: ev.Target, Message: ev.Message, RequestID: ev.RequestID}
	if bodies {
		v.Before, v.After = ev.Before, ev.After
	}
	return v
}

func (s *Server) changelogTool() *toolDef {
	return &toolDef{
		name:  "graph_changelog",
		title: "Read the audit changelog",
		desc: "Read who changed what, newest first: every change from the CLI, MCP, GraphQL, discovery and robots is one event per node " +
			"(seq, time, actor, action, target, message, request_id). Filters: since/until (RFC 3339 time or a duration back from now " +
			"such as 24h, 7d), target (a node id), actor glob (mcp:*), action glob (tag.*, device.appear). bodies: true adds each " +
			"event's before/after JSON. Paged (limit, cursor).",
		params: []param{
			{name: "since", typ: "string", maxLen: 64, desc: "only events at or after this time: RFC 3339 or a duration back from now (30m, 24h, 7d)", example: `"24h"`},
			{name: "until", typ: "string", maxLen: 64, desc: "only events before this time (same forms as since)", example: `"2026-11-22T06:00:00Z"`},
			{name: "target", typ: "string", maxLen: 300, desc: "only events on this node", example: `"identity:roland-jd-xi"`},
			{name: "actor", typ: "string", maxLen: 100, desc: "actor glob", example: `"mcp:*"`},
			{name: "action", typ: "string", maxLen: 64, desc: "action glob", example: `"tag.*"`},
			{name: "bodies", typ: "boolean", desc: "include before/after JSON of each event"},
			s.limitParam(20), cursorParam,
		},
		out: outputSchema(
			outProp{"events", "array", "events newest first", true},
			outProp{"next_cursor", "string", "pass as cursor for the next (older) page", false},
		),
		readOnly: true, idempotent: true,
		handler: s.changelog,
	}
}

func (s *Server) changelog(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	now := time.Now()
	f := graph.EventFilter{Actor: c.str("actor"), Action: c.str("action"), First: s.pageLimit(c, 20), After: c.str("cursor")}
	var err error
	if f.Since, err = parseWhen("since", c.str("since"), now); err != nil {
		return nil, err
	}
	if f.Until, err = parseWhen("until", c.str("until"), now); err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(c.str("target")); t != "" {
		if f.Target, err = s.svc.ResolveID(ctx, t); err != nil {
			// Deleted nodes still have history: fall back to the id as given.
			if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(t) == "" {
				return nil, err
			}
			f.Target = t
		}
	}
	evs, next, err := s.svc.FindEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	views := make([]eventView, len(evs))
	var b strings.Builder
	if len(evs) == 0 {
		b.WriteString("No events match.\n")
	}
	for i, ev := range evs {
		views[i] = viewEvent(ev, c.boolean("bodies"))
		fmt.Fprintf(&b, "#%d %s %s %s %s", ev.Seq, ev.Time.UTC().Format(time.RFC3339), ev.Actor, ev.Action, ev.Target)
		if ev.Message != "" {
			fmt.Fprintf(&b, " — %s", ev.Message)
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("Older: call again with cursor=" + next + "\n")
	}
	return result(map[string]any{"events": views, "next_cursor": next}, b.String())
}

// parseWhen reads an RFC 3339 time or a duration back from now ("24h", "7d").
func parseWhen(field, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	d := s
	mult := time.Duration(1)
	if strings.HasSuffix(d, "d") {
		d, mult = strings.TrimSuffix(d, "d")+"h", 24
	}
	if dur, err := time.ParseDuration(d); err == nil && dur >= 0 {
		return now.Add(-dur * mult).UTC(), nil
	}
	return time.Time{}, graph.FieldErrorf(graph.EINVALID, field, "%s %q: give an RFC 3339 time (2026-11-22T06:00:00Z), a date (2026-11-22) or a duration back from now (30m, 24h, 7d)", field, s)
}

// ---- paging helpers ----

// Offset cursors page lists that the service returns whole (unbound devices, tags,
// find results); they are opaque to the model.
func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(n)))
}

func decodeOffset(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && strings.HasPrefix(string(b), "o:") {
		if n, err := strconv.Atoi(string(b[2:])); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, graph.FieldErrorf(graph.EINVALID, "cursor", "cursor %q is not one this tool returned; pass next_cursor from the previous page unchanged, or omit it for the first page", c)
}

func pageOf[T any](list []T, off, limit int) ([]T, string) {
	if off > len(list) {
		off = len(list)
	}
	end := off + limit
	if end >= len(list) {
		return list[off:], ""
	}
	return list[off:end], encodeOffset(end)
}

func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// structOf turns a value into a JSON object map so fields can be added.
func structOf(v any) map[string]any {
	m := map[string]any{}
	b, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// tidyTag trims the spaces models put around the colon ("Role: Synth"): graph's
// NormalizeTag turns inner spaces into dashes before it splits namespace from value,
// which would make that "role:-synth".
func tidyTag(t string) string {
	ns, val, ok := strings.Cut(t, ":")
	if !ok {
		return t
	}
	return strings.TrimSpace(ns) + ":" + strings.TrimSpace(val)
}
