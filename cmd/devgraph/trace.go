package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

func runTrace(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("trace", "NODE [--port P] [--in] [--json]", true)
	jsonOut := fs.Bool("json", false, "print the trace as JSON")
	port := fs.String("port", "", "start from this port only (the first hop leaves, or with --in enters, by it)")
	in := fs.Bool("in", false, "trace upstream: where the signal into NODE comes from")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	o := graph.TraceOptions{Port: *port, Direction: graph.DirOut}
	if *in {
		o.Direction = graph.DirIn
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		from, err := resolveNode(ctx, svc, pos[0])
		if err != nil {
			return err
		}
		tr, err := svc.Trace(ctx, from, o)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, tr)
		}
		return printTrace(e.stdout, tr)
	})
}

func runPath(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("path", "FROM TO [--directed] [--type T]… [--max-depth N] [--json]", true)
	jsonOut := fs.Bool("json", false, "print the path as JSON")
	directed := fs.Bool("directed", false, "follow relations only from → to (default: either way)")
	maxDepth := fs.Int("max-depth", 0, fmt.Sprintf("at most this many hops, 1..%d (default %d)", graph.MaxPathDepth, graph.MaxPathDepth))
	var types stringList
	fs.Var(&types, "type", "only relations of this type (repeatable)")
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flagT) { set[f.Name] = true })
	if set["max-depth"] && *maxDepth < 1 {
		// 0 would mean the default; given, it is out of range on every interface.
		return graph.FieldErrorf(graph.EINVALID, "max_depth", "--max-depth %d: want 1-%d hops (leave it out for %d)", *maxDepth, graph.MaxPathDepth, graph.MaxPathDepth)
	}
	o := graph.PathOptions{Types: types, MaxDepth: *maxDepth, Directed: *directed}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		from, err := resolveNode(ctx, svc, pos[0])
		if err != nil {
			return err
		}
		to, err := resolveNode(ctx, svc, pos[1])
		if err != nil {
			return err
		}
		p, err := svc.Path(ctx, from, to, o)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, p)
		}
		return printPath(e.stdout, p)
	})
}

// names maps vertex ids to what a person calls them.
type names map[string]string

func vertexNames(vs []*graph.Vertex) names {
	n := names{}
	for _, v := range vs {
		if v.Name != "" {
			n[v.ID] = v.Name
		}
	}
	return n
}

func (n names) of(id string) string {
	if s, ok := n[id]; ok {
		return s
	}
	return id
}

// hopText is one hop as a person reads it, without its start:
// " [MIDI OUT] → cable → [MIDI IN] JD-Xi", or "← via ←" for a hop walked against the
// relation's direction. The ports stand beside the vertex they belong to.
func hopText(n names, h graph.Hop) string {
	var sb strings.Builder
	if h.FromPort != "" {
		sb.WriteString(" [" + h.FromPort + "]")
	}
	arrow := "→"
	if h.Reverse {
		arrow = "←"
	}
	sb.WriteString(" " + arrow + " " + h.Type + " " + arrow + " ")
	if h.ToPort != "" {
		sb.WriteString("[" + h.ToPort + "] ")
	}
	sb.WriteString(n.of(h.To))
	return sb.String()
}

// printTrace draws the trace as a tree: a stretch without forks stays on one line, each
// fork starts indented branches, and every branch says how it ends.
//
//	KeyStep [MIDI OUT] → cable → [MIDI IN] JD-Xi → subscribed → Bitwig Studio (end)
func printTrace(w io.Writer, tr *graph.TraceResult) error {
	n := vertexNames(tr.Vertices)
	children := map[int][]int{} // hop index → the hops continuing it; -1 for the start
	for i, h := range tr.Hops {
		children[h.Parent] = append(children[h.Parent], i)
	}
	var sb strings.Builder
	sb.WriteString(n.of(tr.From))
	if len(tr.Hops) == 0 {
		if tr.Port != "" {
			// The port only shows when no hop names it.
			sb.WriteString(" [" + tr.Port + "]")
		}
		if tr.Direction == graph.DirIn {
			sb.WriteString(": nothing traced enters it\n")
		} else {
			sb.WriteString(": nothing traced leaves it\n")
		}
	}
	var walk func(parent int, indent string)
	walk = func(parent int, indent string) {
		kids := children[parent]
		if len(kids) == 1 {
			writeTraceHop(&sb, n, tr.Hops[kids[0]])
			walk(kids[0], indent)
			return
		}
		if len(kids) == 0 {
			sb.WriteString("\n")
			return
		}
		sb.WriteString("\n")
		for i, k := range kids {
			branch, next := "├─", "│  "
			if i == len(kids)-1 {
				branch, next = "└─", "   "
			}
			sb.WriteString(indent + branch)
			writeTraceHop(&sb, n, tr.Hops[k])
			walk(k, indent+next)
		}
	}
	if len(tr.Hops) > 0 {
		walk(-1, "")
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	if len(tr.Ends) > 0 {
		ends := make([]string, len(tr.Ends))
		for i, id := range tr.Ends {
			ends[i] = endText(n, id)
		}
		fmt.Fprintf(w, "ends: %s\n", strings.Join(ends, ", "))
	}
	printBounded(w, tr.Bounded, "trace")
	return nil
}

func writeTraceHop(sb *strings.Builder, n names, h graph.TraceHop) {
	sb.WriteString(hopText(n, h.Hop))
	switch {
	case h.Cycle:
		sb.WriteString(" (cycle: already on this branch)")
	case h.End:
		sb.WriteString(" (end)")
	}
}

// endText is "Bitwig Studio (client:alsa:Bitwig Studio)", or the id alone when it has no
// other name.
func endText(n names, id string) string {
	if name := n.of(id); name != id {
		return name + " (" + id + ")"
	}
	return id
}

// printPath writes the chain on one line, then how far it is.
//
//	FT232R USB UART → via → USB 2.0 Hub → via → xHCI Host Controller (2 hops)
func printPath(w io.Writer, p *graph.PathResult) error {
	n := vertexNames(p.Vertices)
	if !p.Found {
		why := "no path"
		if p.Truncated {
			why += " within the bounds"
		}
		fmt.Fprintf(w, "%s between %s and %s\n", why, endText(n, p.From), endText(n, p.To))
		printBounded(w, p.Bounded, "path")
		return nil
	}
	var sb strings.Builder
	sb.WriteString(n.of(p.From))
	for _, h := range p.Hops {
		sb.WriteString(hopText(n, h))
	}
	fmt.Fprintf(&sb, " (%s)\n", plural(len(p.Hops), "hop", "hops"))
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return err
	}
	printBounded(w, p.Bounded, "path")
	return nil
}

// printBounded says when a bound cut the traversal short, and how to see more.
func printBounded(w io.Writer, b graph.Bounded, what string) {
	if !b.Truncated {
		return
	}
	by := b.TruncatedBy
	if by == "" {
		by = "a bound"
	}
	fmt.Fprintf(w, "truncated by %s after %s: the %s may go on further\n", by, plural(b.Visited, "vertex", "vertices"), what)
}
