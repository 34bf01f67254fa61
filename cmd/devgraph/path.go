package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type pathOptions struct {
	*common
	directed bool
	maxDepth int
	types    []string
}

func newPathCmd(c *common) *cobra.Command {
	o := &pathOptions{common: c}
	cmd := &cobra.Command{
		Use:   "path FROM TO",
		Short: "the shortest chain of relations between two nodes",
		Example: `  devgraph path keystep roland-jd-xi
  devgraph path usb:3-3.4 usb:usb3 --type via
  devgraph path keystep roland-jd-xi --directed --max-depth 4 --json`,
		Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("max-depth") && o.maxDepth < 1 {
				// 0 would mean the default; given, it is out of range on every interface.
				return graph.FieldErrorf(graph.EINVALID, "max_depth", "--max-depth %d: want 1-%d hops (leave it out for %d)", o.maxDepth, graph.MaxPathDepth, graph.MaxPathDepth)
			}
			return runPath(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.directed, "directed", false, "follow relations only from → to (default: either way)")
	f.IntVar(&o.maxDepth, "max-depth", 0, fmt.Sprintf("at most this many hops, 1..%d (default %d)", graph.MaxPathDepth, graph.MaxPathDepth))
	f.StringArrayVar(&o.types, "type", nil, "only relations of this `TYPE` (repeatable)")
	addJSON(cmd, c, "print the path as JSON")
	return cmd
}

func runPath(ctx context.Context, o *pathOptions, pos []string, out io.Writer) error {
	opts := graph.PathOptions{Types: o.types, MaxDepth: o.maxDepth, Directed: o.directed}
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		from, err := resolveNode(ctx, svc, pos[0])
		if err != nil {
			return err
		}
		to, err := resolveNode(ctx, svc, pos[1])
		if err != nil {
			return err
		}
		p, err := svc.Path(ctx, from, to, opts)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, p)
		}
		return printPath(out, p)
	})
}
