package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExport_IntoWhatIsThere: export FILE wrote a temp file and renamed it over FILE
// whatever FILE was, so `devgraph export /dev/full` reported success and turned the
// device into a regular file (and /dev/null, /dev/stdout, a pipe likewise). A file that
// is not a regular one is written straight into and left what it was; a symlink to a
// regular file stays a symlink, its target replaced.
func TestExport_IntoWhatIsThere(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	db := "--db=" + filepath.Join(dir, "d.db")
	c.ok("identity", "create", "Roland JD-Xi", db)

	t.Run("fifo", func(t *testing.T) {
		c := newCLI(t)
		fifo := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- string(b)
		}()
		c.ok("export", fifo, db)
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the pipe is no longer a pipe: %v %v", fi.Mode(), err)
		}
		if s := <-got; !strings.Contains(s, "Roland JD-Xi") {
			t.Errorf("the reader of the pipe got %q", s)
		}
	})
	t.Run("socket", func(t *testing.T) {
		c := newCLI(t)
		sock := filepath.Join(dir, "s.sock")
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			t.Fatal(err)
		}
		c.fail(1, "cannot write "+sock, "export", sock, db)
		if fi, err := os.Lstat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
			t.Fatalf("the socket is no longer a socket: %v %v", fi.Mode(), err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		c := newCLI(t)
		target := filepath.Join(dir, "real.jsonl")
		if err := os.WriteFile(target, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.jsonl")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		c.ok("export", link, db)
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symlink is no longer a symlink: %v %v", fi.Mode(), err)
		}
		if b, _ := os.ReadFile(target); !strings.Contains(string(b), "Roland JD-Xi") {
			t.Errorf("the symlink's target holds %q", b)
		}
	})
}
