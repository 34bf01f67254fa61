//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestServe_StdioReadsThroughThePoller: serve reads a blocking stdin pipe (what MCP
// clients give it) through Go's poller while it serves — the pipe is non-blocking then,
// so a read waiting for the next line holds no thread — and leaves it blocking again
// when the session ends.
func TestServe_StdioReadsThroughThePoller(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "stdin.db")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	fd := int(pr.Fd()) // Fd makes the read end blocking, as a client's pipe is
	nonblocking := func() bool {
		t.Helper()
		flags, err := unix.FcntlInt(uintptr(fd), syscall.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		return flags&syscall.O_NONBLOCK != 0
	}
	if nonblocking() {
		t.Fatal("the test's pipe is non-blocking before serve starts")
	}
	cmd := exec.Command(binary, "serve", "--db", db, "--poll", "0")
	cmd.Env = env
	cmd.Stdin = pr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if _, err := pw.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, `"serverInfo"`) {
		t.Fatalf("initialize answered %q (%v)", line, err)
	}
	if !nonblocking() {
		t.Error("while serving, stdin is read blocking (a waiting read holds a thread)")
	}
	pw.Close() // the client ends the session
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve ended with %v", err)
	}
	if nonblocking() {
		t.Error("after the session, stdin is left non-blocking")
	}
}
