package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type unrelateOptions struct {
	*common
	fromPort string
	toPort   string
	dryRun   bool
}

func newUnrelateCmd(c *common) *cobra.Command {
	o := &unrelateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "unrelate REL | FROM TYPE TO",
		Short: "remove a declared relation: unrelate REL, or unrelate FROM TYPE TO",
		Example: `  devgraph unrelate rel:0190a4c2-…
  devgraph unrelate keystep cable roland-jd-xi --from-port "MIDI OUT" --to-port "MIDI IN"
  devgraph unrelate scout located_in studio-a --dry-run --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnrelate(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fromPort, "from-port", "", "the tuple's port on FROM")
	f.StringVar(&o.toPort, "to-port", "", "the tuple's port on TO")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and write nothing")
	addJSON(cmd, c, "print the result as JSON")
	return cmd
}

func runUnrelate(ctx context.Context, o *unrelateOptions, pos []string, out io.Writer) error {
	var in graph.RelationRemove
	switch len(pos) {
	case 1:
		if o.fromPort != "" || o.toPort != "" {
			return usagef("unrelate: --from-port and --to-port go with the tuple FROM TYPE TO, not a relation id")
		}
		in.ID = pos[0]
	case 3:
		in = graph.RelationRemove{From: pos[0], Type: pos[1], To: pos[2], FromPort: o.fromPort, ToPort: o.toPort}
	default:
		return usagef("unrelate: give a relation id (rel:…) or the tuple FROM TYPE TO; see `devgraph unrelate -h`")
	}
	in.DryRun = o.dryRun
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		ch, err := svc.Unrelate(ctx, in)
		if err != nil {
			return err
		}
		return printChange(out, o.asJSON(), ch, "nothing written")
	})
}
