package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// maxSocketPath is the longest socket path used beside the database; sun_path holds 108
// bytes on Linux and 104 on the BSDs, so anything longer moves to the runtime directory.
const maxSocketPath = 100

// SocketPath returns where the server holding the database at dbPath listens: beside the
// database as <db>.sock when that path is short enough for a unix socket, else
// $XDG_RUNTIME_DIR/devgraph-<first 16 hex of sha256(absolute db path)>.sock, else the same
// name in a per-user directory under os.TempDir.
func SocketPath(dbPath string) string {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		abs = dbPath
	}
	if p := abs + ".sock"; len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(abs))
	name := "devgraph-" + hex.EncodeToString(sum[:])[:16] + ".sock"
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" && filepath.IsAbs(dir) {
		if p := filepath.Join(dir, name); len(p) <= maxSocketPath {
			return p
		}
	}
	return filepath.Join(os.TempDir(), "devgraph-"+strconv.Itoa(os.Getuid()), name)
}

// Listen listens on the unix socket at path for same-user peers only: the socket is made
// mode 0600 and every accepted connection whose peer uid differs from ours is closed
// (SO_PEERCRED). A stale socket nobody listens on (a server that was killed) is removed
// first; anything else in the way (a live server, another program listening, a file that
// is not a socket, another user's socket) is ECONFLICT saying what it is and what to do.
// Closing the listener removes the socket file.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	// A shared directory (the per-user one under /tmp) must be ours alone, or someone
	// else could swap the socket for their own.
	if strings.HasPrefix(filepath.Base(dir), "devgraph-") {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || !ownedByUs(fi) || fi.Mode().Perm()&0o077 != 0 {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "socket directory %s is not a private directory of this user; remove it or set XDG_RUNTIME_DIR", dir)
		}
	}
	stale := false
	switch p := Probe(path, time.Second); p.State {
	case SocketNone:
	case SocketStale:
		// Left by a server that was killed or crashed: nobody listens, so it is ours to
		// replace.
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
		stale = true
	case SocketDevgraph:
		return nil, graph.Errorf(graph.ECONFLICT, "another devgraph server (pid %d, serving %s) already listens on %s; stop it (kill %d) and start again", p.Ping.PID, p.Ping.DB, path, p.Ping.PID)
	default:
		return nil, graph.Errorf(graph.ECONFLICT, "devgraph cannot make its socket: %s, then start the server again", p.Problem())
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	ul := l.(*net.UnixListener)
	// We remove the file ourselves, and only if it is still ours.
	ul.SetUnlinkOnClose(false)
	fi, _ := os.Stat(path)
	return &peerListener{UnixListener: ul, path: path, info: fi, uid: os.Getuid(), stale: stale}, nil
}

// RemovedStale reports whether ln, from Listen, replaced a stale socket.
func RemovedStale(ln net.Listener) bool {
	pl, ok := ln.(*peerListener)
	return ok && pl.stale
}

// Answering reports whether something accepts connections on the socket at path.
func Answering(path string) bool {
	c, err := net.DialTimeout("unix", path, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

type peerListener struct {
	*net.UnixListener
	path      string
	info      os.FileInfo
	uid       int
	stale     bool // a stale socket was removed to make this one
	closeOnce sync.Once
	closeErr  error
}

// Accept returns the next connection from a peer running as our own user; others are
// closed at once.
func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.AcceptUnix()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		c.Close()
	}
}

func (l *peerListener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.UnixListener.Close()
		// Remove the file only if it is still the one we made (a later server may have
		// replaced a socket it found stale).
		if fi, err := os.Stat(l.path); err == nil && l.info != nil && os.SameFile(fi, l.info) {
			os.Remove(l.path)
		}
	})
	if errors.Is(l.closeErr, net.ErrClosed) {
		return nil
	}
	return l.closeErr
}

// serverLost reports whether err means the server went away in the middle of a call
// (killed, crashed): the connection was closed or reset under an answer.
func serverLost(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// WaitAnswering pings the socket until it answers or ctx ends.
func WaitAnswering(ctx context.Context, path string) error {
	for {
		if Answering(path) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
