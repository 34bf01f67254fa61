package remote_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

func benchServed(b *testing.B) (*identity.Service, *remote.Client) {
	b.Helper()
	st, err := store.Open(b.TempDir()+"/bench.db", store.Options{NoBackup: true, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := identity.New(st, nil, nil)
	_, client := serve(b, svc, remote.Options{})
	return svc, client
}

// BenchmarkClient_FindIdentityByID is one read through the socket (JSON over HTTP/1.1
// on a unix socket), against the same read in-process.
func BenchmarkClient_FindIdentityByID(b *testing.B) {
	svc, client := benchServed(b)
	ctx := graph.WithActor(context.Background(), "mcp:bench")
	if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"},
		Hints: []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "0582:01a9"}}}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		svc  graph.Service
	}{{"InProcess", svc}, {"Socket", client}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := c.svc.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{Notes: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkClient_CreateIdentity is one write through the socket.
func BenchmarkClient_CreateIdentity(b *testing.B) {
	_, client := benchServed(b)
	ctx := graph.WithActor(context.Background(), "mcp:bench")
	for i := 0; i < b.N; i++ {
		if _, err := client.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Bench %d", i)}); err != nil {
			b.Fatal(err)
		}
	}
}
