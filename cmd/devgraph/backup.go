package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newBackupCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "write a consistent copy of the database to FILE",
		Example: `  devgraph backup ~/devgraph-$(date +%F).db
  devgraph --db studio.db backup /mnt/usb/studio.db`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBackup(cmd.Context(), c, args[0], c.e.stdout)
		},
	}
}

func runBackup(ctx context.Context, o *common, dst string, out io.Writer) error {
	e := o.e
	if _, err := os.Stat(dst); err == nil {
		return graph.FieldErrorf(graph.EINVALID, "file", "%s already exists; back up into a new file", dst)
	}
	return e.withService(ctx, o, openRead, func(ctx context.Context, svc graph.Service) error {
		n, err := writeAtomically(dst, func(w io.Writer) (int64, error) { return svc.Backup(ctx, w) })
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "backed up %s to %s (%d bytes)\n", e.graphName(o), dst, n)
		return nil
	})
}

// writeAtomically writes a temporary file beside dst and renames it into place once the
// write and an fsync succeeded, so dst is never half written.
