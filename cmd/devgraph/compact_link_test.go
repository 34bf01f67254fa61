package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompact_ThroughASymlink: compact renamed its copy over the --db path itself, so a
// database reached through a symlink was split in two: the link became a new file that
// took every later write, and the real file stayed behind, stale. The real file is
// compacted and the link kept.
func TestCompact_ThroughASymlink(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	real := filepath.Join(dir, "real.db")
	link := filepath.Join(dir, "link.db")
	c.ok("identity", "create", "Before", "--db", real)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c.ok("compact", "--db", link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v %v", fi.Mode(), err)
	}
	c.ok("identity", "create", "After", "--db", link)
	if out := c.ok("identities", "--db", real); !strings.Contains(out, "identity:before") || !strings.Contains(out, "identity:after") {
		t.Errorf("the real database after compact through the link: %s", out)
	}
}
