package remote

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// relayHandler serves POST /mcp-stdio: it takes over the connection and speaks MCP's
// stdio protocol on it, so a second `devgraph serve` on the same database can pipe its
// own stdin and stdout through. The relayed client's name sets the actor as usual.
// ?read_only=1 (the relaying process has --read-only) serves the session without the
// tools that write or move a robot. The session ends with ctx (the SocketServer's).
type relayHandler struct {
	ctx context.Context
	mcp func(readOnly bool) (StdioServer, error)
	log *slog.Logger
}

func (h *relayHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	readOnly := r.URL.Query().Get("read_only") == "1"
	mcp, err := h.mcp(readOnly)
	if err != nil {
		h.log.Error("build the read-only MCP server", "err", err)
		http.Error(w, "cannot serve a read-only session", http.StatusInternalServerError)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "cannot relay on this connection", http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Time{})
	io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: devgraph-mcp-stdio\r\n\r\n")
	// Bytes the client sent after the request may already sit in brw's buffer.
	var in io.Reader = conn
	if n := brw.Reader.Buffered(); n > 0 {
		in = bufferedConn{io.MultiReader(brw.Reader, conn), conn}
	}
	h.log.Info("relayed stdio session started", "read_only", readOnly)
	err = mcp.ServeStdio(h.ctx, in, conn)
	h.log.Info("relayed stdio session ended", "err", err)
}

// RelayStdio connects to the socket at sock, asks for /mcp-stdio (read-only when
// readOnly) and pipes in → server → out until in ends (then waits for the server's last
// answers) or the server hangs up; a hang-up before in ends returns gone(). Cancelling
// ctx closes the connection and returns nil.
//
// When in ends, RelayStdio returns after the goroutine copying it. When the session ends
// first (the server hung up, or ctx ended), that goroutine may still be blocked reading
// in, which nothing can interrupt (a process's stdin): it ends at in's next read or EOF,
// writing nothing more.
func RelayStdio(ctx context.Context, sock string, readOnly bool, in io.Reader, out io.Writer, gone func() error) error {
	c, err := DialSocket(ctx, sock)
	if err != nil {
		if graph.ErrorCode(err) != graph.EINTERNAL {
			return err
		}
		return graph.Errorf(graph.EUNAVAILABLE, "cannot reach the devgraph server on %s: %v", sock, rootCause(err))
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	target := "/mcp-stdio"
	if readOnly {
		target += "?read_only=1"
	}
	if _, err := io.WriteString(conn, "POST "+target+" HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: devgraph-mcp-stdio\r\nContent-Length: 0\r\n\r\n"); err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: %v", err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: the server on %s did not answer: %v", sock, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: the server on %s refused: %s", sock, resp.Status)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var inEnded atomic.Bool // set before the server can see EOF
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(conn, in)
		inEnded.Store(true)
		conn.CloseWrite() // the server sees EOF, finishes and hangs up
	}()
	_, err = io.Copy(out, br)
	if ctx.Err() != nil {
		return nil
	}
	if !inEnded.Load() {
		// The server went away while our client still talks to us.
		return gone()
	}
	<-copied
	if err != nil && !strings.Contains(err.Error(), "use of closed") {
		return graph.Errorf(graph.EUNAVAILABLE, "relay: %v", err)
	}
	return nil
}

// bufferedConn reads what the HTTP server buffered before the connection's own bytes, and
// keeps the connection's read deadline, so the session can interrupt a blocked read when
// it ends (mcptools' ServeStdio does).
type bufferedConn struct {
	io.Reader
	conn net.Conn
}

func (b bufferedConn) SetReadDeadline(t time.Time) error { return b.conn.SetReadDeadline(t) }
