package main

import (
	"bytes"
	"context"
	enc "encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/store/storetest"
)

// runStatus runs the binary to completion with stdin at EOF and returns its stderr and
// how it ended, so a test can tell an exit from a signal.
func runStatus(t *testing.T, env []string, args ...string) (string, syscall.WaitStatus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("devgraph %s: %v", strings.Join(args, " "), err)
	}
	return errb.String(), cmd.ProcessState.Sys().(syscall.WaitStatus)
}

// mustFailClearly asserts the one-line damaged-file error with exit status 1: not a
// signal, not a stack trace.
func mustFailClearly(t *testing.T, what, stderr string, ws syscall.WaitStatus, want string) {
	t.Helper()
	if ws.Signaled() {
		t.Fatalf("%s: killed by %v\n%s", what, ws.Signal(), stderr)
	}
	if ws.ExitStatus() != 1 {
		t.Fatalf("%s: exit %d, want 1\n%s", what, ws.ExitStatus(), stderr)
	}
	line := strings.TrimSuffix(stderr, "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("%s: stderr has more than one line:\n%s", what, stderr)
	}
	if !strings.Contains(line, want) || !strings.HasSuffix(line, "restore a backup; devgraph backup makes one") {
		t.Fatalf("%s: stderr %q, want it to say %q and end with the way out", what, line, want)
	}
}

// TestProcess_DamagedDatabase is issue 11's defect 3 through the real binary: `changelog
// verify` and `serve` on a truncated, empty, foreign or header-damaged file exit 1 with
// one line naming the problem (on main, a file cut at 16 KiB could fault the process).
func TestProcess_DamagedDatabase(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	storetest.BuildIdentities(t, good, 1500, 4)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	header := append([]byte(nil), data...)
	for _, off := range []int{16 + 56, 4096 + 16 + 56} { // both meta checksums
		header[off] ^= 0x01
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"truncated", "is truncated: 16384 bytes", data[:16384]},
		{"empty", "is empty", nil},
		{"foreign", "is not a devgraph database", bytes.Repeat([]byte("not a database\n"), 2000)},
		{"header", "has a damaged header", header},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.name+".db")
			for _, args := range [][]string{{"changelog", "verify"}, {"serve"}, {"identities"}, {"migrate", "--status"}, {"migrate"}, {"compact"}, {"doctor"}} {
				if err := os.WriteFile(path, c.data, 0o600); err != nil {
					t.Fatal(err)
				}
				stderr, ws := runStatus(t, env, append(args, "--db", path)...)
				mustFailClearly(t, strings.Join(args, " "), stderr, ws, c.want)
			}
		})
	}
}

// TestProcess_ServeFileCutUnderIt: the file a running server reads is cut short behind
// its back. The read that faults on the memory map becomes the damaged-file error the
// CLI (through the socket) prints on one line, every later call gets it too, and the
// server keeps running and ends normally: no SIGBUS.
func TestProcess_ServeFileCutUnderIt(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "cut.db")
	storetest.BuildIdentities(t, db, 1500, 4)
	c := startServe(t, env, "--db", db)
	c.waitLine("socket:")
	binOK(t, env, "identities", "--db", db, "--limit", "3")
	if err := os.Truncate(db, 16384); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		stderr, ws := runStatus(t, env, "export", "--db", db)
		mustFailClearly(t, "export after the cut", stderr, ws, "is damaged")
	}
	c.stdin.Close()
	err := c.wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("serve killed by %v:\n%s", ws.Signal(), c.log())
	}
	t.Logf("serve ended (%v); its log:\n%s", err, c.log())
	// the pid file stays, so the next open runs the full consistency check
	if _, err := os.Stat(db + ".pid"); err != nil {
		t.Errorf("pid file after a damaged shutdown: %v", err)
	}
}

// TestProcess_DoctorConsistency: doctor runs bbolt's full consistency check as a row; a
// damaged file shows BROKEN there and doctor exits 1 with the damaged-file error.
func TestProcess_DoctorConsistency(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "doc.db")
	storetest.BuildIdentities(t, db, 200, 3)
	out := binOK(t, env, "doctor", "--db", db)
	if !strings.Contains(out, "consistency") || !strings.Contains(out, "every page of the file checked") {
		t.Fatalf("doctor on a whole file:\n%s", out)
	}
	// While a server holds the file, the server runs the check for doctor.
	srv := startServe(t, env, "--db", db, "--poll", "0")
	srv.waitLine("socket: ")
	out = binOK(t, env, "doctor", "--db", db)
	if !strings.Contains(out, "every page of the file checked") {
		t.Fatalf("doctor beside a running server:\n%s", out)
	}
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Fatalf("serve ended with %v:\n%s", err, srv.log())
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runBin(t, env, "doctor", "--db", db)
	if code != 1 || !strings.Contains(out, "BROKEN") || !strings.Contains(errs, "is truncated") {
		t.Fatalf("doctor on a cut file: exit %d\n%s%s", code, out, errs)
	}
}

// TestProcess_DamagedLeafRead: a file whose header and the pages Open reads are whole,
// but whose identity records sit on damaged leaf pages: the CLI opening the file finds
// the damage only when it reads them, and still says so in one line, exit 1 (the store's
// log of the damage, stack and all, is not printed beside it).
func TestProcess_DamagedLeafRead(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "leaf.db")
	storetest.BuildIdentities(t, db, 1500, 4)
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	damaged := 0
	for p := 2; (p+1)*pageSize <= len(data); p++ {
		page := data[p*pageSize:]
		flags, count := enc.NativeEndian.Uint16(page[8:]), enc.NativeEndian.Uint16(page[10:])
		if flags != 0x02 || count == 0 { // a leaf page holding elements
			continue
		}
		// its first element: flags, pos (from the element), key size, value size; an
		// identity record is keyed by its slug
		pos, ksize := enc.NativeEndian.Uint32(page[16+4:]), enc.NativeEndian.Uint32(page[16+8:])
		if value := page[16+pos+ksize:]; bytes.HasPrefix(value, []byte(`{"id":"identity:`)) {
			enc.NativeEndian.PutUint16(page[8:], 0x40) // no page type bbolt knows
			damaged++
		}
	}
	if damaged == 0 {
		t.Fatal("no leaf page of identity records found")
	}
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, ws := runStatus(t, env, "identities", "--db", db)
	mustFailClearly(t, "identities", stderr, ws, "is damaged")
}
