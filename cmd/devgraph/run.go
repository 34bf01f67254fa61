package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/devgraph/devgraph/graph"
)

// Exit codes.
const (
	exitOK    = 0
	exitUser  = 1 // a user error: one line on stderr
	exitUsage = 2 // bad usage
)

// env is what a command may touch: its streams and the environment. Tests inject all of it.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// endMainGC ends the hold on the collector the process started with (startgc):
	// before every verb but those that keep it (keepsGCHold: version, too short to need
	// a collection, and serve, which ends it once its first find is answered). nil in
	// tests.
	endMainGC func()
}

// endGC ends main's hold on the collector, if any; safe twice.
func (e *env) endGC() {
	if e.endMainGC != nil {
		e.endMainGC()
	}
}

// usageError is bad usage: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// Run runs the devgraph command line and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return newEnv(stdin, stdout, stderr).run(ctx, args)
}

func newEnv(stdin io.Reader, stdout, stderr io.Writer) *env {
	// On a terminal, stdout's tables and stderr's progress fit its width (fit.go).
	return &env{stdin: stdin, stdout: fitTo(stdout, os.Getenv), stderr: fitTo(stderr, os.Getenv), getenv: os.Getenv}
}

// run builds the command tree, reads the arguments the way devgraph always has (the old
// one-dash long flags, --version before the verb) and runs the verb.
func (e *env) run(ctx context.Context, args []string) int {
	root, c := newRootCmd(e)
	if len(args) > 1 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd) {
		registerCompletions(root, c)
		args = normalizeCompletion(root, args)
	} else {
		args = normalizeArgs(root, args)
	}
	root.SetArgs(args)
	return e.exit(root.ExecuteContext(ctx))
}

// normalizeArgs rewrites the one-dash long flags devgraph has always read (-json,
// -db x, -db=x) into pflag's two-dash form, moves flags given before the verb behind it
// (`devgraph --json identities`: they belong to the verb), and turns
// --version before the verb into the version verb. Only names some verb defines are
// rewritten, so tag removals (-role:synth, or a malformed -rolesynth) and negative
// numbers pass unchanged; `--` ends the rewriting.
func normalizeArgs(root *cobra.Command, args []string) []string {
	flags := flagNames(root)
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if _, ok := flags[name]; ok && len(name) > 1 {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	// The flags before the verb (or between a group and its subcommand), with their
	// values: `devgraph --json identities`, `devgraph identity --json create X`.
	var path, pre []string
	cur, n := root, 0
	for n < len(out) {
		a := out[n]
		if a == "--" || a == "-" {
			break
		}
		if isFlagArg(a) {
			if a == "--version" && len(path) == 0 {
				return []string{"version"}
			}
			pre = append(pre, a)
			n++
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasValue && takesValue(cur, name, flags) && n < len(out) {
				pre = append(pre, out[n]) // --db PATH: PATH is not the verb
				n++
			}
			continue
		}
		sub := subcommandNamed(cur, a)
		if sub == nil {
			break
		}
		path = append(path, a)
		cur = sub
		n++
	}
	if len(pre) == 0 {
		return out
	}
	// Right behind the verb, before its own arguments: behind them, a value flag the
	// arguments end with (`tag X +a:b --db`) would take the first moved flag as its
	// value instead of saying it needs one.
	moved := make([]string, 0, len(out))
	moved = append(moved, path...)
	moved = append(moved, pre...)
	return append(moved, out[n:]...)
}

// normalizeCompletion reads a TAB's `__complete WORDS… CURRENT` as normalizeArgs reads
// a command line, so a flag before the verb (`devgraph --json show rol<TAB>`) is read as
// it is when the command runs. CURRENT, the word being completed, stays last and is
// never taken as the verb. Before any verb the flags are left out, unless CURRENT is
// one's value: they cannot change which verbs there are, and the root does not know a
// verb's own flags.
func normalizeCompletion(root *cobra.Command, args []string) []string {
	words, cur := args[1:len(args)-1], args[len(args)-1]
	moved := normalizeArgs(root, words)
	if len(moved) > 0 && isFlagArg(moved[0]) {
		last := moved[len(moved)-1]
		name, _, hasValue := strings.Cut(strings.TrimLeft(last, "-"), "=")
		if !isFlagArg(last) || hasValue || !flagNames(root)[name] {
			moved = nil // no verb yet, and CURRENT is no flag's value: complete a verb
		}
	}
	out := append([]string{args[0]}, moved...)
	return append(out, cur)
}

// takesValue reports whether the flag name, standing after cmd, takes a value: as cmd
// defines it when it does (changelog's -f is --follow, query's -f takes a FILE), else as
// any verb does.
func takesValue(cmd *cobra.Command, name string, flags map[string]bool) bool {
	f := cmd.Flags().Lookup(name)
	if f == nil && len(name) == 1 {
		f = cmd.Flags().ShorthandLookup(name)
	}
	if f == nil {
		f = cmd.InheritedFlags().Lookup(name)
	}
	if f != nil {
		return f.NoOptDefVal == ""
	}
	return flags[name]
}

// subcommandNamed is cmd's subcommand called name (or one of its aliases), nil if none.
func subcommandNamed(cmd *cobra.Command, name string) *cobra.Command {
	for _, sub := range cmd.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	if name == "help" && !cmd.HasParent() {
		return cmd // cobra adds help when it runs: stay at the root
	}
	return nil
}

// flagNames are the names (long and shorthand) of every flag in the tree, each with
// whether it takes a value.
func flagNames(root *cobra.Command) map[string]bool {
	names := map[string]bool{"help": false, "h": false, "version": false}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			value := f.NoOptDefVal == ""
			names[f.Name] = names[f.Name] || value
			if f.Shorthand != "" {
				names[f.Shorthand] = names[f.Shorthand] || value
			}
		}
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return names
}

func (e *env) exit(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.msg != "" {
			fmt.Fprintf(e.stderr, "devgraph: %s\n", oneLine(ue.msg))
		}
		return exitUsage
	}
	if msg := err.Error(); strings.HasPrefix(msg, "unknown command ") {
		// cobra's words for a verb that does not exist.
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown command "), " for ")
		fmt.Fprintf(e.stderr, "devgraph: unknown command %s; run `devgraph help` for the list\n", name)
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "devgraph: interrupted")
		return exitUser
	}
	if graph.ErrorCode(err) == graph.EINTERNAL {
		// Our own fault: say what failed, still on one line.
		fmt.Fprintf(e.stderr, "devgraph: internal error: %s\n", oneLine(err.Error()))
		return exitUser
	}
	fmt.Fprintf(e.stderr, "devgraph: %s\n", errorLine(err))
	return exitUser
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// isFlagArg reports whether a looks like a flag rather than a positional argument, for
// the verbs that read their own arguments (tag, robot navigate): `+ns:value` and
// `-ns:value` are tag operations and negative numbers are numbers, never flags.
func isFlagArg(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	if strings.HasPrefix(a, "--") {
		return true
	}
	name, _, _ := strings.Cut(a[1:], "=")
	if strings.Contains(name, ":") {
		return false // -ns:value, a tag removal
	}
	if _, err := strconv.ParseFloat(a, 64); err == nil {
		return false // -1.5, a number
	}
	return true
}

// cliActor is "cli:<os user>".
func cliActor() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	if name == "" {
		name = strconv.Itoa(os.Getuid())
	}
	return "cli:" + name
}
