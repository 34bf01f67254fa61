package remote_test

import (
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestHandler_PruneIsTheCLIs: MCP has no prune, yet a socket caller naming an mcp: actor
// could prune, and the changelog then said it was pruned by mcp:<client>. The socket
// lets its own user prune as cli:<user> (devgraph changelog prune); an mcp: actor is
// FORBIDDEN and nothing is written.
func TestHandler_PruneIsTheCLIs(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	_, client := serve(t, svc, remote.Options{})
	defer client.Close()
	for i := 0; i < 3; i++ {
		if _, err := client.CreateIdentity(caller("mcp:alice", "", ""), graph.IdentityCreate{Name: "Synth " + string(rune('A'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	before := head(t, svc, "*")
	_, err := client.PruneChangelog(caller("mcp:claude-desktop", "", ""), time.Now())
	if graph.ErrorCode(err) != graph.EFORBIDDEN {
		t.Fatalf("prune as mcp:claude-desktop over the socket: %v; want FORBIDDEN", err)
	}
	if head(t, svc, "*") != before {
		t.Fatal("a refused prune wrote an event")
	}
	if _, err := client.PruneChangelog(caller("", "", ""), time.Now()); err != nil {
		t.Fatalf("prune as the socket's own user: %v", err)
	}
}
