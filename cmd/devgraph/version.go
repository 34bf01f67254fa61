package main

import (
	"context"
	"fmt"
	"io"
	goruntime "runtime"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/migrations"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "dev"

func newVersionCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Example: `  devgraph version
  devgraph --version`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(cmd.Context(), c, c.e.stdout)
		},
	}
}

func runVersion(ctx context.Context, o *common, out io.Writer) error {
	_, err := fmt.Fprintf(out, "devgraph %s (%s, schema %d)\n", Version, goruntime.Version(), migrations.CurrentVersion)
	return err
}
