package remote

import (
	"context"
	"os"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// On a fleet the store records actors with their host; a socket caller naming its own user
// with a host (cli:<user>@studio-a) is still its own user, another user with a host is not.
func TestCheckPeerActor_Host(t *testing.T) {
	ctx := context.Background()
	me := peerActor(ctx)
	if err := ValidActor(me + "@studio-a"); err != nil {
		t.Fatal(err)
	}
	if err := checkPeerActor(ctx, me+"@studio-a"); err != nil {
		t.Fatalf("own user with a host: %v", err)
	}
	other := "cli:root@studio-a"
	if os.Getuid() == 0 {
		other = "cli:nobody@studio-a"
	}
	if err := checkPeerActor(ctx, other); graph.ErrorCode(err) != graph.EINVALID {
		t.Fatalf("another user with a host: %v", err)
	}
}
