package remote

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// SocketState says what sits at the path where a devgraph server's socket goes.
type SocketState int

const (
	// SocketNone: nothing is there; no server runs.
	SocketNone SocketState = iota
	// SocketStale: a socket file nobody listens on, left by a server that was killed or
	// crashed. The next server removes it; commands open the database file meanwhile.
	SocketStale
	// SocketDevgraph: a devgraph server answers there.
	SocketDevgraph
	// SocketSilent: something accepts connections but does not answer in time (a hung
	// or very busy devgraph server, or another program).
	SocketSilent
	// SocketForeign: a process that is not a devgraph server listens there.
	SocketForeign
	// SocketNotSocket: a file that is not a socket is in the way.
	SocketNotSocket
	// SocketOtherUser: another user's socket.
	SocketOtherUser
)

// SocketProbe is what Probe found at a socket path.
type SocketProbe struct {
	Path  string
	State SocketState
	// PID and Command name the process listening (SO_PEERCRED, /proc), when known.
	PID     int
	Command string
	// Ping is the devgraph server's answer (SocketDevgraph).
	Ping *Ping
	// Kind says what the file in the way is (SocketNotSocket): "a regular file", …
	Kind string
}

// Probe looks at the socket path without changing anything: what file is there, whether
// something listens, which process, and whether it answers devgraph's ping within
// timeout.
func Probe(path string, timeout time.Duration) SocketProbe {
	p := SocketProbe{Path: path}
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return p
	case fi.Mode()&os.ModeSocket == 0:
		p.State, p.Kind = SocketNotSocket, fileKind(fi)
		return p
	case !ownedByUs(fi):
		p.State = SocketOtherUser
		return p
	}
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		p.State = SocketStale
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT) {
			p.State = SocketSilent // the listener's queue is full, or the dial timed out
		}
		return p
	}
	defer c.Close()
	if uc, ok := c.(*net.UnixConn); ok {
		p.PID = peerPID(uc)
		p.Command = processName(p.PID)
	}
	c.SetDeadline(time.Now().Add(timeout))
	ping, err := askPing(c)
	switch {
	case err == nil:
		p.State, p.Ping = SocketDevgraph, ping
	case isTimeout(err):
		p.State = SocketSilent
	default:
		p.State = SocketForeign
	}
	return p
}

// askPing sends GET /rpc/ping on c and decodes a devgraph server's answer; any other
// answer is an error.
func askPing(c net.Conn) (*Ping, error) {
	if _, err := io.WriteString(c, "GET /rpc/ping HTTP/1.1\r\nHost: devgraph\r\nConnection: close\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	var ping Ping
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&ping); err != nil {
		return nil, err
	}
	if ping.PID <= 0 {
		return nil, errors.New("not a devgraph ping")
	}
	return &ping, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func fileKind(fi os.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	}
	return "a file that is not a socket"
}

// Who names the listening process: "process 1234 (python3)", "process 1234", or
// "a process" when the kernel did not say.
func (p SocketProbe) Who() string {
	switch {
	case p.PID > 0 && p.Command != "":
		return fmt.Sprintf("process %d (%s)", p.PID, p.Command)
	case p.PID > 0:
		return fmt.Sprintf("process %d", p.PID)
	}
	return "a process"
}

// Problem says, in one clause, what is wrong at the socket path and what to do about
// it; "" when nothing is (no socket, a stale one the next server removes, or a devgraph
// server answering).
func (p SocketProbe) Problem() string {
	switch p.State {
	case SocketNotSocket:
		return fmt.Sprintf("%s is %s, not a socket, in the place of devgraph's socket; devgraph did not make it: move it away", p.Path, p.Kind)
	case SocketOtherUser:
		return fmt.Sprintf("%s is another user's socket; remove it, or keep the database in a directory only you can write", p.Path)
	case SocketForeign:
		return fmt.Sprintf("%s, which is not a devgraph server, listens on %s where devgraph's socket goes; stop it or remove %s", p.Who(), p.Path, p.Path)
	case SocketSilent:
		return fmt.Sprintf("%s accepts connections on %s but does not answer (a hung devgraph server, or another program); stop it or remove %s", p.Who(), p.Path, p.Path)
	}
	return ""
}
