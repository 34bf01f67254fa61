package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newUnbindCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unbind REF",
		Short: "remove a device's explicit binding",
		Example: `  devgraph unbind usb:3-3.2
  devgraph unbind usb:3-3.2 -m "lent to the other studio" --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnbind(cmd.Context(), c, args[0], c.e.stdout)
		},
	}
	addJSON(cmd, c, "print the device as JSON")
	return cmd
}

func runUnbind(ctx context.Context, o *common, ref string, out io.Writer) error {
	e := o.e
	return e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		d, err := svc.Unbind(ctx, ref)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, d)
		}
		fmt.Fprintf(out, "unbound %s (%s)\n", d.Ref, d.ID)
		return nil
	})
}
