package main

import (
	"fmt"
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
	t.Parallel()
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

// TestDoctor_ExitCodes: doctor exits 0 on a whole database, 1 when its changelog chain is
// broken; --strict also exits 1 when a source is unavailable.
func TestDoctor_ExitCodes(t *testing.T) {
	c := newCLI(t)
	db := filepath.Join(t.TempDir(), "d.db")
	noPW := []string{"--db", db, "--sys-root", t.TempDir(), "--proc-root", t.TempDir(), "--pw-dump-file", filepath.Join(t.TempDir(), "missing.json")}
	c.ok("identity", "create", "JD-Xi", "--db", db, "-m", "marker-XYZZY-why")
	c.ok(append([]string{"doctor"}, noPW...)...)
	c.fail(1, "is unavailable (--strict)", append([]string{"doctor", "--strict"}, noPW...)...)
	// Alter the event's message where it lies in the file: the chain no longer holds.
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "XYZZY") {
		t.Fatal("the marker is not in the file")
	}
	if err := os.WriteFile(db, []byte(strings.ReplaceAll(string(b), "XYZZY", "PLUGH")), 0o600); err != nil {
		t.Fatal(err)
	}
	c.fail(1, "the changelog chain breaks at seq 1", "doctor", "--db", db)
	out, _, code := c.run("doctor", "--json", "--db", db)
	if code != 1 || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("doctor --json on a broken chain: exit %d\n%s", code, out)
	}
}

// TestImport_StdinAndProgress: import with no FILE reads stdin when it is not a terminal,
// and in a pipe prints its progress once, at the end, as done/total and percent.
func TestImport_StdinAndProgress(t *testing.T) {
	c := newCLI(t)
	src := filepath.Join(t.TempDir(), "src.db")
	c.ok("identity", "create", "JD-Xi", "--db", src)
	c.ok("tag", "jd-xi", "+role:synth", "--db", src)
	c.stdin = c.ok("export", "--db", src)
	records := strings.Count(c.stdin, "\n") - 1 // the header line is not a record
	dst := filepath.Join(t.TempDir(), "dst.db")
	out, errs, code := c.run("import", "--db", dst)
	if code != 0 {
		t.Fatalf("import from stdin: exit %d\n%s%s", code, out, errs)
	}
	if want := fmt.Sprintf("import: %d/%d records (100%%)\n", records, records); errs != want {
		t.Fatalf("progress in a pipe: %q, want %q", errs, want)
	}
	if got := c.ok("identities", "--db", dst); !strings.Contains(got, "role:synth") {
		t.Fatalf("imported:\n%s", got)
	}
	// --quiet: nothing on stderr
	c.stdin = c.ok("export", "--db", src)
	if _, errs, code := c.run("import", "--quiet", "--db", filepath.Join(t.TempDir(), "q.db")); code != 0 || errs != "" {
		t.Fatalf("import --quiet: exit %d, stderr %q", code, errs)
	}
}
