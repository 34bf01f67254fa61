package remote

import (
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

// TestProbe_AndListen: what sits at a socket path, as Probe tells it and as Listen (a
// starting server) reports it: nothing and a stale socket (a killed server) are fine,
// a devgraph server, another program listening (answering or silent) and a regular
// file are each a one-line ECONFLICT saying what it is and what to do.
func TestProbe_AndListen(t *testing.T) {
	t.Parallel()
	dir := shortDir(t)
	me := strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, path string)
		state SocketState
		// words the Listen error must contain (PATH stands for the socket's); none:
		// Listen succeeds.
		words []string
	}{
		{"None", func(*testing.T, string) {}, SocketNone, nil},
		{"Stale", func(t *testing.T, path string) {
			ln, err := net.Listen("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close() // as a SIGKILL leaves it: the file, nobody listening
		}, SocketStale, nil},
		{"Devgraph", func(t *testing.T, path string) {
			serve(t, path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, Ping{PID: 4242, DB: "/data/other.db"})
			}))
		}, SocketDevgraph, []string{"another devgraph server (pid 4242, serving /data/other.db)", "kill 4242"}},
		{"Foreign", func(t *testing.T, path string) {
			serve(t, path, http.NotFoundHandler())
		}, SocketForeign, []string{"process " + me, "not a devgraph server", "stop it or remove PATH"}},
		{"ForeignHangsUp", func(t *testing.T, path string) {
			ln := listen(t, path)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}, SocketForeign, []string{"not a devgraph server"}},
		{"Silent", func(t *testing.T, path string) {
			listen(t, path) // never accepts: connections wait in the backlog
		}, SocketSilent, []string{"process " + me, "does not answer", "stop it or remove PATH"}},
		{"RegularFile", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("not a socket"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, SocketNotSocket, []string{"PATH is a regular file, not a socket", "move it away"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ToLower(c.name)+".sock")
			c.setup(t, path)
			p := Probe(path, 300*time.Millisecond)
			if p.State != c.state {
				t.Fatalf("Probe: state %d, want %d (%+v)", p.State, c.state, p)
			}
			if (c.state == SocketForeign || c.state == SocketSilent) && p.PID != os.Getpid() {
				t.Errorf("Probe: pid %d, want ours (%d)", p.PID, os.Getpid())
			}
			ln, err := Listen(path)
			if c.words == nil {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				if got := RemovedStale(ln); got != (c.state == SocketStale) {
					t.Errorf("RemovedStale=%v", got)
				}
				ln.Close()
				return
			}
			if err == nil {
				ln.Close()
				t.Fatalf("Listen succeeded over %s", c.name)
			}
			msg := graph.ErrorMessage(err)
			if graph.ErrorCode(err) != graph.ECONFLICT || strings.Contains(msg, "\n") {
				t.Errorf("Listen: %v (%s), want one ECONFLICT line", err, graph.ErrorCode(err))
			}
			for _, w := range c.words {
				if w = strings.ReplaceAll(w, "PATH", path); !strings.Contains(msg, w) {
					t.Errorf("Listen: %q lacks %q", msg, w)
				}
			}
			if c.state != SocketDevgraph && strings.Contains(msg, "another devgraph server") {
				t.Errorf("Listen calls %s a devgraph server: %q", c.name, msg)
			}
		})
	}
}

func listen(t *testing.T, path string) net.Listener {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func serve(t *testing.T, path string, h http.Handler) {
	t.Helper()
	ln := listen(t, path)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}
