package mcptools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// Toolsets, as `serve --tools` names them (the GitHub MCP server's --toolsets is the
// model): graph the reading tools, edit the writing ones, robots the robot tools.
const (
	toolsetGraph  = "graph"
	toolsetEdit   = "edit"
	toolsetRobots = "robots"
)

// Toolsets lists the toolset names Options.Toolsets takes.
var Toolsets = []string{toolsetGraph, toolsetEdit, toolsetRobots}

func checkToolsets(sets []string) error {
	if sets != nil && len(sets) == 0 {
		return graph.FieldErrorf(graph.EINVALID, "tools", "no toolset chosen; name one or more of %s", strings.Join(Toolsets, ", "))
	}
	for _, t := range sets {
		if !slices.Contains(Toolsets, t) {
			return graph.FieldErrorf(graph.EINVALID, "tools", "unknown toolset %q; the toolsets are %s", t, strings.Join(Toolsets, ", "))
		}
	}
	return nil
}

func hasToolset(sets []string, name string) bool {
	return sets == nil && name != toolsetRobots || slices.Contains(sets, name)
}

// serverTools returns the tools of the given toolsets this server offers, ready for
// mcp-go: those chosen by Options.Toolsets, less the writing ones in read-only mode, or
// while Options.Writable says the graph takes no writes (robot_stop stays; a tool with a
// read-only variant is replaced by it). Called under robotsMu, or before the server is
// shared.
func (s *Server) serverTools(sets ...string) []server.ServerTool {
	var out []server.ServerTool
	for _, t := range s.tools {
		if !slices.Contains(sets, t.set) || t.set != toolsetRobots && !hasToolset(s.opts.Toolsets, t.set) {
			continue
		}
		if (s.opts.ReadOnly || s.blocked) && t.write {
			if t.readOnlyVariant == nil {
				continue
			}
			t = t.readOnlyVariant
		}
		out = append(out, server.ServerTool{Tool: t.tool(), Handler: s.wrap(t)})
	}
	return out
}

// showRobots registers the robot tools once; mcp-go tells every session that holds one
// (notifications/tools/list_changed).
func (s *Server) showRobots() {
	s.robotsMu.Lock()
	defer s.robotsMu.Unlock()
	if s.robotsShown {
		return
	}
	s.robotsShown = true
	s.mcp.AddTools(s.serverTools(toolsetRobots)...)
	s.log.Debug("mcp: robot tools offered")
}

// writeStateChanged offers the tools Options.Writable's state allows, when it changed
// since last offered: all of them once writes are taken again, the read-only set while
// they are refused. mcp-go tells every session (notifications/tools/list_changed).
func (s *Server) writeStateChanged() {
	s.robotsMu.Lock()
	defer s.robotsMu.Unlock()
	blocked := s.opts.Writable.ReadOnly() != ""
	if blocked == s.blocked {
		return
	}
	s.blocked = blocked
	sets := []string{toolsetGraph, toolsetEdit}
	if s.robotsShown {
		sets = append(sets, toolsetRobots)
	}
	s.mcp.SetTools(s.serverTools(sets...)...)
	if blocked {
		s.log.Info("mcp: the graph takes no writes now; the writing tools are withdrawn until it does", "why", s.opts.Writable.ReadOnly())
	} else {
		s.log.Info("mcp: the graph takes writes again; the writing tools are offered again")
	}
}

// robotSeen is told of a robot's change or a robot event: by default the robot tools
// then appear.
func (s *Server) robotSeen() {
	s.robotsMu.Lock()
	auto, shown := s.robotsAuto, s.robotsShown
	s.robotsMu.Unlock()
	if auto && !shown {
		s.showRobots()
	}
}

// checkRobots offers the robot tools when a robot is stored or driven already.
func (s *Server) checkRobots(ctx context.Context) {
	if _, total, _, err := s.opts.Devices.FindDevices(ctx, graph.DeviceFilter{All: true, Source: "robot", First: 1}); err == nil && total > 0 {
		s.showRobots()
		return
	}
	if list, err := s.svc.Robots(ctx); err == nil && len(list) > 0 {
		s.showRobots()
	}
}

// ParseToolsets reads `--tools graph,edit,robots`.
func ParseToolsets(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if out == nil {
		out = []string{}
	}
	if err := checkToolsets(out); err != nil {
		return nil, fmt.Errorf("--tools %q: %s", s, graph.ErrorMessage(err))
	}
	return out, nil
}
