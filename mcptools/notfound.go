package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// installNotFound makes a read of a resource that does not exist (an unknown node or
// robot under a template that matches any id) answer as the protocol says: resource not
// found, -32002 in the 2025-11-25 era and -32602 in 2026-07-28 — not the internal error
// mcp-go makes of a template handler's failure.
//
// mcp-go answers not-found itself, in the code of the request's era, only when no
// resource or template matches the URI; a handler's error always becomes -32603. So
// before the read, an unknown id's URI is replaced by one no template matches: the URI
// as the client sent it followed by the problem, separated by a space (a template's
// {+id} never matches a space). mcp-go's error then carries both: "handler not found for
// resource URI 'devgraph://node/identity:nope (unknown identity "nope"; …)'".
func (s *Server) installNotFound(hooks *server.Hooks) {
	hooks.AddBeforeReadResource(func(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
		if problem := s.missingResource(ctx, req.Params.URI); problem != "" {
			req.Params.URI = fmt.Sprintf("%s (%s)", req.Params.URI, problem)
		}
	})
}

// missingResource says why uri names nothing, or "" when it names something (or when a
// fault, not the id, is to blame: the handler reports those).
func (s *Server) missingResource(ctx context.Context, uri string) string {
	var err error
	switch {
	case strings.HasPrefix(uri, nodePrefix):
		raw := nodeID(uri)
		if raw == "" {
			return "no id after devgraph://node/; e.g. devgraph://node/identity:roland-jd-xi"
		}
		if graph.KindOf(raw) == graph.KindTag {
			return "" // a tag no node carries yet is an empty list, not a missing node
		}
		_, err = s.resolveNode(ctx, raw)
	case strings.HasPrefix(uri, robotPrefix):
		robot, ok := robotOf(uri)
		if !ok {
			return ""
		}
		_, err = s.svc.Robot(ctx, robot)
	default:
		return ""
	}
	switch graph.ErrorCode(err) {
	case graph.ENOTFOUND, graph.EINVALID:
		return sentences(graph.ErrorMessage(err), adviceText("", graph.ErrorSteps(err))) // next steps as tool calls, as a tool error says them
	}
	return ""
}

// robotOf is the robot a robot resource URI names (devgraph://robot/{+id}/state or
// /parameters), and whether the URI is one.
func robotOf(uri string) (string, bool) {
	rest := strings.TrimPrefix(uri, robotPrefix)
	for _, suffix := range []string{robotSuffix, robotParamsSuffix} {
		if r, ok := strings.CutSuffix(rest, suffix); ok && r != "" {
			return r, true
		}
	}
	return "", false
}
