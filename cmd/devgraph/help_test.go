package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelp_EveryVerb: `devgraph help VERB` and `VERB -h` print the same help for every
// command: a usage line, what it does, its flags in --flag form, the global flags once,
// and examples (groups list their subcommands). All of it is one golden file
// (testdata/help.golden; go test -update rewrites it).
func TestHelp_EveryVerb(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	root, _ := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var paths [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		for _, sub := range cmd.Commands() {
			if !sub.IsAvailableCommand() && sub.Name() != "help" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			paths = append(paths, p)
			walk(sub, p)
		}
	}
	walk(root, nil)
	if len(paths) < 45 {
		t.Fatalf("only %d commands in the tree", len(paths))
	}
	var all strings.Builder
	all.WriteString("=== devgraph help ===\n" + c.ok("help"))
	for _, p := range paths {
		name := strings.Join(p, " ")
		out := c.ok(append([]string{"help"}, p...)...)
		if h := c.ok(append(append([]string{}, p...), "-h")...); h != out {
			t.Errorf("devgraph %s -h differs from devgraph help %s:\n%s\n---\n%s", name, name, h, out)
		}
		if !strings.HasPrefix(out, "usage: devgraph "+name) {
			t.Errorf("help %s: no usage line:\n%s", name, out)
		}
		if !strings.Contains(out, "\nexamples:\n  ") {
			t.Errorf("help %s: no examples:\n%s", name, out)
		}
		if n := strings.Count(out, "--db string"); n != 1 {
			t.Errorf("help %s lists the global flags %d times", name, n)
		}
		if strings.Contains(out, "\n  -") && !strings.Contains(out, "--") {
			t.Errorf("help %s: flags not in --flag form", name)
		}
		all.WriteString("\n=== devgraph help " + name + " ===\n" + out)
	}
	golden(t, "help", all.String())
}

// TestOutputFlag_BesideEveryJSON: every verb that takes --json also takes -o json|wide
// (issue 12: "-o json|wide beside --json"), and -o json prints the --json bytes.
func TestOutputFlag_BesideEveryJSON(t *testing.T) {
	t.Parallel()
	root, _ := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			if sub.Flags().Lookup("json") != nil {
				if o := sub.Flags().Lookup("output"); o == nil || o.Shorthand != "o" {
					t.Errorf("%s takes --json but not -o json", sub.CommandPath())
				}
			}
			walk(sub)
		}
	}
	walk(root)
	c := newCLI(t)
	if got, want := c.ok("version", "-o", "json"), c.ok("version", "--json"); got != want {
		t.Errorf("version -o json printed %q, want the --json bytes %q", got, want)
	}
}
