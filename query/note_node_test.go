package query_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// node("note:…") reads the note by its key: it is found after the changelog that recorded
// it has been pruned, and a mistyped id suggests the real one.
func TestNode_NoteByID(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	n, err := e.svc.AddNote(e.ctx, graph.NoteCreate{Target: "usb:3-3.2", Kind: "danger", Body: "PSU runs hot"})
	if err != nil {
		t.Fatal(err)
	}
	// The tag change after the note keeps the note's event from being the newest one.
	if _, err := e.svc.UpdateTags(e.ctx, "jdxi", []string{"location:studio"}, nil); err != nil {
		t.Fatal(err)
	}
	newest, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{First: 1})
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := e.db.PruneChangelog(graph.WithPrunePermission(e.ctx), newest[0].Time)
	if err != nil || dropped == 0 {
		t.Fatalf("prune dropped %d (%v)", dropped, err)
	}
	if evs, _, _ := e.svc.FindEvents(e.ctx, graph.EventFilter{Target: n.ID}); len(evs) != 0 {
		t.Fatalf("the note's events survived the prune: %d", len(evs))
	}

	d := e.ok(`query($id: ID!){ node(id: $id){ id __typename ... on Note { kind body author target { id } } } }`, map[string]any{"id": n.ID})
	if get(d, "node.id") != n.ID || get(d, "node.__typename") != "Note" || get(d, "node.kind") != "danger" ||
		get(d, "node.body") != "PSU runs hot" || get(d, "node.author") != "test:seed" || get(d, "node.target.id") != n.Target {
		t.Errorf("node(%s)=%v", n.ID, get(d, "node"))
	}

	typo := n.ID[:len(n.ID)-2] + "zz"
	msg := e.fail(graph.ENOTFOUND, `query($id: ID!){ node(id: $id){ id } }`, map[string]any{"id": typo})
	if !strings.Contains(msg, n.ID) {
		t.Errorf("not-found message %q does not suggest %s", msg, n.ID)
	}
}
