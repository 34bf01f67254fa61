package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// traceHopView is one hop of a trace or path, oriented the way it was walked, with the
// names of both ends so the hop reads on its own.
type traceHopView struct {
	Depth    int    `json:"depth" jsonschema:"hops from the start; 1 for a hop leaving it"`
	Parent   int    `json:"parent" jsonschema:"index in hops of the hop this one continues; -1 when it leaves the start"`
	Relation string `json:"relation" jsonschema:"the relation crossed: rel:… (declared) or obs:… (observed)"`
	Type     string `json:"type"`
	Observed bool   `json:"observed" jsonschema:"true: seen live by a source; false: declared"`
	Source   string `json:"source,omitempty" jsonschema:"observed: usb, alsa or pipewire"`
	From     string `json:"from" jsonschema:"the vertex the hop leaves (a bound identity stands for its devices)"`
	FromName string `json:"from_name"`
	FromNode string `json:"from_node,omitempty" jsonschema:"the node the relation hangs off when it is not the vertex itself (a bound device)"`
	FromPort string `json:"from_port,omitempty"`
	To       string `json:"to" jsonschema:"the vertex the hop reaches"`
	ToName   string `json:"to_name"`
	ToNode   string `json:"to_node,omitempty"`
	ToPort   string `json:"to_port,omitempty"`
	Reverse  bool   `json:"reverse,omitempty" jsonschema:"walked against the relation's direction"`
	Cycle    bool   `json:"cycle,omitempty" jsonschema:"to is already on this branch: not followed further"`
	End      bool   `json:"end,omitempty" jsonschema:"nothing leaves to: the signal ends there"`
}

// traceVertexView is one vertex a trace or path reached.
type traceVertexView struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind" jsonschema:"identity, device or client"`
	Name    string   `json:"name"`
	Devices []string `json:"devices,omitempty" jsonschema:"an identity's present bound devices (binding is not a hop)"`
	Infra   bool     `json:"infra,omitempty" jsonschema:"an infrastructure device: a hub or a root hub (its USB controller)"`
	Depth   int      `json:"depth"`
}

// traceOut is graph_trace's structured result, for a trace and a path alike.
type traceOut struct {
	Mode        string            `json:"mode" jsonschema:"trace (from a node or port, hop by hop) or path (fewest hops between from and to)"`
	From        string            `json:"from" jsonschema:"the start vertex"`
	FromName    string            `json:"from_name"`
	Port        string            `json:"port,omitempty" jsonschema:"trace: only relations leaving (or entering) this port on the first hop"`
	Direction   string            `json:"direction,omitempty" jsonschema:"trace: out (downstream) or in (upstream)"`
	To          string            `json:"to,omitempty" jsonschema:"path: the end vertex"`
	ToName      string            `json:"to_name,omitempty"`
	Directed    bool              `json:"directed,omitempty" jsonschema:"path: relations followed only from → to"`
	Found       bool              `json:"found" jsonschema:"trace: at least one hop; path: a path exists within the bounds"`
	Hops        []traceHopView    `json:"hops" jsonschema:"trace: the tree of hops, depth first; path: the chain in order"`
	Ends        []string          `json:"ends" jsonschema:"vertices where a branch ends (path: the end vertex when found)"`
	Vertices    []traceVertexView `json:"vertices" jsonschema:"every vertex reached, the start first"`
	Lines       []string          `json:"lines" jsonschema:"each branch from the start to its end on one line, as the text shows it"`
	Truncated   bool              `json:"truncated" jsonschema:"a bound (depth, vertices, time) cut the walk"`
	TruncatedBy string            `json:"truncated_by,omitempty" jsonschema:"depth, vertices or time"`
	Visited     int               `json:"visited" jsonschema:"vertices visited"`
}

// maxTraceLines caps the branches the text spells out; the structured hops hold all.
const maxTraceLines = 40

type traceIn struct {
	From      string   `json:"from" mcp:"required,max=300"`
	Port      string   `json:"port" mcp:"max=64,svc"`
	Direction string   `json:"direction" jsonschema:"trace: default out" mcp:"enum=out|in,svc"`
	To        string   `json:"to" mcp:"max=300"`
	Directed  bool     `json:"directed"`
	Types     []string `json:"types" mcp:"max=16"`
	MaxDepth  int      `json:"max_depth" mcp:"min=1,max=8,svc"`
}

