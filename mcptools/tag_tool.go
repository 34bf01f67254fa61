package mcptools

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

func (s *Server) tagTool() *toolDef {
	return &toolDef{
		name:  "graph_tag",
		title: "Add or remove tags",
		desc: "Add and/or remove tags on an identity, device or robot. Tags are namespace:value, lowercase, [a-z0-9][a-z0-9._-]* " +
			"on each side (namespace ≤ 32, value ≤ 64 chars); input is normalised (\"Role: Synth\" → role:synth). Call " +
			"graph_suggest_tags first and reuse existing terms. Adding a tag already there or removing one absent changes nothing. " + idForms,
		params: []param{
			{name: "target", typ: "string", required: true, maxLen: 300, desc: "the node to tag", example: `"identity:roland-jd-xi"`},
			{name: "add", typ: "array", maxLen: graph.MaxTagsPerCall, service: true, desc: "tags to add", example: `["role:synth", "location:studio"]`},
			{name: "remove", typ: "array", maxLen: graph.MaxTagsPerCall, service: true, desc: "tags to remove", example: `["status:loaned"]`},
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

func (s *Server) suggestTagsTool() *toolDef {
	return &toolDef{
		name:  "graph_suggest_tags",
		title: "Suggest tags to reuse",
		desc: "List the tag vocabulary: the seeded tags (role, capability, manufacturer, form-factor, location, status, project) and " +
			"every tag in use with how many nodes carry it, most used first. Call it before graph_tag so you reuse existing terms " +
			"instead of inventing synonyms. Filter by namespace and/or a text fragment. The relation types graph_relate takes are listed " +
			"too, in relation_types (namespace relation lists only them): the seeded ones (cable, controls, mounted_on, part_of, " +
			"located_in, powered_by), every type in use with its count, and the reserved observed ones (via, linked, subscribed) — " +
			"reuse them before minting a new type with new_type: true.",
		params: []param{
			{name: "namespace", typ: "string", maxLen: 32, desc: "only this namespace, e.g. role; relation lists the relation types", example: `"role"`},
			{name: "text", typ: "string", maxLen: 64, desc: "only tags containing this text", example: `"synth"`},
			s.limitParam(50), cursorParam,
		},
		out: outputSchema(
			outProp{"tags", "array", "tag, count (nodes carrying it), seeded", true},
			outProp{"namespaces", "array", "the seeded namespaces", true},
			outProp{"total", "integer", "tags in all pages", true},
			outProp{"next_cursor", "string", "pass as cursor for the next page", false},
			outProp{"relation_types", "array", "the relation types graph_relate takes: type, count (declared relations using it), seeded, reserved (observed only); without a namespace or with namespace relation", false},
		),
		readOnly: true, idempotent: true,
		handler: s.suggestTags,
	}
}

func (s *Server) suggestTags(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	ns := strings.ToLower(strings.TrimSpace(c.str("namespace")))
	text := strings.ToLower(strings.TrimSpace(c.str("text")))
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
			out := map[string]any{"tags": []graph.TagCount{}, "namespaces": graph.SeedNamespaces, "total": 0, "next_cursor": "", "relation_types": nonNil(relTypes)}
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
	out := map[string]any{"tags": nonNil(page), "namespaces": graph.SeedNamespaces, "total": len(list), "next_cursor": next}
	if ns == "" {
		out["relation_types"] = nonNil(relTypes)
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
