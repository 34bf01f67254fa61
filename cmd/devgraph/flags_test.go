package main

import (
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/query"
)

// TestOwnArgs: the verbs that read their own arguments (tag, robot navigate) take flags
// anywhere, in either spelling, and keep tag operations and negative numbers as arguments.
func TestOwnArgs(t *testing.T) {
	t.Parallel()
	newCmd := func() *cobra.Command {
		root, _ := newRootCmd(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
		cmd, _, err := root.Find([]string{"robot", "navigate"})
		if err != nil {
			t.Fatal(err)
		}
		cmd.InitDefaultHelpFlag()
		return cmd
	}
	cases := []struct {
		name string
		args []string
		pos  []string
		json bool
		db   string
	}{
		{"FlagsAfterArgs", []string{"jdxi", "--json", "--db", "x.db"}, []string{"jdxi"}, true, "x.db"},
		{"FlagsBeforeArgs", []string{"--db=x.db", "-json", "jdxi"}, []string{"jdxi"}, true, "x.db"},
		{"FlagsBetween", []string{"jdxi", "-db", "x.db", "+role:synth"}, []string{"jdxi", "+role:synth"}, false, "x.db"},
		{"TagOpsAreNotFlags", []string{"jdxi", "+role:synth", "-status:ok", "-role:keys", "--json"}, []string{"jdxi", "+role:synth", "-status:ok", "-role:keys"}, true, ""},
		{"DoubleDashEndsFlags", []string{"jdxi", "--", "--json", "-x"}, []string{"jdxi", "--json", "-x"}, false, ""},
		{"NegativeNumbers", []string{"scout", "-1.5", "-2", "--json"}, []string{"scout", "-1.5", "-2"}, true, ""},
		{"StdinDash", []string{"-"}, []string{"-"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newCmd()
			args := normalizeArgs(cmd.Root(), tc.args)
			pos, help, err := ownArgs(cmd, args)
			if err != nil || help {
				t.Fatal(err, help)
			}
			if !reflect.DeepEqual(pos, tc.pos) {
				t.Errorf("positionals=%q, want %q", pos, tc.pos)
			}
			j, _ := cmd.Flags().GetBool("json")
			db, _ := cmd.Flags().GetString("db")
			if j != tc.json || db != tc.db {
				t.Errorf("json=%v db=%q, want %v %q", j, db, tc.json, tc.db)
			}
		})
	}
	t.Run("ErrUnknownFlag", func(t *testing.T) {
		cmd := newCmd()
		_, _, err := ownArgs(cmd, []string{"--nope"})
		if _, ok := err.(*usageError); !ok || !strings.Contains(err.Error(), "-nope") {
			t.Fatalf("err=%v, want a usage error naming -nope", err)
		}
	})
}

func TestRun_ExitCodes(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := "--db=" + t.TempDir() + "/x.db"
	t.Run("OK", func(t *testing.T) {
		if out := c.ok("version"); !strings.HasPrefix(out, "devgraph ") {
			t.Errorf("version printed %q", out)
		}
		c.ok("identity", "create", "Roland JD-Xi", db)
		c.ok("identities", db)
		c.ok(db, "identities") // flags before the verb
		c.ok("identity", "--db", db[len("--db="):], "create", "Korg Minilogue", "-m", "why")
		c.ok("identity", "-m", "why", "rename", "korg-minilogue", "Minilogue", db)
	})
	t.Run("UserError", func(t *testing.T) {
		c.fail(1, `unknown identity "jdxx"`, "identity", "rename", "jdxx", "New", db)
		c.fail(1, "tag", "tag", "roland-jd-xi", "+not a tag", db)
		c.fail(1, "already", "identity", "create", "Roland JD-Xi", db)
		c.fail(1, "unknown fingerprint kind", "hint", "add", "roland-jd-xi", "serial=123", db)
	})
	t.Run("Usage", func(t *testing.T) {
		c.fail(2, "unknown command", "frobnicate")
		c.fail(2, "flag provided but not defined", "identities", "--frob", db)
		c.fail(2, "missing arguments", "tag", "roland-jd-xi", db)
		c.fail(2, "unexpected argument", "identities", "extra", db)
		c.fail(2, "unknown subcommand", "identity", "explode", db)
		c.fail(2, "give an IDENTITY", "bind", "usb:3-3.2", db)
		if _, _, code := c.run(); code != 2 {
			t.Errorf("no arguments: exit %d, want 2", code)
		}
	})
	t.Run("FlagsBeforeTheVerb", func(t *testing.T) {
		want := c.ok("identities", "--json", db)
		for _, args := range [][]string{
			{"--json", "identities", db},
			{"-json", db, "identities"},
			{db, "-o", "json", "identities"},
			{"identities", "-o", "json", db},
			{"identities", "-o=json", db},
		} {
			if got := c.ok(args...); got != want {
				t.Errorf("devgraph %q printed %q, want the --json bytes %q", args, got, want)
			}
		}
		// Between a group and its subcommand, and a one-dash long flag there.
		c.ok("identity", "-json", "create", "Elektron Digitakt", db)
		c.ok("identity", db, "--json", "rename", "elektron-digitakt", "Digitakt")
		c.ok("identities", "-o", "wide", db)
		c.fail(2, `-o "yaml": want json or wide`, "identities", "-o", "yaml", db)
		if out := c.ok("--version"); !strings.HasPrefix(out, "devgraph ") {
			t.Errorf("--version printed %q", out)
		}
	})
	t.Run("ErrFlagWithoutValue", func(t *testing.T) {
		// A flag moved from before the verb is not the value of a flag the verb's
		// arguments end with: `devgraph --json tag X +a:b --db` used to open a
		// database named "--json" in the working directory.
		t.Cleanup(func() { os.Remove("--json"); os.Remove("--json.lock") })
		c.fail(2, "flag needs an argument: --db", "--json", "tag", "roland-jd-xi", "+role:synth", "--db")
		c.fail(2, "flag needs an argument: --timeout", "--json", "robot", "navigate", "scout", "0", "0", "--timeout")
		c.fail(2, "flag needs an argument: --db", "--json", "identities", "--db")
		if _, err := os.Stat("--json"); err == nil {
			t.Errorf("a database named --json was created")
		}
	})
	t.Run("Help", func(t *testing.T) {
		out, _, code := c.run("identities", "-h")
		if code != 0 || !strings.Contains(out, "usage: devgraph identities") {
			t.Errorf("identities -h: exit %d, %q", code, out)
		}
	})
}

func TestServe_NonLoopbackNeedsTokens(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := "--db=" + t.TempDir() + "/x.db"
	c.fail(1, "not a loopback address", "serve", "--http", "0.0.0.0:0", "--poll", "0", db)
	c.fail(2, "--poll", "serve", "--poll", "-1s", db)
	c.fail(1, "robot name", "serve", "--sim-robot", "Bad Name!", db)
	c.fail(2, "--token-file goes with --http", "serve", "--token-file", "x", db)
	c.fail(2, `unknown toolset "robot"`, "serve", "--tools", "graph,robot", db)
	c.fail(2, "offers no tool", "serve", "--tools", "edit", "--read-only", db)
}

// --tools names the MCP toolsets; without it the server chooses (nil).
func TestServe_ToolsFlag(t *testing.T) {
	t.Parallel()
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	for args, want := range map[string][]string{"": nil, "graph": {"graph"}, " Edit,robots,edit ": {"edit", "robots"}} {
		var list []string
		if args != "" {
			list = []string{"--tools", args}
		}
		f, err := e.parseServeFlags(list)
		if err != nil {
			t.Fatalf("--tools %q: %v", args, err)
		}
		if !slices.Equal(f.toolsets, want) {
			t.Errorf("--tools %q: %v, want %v", args, f.toolsets, want)
		}
	}
	if _, err := e.parseServeFlags([]string{"--tools", ""}); err == nil {
		t.Error("--tools with no toolset accepted")
	}
}

// The HTTP write deadline must outlast every GraphQL time limit, or a request that runs
// to its limit (a robotNavigate mutation blocks up to the mutation limit) loses its
// answer to a cut connection instead of getting its timeout error.
func TestServe_HTTPWriteTimeoutOutlastsGraphQL(t *testing.T) {
	t.Parallel()
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	for _, args := range [][]string{nil, {"--query-timeout", "5m"}} {
		f, err := e.parseServeFlags(args)
		if err != nil {
			t.Fatal(err)
		}
		got := httpWriteTimeout(f.limits)
		d := query.DefaultLimits()
		for name, limit := range map[string]time.Duration{"query": max(f.limits.Timeout, d.Timeout), "mutation": max(f.limits.MutationTimeout, d.MutationTimeout)} {
			if got <= limit {
				t.Errorf("%v: write timeout %v does not outlast the %s limit %v", args, got, name, limit)
			}
		}
	}
}
