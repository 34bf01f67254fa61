package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/devgraph/devgraph/graph"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultMaxHTTPSessions caps the MCP sessions open at once over HTTP when
// Options.MaxHTTPSessions is 0. A session (protocol 2025-11-25; the 2026-07-28 era has
// none) lives in memory until its client ends it or it has been idle for 30 minutes, so
// without a cap a client that opens one per request could grow the server without bound.
const DefaultMaxHTTPSessions = 256

// sessionCap counts the HTTP sessions mcp-go holds and refuses an initialize that would
// open one more than max.
type sessionCap struct {
	max int
	log *slog.Logger

	mu      sync.Mutex
	open    map[string]struct{} // ids of the HTTP sessions registered
	pending int                 // initialize requests admitted and still being served
}

type viaHTTPKey struct{}

// markHTTP marks the context of every request the streamable HTTP server serves, so the
// session hooks count HTTP sessions only (not stdio or relayed ones).
func markHTTP(ctx context.Context, _ *http.Request) context.Context {
	return context.WithValue(ctx, viaHTTPKey{}, true)
}

func (c *sessionCap) install(h *server.Hooks) {
	h.AddOnRegisterSession(func(ctx context.Context, s server.ClientSession) {
		if ctx.Value(viaHTTPKey{}) == nil {
			return
		}
		c.mu.Lock()
		c.open[s.SessionID()] = struct{}{}
		c.mu.Unlock()
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		c.mu.Lock()
		delete(c.open, s.SessionID())
		c.mu.Unlock()
	})
}

// reserve admits one more initialize unless the open and admitted sessions reach max.
func (c *sessionCap) reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.open)+c.pending >= c.max {
		return false
	}
	c.pending++
	return true
}

func (c *sessionCap) release() {
	c.mu.Lock()
	c.pending--
	c.mu.Unlock()
}

// count returns the HTTP sessions open.
func (c *sessionCap) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

// limit refuses an initialize POST while the cap is reached, with a JSON-RPC error (and
// 503) saying what to do; every other request passes.
func (c *sessionCap) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// mcp-go reads the whole (bounded) body anyway; peek at its method.
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err != nil || json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodInitialize) {
			next.ServeHTTP(w, r)
			return
		}
		if !c.reserve() {
			c.log.Warn("mcp: refused a new HTTP session: the session cap is reached", "max", c.max, "remote", r.RemoteAddr)
			id := msg.ID
			if len(id) == 0 {
				id = json.RawMessage("null")
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]any{
				"jsonrpc": "2.0",
				"id":      id,
				"error": map[string]any{
					"code":    -32000,
					"message": fmt.Sprintf("too many MCP sessions: this server already holds %d (its --mcp-max-sessions cap); close MCP clients you no longer use or let their sessions expire (30 idle minutes), or restart the server with a higher --mcp-max-sessions", c.max),
					"data":    map[string]any{"code": graph.ELIMIT},
				},
			})
			return
		}
		defer c.release()
		next.ServeHTTP(w, r)
	})
}

// errReader returns err (nil: EOF) after the body bytes read before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
