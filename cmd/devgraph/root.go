package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var cobraSettings sync.Once

// newRootCmd builds the command tree for one run: every verb, its flags bound to fresh
// options, so runs in one process (the tests) share nothing.
func newRootCmd(e *env) (*cobra.Command, *common) {
	// The verbs are listed in the order below (grouped by use), not alphabetically.
	cobraSettings.Do(func() { cobra.EnableCommandSorting = false })
	c := &common{e: e}
	root := &cobra.Command{
		Use:   "devgraph",
		Short: "a persistent graph of the hardware around an agent: devices, identities, tags, notes, relations, robots",
		// devgraph prints its own errors, one line, and picks the exit code (0/1/2).
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Annotations[keepsGCHold] == "" {
				e.endGC()
			}
			if c.store != "" && fileOnly[cmd.Name()] {
				return usagef("--store names a cluster; %s works on a database file (--db): drop --store", cmd.Name())
			}
			return c.checkOutput()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			writeHelp(e.stderr, cmd)
			return &usageError{}
		},
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	c.register(root.PersistentFlags())
	root.SetFlagErrorFunc(flagError)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { writeHelp(cmd.OutOrStdout(), cmd) })
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(
		newServeCmd(c),
		newQueryCmd(c),
		newDevicesCmd(c),
		newUnboundCmd(c),
		newBindCmd(c),
		newUnbindCmd(c),
		newIdentitiesCmd(c),
		newShowCmd(c),
		newIdentityCmd(c),
		newHintCmd(c),
		newTagCmd(c),
		newTagsCmd(c),
		newNoteCmd(c),
		newNotesCmd(c),
		newRelateCmd(c),
		newRelationCmd(c),
		newUnrelateCmd(c),
		newRelationsCmd(c),
		newTraceCmd(c),
		newPathCmd(c),
		newChangelogCmd(c),
		newRobotCmd(c),
		newMigrateCmd(c),
		newBackupCmd(c),
		newCompactCmd(c),
		newExportCmd(c),
		newImportCmd(c),
		newDoctorCmd(c),
		newVersionCmd(c),
		newCompletionCmd(c),
		newManCmd(),
	)
	return root, c
}

// keepsGCHold annotates the verbs that keep the hold on the collector the process
// started with (startgc), which every other verb ends before it runs: version ends
// before it needs a collection, serve ends the hold once its first find is answered.
const keepsGCHold = "devgraph-keeps-gc-hold"

// fileOnly are the verbs that work on a database file itself, never on a cluster.
var fileOnly = map[string]bool{"compact": true}

// newHelpCmd is `devgraph help [VERB [SUB]]`: the verb's own help, as `VERB -h` prints it.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [VERB [SUB]]",
		Short: "show the verbs, or one verb's usage, flags and examples",
		Example: `  devgraph help
  devgraph help bind
  devgraph help identity create`,
		ValidArgsFunction: completeHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if len(args) == 0 {
				writeHelp(cmd.OutOrStdout(), root)
				return nil
			}
			target, rest, err := root.Find(args)
			if err != nil || target == root || len(rest) > 0 {
				return usagef("unknown command %q; run `devgraph help` for the list", strings.Join(args, " "))
			}
			writeHelp(cmd.OutOrStdout(), target)
			return nil
		},
	}
}

// verbName is the command's path without the program: "identity create".
func verbName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// flagError turns pflag's parse errors into bad usage (exit 2) on one line naming the verb.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown flag: "):
		msg = "flag provided but not defined: " + strings.TrimPrefix(msg, "unknown flag: ")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		if _, in, ok := strings.Cut(msg, " in "); ok {
			msg = "flag provided but not defined: " + in
		}
	}
	name := verbName(cmd)
	return usagef("%s: %s; see `devgraph %s -h`", name, msg, name)
}

// nargs checks that min to max positionals were given (max -1: no limit).
func nargs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		name := verbName(cmd)
		switch {
		case len(args) < min:
			return usagef("%s: missing arguments; see `devgraph %s -h`", name, name)
		case max >= 0 && len(args) > max:
			return usagef("%s: unexpected argument %q", name, args[max])
		}
		return nil
	}
}

