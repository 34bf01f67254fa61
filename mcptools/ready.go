package mcptools

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// observer is a service that can read the sources and record what they show now
// (identity.Service). A relayed service has none: the server it relays to has done it.
type observer interface {
	Observe(ctx context.Context) (*graph.Snapshot, error)
}

// firstReadingTimeout bounds how long the first request waits for the sources' first
// reading.
const firstReadingTimeout = 2 * time.Second

// installReady holds the first request of the process — initialize, or in the
// 2026-07-28 era whatever comes first — until the sources' first reading is recorded,
// when the fleet has robots: a robot robot_status lists is then a device every tool and
// resource can resolve, with no window in which it is an "unknown device". Without robots
// nothing waits (discovery records the other devices within a poll, as before). It waits
// once, at most firstReadingTimeout; later requests never wait.
func (s *Server) installReady(hooks *server.Hooks) {
	obs, ok := s.svc.(observer)
	if !ok {
		return
	}
	hooks.AddBeforeAny(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any) {
		s.readyOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), firstReadingTimeout)
			defer cancel()
			robots, err := s.svc.Robots(ctx)
			if err != nil || len(robots) == 0 {
				return
			}
			if _, err := obs.Observe(ctx); err != nil {
				s.log.Warn("first reading of the sources before answering", "err", err)
			}
		})
	})
}