func (s *Server) traceTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_trace",
		title: "Trace a signal, or find the path between two things",
		desc: "Trace (from, port?, direction?): follow cables, links, subscriptions and controls hop by hop to where the signal ends. " +
			"Path (from, to, directed?, types?, max_depth?): the fewest hops between two nodes over every relation, " +
			"declared or observed (which hub and controller a device hangs off); a bound identity and its devices are one vertex. " +
			"Bounded (64 hops, 500 vertices, 2 s): truncated_by says which cut it.",
		out: typedSchema[traceOut](map[string][]string{
			"properties.mode":         {"trace", "path"},
			"properties.direction":    {graph.DirOut, graph.DirIn},
			"properties.truncated_by": {graph.TruncDepth, graph.TruncVertices, graph.TruncTime},
		}),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.trace)
}

func (s *Server) trace(ctx context.Context, c *call, in traceIn) (*mcp.CallToolResult, error) {
	from, to := strings.TrimSpace(in.From), strings.TrimSpace(in.To)
	if to == "" {
		for _, f := range []string{"directed", "types", "max_depth"} {
			if c.has(f) {
				return nil, graph.FieldErrorf(graph.EINVALID, f, "graph_trace: %s applies to a path; give to as well, or drop %s to trace from %s", f, f, from)
			}
		}
		res, err := s.svc.Trace(ctx, from, graph.TraceOptions{Port: in.Port, Direction: in.Direction})
		if err != nil {
			return nil, err
		}
		out := viewTrace(res)
		return result(out, traceText(out))
	}
	for _, f := range []string{"port", "direction"} {
		if c.has(f) {
			return nil, graph.FieldErrorf(graph.EINVALID, f, "graph_trace: %s applies to a trace; drop to to trace from %s, or drop %s to find the path", f, from, f)
		}
	}
	if c.has("max_depth") && in.MaxDepth < 1 {
		// 0 would mean the default; given, it is out of range on every interface.
		return nil, graph.FieldErrorf(graph.EINVALID, "max_depth", "max_depth %d: want 1-%d hops (leave it out for %d)", in.MaxDepth, graph.MaxPathDepth, graph.MaxPathDepth)
	}
	res, err := s.svc.Path(ctx, from, to, graph.PathOptions{Types: in.Types, MaxDepth: in.MaxDepth, Directed: in.Directed})
	if err != nil {
		return nil, err
	}
	out := viewPath(res, in.Directed)
	return result(out, pathText(out))
}

func viewVertices(vs []*graph.Vertex) ([]traceVertexView, map[string]string) {
	out := make([]traceVertexView, 0, len(vs))
	names := make(map[string]string, len(vs))
	for _, v := range vs {
		out = append(out, traceVertexView{ID: v.ID, Kind: string(v.Kind), Name: orID(v.Name, v.ID), Devices: v.Nodes, Infra: v.Infra, Depth: v.Depth})
		names[v.ID] = orID(v.Name, v.ID)
	}
	return out, names
}

func viewHop(h graph.Hop, names map[string]string) traceHopView {
	return traceHopView{Relation: h.Relation, Type: h.Type, Observed: h.Observed, Source: h.Source,
		From: h.From, FromName: orID(names[h.From], h.From), FromNode: h.FromNode, FromPort: h.FromPort,
		To: h.To, ToName: orID(names[h.To], h.To), ToNode: h.ToNode, ToPort: h.ToPort, Reverse: h.Reverse}
}

func viewTrace(res *graph.TraceResult) traceOut {
	verts, names := viewVertices(res.Vertices)
	out := traceOut{Mode: "trace", From: res.From, FromName: orID(names[res.From], res.From), Port: res.Port,
		Direction: res.Direction, Found: len(res.Hops) > 0, Hops: make([]traceHopView, 0, len(res.Hops)),
		Ends: nonNil(res.Ends), Vertices: verts, Truncated: res.Truncated, TruncatedBy: res.TruncatedBy, Visited: res.Visited}
	if out.Direction == "" {
		out.Direction = graph.DirOut
	}
	for _, h := range res.Hops {
		v := viewHop(h.Hop, names)
		v.Depth, v.Parent, v.Cycle, v.End = h.Depth, h.Parent, h.Cycle, h.End
		out.Hops = append(out.Hops, v)
	}
	out.Lines = branchLines(out)
	return out
}

func viewPath(res *graph.PathResult, directed bool) traceOut {
	verts, names := viewVertices(res.Vertices)
	out := traceOut{Mode: "path", From: res.From, FromName: orID(names[res.From], res.From), To: res.To,
		ToName: orID(names[res.To], res.To), Directed: directed, Found: res.Found, Hops: make([]traceHopView, 0, len(res.Hops)),
		Ends: []string{}, Vertices: verts, Truncated: res.Truncated, TruncatedBy: res.TruncatedBy, Visited: res.Visited}
	for i, h := range res.Hops {
		v := viewHop(h, names)
		v.Depth, v.Parent = i+1, i-1
		out.Hops = append(out.Hops, v)
	}
	if res.Found {
		out.Ends = []string{res.To}
		if len(out.Hops) > 0 {
			out.Hops[len(out.Hops)-1].End = true
		}
	}
	out.Lines = branchLines(out)
	return out
}