// addJSON adds --json, and -o json|wide beside it, to a verb that prints something.
func addJSON(cmd *cobra.Command, c *common, usage string) {
	cmd.Flags().BoolVar(&c.json, "json", false, usage)
	cmd.Flags().StringVarP(&c.output, "output", "o", "", "json (the same bytes as --json) or wide (tables keep every column and whole cells)")
}

// ownArgs reads the arguments of a verb that parses them itself (DisableFlagParsing:
// tag, robot navigate), where `+ns:value`, `-ns:value` and negative numbers are
// arguments, never flags. Flags may stand anywhere; `--` ends them. It returns the
// positionals and whether help was asked for.
func ownArgs(cmd *cobra.Command, args []string) ([]string, bool, error) {
	fs := cmd.Flags()
	cmd.InheritedFlags() // merges the global flags into fs
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !isFlagArg(a) {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		if strings.Contains(a, "=") {
			continue
		}
		f := lookupFlag(fs, a)
		if f == nil || f.NoOptDefVal != "" {
			continue // Parse reports an unknown one; a bool takes no value
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		if err == pflag.ErrHelp {
			return nil, true, nil
		}
		return nil, false, flagError(cmd, err)
	}
	help, _ := fs.GetBool("help")
	return pos, help, nil
}

// lookupFlag finds the flag an argument names: --name, --name=v, or -x (a shorthand).
func lookupFlag(fs *pflag.FlagSet, a string) *pflag.Flag {
	if strings.HasPrefix(a, "--") {
		name, _, _ := strings.Cut(a[2:], "=")
		return fs.Lookup(name)
	}
	name, _, _ := strings.Cut(a[1:], "=")
	if len(name) == 1 {
		return fs.ShorthandLookup(name)
	}
	return nil
}

// writeHelp prints a command's help: its usage line, what it does, its subcommands (a
// group), its own flags in --flag form, the global flags, and examples.
func writeHelp(w io.Writer, cmd *cobra.Command) {
	if !cmd.HasParent() {
		writeRootHelp(w, cmd)
		return
	}
	path := cmd.CommandPath()
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	local := localFlags(cmd)
	if cmd.HasAvailableSubCommands() {
		usage := path + " <subcommand> [flags] [args]"
		if local.HasFlags() {
			// The group reads on its own too (changelog).
			usage = path + " [flags]\n       " + usage
		}
		fmt.Fprintf(w, "usage: %s\n\n%s\n\nsubcommands:\n", usage, desc)
		var subs []*cobra.Command
		width := 0
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				subs = append(subs, s)
				width = max(width, len(s.Use))
			}
		}
		for _, s := range subs {
			fmt.Fprintf(w, "  %-*s  %s\n", width, s.Use, s.Short)
		}
	} else {
		line := path
		if _, args, ok := strings.Cut(cmd.Use, " "); ok {
			line += " " + args
		}
		if local.HasFlags() {
			line += " [flags]"
		}
		fmt.Fprintf(w, "usage: %s\n\n%s\n", line, desc)
	}
	if local.HasFlags() {
		fmt.Fprintf(w, "\nflags:\n%s", local.FlagUsages())
	}
	if g := cmd.InheritedFlags(); g.HasFlags() {
		fmt.Fprintf(w, "\nglobal flags:\n%s", g.FlagUsages())
	}
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nexamples:\n%s\n", strings.TrimRight(cmd.Example, "\n"))
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(w, "\nrun `%s <subcommand> -h` for its flags\n", path)
	}
}

// localFlags are the command's own flags, without -h (every verb has it).
func localFlags(cmd *cobra.Command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			fs.AddFlag(f)
		}
	})
	return fs
}

func writeRootHelp(w io.Writer, root *cobra.Command) {
	fmt.Fprintf(w, "usage: devgraph <command> [flags] [args]\n\n%s\n\ncommands:\n", root.Short)
	var cmds []*cobra.Command
	width := 0
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			cmds = append(cmds, c)
			width = max(width, len(c.Name()))
		}
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name(), c.Short)
	}
	fmt.Fprintf(w, "\nglobal flags (every command takes them, before or after its arguments):\n%s", root.PersistentFlags().FlagUsages())
	fmt.Fprintln(w, "\n`devgraph help <command>` (or `devgraph <command> -h`) shows its flags and examples.")
}
