package mcptools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type tagIn struct {
	Target string   `json:"target" mcp:"required,max=300"`
	Add    []string `json:"add" mcp:"max=32,svc"`
	Remove []string `json:"remove" mcp:"max=32,svc"`
	whyIn
}

type tagOut struct {
	Target    string   `json:"target" jsonschema:"the node's full id"`
	Tags      []string `json:"tags" jsonschema:"its tags afterwards"`
	RequestID string   `json:"request_id"`
}

func (s *Server) tagTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_tag",
		title: "Add or remove tags",
		desc:  "Add and/or remove tags on an identity or a device (robots included). Adding a tag already there or removing one absent changes nothing.",
		out:   typedSchema[tagOut](nil),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: true,
	}, s.tag)
}

func (s *Server) tag(ctx context.Context, c *call, in tagIn) (*mcp.CallToolResult, error) {
	add, remove := in.Add, in.Remove
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
	target, err := s.svc.ResolveID(ctx, strings.TrimSpace(in.Target), graph.KindIdentity, graph.KindDevice) // what tags go on
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
	return result(tagOut{Target: target, Tags: nonNil(tags), RequestID: c.requestID}, text)
}

type suggestIn struct {
	Namespace string `json:"namespace" mcp:"max=32"`
	Text      string `json:"text" mcp:"max=64"`
	pageIn
}

type suggestOut struct {
	Tags          []graph.TagCount          `json:"tags" jsonschema:"most used first; count is the nodes carrying it"`
	Namespaces    []string                  `json:"namespaces" jsonschema:"the seeded namespaces"`
	Total         int                       `json:"total"`
	NextCursor    string                    `json:"next_cursor"`
	RelationTypes []graph.RelationTypeCount `json:"relation_types,omitempty" jsonschema:"the types graph_relate takes; reserved ones are observed only"`
}

func (s *Server) suggestTagsTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_suggest_tags",
		title: "Suggest tags to reuse",
		desc: "List the tag vocabulary (seeded and in use, with counts) and the relation types graph_relate takes (namespace " +
			"relation: only those). Call it before graph_tag or graph_relate to reuse terms.",
		out: typedSchema[suggestOut](nil),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.suggestTags)
}

func (s *Server) suggestTags(ctx context.Context, c *call, in suggestIn) (*mcp.CallToolResult, error) {
	ns := strings.ToLower(strings.TrimSpace(in.Namespace))
	text := strings.ToLower(strings.TrimSpace(in.Text))
	var relTypes []graph.RelationTypeCount
	if ns == "" || ns == relationNamespace {
		all, err := s.svc.RelationTypes(ctx)
		if err != nil {
			return nil, err
		}
		for _, rt := range all {
			if text == "" || strings.Contains(rt.Type, text) {
				relTypes = append(relTypes, rt)
			}
		}
		sort.SliceStable(relTypes, func(i, j int) bool {
			if relTypes[i].Reserved != relTypes[j].Reserved {
				return !relTypes[i].Reserved // declarable types first
			}
			if relTypes[i].Count != relTypes[j].Count {
				return relTypes[i].Count > relTypes[j].Count
			}
			return relTypes[i].Type < relTypes[j].Type
		})
		if ns == relationNamespace {
			out := suggestOut{Tags: []graph.TagCount{}, Namespaces: graph.SeedNamespaces, RelationTypes: nonNil(relTypes)}
			return result(out, relationTypesText(relTypes))
		}
	}
	tags, err := s.svc.FindTags(ctx, graph.TagFilter{Namespace: ns})
	if err != nil {
		return nil, err
	}
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
	off, err := decodeOffset(in.Cursor)
	if err != nil {
		return nil, err
	}
	page, next := pageOf(list, off, s.pageLimit(in.Limit, 50))
	var b strings.Builder
	fmt.Fprintf(&b, "%d tag(s):", len(list))
	for _, t := range page {
		fmt.Fprintf(&b, " %s(%d)", t.Tag, t.Count)
	}
	b.WriteByte('\n')
	if next != "" {
		b.WriteString("More: call again with cursor=" + next + "\n")
	}
	out := suggestOut{Tags: nonNil(page), Namespaces: graph.SeedNamespaces, Total: len(list), NextCursor: next}
	if ns == "" {
		out.RelationTypes = nonNil(relTypes)
		b.WriteString(relationTypesText(relTypes))
	}
	return result(out, b.String())
}

// relationNamespace is the graph_suggest_tags namespace that lists relation types.
const relationNamespace = "relation"

func relationTypesText(types []graph.RelationTypeCount) string {
	var b strings.Builder
	b.WriteString("Relation types for graph_relate:")
	var reserved []string
	for _, rt := range types {
		if rt.Reserved {
			reserved = append(reserved, rt.Type)
			continue
		}
		fmt.Fprintf(&b, " %s(%d)", rt.Type, rt.Count)
	}
	b.WriteByte('\n')
	if len(reserved) > 0 {
		fmt.Fprintf(&b, "Observed only (never declared): %s.\n", strings.Join(reserved, ", "))
	}
	return b.String()
}
