package store_test

import (
	"strings"
	"testing"

	"devgraph/graph"
	"devgraph/store/storetest"
)

func TestFindNoteByID(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:alice")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	n, err := db.AddNote(ctx, graph.NoteCreate{Target: "korg-minilogue", Kind: "warning", Body: "key C4 sticks"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{n.ID, strings.TrimPrefix(n.ID, "note:"), " " + n.ID + " "} {
		got, err := db.FindNoteByID(ctx, id)
		if err != nil {
			t.Fatalf("FindNoteByID(%q): %v", id, err)
		}
		if got.ID != n.ID || got.Target != "identity:korg-minilogue" || got.Kind != "warning" || got.Body != n.Body || got.Author != "cli:alice" || !got.Time.Equal(n.Time) {
			t.Errorf("FindNoteByID(%q)=%+v, want %+v", id, got, n)
		}
	}

	// A mistyped id is ENOTFOUND suggesting the real one.
	typo := n.ID[:len(n.ID)-1] + "x"
	if typo == n.ID {
		typo = n.ID[:len(n.ID)-1] + "y"
	}
	_, err = db.FindNoteByID(ctx, typo)
	mustCode(t, err, graph.ENOTFOUND)
	if msg := graph.ErrorMessage(err); !strings.Contains(msg, "did you mean "+n.ID) {
		t.Errorf("message %q does not suggest %s", msg, n.ID)
	}

	_, err = db.FindNoteByID(ctx, "identity:korg-minilogue")
	mustCode(t, err, graph.EINVALID)
	_, err = db.FindNoteByID(ctx, "")
	mustCode(t, err, graph.EINVALID)

	// A deleted note is gone.
	if err := db.DeleteNote(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	_, err = db.FindNoteByID(ctx, n.ID)
	mustCode(t, err, graph.ENOTFOUND)
}
