package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type exportOptions struct {
	*common
	format string
	around string
	depth  int
}

func newExportCmd(c *common) *cobra.Command {
	o := &exportOptions{common: c}
	cmd := &cobra.Command{
		Use:   "export [FILE]",
		Short: "write everything as JSON lines, or draw the graph (--format dot|mermaid), to FILE or stdout",
		Example: `  devgraph export backup.jsonl
  devgraph export --format dot | dot -Tsvg > studio.svg
  devgraph export studio.mmd --around keystep --depth 2`,
		Args: nargs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), o, args, cmd.Flags().Changed("depth"), c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "jsonl (everything, for import; the default), dot (Graphviz) or mermaid (a flowchart); a FILE ending .dot, .gv or .mmd picks it too")
	f.StringVar(&o.around, "around", "", "draw only what is within --depth of this node (dot, mermaid)")
	f.IntVar(&o.depth, "depth", 0, fmt.Sprintf("how far from --around to draw, 1..%d (default 1)", graph.MaxSubgraphDepth))
	return cmd
}

// runExport writes the export; depthSet says --depth was given.
func runExport(ctx context.Context, o *exportOptions, pos []string, depthSet bool, out io.Writer) error {
	e := o.e
	var err error
	file := ""
	if len(pos) == 1 && pos[0] != "-" {
		file = pos[0]
	}
	if o.format == "" {
		o.format = formatOf(file)
	}
	var draw func(io.Writer, *graph.Subgraph) error
	switch o.format {
	case "jsonl":
		if o.around != "" || depthSet {
			return usagef("export: --around and --depth draw a picture; give --format dot or --format mermaid with them")
		}
	case "dot":
		draw = writeDOT
	case "mermaid":
		draw = writeMermaid
	default:
		return usagef("export: unknown --format %q; want jsonl, dot or mermaid", o.format)
	}
	if depthSet && o.around == "" {
		return usagef("export: --depth goes with --around NODE (without it the whole graph is drawn)")
	}
	if depthSet && o.depth < 1 {
		// 0 would mean the default; given, it is out of range on every interface.
		return graph.FieldErrorf(graph.EINVALID, "depth", "--depth %d: want 1-%d hops around the node (leave it out for 1)", o.depth, graph.MaxSubgraphDepth)
	}
	return e.withService(ctx, o.common, openRead, func(ctx context.Context, svc graph.Service) error {
		write := func(w io.Writer) error { return svc.Export(ctx, w) }
		if draw != nil {
			node := ""
			if o.around != "" {
				if node, err = resolveNode(ctx, svc, o.around); err != nil {
					return err
				}
			}
			g, err := svc.Subgraph(ctx, node, graph.NeighborOptions{Depth: o.depth})
			if err != nil {
				return err
			}
			// Stopping at --depth is what was asked; another bound cutting it is news.
			if g.Truncated && g.TruncatedBy != graph.TruncDepth {
				fmt.Fprintf(e.stderr, "export: the picture is cut short by %s after %s; draw less with --around NODE --depth N\n", g.TruncatedBy, plural(g.Visited, "vertex", "vertices"))
			}
			write = func(w io.Writer) error { return draw(w, g) }
		}
		if file == "" {
			bw := bufio.NewWriterSize(out, 1<<20)
			if err := write(bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		cw := &countWriter{}
		if _, err := exportTo(file, func(w io.Writer) (int64, error) {
			cw.w = w
			return 0, write(cw)
		}); err != nil {
			return err
		}
		what := ""
		if draw != nil {
			what = o.format + ", "
		}
		fmt.Fprintf(out, "exported %s to %s (%s%d bytes)\n", e.graphName(o.common), file, what, cw.n)
		return nil
	})
}
