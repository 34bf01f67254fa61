package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type traceOptions struct {
	*common
	port string
	in   bool
}

func newTraceCmd(c *common) *cobra.Command {
	o := &traceOptions{common: c}
	cmd := &cobra.Command{
		Use:   "trace NODE",
		Short: "follow a signal from a node (or --port) hop by hop to where it ends",
		Example: `  devgraph trace keystep
  devgraph trace keystep --port "MIDI OUT"
  devgraph trace roland-jd-xi --in --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTrace(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	cmd.Flags().StringVar(&o.port, "port", "", "start from this port only (the first hop leaves, or with --in enters, by it)")
	cmd.Flags().BoolVar(&o.in, "in", false, "trace upstream: where the signal into NODE comes from")
	addJSON(cmd, c, "print the trace as JSON")
	return cmd
}

func runTrace(ctx context.Context, o *traceOptions, node string, out io.Writer) error {
	opts := graph.TraceOptions{Port: o.port, Direction: graph.DirOut}
	if o.in {
		opts.Direction = graph.DirIn
	}
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		from, err := resolveNode(ctx, svc, node)
		if err != nil {
			return err
		}
		tr, err := svc.Trace(ctx, from, opts)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, tr)
		}
		return printTrace(out, tr)
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
