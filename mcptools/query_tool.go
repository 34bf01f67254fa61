package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// maxQueryText bounds the text rendering of a graph_query result; the structured
// result carries all of it (the executor's own limits bound that).
const maxQueryText = 8 << 10

type queryIn struct {
	Query         string         `json:"query" mcp:"required,max=65536"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operation_name" mcp:"max=200"`
}

func (s *Server) queryTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_query",
		title: "Run a GraphQL query",
		desc: "Run a read-only GraphQL query (schema: resource devgraph://schema) for what the other tools do not answer, e.g. " +
			"{ identities(filter: {tags: [\"role:synth\"]}, first: 20) { nodes { id name devices { ref present } } } }. Mutations " +
			"are refused.",
		out: outputSchema(
			outProp{"data", "object|null", "the query's result", false},
			outProp{"errors", "array", "GraphQL errors: message, path, extensions.code", false},
		),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.runQuery)
}

func (s *Server) runQuery(ctx context.Context, c *call, in queryIn) (*mcp.CallToolResult, error) {
	if s.opts.Exec == nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "GraphQL is not available on this server; use graph_find and graph_browse")
	}
	resp := s.opts.Exec.Execute(ctx, query.Request{
		Query: in.Query, Variables: in.Variables, OperationName: in.OperationName,
	}, true)
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode graphql response: %w", err)
	}
	// The encoder's bytes as they are: decoded into a map, the fields would be written
	// back in alphabetical order instead of the order the query asked for.
	out := json.RawMessage(b)
	if resp.Data == nil && len(resp.Errors) > 0 {
		// Nothing ran: the document itself is at fault (syntax, validation, limits,
		// a mutation). The model fixes the document.
		var msgs []string
		for _, e := range resp.Errors {
			m := e.Message
			if code, _ := e.Extensions["code"].(string); code != "" {
				m += " [" + code + "]"
			}
			msgs = append(msgs, m)
		}
		hint := " Check the document against devgraph://schema."
		res := mcp.NewToolResultError("graph_query: " + strings.Join(msgs, "; ") + hint)
		res.StructuredContent = out
		return res, nil
	}
	text := string(b)
	if len(text) > maxQueryText {
		text = text[:maxQueryText] + fmt.Sprintf("… (%d bytes in all; the structured result has everything — ask for fewer fields or a smaller first)", len(b))
	}
	return mcp.NewToolResultStructured(out, text), nil
}

func (s *Server) schemaSDL() (string, error) {
	if s.opts.Exec == nil {
		return "", graph.Errorf(graph.EUNAVAILABLE, "the GraphQL schema is not available on this server")
	}
	return s.opts.Exec.SDL(), nil
}
