package mcptools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type browseNode struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind"`
	Name  string   `json:"name,omitempty"`
	Text  string   `json:"text,omitempty" jsonschema:"a line about it; a note's body"`
	Tags  []string `json:"tags,omitempty"`
	Depth int      `json:"depth"`
	// HostOffline: a device whose host (a fleet host) is offline, remembered as last seen.
	HostOffline bool `json:"host_offline,omitempty"`
}

// browseEdge is one link from a browsed node. For a relation it keeps the relation's
// own direction (from → to, whichever end was browsed) with its id, ports and kind;
// next is the end the walk goes on to.
type browseEdge struct {
	From     string `json:"from"`
	Rel      string `json:"rel"`
	To       string `json:"to"`
	Relation string `json:"relation,omitempty"`
	FromPort string `json:"from_port,omitempty"`
	ToPort   string `json:"to_port,omitempty"`
	Observed bool   `json:"observed,omitempty"`
	next     string
}

// neighbour is the node an edge leads the walk to.
func (e browseEdge) neighbour() string {
	if e.next != "" {
		return e.next
	}
	return e.To
}

const maxBrowseNodes = 200

type browseIn struct {
	ID    string `json:"id" mcp:"required,max=300"`
	Depth int    `json:"depth" jsonschema:"default 1" mcp:"min=1,max=3"`
	Limit int    `json:"limit" mcp:"max=page"`
	detailIn
}

type browseOut struct {
	Root      string       `json:"root" jsonschema:"the starting node's id"`
	Record    any          `json:"record,omitempty" jsonschema:"detail: true: the root's full record"`
	Nodes     []browseNode `json:"nodes"`
	Edges     []browseEdge `json:"edges"`
	Truncated bool         `json:"truncated" jsonschema:"a limit cut the walk"`
	Omitted   int          `json:"omitted" jsonschema:"neighbours left out"`
}

func (s *Server) browseTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_browse",
		title: "Browse a node and its neighbours",
		desc: "Show a node and its neighbours to a depth: an identity's devices, tags, notes (with text) and relations; a device's " +
			"identity, tags, notes and relations; a tag's nodes; a relation's ends. Relations keep their direction; observed ones say " +
			fmt.Sprintf("so. limit is per node, %d nodes per call; truncated and omitted say what was cut.", maxBrowseNodes),
		out: typedSchema[browseOut](nil),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.browse)
}

func (s *Server) browse(ctx context.Context, c *call, in browseIn) (*mcp.CallToolResult, error) {
	rootID, err := s.resolveNode(ctx, strings.TrimSpace(in.ID))
	if err != nil {
		return nil, err
	}
	depth := in.Depth
	if depth == 0 {
		depth = 1
	}
	per := s.pageLimit(in.Limit, 20)
	seen := map[string]*browseNode{}
	notes := map[string]*graph.Note{} // notes met on the way, so their nodes carry the text
	var nodes []*browseNode
	var edges []browseEdge
	listed := map[string]bool{} // relation ids already among edges: a relation is met from both ends, and from an identity's bound devices
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
			n, rec, nbrs, more, err := s.neighbours(ctx, id, per, notes, in.Detail && id == rootID, id == rootID)
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
				if e.Relation != "" {
					if listed[e.Relation] {
						continue
					}
					listed[e.Relation] = true
				}
				edges = append(edges, e)
				if seen[e.neighbour()] == nil {
					next = append(next, e.neighbour())
				}
			}
		}
		frontier = next
	}
	var b strings.Builder
	r := seen[rootID]
	fmt.Fprintf(&b, "%s %q (%s)", r.ID, r.Name, r.Kind)
	if r.Text != "" {
		fmt.Fprintf(&b, " — %s", r.Text)
	}
	if len(r.Tags) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(r.Tags, " "))
	}
	b.WriteByte('\n')
	for _, e := range edges {
		name := ""
		if n := seen[e.neighbour()]; n != nil && n.Name != "" {
			name = fmt.Sprintf(" %q", n.Name)
		}
		if e.Relation == "" {
			fmt.Fprintf(&b, "  %s -%s-> %s%s", e.From, e.Rel, e.To, name)
			if n := seen[e.To]; e.Rel == "note" && n != nil {
				fmt.Fprintf(&b, ": %s", n.Text)
			}
			b.WriteByte('\n')
			continue
		}
		named := func(id string) string {
			if n := seen[id]; n != nil && n.Name != "" {
				return fmt.Sprintf("%s %q", id, n.Name)
			}
			return id
		}
		var hop strings.Builder
		writeHop(&hop, e.FromPort, e.Rel, e.ToPort, e.Observed, false)
		fmt.Fprintf(&b, "  %s%s%s (%s)\n", named(e.From), hop.String(), named(e.To), e.Relation)
	}
	for _, e := range edges {
		if e.Observed {
			b.WriteString("  (* observed live by a source, not declared)\n")
			break
		}
	}
	if truncated {
		fmt.Fprintf(&b, "(truncated: %d neighbour(s) left out; raise limit, lower depth, or browse from a neighbour)\n", omitted)
	}
	out := browseOut{Root: rootID, Nodes: nonNil(derefNodes(nodes)), Edges: nonNil(edges), Truncated: truncated, Omitted: omitted}
	if in.Detail {
		out.Record = root
	}
	return result(out, b.String())
}

