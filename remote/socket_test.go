package remote

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dgs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestSocketPath(t *testing.T) {
	t.Run("BesideTheDatabase", func(t *testing.T) {
		if got, want := SocketPath("/home/a/.local/share/devgraph/devgraph.db"), "/home/a/.local/share/devgraph/devgraph.db.sock"; got != want {
			t.Fatalf("path=%q, want %q", got, want)
		}
	})
	long := "/" + strings.Repeat("very-long-directory-name/", 6) + "devgraph.db"
	t.Run("RuntimeDirWhenTooLong", func(t *testing.T) {
		t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
		got := SocketPath(long)
		if !strings.HasPrefix(got, "/run/user/1000/devgraph-") || !strings.HasSuffix(got, ".sock") || len(got) > maxSocketPath {
			t.Fatalf("path=%q", got)
		}
		if again := SocketPath(long); again != got {
			t.Fatalf("not stable: %q then %q", got, again)
		}
		if other := SocketPath(long + "2"); other == got {
			t.Fatalf("two databases share %q", got)
		}
	})
	t.Run("TempDirWithoutRuntimeDir", func(t *testing.T) {
		t.Setenv("XDG_RUNTIME_DIR", "")
		got := SocketPath(long)
		want := filepath.Join(os.TempDir(), "devgraph-"+strconv.Itoa(os.Getuid()))
		if filepath.Dir(got) != want {
			t.Fatalf("path=%q, want it in %q", got, want)
		}
	})
}

func TestListen(t *testing.T) {
	t.Parallel()
	dir := shortDir(t)
	path := filepath.Join(dir, "x.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("socket mode %o, want 600", got)
	}
	go http.Serve(ln, http.NotFoundHandler())

	t.Run("LiveSocketIsAConflict", func(t *testing.T) {
		if _, err := Listen(path); graph.ErrorCode(err) != graph.ECONFLICT {
			t.Fatalf("second Listen on a live socket: %v", err)
		}
	})
	ln.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("closing the listener left the socket: %v", err)
	}

	t.Run("StaleSocketIsReplaced", func(t *testing.T) {
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close() // leaves the file, as a crashed server does
		if _, err := os.Stat(path); err != nil {
			t.Fatal("the stale socket file is gone already")
		}
		ln2, err := Listen(path)
		if err != nil {
			t.Fatalf("Listen over a stale socket: %v", err)
		}
		ln2.Close()
	})
}

// TestListen_RefusesOtherUsers serves with a listener that expects another uid: our own
// connections are then a stranger's, and must be closed before any request is read.
// The same handler behind a listener for our uid serves us.
func TestListen_RefusesOtherUsers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	served := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served <- struct{}{} })
	listen := func(uid int) (string, *peerListener) {
		path := filepath.Join(shortDir(t), "p.sock")
		l, err := Listen(path)
		if err != nil {
			t.Fatal(err)
		}
		pl := l.(*peerListener)
		pl.uid = uid // before anyone accepts
		go http.Serve(pl, h)
		t.Cleanup(func() { pl.Close() })
		return path, pl
	}

	stranger, _ := listen(os.Getuid() + 1)
	c := NewClient(stranger)
	defer c.Close()
	if _, err := c.Ping(ctx); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("ping as another user: %v", err)
	}
	select {
	case <-served:
		t.Fatal("the handler served a peer of another uid")
	default:
	}

	own, _ := listen(os.Getuid())
	c2 := NewClient(own)
	defer c2.Close()
	if _, err := c2.Ping(ctx); err == nil {
		t.Fatal("ping answered by a handler that never writes JSON")
	}
	select {
	case <-served:
	case <-ctx.Done():
		t.Fatal("our own uid was not served")
	}
}

func TestListen_SharedDirMustBePrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(shortDir(t), "devgraph-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(filepath.Join(dir, "x.sock")); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("Listen in a group/world-readable devgraph- directory: %v", err)
	}
	os.Chmod(dir, 0o700)
	l, err := Listen(filepath.Join(dir, "x.sock"))
	if err != nil {
		t.Fatalf("Listen in a private directory: %v", err)
	}
	l.Close()
}
