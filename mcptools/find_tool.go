package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type findHit struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // identity, device, robot
	Name    string `json:"name"`
	Ref     string `json:"ref,omitempty"`
	Present *bool  `json:"present,omitempty"`
	// HostOffline: the device's host (a fleet host) is offline; present is what it last saw.
	HostOffline bool     `json:"host_offline,omitempty"`
	IdentityID  string   `json:"identity_id,omitempty"`
	Tags        []string `json:"tags"`
}

type findIn struct {
	Text string   `json:"text" mcp:"max=200"`
	Tags []string `json:"tags" mcp:"max=16"`
	Kind string   `json:"kind" mcp:"enum=any|identity|device|robot"`
	pageIn
}

type findOut struct {
	Results    []findHit `json:"results"`
	Total      int       `json:"total" jsonschema:"matches found (counted up to 500)"`
	NextCursor string    `json:"next_cursor"`
}

func (s *Server) findTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_find",
		title: "Find identities, devices and robots",
		desc:  "Find identities, devices and robots by fuzzy name (text), tags (all must match) and kind. Use it first to get ids.",
		out:   typedSchema[findOut](map[string][]string{}),
		set:   toolsetGraph, readOnly: true, idempotent: true,
	}, s.find)
}

func (s *Server) find(ctx context.Context, c *call, in findIn) (*mcp.CallToolResult, error) {
	text := strings.TrimSpace(in.Text)
	if err := graph.ValidateText("text", text, 0, 200); err != nil {
		return nil, err
	}
	var tags []string
	for _, t := range in.Tags {
		n, err := graph.NormalizeTag(tidyTag(t))
		if err != nil {
			return nil, err
		}
		tags = append(tags, n)
	}
	kind := in.Kind
	if kind == "" {
		kind = "any"
	}
	limit := s.pageLimit(in.Limit, 20)
	off, err := decodeOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	page, total, next, err := s.findIndexed(ctx, text, tags, kind, off, limit)
	if err != nil {
		return nil, err
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
		if h.HostOffline {
			b.WriteString(" (its host is offline)")
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	return result(findOut{Results: nonNil(page), Total: total, NextCursor: next}, b.String())
}

// findIndexed answers graph_find from the name index (Options.Finder, the one GraphQL
// find uses): it asks for one page past the cursor's offset and fills each hit of the
// page with its ref, presence and tags.
func (s *Server) findIndexed(ctx context.Context, text string, tags []string, kind string, off, limit int) ([]findHit, int, string, error) {
	if kind == "any" {
		kind = ""
	}
	want := off + limit + 1
	if want > graph.MaxPageSize {
		want = graph.MaxPageSize
	}
	hits, err := s.opts.Finder.Find(ctx, graph.FindQuery{Text: text, Tags: tags, Kind: kind, First: want})
	if err != nil {
		return nil, 0, "", err
	}
	page, next := pageOf(hits, off, limit)
	if off+limit >= graph.MaxPageSize {
		next = ""
	}
	out := make([]findHit, 0, len(page))
	for _, h := range page {
		fh := findHit{ID: h.ID, Kind: h.Kind, Name: h.Name, Tags: []string{}}
		switch graph.KindOf(h.ID) {
		case graph.KindIdentity:
			if h.Tags != nil { // the index holds them: no read of the identity
				fh.Tags = h.Tags
			} else if id, err := s.svc.FindIdentityByID(ctx, h.ID, graph.IdentityParts{}); err == nil {
				fh.Tags = nonNil(id.Tags)
			}
		case graph.KindDevice:
			if d, err := s.opts.Devices.FindDeviceByID(ctx, h.ID); err == nil {
				present := d.Present
				fh.Ref, fh.Present, fh.IdentityID, fh.Tags = d.Ref, &present, d.IdentityID, nonNil(d.Tags)
				fh.HostOffline = s.opts.Hosts != nil && !s.opts.Hosts.HostOnline(d.Host)
			}
		}
		out = append(out, fh)
	}
	return out, len(hits), next, nil
}
