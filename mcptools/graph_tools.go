package mcptools

// graphTools lists the graph_* tools, each in its own file by noun: find_tool.go,
// browse_tool.go, bind_tool.go (graph_unbound, graph_bind, graph_unbind), tag_tool.go
// (graph_tag, graph_suggest_tags), note_tool.go, identity_tool.go, changelog_tool.go,
// query_tool.go, relate_tool.go and trace_tool.go; input.go derives their input schemas
// from their argument structs, schema.go the output schemas from their result types,
// views.go holds the compact views they share and paging.go the cursors.
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

// pageLimit is a listing's page size: def when not given, never above the cap.
func (s *Server) pageLimit(n, def int) int {
	if n <= 0 {
		n = def
	}
	return min(n, s.opts.MaxPage)
}
