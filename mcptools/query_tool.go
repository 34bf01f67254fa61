package mcptools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"devgraph/graph"
)

func (s *Server) queryTool() *toolDef {
	return &toolDef{
		name:  "graph_query",
		title: "Run a GraphQL query",
		desc: "Run a read-only GraphQL query over the whole graph (identities, devices with their match, robots, tags, notes, changelog, " +
			"find, match). The schema is the resource devgraph://schema. Use it for questions the other tools do not answer directly, " +
			"e.g. { identities(filter: {tags: [\"role:synth\"]}, first: 20) { edges { node { id name tags devices { ref present } } } } }. " +
			"Mutations are refused here: use the graph_* write tools. Lists are connections (first ≤ 500, after cursor); depth, alias, " +
			"complexity, size and time limits apply.",
		params: []param{
			{name: "query", typ: "string", required: true, maxLen: 64 * 1024, desc: "the GraphQL document", example: `"{ robots { ref state battery } }"`},
			{name: "variables", typ: "object", desc: "variables for the document", example: `{"id": "identity:jdxi"}`},
			{name: "operation_name", typ: "string", maxLen: 200, desc: "which operation to run when the document has several"},
		},
		out: outputSchema(
			outProp{"data", "object|null", "the query's result", false},
			outProp{"errors", "array", "GraphQL errors with extensions.code", false},
		),
		readOnly: true, idempotent: true,
		handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "GraphQL is not available on this server; use graph_find and graph_browse")
		},
	}
}

func (s *Server) schemaSDL() (string, error) {
	return "", graph.Errorf(graph.EUNAVAILABLE, "the GraphQL schema is not available on this server")
}
