package remote_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// The client refuses a socket served by another user's process (another user may make
// x.db.sock first in a shared directory) and sends it nothing.
// Not parallel: it swaps the client's uid check (a package variable) for the whole test.
func TestClient_RefusesAnotherUsersServer(t *testing.T) {
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	sock, client := serve(t, svc, remote.Options{})
	defer client.Close()
	if _, _, err := remote.Dial(context.Background(), sock, 2*time.Second); err != nil {
		t.Fatalf("dial our own server: %v", err)
	}

	restore := remote.SetServerUID(func(*net.UnixConn) (int, error) { return os.Getuid() + 1, nil })
	defer restore()
	_, _, err := remote.Dial(context.Background(), sock, 2*time.Second)
	if graph.ErrorCode(err) != graph.EUNAVAILABLE || !strings.Contains(graph.ErrorMessage(err), "runs as another user") {
		t.Fatalf("dial a server of another user: %v, want UNAVAILABLE saying it runs as another user", err)
	}
	c := remote.NewClient(sock)
	defer c.Close()
	_, err = c.CreateIdentity(caller("cli:alice", "", ""), graph.IdentityCreate{Name: "Leaked"})
	if !strings.Contains(graph.ErrorMessage(err), "runs as another user") {
		t.Fatalf("call to a server of another user: %v", err)
	}
	if _, total, _, _ := svc.FindIdentities(context.Background(), graph.IdentityFilter{}); total != 0 {
		t.Fatalf("the other user's server received the call: %d identities", total)
	}
	if _, err := remote.DialSocket(context.Background(), sock); err == nil || !strings.Contains(err.Error(), "runs as another user") {
		t.Fatalf("DialSocket to a server of another user: %v", err)
	}
}
