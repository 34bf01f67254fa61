//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a real pseudo-terminal cols wide and returns its terminal end.
func openPTY(t *testing.T, cols int) *os.File {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no /dev/ptmx: %v", err)
		}
		t.Skipf("no /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: 40}); err != nil {
		t.Fatal(err)
	}
	return tty
}

// TestFitTo: a terminal's tables fit $COLUMNS, else the width the terminal reports (80
// when it reports none); a pipe, a file or a buffer is never fitted.
func TestFitTo(t *testing.T) {
	env := func(cols string) func(string) string {
		return func(k string) string {
			if k == "COLUMNS" {
				return cols
			}
			return ""
		}
	}
	tty := openPTY(t, 120)
	if got := columnsOf(fitTo(tty, env(""))); got != 120 {
		t.Fatalf("a 120-column terminal: %d", got)
	}
	if got := columnsOf(fitTo(tty, env("80"))); got != 80 {
		t.Fatalf("COLUMNS=80 on a terminal: %d", got)
	}
	if got := columnsOf(fitTo(tty, env("junk"))); got != 120 {
		t.Fatalf("a malformed COLUMNS: %d, want the terminal's 120", got)
	}
	if got := columnsOf(fitTo(openPTY(t, 0), env(""))); got != 80 {
		t.Fatalf("a 0×0 terminal: %d, want 80", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := columnsOf(fitTo(w, env("80"))); got != 0 {
		t.Fatalf("a pipe with COLUMNS=80 was fitted to %d", got)
	}
	if got := columnsOf(fitTo(&bytes.Buffer{}, env("80"))); got != 0 {
		t.Fatalf("a buffer was fitted to %d", got)
	}
}

// TestImport_TerminalStdin: import with no FILE refuses a terminal on stdin (nobody types
// an export), as bad usage, and creates nothing.
func TestImport_TerminalStdin(t *testing.T) {
	tty := openPTY(t, 80)
	db := t.TempDir() + "/x.db"
	var out, errb bytes.Buffer
	e := &env{stdin: tty, stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := e.run(context.Background(), []string{"import", "--db", db}); code != exitUsage || !strings.Contains(errb.String(), "give FILE, or pipe an export into stdin") {
		t.Fatalf("import from a terminal: exit %d, %q", code, errb.String())
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("import from a terminal created %s (%v)", db, err)
	}
}
