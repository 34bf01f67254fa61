package main

import (
	"strings"
	"testing"
)

// A command group's -h prints its subcommands on stdout and exits 0; without a
// subcommand (and no -h) it is bad usage.
func TestGroupHelp(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for group, subs := range map[string][]string{
		"robot":    {"status", "navigate", "stop", "arm", "disarm", "parameters"},
		"identity": {"create", "rename", "update", "delete", "merge", "restore"},
		"hint":     {"add", "remove"},
		"note":     {"add", "delete"},
	} {
		for _, h := range []string{"-h", "--help"} {
			out, errs, code := c.run(group, h)
			if code != 0 || errs != "" {
				t.Fatalf("devgraph %s %s: exit %d, stderr %q; want 0 and no stderr", group, h, code, errs)
			}
			if !strings.Contains(out, "usage: devgraph "+group+" <subcommand>") {
				t.Fatalf("devgraph %s %s: stdout %q lacks the usage line", group, h, out)
			}
			for _, s := range subs {
				if !strings.Contains(out, "\n  "+s) {
					t.Errorf("devgraph %s %s: help does not list %q:\n%s", group, h, s, out)
				}
			}
		}
		c.fail(2, "missing subcommand", group)
	}
	// A subcommand's own -h still shows that subcommand's flags.
	if out := c.ok("robot", "navigate", "-h"); !strings.Contains(out, "usage: devgraph robot navigate") {
		t.Fatalf("robot navigate -h: %q", out)
	}
}
