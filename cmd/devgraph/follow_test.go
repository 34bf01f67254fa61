package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// streamChild is a `changelog --follow` or `devices --watch` process whose stdout lines
// arrive on a channel.
type streamChild struct {
	cmd   *exec.Cmd
	lines chan string
}

func startStream(t *testing.T, env []string, args ...string) *streamChild {
	t.Helper()
	s := &streamChild{cmd: exec.Command(binary, args...), lines: make(chan string, 100)}
	s.cmd.Env = env
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

// next returns the next line containing want, failing on anything else but lines that
// match skip ("" skips nothing).
func (s *streamChild) next(t *testing.T, want string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("the stream ended before a line with %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
			t.Fatalf("no line with %q", want)
		}
	}
}

// stop sends SIGINT (Ctrl-C) and checks the exit code is 0.
func (s *streamChild) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGINT)
	for range s.lines {
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("%s after Ctrl-C: %v", strings.Join(s.cmd.Args[1:], " "), err)
	}
}

// TestProcess_FollowAndWatch: changelog --follow and devices --watch stream changes as
// they are written, through a real server; without one they say to start it.
func TestProcess_FollowAndWatch(t *testing.T) {
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "f.db")
	binOK(t, env, "identity", "create", "JD-Xi", "--slug", "jdxi", "--db", db)
	for _, args := range [][]string{{"changelog", "--follow"}, {"changelog", "-f"}, {"devices", "--watch"}, {"devices", "-w"}} {
		_, errs, code := runBin(t, env, append(args, "--db", db)...)
		if code != 1 || !strings.Contains(errs, "start one with `devgraph serve --db "+db+"`") {
			t.Fatalf("%s without a server: exit %d, %q", strings.Join(args, " "), code, errs)
		}
	}
	srv := startServe(t, env, "--demo", "--db", db) // the demo rig drives the robot scout
	srv.waitLine("socket:")

	follow := startStream(t, env, "changelog", "--follow", "--limit", "50", "--db", db)
	follow.next(t, "SEQ")
	follow.next(t, "identity.create")
	json := startStream(t, env, "changelog", "-f", "--json", "--action", "tag.*", "--limit", "5", "--db", db)
	watch := startStream(t, env, "devices", "--watch", "--db", db)
	watch.next(t, "EVENT")
	watch.next(t, "usb:3-3.2")
	// a robot by its bare name, in any case, through the server
	if out := binOK(t, env, "show", "Scout", "--db", db); !strings.Contains(out, "robot:scout") {
		t.Fatalf("show Scout:\n%s", out)
	}

	binOK(t, env, "tag", "JDXI", "+role:synth", "--db", db)
	if l := follow.next(t, "tag.add"); !strings.Contains(l, "identity:jdxi") {
		t.Fatalf("follow: %q", l)
	}
	if l := json.next(t, `"action":"tag.add"`); !strings.HasPrefix(l, `{"seq":`) {
		t.Fatalf("follow --json: %q", l)
	}
	binOK(t, env, "bind", "alsa:card:JDXi", "jdxi", "--db", db)
	if l := watch.next(t, "bind"); !strings.Contains(l, "usb:3-3.2") || !strings.Contains(l, "jdxi") {
		t.Fatalf("watch: %q", l)
	}
	if l := follow.next(t, "device.bind"); !strings.Contains(l, "device:path:0582:01a9:3-3.2") {
		t.Fatalf("follow: %q", l)
	}
	follow.stop(t)
	json.stop(t)
	watch.stop(t)
}
