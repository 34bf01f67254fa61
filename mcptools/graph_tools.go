package mcptools

import (
	"github.com/devgraph/devgraph/graph"
)

const idForms = "Ids: identity:<slug> (or the bare slug), device:<key>, a device ref such as usb:3-3.2, alsa:card:PCH, robot:scout, note:<uuid>, tag:<ns>:<value>."

var whyParam = param{name: "why", typ: "string", maxLen: graph.MaxMsgLen, service: true,
	desc: "optional reason, recorded as the changelog message of this change", example: `"user asked to label the studio synths"`}

// graphTools lists the graph_* tools, each in its own file by noun: find_tool.go,
// browse_tool.go, bind_tool.go (graph_unbound, graph_bind, graph_unbind), tag_tool.go
// (graph_tag, graph_suggest_tags), note_tool.go, identity_tool.go, changelog_tool.go,
// query_tool.go, relate_tool.go and trace_tool.go; paging.go holds the cursors and list
// helpers they share, schema.go the output schemas derived from result types.
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
		s.relateTool(),
		s.traceTool(),
	}
}
