package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
)

// Exit codes.
const (
	exitOK    = 0
	exitUser  = 1 // a user error: one line on stderr
	exitUsage = 2 // bad usage
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "dev"

// env is what a command may touch: its streams and the environment. Tests inject all of it.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one verb.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

var commands []command

func init() {
	// A slice literal in init, not registration by side effect: the verb list is here.
	commands = []command{
		{"serve", "serve MCP on stdio (and GraphQL/MCP over HTTP with --http)", runServe},
		{"query", "run a GraphQL document and print the JSON answer", runQuery},
		{"devices", "list present devices (--all: remembered ones too) with their match", runDevices},
		{"unbound", "list present devices no identity is bound to", runUnbound},
		{"bind", "bind a device to an identity: bind REF (IDENTITY | --new NAME)", runBind},
		{"unbind", "remove a device's explicit binding", runUnbind},
		{"identities", "list identities", runIdentities},
		{"show", "show an identity or a device", runShow},
		{"identity", "create|rename|update|delete|merge|restore an identity", runIdentity},
		{"hint", "add|remove hints on an identity", runHint},
		{"tag", "add (+ns:value) and remove (-ns:value) tags", runTag},
		{"tags", "list tags in use and the seeded vocabulary", runTags},
		{"note", "add|delete a note", runNote},
		{"notes", "list the notes on a target", runNotes},
		{"relate", "declare a relation: relate FROM TYPE TO [--from-port P] [--to-port P] [--attr k=v]…", runRelate},
		{"relation", "update a declared relation's attrs or ports", runRelation},
		{"unrelate", "remove a declared relation: unrelate REL, or unrelate FROM TYPE TO", runUnrelate},
		{"relations", "list a node's relations, declared and observed (--types: the vocabulary)", runRelations},
		{"trace", "follow a signal from a node (or --port) hop by hop to where it ends", runTrace},
		{"path", "the shortest chain of relations between two nodes", runPath},
		{"changelog", "read the audit changelog (+ verify, prune)", runChangelog},
		{"robot", "status|navigate|stop|arm|disarm|parameters (through a running server)", runRobot},
		{"migrate", "migrate the database to this version's schema (--status: report only)", runMigrate},
		{"backup", "write a consistent copy of the database to FILE", runBackup},
		{"compact", "rewrite the database file without free pages", runCompact},
		{"export", "write everything as JSON lines, or draw the graph (--format dot|mermaid), to FILE or stdout", runExport},
		{"import", "read an export from FILE or stdin", runImport},
		{"doctor", "check the sources, the database and the server", runDoctor},
		{"version", "print the version", runVersion},
		{"completion", "print a shell completion script: completion bash|zsh|fish", runCompletion},
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
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	return e.run(ctx, args)
}

func (e *env) run(ctx context.Context, args []string) int {
	// Flags before the verb belong to the verb: `devgraph --db x identities`.
	var pre []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" && args[0] != "--" {
		if a := args[0]; a == "-h" || a == "-help" || a == "--help" {
			e.usage(e.stdout)
			return exitOK
		}
		if a := args[0]; a == "--version" || a == "-version" {
			args = []string{"version"}
			break
		}
		pre = append(pre, args[0])
		args = args[1:]
		// A flag's separate value: --db PATH.
		if len(args) > 0 && !strings.Contains(pre[len(pre)-1], "=") && takesValue(pre[len(pre)-1]) {
			pre = append(pre, args[0])
			args = args[1:]
		}
	}
	if len(args) == 0 {
		e.usage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" {
		if len(args) == 1 {
			e.usage(e.stdout)
			return exitOK
		}
		// help VERB [SUB]: the verb's own help, as `devgraph VERB [SUB] -h` prints it.
		name, args = args[1], append(append([]string{}, args[1:]...), "-h")
	}
	cmd := findCommand(name)
	if cmd == nil {
		fmt.Fprintf(e.stderr, "devgraph: unknown command %q; run `devgraph help` for the list\n", name)
		return exitUsage
	}
	err := cmd.run(ctx, e, append(pre, args[1:]...))
	return e.exit(err)
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// takesValue reports whether a global flag given before the verb has a separate value.
func takesValue(flagArg string) bool {
	switch strings.TrimLeft(flagArg, "-") {
	case "db", "m", "message", "sys-root", "proc-root", "pw-dump-file":
		return true
	}
	return false
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
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
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

func (e *env) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: devgraph <command> [flags] [args]")
	fmt.Fprintln(w)
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes --db PATH (else $DEVGRAPH_DB, else $XDG_DATA_HOME/devgraph/devgraph.db)")
	fmt.Fprintln(w, "and --demo (the demo rig and its own database). `devgraph help <command>` (or `devgraph <command> -h`)")
	fmt.Fprintln(w, "shows its flags.")
}

// newFlags returns a FlagSet for a verb whose errors come back to Run as one line (bad
// usage: exit 2); -h prints the verb's usage and flags on stdout.
func (e *env) newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("devgraph "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	helps.Store(fs, func() {
		w := e.stdout
		fmt.Fprintf(w, "usage: devgraph %s %s\n", name, usage)
		if hasFlags(fs) {
			fmt.Fprintln(w, "flags:")
			fs.SetOutput(w)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	})
	return fs
}

// helps maps each FlagSet to the func printing its help (flag calls Usage on every parse
// error, so the help cannot live there). Commands may run concurrently in one process
// (the CLI tests do), hence a sync.Map.
var helps sync.Map // *flag.FlagSet → func()

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// parseArgs parses flags wherever they stand among the positional arguments and returns
// the positionals in order. `--` ends flags; `+ns:value` and `-ns:value` are tag
// operations, and negative numbers are numbers, never flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // Parse reports it
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if h, ok := helps.Load(fs); ok {
				h.(func())()
			}
			return nil, err
		}
		return nil, usagef("%s: %v; see `%s -h`", strings.TrimPrefix(fs.Name(), "devgraph "), err, fs.Name())
	}
	return pos, nil
}

// isFlagArg reports whether a looks like a flag rather than a positional argument.
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

// nargs checks the positional count.
func nargs(fs *flag.FlagSet, pos []string, min, max int) error {
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		switch {
		case len(pos) < min:
			return usagef("%s: missing arguments; see `%s -h`", strings.TrimPrefix(fs.Name(), "devgraph "), fs.Name())
		default:
			return usagef("%s: unexpected argument %q", strings.TrimPrefix(fs.Name(), "devgraph "), pos[max])
		}
	}
	return nil
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

func runVersion(ctx context.Context, e *env, args []string) error {
	fs, _ := e.flags("version", "", false)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "devgraph %s (%s, schema %d)\n", Version, goruntime.Version(), migrations.CurrentVersion)
	return nil
}

// flags returns a verb's FlagSet (see newFlags) with the common flags registered first,
// into the returned common; sources adds the source roots.
func (e *env) flags(name, usage string, sources bool) (*flag.FlagSet, *common) {
	fs := e.newFlags(name, usage)
	c := new(common)
	c.register(fs, sources)
	return fs, c
}

// parse parses args (see parseArgs) and checks that min to max positionals remain (max
// -1: no limit), in that order, returning the positionals.
func parse(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if err := nargs(fs, pos, min, max); err != nil {
		return nil, err
	}
	return pos, nil
}