// branchLines renders every branch of the hop tree from the start to its leaf on one
// line: "KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi —subscribed*→ Bitwig Studio (end)".
func branchLines(out traceOut) []string {
	hasChild := make([]bool, len(out.Hops))
	for _, h := range out.Hops {
		if h.Parent >= 0 && h.Parent < len(out.Hops) {
			hasChild[h.Parent] = true
		}
	}
	lines := []string{}
	for i, h := range out.Hops {
		if hasChild[i] {
			continue
		}
		var chain []traceHopView
		for j, guard := i, 0; j >= 0 && j < len(out.Hops) && guard <= len(out.Hops); j, guard = out.Hops[j].Parent, guard+1 {
			chain = append(chain, out.Hops[j])
		}
		var b strings.Builder
		b.WriteString(out.FromName)
		for k := len(chain) - 1; k >= 0; k-- {
			hop := chain[k]
			writeHop(&b, hop.FromPort, hop.Type, hop.ToPort, hop.Observed, hop.Reverse)
			b.WriteString(hop.ToName)
		}
		switch {
		case h.Cycle:
			b.WriteString(" (cycle: already on this branch)")
		case h.End:
			b.WriteString(" (end)")
		default:
			b.WriteString(" (cut by a bound)")
		}
		lines = append(lines, b.String())
	}
	return lines
}

func observedNote(out traceOut) string {
	for _, h := range out.Hops {
		if h.Observed {
			return "* observed live by a source (not declared).\n"
		}
	}
	return ""
}

func truncNote(out traceOut) string {
	if !out.Truncated {
		return ""
	}
	what := map[string]string{
		graph.TruncDepth:    "the hop limit",
		graph.TruncVertices: "the vertex limit",
		graph.TruncTime:     "the time limit",
	}[out.TruncatedBy]
	return fmt.Sprintf("Truncated by %s (truncated_by %s, %d vertices visited): start nearer to what you want.\n", orID(what, "a bound"), out.TruncatedBy, out.Visited)
}

func traceText(out traceOut) string {
	var b strings.Builder
	start := out.FromName
	if out.Port != "" {
		start += " [" + out.Port + "]"
	}
	way := "downstream"
	if out.Direction == graph.DirIn {
		way = "upstream"
	}
	if len(out.Hops) == 0 {
		fmt.Fprintf(&b, "Nothing leads %s from %s: no cable, linked, subscribed or controls relation goes that way. Declare one with graph_relate, or look at its relations with graph_browse.\n", way, start)
		b.WriteString(truncNote(out))
		return b.String()
	}
	endNames := make([]string, 0, len(out.Ends))
	for _, v := range out.Vertices {
		for _, e := range out.Ends {
			if v.ID == e {
				endNames = append(endNames, v.Name)
			}
		}
	}
	fmt.Fprintf(&b, "Trace %s from %s: %d hop(s), %d branch(es), ends: %s.\n", way, start, len(out.Hops), len(out.Lines), orID(strings.Join(endNames, ", "), "none"))
	for i, l := range out.Lines {
		if i == maxTraceLines {
			fmt.Fprintf(&b, "… and %d more branch(es) (all are in hops).\n", len(out.Lines)-maxTraceLines)
			break
		}
		b.WriteString(l + "\n")
	}
	b.WriteString(observedNote(out))
	b.WriteString(truncNote(out))
	return b.String()
}

func pathText(out traceOut) string {
	var b strings.Builder
	if !out.Found {
		fmt.Fprintf(&b, "No path from %s to %s", out.FromName, out.ToName)
		if out.Directed {
			b.WriteString(" following relations in their direction (try without directed)")
		}
		fmt.Fprintf(&b, "; %d vertices visited.\n", out.Visited)
		b.WriteString(truncNote(out))
		return b.String()
	}
	fmt.Fprintf(&b, "Path from %s to %s, %d hop(s):\n", out.FromName, out.ToName, len(out.Hops))
	if len(out.Hops) == 0 {
		b.WriteString(out.FromName + " (the same vertex: a bound identity and its devices are one)\n")
	}
	for _, l := range out.Lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(observedNote(out))
	b.WriteString(truncNote(out))
	return b.String()
}
