package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd is the hidden `devgraph __man DIR` behind `make man`: one man page per
// command, written from the command tree so they never drift from the help.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "__man DIR",
		Short:  "write one man page per command into DIR (make man)",
		Hidden: true,
		Args:   nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMan(cmd.Root(), args[0], cmd.OutOrStdout())
		},
	}
}

func runMan(root *cobra.Command, dir string, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man: %w", err)
	}
	root.DisableAutoGenTag = true // no date in the pages: the same tree gives the same bytes
	hdr := &doc.GenManHeader{Title: "DEVGRAPH", Section: "1", Source: "devgraph " + Version, Manual: "devgraph manual"}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return fmt.Errorf("man: %w", err)
	}
	ents, _ := os.ReadDir(dir)
	_, err := fmt.Fprintf(out, "wrote %d man pages into %s\n", len(ents), dir)
	return err
}
