package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTable_ControlCharacters: names, notes and messages may hold control characters (an
// agent over MCP can write them), and the tables printed them raw, so an ESC sequence
// in a name or a "why" reached the reader's terminal (retitling it, hiding text, clearing
// the screen). A table cell shows each one escaped (\x1b); --json is untouched.
func TestTable_ControlCharacters(t *testing.T) {
	c := newCLI(t)
	db := "--db=" + filepath.Join(t.TempDir(), "d.db")
	c.ok("identity", "create", "Evil \x1b[8mHidden", "--slug", "evil", db)
	c.ok("note", "add", "evil", "title \x1b]0;pwned\x07 \u009b2J", "-m", "why \x1b[2J", db)
	for _, args := range [][]string{{"identities"}, {"changelog"}, {"notes", "evil"}, {"show", "evil"}} {
		out := c.ok(append(args, db)...)
		if strings.ContainsAny(out, "\x1b\x07\u009b") {
			t.Errorf("devgraph %s prints control characters raw: %q", args[0], out)
		}
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("devgraph %s does not show the ESC escaped: %q", args[0], out)
		}
	}
	if out := c.ok("identities", "--json", db); !strings.Contains(out, `\u001b[8mHidden`) {
		t.Errorf("--json: %s", out)
	}
}
