package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newUnboundCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unbound",
		Short: "list present devices no identity is bound to, with their best candidate",
		Example: `  devgraph unbound
  devgraph unbound -o wide
  devgraph --demo unbound --json`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnbound(cmd.Context(), c, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runUnbound(ctx context.Context, o *common, out io.Writer) error {
	e := o.e
	return e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		devs, err := svc.Unbound(ctx)
		if err != nil {
			return err
		}
		warnSources(ctx, e, svc)
		if o.asJSON() {
			return writeJSON(out, list[*graph.DeviceView]{Items: nonNil(devs), Total: len(devs)})
		}
		t := newTable(out, "REF", "NAME", "BEST CANDIDATE", "MATCH", "WHY", "FINGERPRINTS")
		for _, d := range devs {
			cand, why := "-", "-"
			if d.Match != nil {
				if d.Match.IdentityID != "" {
					cand = d.Match.IdentityID
				}
				if d.Match.Summary != "" {
					why = clip(d.Match.Summary, 80)
				}
			}
			t.row(d.Ref, clip(d.Name, 32), cand, fmtScore(d.Match), why, fmtFingerprints(d.Fingerprints))
		}
		if err := t.flush(); err != nil {
			return err
		}
		if len(devs) > 0 {
			fmt.Fprintf(e.stderr, "bind one with: devgraph bind REF --new \"NAME\" (or bind REF IDENTITY)\n")
		}
		return nil
	})
}
