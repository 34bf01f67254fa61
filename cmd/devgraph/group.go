package main

import (
	"github.com/spf13/cobra"
)

// newGroupCmd builds a command group (identity, hint, note, relation, robot, changelog's
// subcommands): `GROUP -h` lists its subcommands; without one it is bad usage, and so is
// an unknown one. want says which subcommands there are, for those errors.
func newGroupCmd(name, short, want, example string) *cobra.Command {
	return &cobra.Command{
		Use:     name,
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s: missing subcommand; %s", name, want)
			}
			return usagef("%s: unknown subcommand %q; %s", name, args[0], want)
		},
	}
}