func derefNodes(ns []*browseNode) []browseNode {
	out := make([]browseNode, len(ns))
	for i, n := range ns {
		out[i] = *n
	}
	return out
}

// neighbours describes one node and lists up to limit of its links; more says how many
// were left out.
func (s *Server) neighbours(ctx context.Context, id string, limit int, notes map[string]*graph.Note, detail, root bool) (*browseNode, any, []browseEdge, int, error) {
	var edges []browseEdge
	more := 0
	addEdge := func(rel, to string) {
		if len(edges) >= limit {
			more++
			return
		}
		edges = append(edges, browseEdge{From: id, Rel: rel, To: to})
	}
	// addRelations lists the node's relations (its vertex's: an identity's and its
	// present bound devices'), each leading on to the end that is not one of own.
	addRelations := func(own ...string) error {
		rels, total, _, err := s.svc.FindRelations(ctx, graph.RelationFilter{Node: id, First: limit})
		if err != nil {
			return err
		}
		for _, r := range rels {
			if len(edges) >= limit {
				more++
				continue
			}
			next := r.To
			if slices.Contains(own, r.To) {
				next = r.From
			}
			edges = append(edges, browseEdge{From: r.From, Rel: r.Type, To: r.To, Relation: r.ID,
				FromPort: r.FromPort, ToPort: r.ToPort, Observed: r.Observed, next: next})
		}
		if total > len(rels) {
			more += total - len(rels)
		}
		return nil
	}
	switch graph.KindOf(id) {
	case graph.KindIdentity:
		ident, err := s.svc.FindIdentityByID(ctx, id, graph.IdentityParts{Notes: true, Devices: true})
		if err != nil {
			return nil, nil, nil, 0, err
		}
		n := &browseNode{ID: id, Kind: "identity", Name: ident.Name, Tags: ident.Tags, Text: fmt.Sprintf("%d hint(s)", len(ident.Hints))}
		for _, d := range ident.Devices {
			addEdge("bound_device", d.ID)
		}
		for _, t := range ident.Tags {
			addEdge("tagged", "tag:"+t)
		}
		for _, nt := range ident.Notes {
			notes[nt.ID] = nt
			addEdge("note", nt.ID)
		}
		own := []string{id}
		for _, d := range ident.Devices {
			own = append(own, d.ID)
		}
		if err := addRelations(own...); err != nil {
			return nil, nil, nil, 0, err
		}
		return n, ident, edges, more, nil
	case graph.KindDevice:
		dv, err := s.svc.Device(ctx, id)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		state := "unplugged"
		switch {
		case dv.HostOffline:
			state = "host offline (remembered as last seen)"
		case dv.Present:
			state = "present"
		}
		n := &browseNode{ID: id, Kind: "device", Name: dv.Name, Tags: dv.Tags, Text: fmt.Sprintf("ref %s, %s", dv.Ref, state), HostOffline: dv.HostOffline}
		for i, nd := range dv.Nodes {
			if !root {
				break // a neighbour's nodes are one browse of it away
			}
			if i == 0 {
				n.Text += ", at "
			} else {
				n.Text += ", "
			}
			n.Text += nd.Path
			if len(nd.Links) > 0 {
				n.Text += " (" + nd.Links[0] + ")"
			}
		}
		if dv.BoundTo != "" {
			n.Text += ", bound to " + dv.BoundTo
		} else if dv.Match != nil && dv.Match.Summary != "" {
			n.Text += "; " + dv.Match.Summary
		}
		if dv.BoundTo != "" {
			addEdge("identity", dv.BoundTo)
		}
		for _, t := range dv.Tags {
			addEdge("tagged", "tag:"+t)
		}
		list, total, _, err := s.svc.FindNotes(ctx, graph.NoteFilter{Target: id, First: limit})
		if err == nil {
			for _, nt := range list {
				notes[nt.ID] = nt
				addEdge("note", nt.ID)
			}
			if total > len(list) {
				more += total - len(list)
			}
		}
		own := []string{id}
		if dv.BoundTo != "" {
			// Its vertex: the identity and every device bound to it, so a relation on a
			// fellow device leads on to its far end, not to that device.
			own = append(own, dv.BoundTo)
			fellows, _, _, err := s.svc.Devices(ctx, graph.DeviceFilter{IdentityID: dv.BoundTo, First: graph.MaxPageSize})
			if err != nil {
				return nil, nil, nil, 0, err
			}
			for _, f := range fellows {
				own = append(own, f.ID)
			}
		}
		if err := addRelations(own...); err != nil {
			return nil, nil, nil, 0, err
		}
		return n, viewDeviceView(dv, true, detail), edges, more, nil
	case graph.KindClient:
		cl, err := s.svc.Client(ctx, id)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		n := &browseNode{ID: id, Kind: "client", Name: cl.Name, Text: "a live application (" + cl.Source + ")"}
		if err := addRelations(id); err != nil {
			return nil, nil, nil, 0, err
		}
		return n, cl, edges, more, nil
	case graph.KindRelation, graph.KindObserved:
		r, err := s.svc.FindRelationByID(ctx, id)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		v := viewRelation(r, s.nodeNames(ctx))
		n := &browseNode{ID: id, Kind: "relation", Name: r.Type, Text: renderRelation(v)}
		addEdge("from", r.From)
		addEdge("to", r.To)
		return n, v, edges, more, nil
	case graph.KindTag:
		tag := strings.TrimPrefix(id, "tag:")
		ids, total, _, err := s.svc.FindTagged(ctx, tag, limit, "")
		if err != nil {
			return nil, nil, nil, 0, err
		}
		n := &browseNode{ID: id, Kind: "tag", Text: fmt.Sprintf("on %d node(s)", total)}
		for _, nid := range ids {
			addEdge("tags", nid)
		}
		if total > len(ids) {
			more += total - len(ids)
		}
		return n, map[string]any{"tag": tag, "count": total}, edges, more, nil
	case graph.KindNote:
		// Notes are reached from their target, which gave their text; on their own they
		// carry no links we can look up by id, so show the id.
		n := &browseNode{ID: id, Kind: "note"}
		if nt := notes[id]; nt != nil {
			n.Name, n.Text = nt.Kind, oneLine(nt.Body, 280)
			if detail {
				n.Text = nt.Body
			}
			return n, viewNote(nt), nil, 0, nil
		}
		return n, map[string]any{"id": id}, nil, 0, nil
	}
	return nil, nil, nil, 0, graph.FieldErrorf(graph.EINVALID, "id", "cannot browse %q; give an identity, device, client, relation, tag or note id", id)
}

// resolveNode resolves what a model typed into a node id. Clients and relations are not
// stored nodes the resolver knows: a client id is checked against the live clients, a
// relation id by finding the relation.
func (s *Server) resolveNode(ctx context.Context, raw string) (string, error) {
	switch graph.KindOf(raw) {
	case graph.KindClient:
		if _, err := s.svc.Client(ctx, raw); err != nil {
			return "", err
		}
		return raw, nil
	case graph.KindRelation, graph.KindObserved:
		r, err := s.svc.FindRelationByID(ctx, raw)
		if err != nil {
			return "", err
		}
		return r.ID, nil
	}
	return s.svc.ResolveID(ctx, raw)
}
