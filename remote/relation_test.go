package remote_test

import (
	"context"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// Relations and clients through the socket: the same results as in-process, the caller's
// events, the same errors.
func TestClient_Relations(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	bg := context.Background()
	ctx := caller("mcp:alice", "req-relate", "cabled the synth")
	if _, err := s.client.Bind(caller("mcp:alice", "", ""), graph.BindInput{Ref: "usb:3-3.2", NewName: "JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.CreateIdentity(caller("mcp:alice", "", ""), graph.IdentityCreate{Name: "Speakers"}); err != nil {
		t.Fatal(err)
	}
	add, err := s.client.Relate(ctx, graph.RelationCreate{From: "usb:3-3.2", FromPort: "Main Out", Type: "cable", To: "speakers", ToPort: "In", Attrs: map[string]string{"kind": "audio"}})
	if err != nil {
		t.Fatal(err)
	}
	if add.Action != "add" || !strings.HasPrefix(add.Relation.From, "device:") || add.Relation.To != "identity:speakers" {
		t.Fatalf("relate through the socket: %s", mustJSON(t, add))
	}
	again, err := s.client.Relate(ctx, graph.RelationCreate{From: "usb:3-3.2", FromPort: "Main Out", Type: "cable", To: "speakers", ToPort: "In", Attrs: map[string]string{"kind": "audio"}})
	if err != nil || again.Action != "none" || again.Relation.ID != add.Relation.ID {
		t.Fatalf("repeat relate: %s %v", mustJSON(t, again), err)
	}
	upd, err := s.client.UpdateRelation(caller("mcp:alice", "req-update", ""), add.Relation.ID, graph.RelationUpdate{Attrs: map[string]string{"kind": "audio", "length": "2m"}})
	if err != nil || upd.Action != "update" || upd.Relation.Attrs["length"] != "2m" {
		t.Fatalf("update through the socket: %s %v", mustJSON(t, upd), err)
	}

	// Reads answer what the service answers.
	for _, f := range []graph.RelationFilter{{Node: "jdxi"}, {Node: "usb:3-3.2", First: 1}, {Node: "jdxi", Observed: true}, {Types: []string{"cable"}}} {
		dr, dt, dn, derr := s.svc.FindRelations(bg, f)
		cr, ct, cn, cerr := s.client.FindRelations(bg, f)
		if derr != nil || cerr != nil || mustJSON(t, dr) != mustJSON(t, cr) || dt != ct || dn != cn {
			t.Errorf("FindRelations(%+v) differs: %v %v\n direct %s %d %q\n socket %s %d %q", f, derr, cerr, mustJSON(t, dr), dt, dn, mustJSON(t, cr), ct, cn)
		}
	}
	rels, total, _, err := s.client.FindRelations(bg, graph.RelationFilter{Node: "jdxi"})
	if err != nil || total < 2 || rels[0].ID != add.Relation.ID || !rels[len(rels)-1].Observed {
		t.Fatalf("the JD-Xi's relations through the socket: %s (%d) %v", mustJSON(t, rels), total, err)
	}
	obs := rels[len(rels)-1]
	for _, id := range []string{add.Relation.ID, obs.ID} {
		d, derr := s.svc.FindRelationByID(bg, id)
		c, cerr := s.client.FindRelationByID(bg, id)
		if derr != nil || cerr != nil || mustJSON(t, d) != mustJSON(t, c) {
			t.Errorf("FindRelationByID(%s) differs: %v %v", id, derr, cerr)
		}
	}
	dtypes, _ := s.svc.RelationTypes(bg)
	ctypes, err := s.client.RelationTypes(bg)
	if err != nil || mustJSON(t, dtypes) != mustJSON(t, ctypes) {
		t.Errorf("RelationTypes differs: %v", err)
	}
	dcl, _ := s.svc.Clients(bg)
	ccl, err := s.client.Clients(bg)
	if err != nil || len(ccl) == 0 || mustJSON(t, dcl) != mustJSON(t, ccl) {
		t.Fatalf("Clients differ (%v): %s vs %s", err, mustJSON(t, dcl), mustJSON(t, ccl))
	}
	one, err := s.client.Client(bg, ccl[0].ID)
	if err != nil || one.ID != ccl[0].ID {
		t.Errorf("Client(%s): %+v %v", ccl[0].ID, one, err)
	}

	// Errors keep their code, field and words.
	_, err = s.client.Relate(ctx, graph.RelationCreate{From: "jdxi", Type: "controls", To: ccl[0].ID})
	if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "to" || !strings.Contains(graph.ErrorMessage(err), "live endpoints cannot be declared") {
		t.Errorf("relate to a client through the socket: %v (%s, %q)", err, graph.ErrorCode(err), graph.ErrorField(err))
	}
	_, err = s.client.Client(bg, "client:alsa:Nobody")
	if graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Errorf("unknown client through the socket: %v", err)
	}
	_, _, _, err = s.client.FindRelations(bg, graph.RelationFilter{Node: "jdx1"})
	if graph.ErrorCode(err) != graph.ENOTFOUND || !strings.Contains(graph.ErrorMessage(err), "identity:jdxi") {
		t.Errorf("unknown node through the socket: %v", err)
	}

	// Removal, and the events carry the caller.
	rm, err := s.client.Unrelate(caller("mcp:alice", "req-unrelate", ""), graph.RelationRemove{ID: add.Relation.ID})
	if err != nil || rm.Action != "remove" {
		t.Fatalf("unrelate through the socket: %s %v", mustJSON(t, rm), err)
	}
	evs, _, err := s.svc.FindEvents(bg, graph.EventFilter{Action: "relation.*", First: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range evs {
		if e.Actor != "mcp:alice" {
			t.Errorf("event %s by %s", e.Action, e.Actor)
		}
		got[e.RequestID] = e.Action
	}
	if got["req-relate"] != "relation.add" || got["req-update"] != "relation.update" || got["req-unrelate"] != "relation.remove" || len(evs) != 3 {
		t.Errorf("relation events %v", got)
	}
}

// A read-only server answers relation reads and refuses relation writes in a user's words.
func TestHandler_ReadOnlyRelations(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	_, client := serve(t, svc, remote.Options{ReadOnly: true})
	defer client.Close()
	ctx := caller("mcp:alice", "", "")
	_, err := client.Relate(ctx, graph.RelationCreate{From: "a", Type: "cable", To: "b"})
	if !strings.Contains(graph.ErrorMessage(err), "relating two nodes is refused") {
		t.Fatalf("relate on a read-only server: %v", err)
	}
	_, err = client.Unrelate(ctx, graph.RelationRemove{ID: "rel:x"})
	if !strings.Contains(graph.ErrorMessage(err), "removing a relation is refused") {
		t.Fatalf("unrelate on a read-only server: %v", err)
	}
	if _, _, _, err := client.FindRelations(ctx, graph.RelationFilter{}); err != nil {
		t.Fatalf("relations on a read-only server: %v", err)
	}
	if cs, err := client.Clients(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("clients without hardware: %v %v", cs, err)
	}
}

// An update with an empty attrs map clears the attrs through the socket as it does
// in-process (relation update --clear-attrs), rather than leaving them alone.
func TestClient_UpdateRelationClearsAttrs(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	ctx := caller("mcp:alice", "", "")
	for _, name := range []string{"Desk", "Lamp"} {
		if _, err := s.client.CreateIdentity(ctx, graph.IdentityCreate{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	add, err := s.client.Relate(ctx, graph.RelationCreate{From: "lamp", Type: "located_in", To: "desk", Attrs: map[string]string{"shelf": "top"}})
	if err != nil {
		t.Fatal(err)
	}
	upd, err := s.client.UpdateRelation(ctx, add.Relation.ID, graph.RelationUpdate{Attrs: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Action != "update" || len(upd.Relation.Attrs) != 0 {
		t.Fatalf("clearing attrs through the socket: %s", mustJSON(t, upd))
	}
	got, err := s.svc.FindRelationByID(context.Background(), add.Relation.ID)
	if err != nil || len(got.Attrs) != 0 {
		t.Fatalf("the stored relation after clearing its attrs: %s %v", mustJSON(t, got), err)
	}
}
