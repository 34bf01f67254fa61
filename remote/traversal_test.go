package remote_test

import (
	"context"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// Traversal through the socket answers what the service answers, errors included.
func TestClient_Traversal(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	bg := context.Background()
	ctx := caller("mcp:alice", "", "")
	if _, err := s.client.Bind(ctx, graph.BindInput{Ref: "usb:3-3.2", NewName: "JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.CreateIdentity(ctx, graph.IdentityCreate{Name: "Speakers"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Relate(ctx, graph.RelationCreate{From: "jdxi", FromPort: "Main Out", Type: "cable", To: "speakers", Attrs: map[string]string{"kind": "audio"}}); err != nil {
		t.Fatal(err)
	}
	same := func(what string, d, c any, derr, cerr error) {
		t.Helper()
		if derr != nil || cerr != nil || mustJSON(t, d) != mustJSON(t, c) {
			t.Errorf("%s differs: %v %v\n direct %s\n socket %s", what, derr, cerr, mustJSON(t, d), mustJSON(t, c))
		}
	}
	dn, derr := s.svc.Neighbors(bg, "jdxi", graph.NeighborOptions{Depth: 2})
	cn, cerr := s.client.Neighbors(bg, "jdxi", graph.NeighborOptions{Depth: 2})
	same("Neighbors", dn, cn, derr, cerr)
	if cn == nil || len(cn.Vertices) < 3 {
		t.Fatalf("neighbours of the JD-Xi through the socket: %s", mustJSON(t, cn))
	}
	dp, derr := s.svc.Path(bg, "speakers", "usb:usb3", graph.PathOptions{})
	cp, cerr := s.client.Path(bg, "speakers", "usb:usb3", graph.PathOptions{})
	same("Path", dp, cp, derr, cerr)
	if cp == nil || !cp.Found {
		t.Fatalf("path speakers → root hub through the socket: %s", mustJSON(t, cp))
	}
	dt, derr := s.svc.Trace(bg, "jdxi", graph.TraceOptions{})
	ct, cerr := s.client.Trace(bg, "jdxi", graph.TraceOptions{})
	same("Trace", dt, ct, derr, cerr)
	dg, derr := s.svc.Subgraph(bg, "", graph.NeighborOptions{})
	cg, cerr := s.client.Subgraph(bg, "", graph.NeighborOptions{})
	same("Subgraph", dg, cg, derr, cerr)

	_, err := s.client.Neighbors(bg, "jdxi", graph.NeighborOptions{Depth: graph.MaxNeighborsDepth + 1})
	if graph.ErrorCode(err) != graph.EINVALID {
		t.Errorf("depth out of range through the socket: %v", err)
	}
	_, err = s.client.Trace(bg, "jdx1", graph.TraceOptions{})
	if graph.ErrorCode(err) != graph.ENOTFOUND || graph.ErrorField(err) != "from" {
		t.Errorf("trace from an unknown node through the socket: %v (%q)", err, graph.ErrorField(err))
	}
}
