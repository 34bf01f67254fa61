package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadingVerbs_NoDatabase: a verb that only reads says there is no database and
// creates nothing, not even its directory; a verb that observes or writes creates it.
func TestReadingVerbs_NoDatabase(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(c.home, "nowhere", "sub")
	db := filepath.Join(dir, "devgraph.db")
	want := "no database at " + db + "; check --db or $DEVGRAPH_DB"
	for _, args := range [][]string{
		{"identities"}, {"show", "jdxi"}, {"tags"}, {"notes", "jdxi"}, {"changelog"},
		{"changelog", "verify"}, {"relations", "jdxi"}, {"trace", "jdxi"}, {"path", "a", "b"},
		{"export"}, {"export", "--format", "dot"}, {"backup", filepath.Join(c.home, "copy.db")},
		{"query", "{ identities { totalCount } }"},
	} {
		c.fail(1, want, append(args, "--db", db)...)
		if _, err := os.Stat(filepath.Join(c.home, "nowhere")); !os.IsNotExist(err) {
			t.Fatalf("devgraph %s created %s (%v)", strings.Join(args, " "), dir, err)
		}
	}
	// $DEVGRAPH_DB names it the same way
	c.vars["DEVGRAPH_DB"] = db
	c.fail(1, want, "identities")
	// observing or writing creates it
	c.ok("devices", "--sys-root", t.TempDir(), "--proc-root", t.TempDir(), "--pw-dump-file", "/nonexistent")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("devices did not create the database: %v", err)
	}
	c.ok("identities")
}

// TestResolve_CLI: the CLI takes every form the store resolves — an alias ref of a merged
// device, any letter case — and refuses a ref several devices answer to, naming them.
func TestResolve_CLI(t *testing.T) {
	c := newCLI(t)
	for _, ref := range []string{"alsa:card:JDXi", "alsa:seq:JD-Xi", "pipewire:alsa_card.usb-Roland_JD-Xi-00", "USB:3-3.2"} {
		if out := c.ok("show", ref, "--demo"); !strings.Contains(out, "device:path:0582:01a9:3-3.2") {
			t.Fatalf("show %s:\n%s", ref, out)
		}
	}
	if out := c.ok("show", "alsa:card:nanoKONTROL2_1", "--demo"); !strings.Contains(out, "usb:3-2") {
		t.Fatalf("a twin's own card id:\n%s", out)
	}
	errs := c.fail(1, "ambiguous", "show", "alsa:seq:nanoKONTROL2", "--demo")
	for _, want := range []string{"usb:3-1", "usb:3-2"} {
		if !strings.Contains(errs, want) {
			t.Fatalf("ambiguous ref: %q does not name %s", errs, want)
		}
	}
	c.ok("bind", "alsa:seq:JD-Xi", "--new", "Roland JD-Xi", "--demo")
	c.ok("tag", "ROLAND-JD-XI", "+role:synth", "--demo")
	if out := c.ok("show", "Identity:Roland-JD-Xi", "--demo"); !strings.Contains(out, "role:synth") || !strings.Contains(out, "usb:3-3.2") {
		t.Fatalf("show in capitals:\n%s", out)
	}
}
