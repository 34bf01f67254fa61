package etcdtest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/internal/etcdtest"
)

// TestStart_ThreeMembers is the smoke test `make test` runs: three real etcd processes, a put
// through one member's endpoint read back through another's, and every process gone after.
func TestStart_ThreeMembers(t *testing.T) {
	c := etcdtest.Start(t, 3)
	if got, want := len(c.Endpoints()), 3; got != want {
		t.Fatalf("endpoints=%d, want %d", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Leader(ctx); err != nil {
		t.Fatal(err)
	}
	one := etcdtest.Client(t, c.Endpoint(0))
	two := etcdtest.Client(t, c.Endpoint(2))
	if _, err := one.Put(ctx, "smoke", "three members"); err != nil {
		t.Fatalf("put: %v", err)
	}
	resp, err := two.Get(ctx, "smoke")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "three members" {
		t.Fatalf("get smoke through member 2 = %v, want \"three members\"", resp.Kvs)
	}
}

// TestStart_MemberCannotStart: a member that exits at start fails the test at once with its
// name and the tail of its log, and no process is left behind.
func TestStart_MemberCannotStart(t *testing.T) {
	tb := &fakeTB{T: t}
	msg := tb.run(func() { etcdtest.Start(tb, 1, etcdtest.Flags("--no-such-flag")) })
	for _, want := range []string{"etcdtest.Start", "member 0 (m0", "exited", "no-such-flag"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Fatalf message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(strings.Join(tb.logs, "\n"), "log ") {
		t.Errorf("cleanup of a failed test did not show the member's log: %q", tb.logs)
	}
}

// fakeTB stands in for a test that the harness fails: Fatalf ends run with the message, and
// run calls the cleanups the way testing does.
type fakeTB struct {
	*testing.T
	failed   bool
	logs     []string
	cleanups []func()
}

type fatal struct{ msg string }

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Failed() bool      { return f.failed }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	panic(fatal{fmt.Sprintf(format, args...)})
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.T.Skipf(format, args...)
}

// run calls fn and the cleanups it registered, returning the Fatalf message ("" if none).
func (f *fakeTB) run(fn func()) (msg string) {
	defer func() {
		for i := len(f.cleanups) - 1; i >= 0; i-- {
			f.cleanups[i]()
		}
		if r := recover(); r != nil {
			ft, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			msg = ft.msg
		}
	}()
	fn()
	return ""
}

// TestStandalone_StopsMembersOnClose: a program's harness stops its members on Close and
// removes their data, and leaves no goroutine behind (the spawner ends with its last child).
func TestStandalone_StopsMembersOnClose(t *testing.T) {
	s, err := etcdtest.NewStandalone()
	if err != nil {
		t.Fatal(err)
	}
	c := etcdtest.Start(s, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli := etcdtest.Client(s, c.Endpoint(0))
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatalf("put: %v", err)
	}
	log := c.LogPath(0)
	s.Close()
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("member log %s still there after Close: %v", log, err)
	}
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(c.Endpoint(0), "http://"), time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("member still listens on %s after Close", c.Endpoint(0))
	}
	s.Close()
	goleak.VerifyNone(t)
}
