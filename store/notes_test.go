package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

func TestFindNoteByID(t *testing.T) {
	t.Parallel()
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

// Deleting an identity records its notes in the identity.delete's before; restoring it
// brings them back (same ids, authors and times) with note.add events of the restore's
// request. A note deleted on its own before stays deleted.
func TestIdentity_RestoreBringsBackNotes(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	alice, bob := ctxActor("cli:alice"), ctxActor("mcp:bob")
	if _, err := db.CreateIdentity(alice, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi", Tags: []string{"role:synth"}}); err != nil {
		t.Fatal(err)
	}
	n1, err := db.AddNote(alice, graph.NoteCreate{Target: "jdxi", Kind: "warning", Body: "needs a new PSU"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := db.AddNote(alice, graph.NoteCreate{Target: "jdxi", Body: "deleted on its own"})
	if err != nil {
		t.Fatal(err)
	}
	n2, err := db.AddNote(bob, graph.NoteCreate{Target: "jdxi", Kind: "success", Body: "firmware **1.1** installed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteNote(alice, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(alice, graph.IdentityCreate{Name: "Other"}); err != nil {
		t.Fatal(err)
	}
	other, err := db.AddNote(alice, graph.NoteCreate{Target: "other", Body: "not part of it"})
	if err != nil {
		t.Fatal(err)
	}

	for round := 1; round <= 2; round++ { // a second delete carries the restored notes again
		if err := db.DeleteIdentity(graph.WithRequestID(alice, "del"), "jdxi"); err != nil {
			t.Fatal(err)
		}
		if _, total, _, _ := db.FindNotes(alice, graph.NoteFilter{}); total != 1 {
			t.Fatalf("round %d: %d notes after the delete, want only %s's", round, total, other.ID)
		}
		rid := "restore-" + string(rune('0'+round))
		got, err := db.RestoreIdentity(graph.WithRequestID(bob, rid), "jdxi")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got.Tags, ",") != "role:synth" {
			t.Fatalf("restored tags %v", got.Tags)
		}
		notes, total, _, err := db.FindNotes(alice, graph.NoteFilter{Target: "jdxi"})
		if err != nil {
			t.Fatal(err)
		}
		if total != 2 || len(notes) != 2 {
			t.Fatalf("round %d: %d notes on jdxi after restore, want 2", round, total)
		}
		for i, want := range []*graph.Note{n2, n1} { // newest first
			g := notes[i]
			if g.ID != want.ID || g.Target != "identity:jdxi" || g.Kind != want.Kind || g.Body != want.Body || g.Author != want.Author || !g.Time.Equal(want.Time) {
				t.Errorf("round %d: restored note %+v, was %+v", round, g, want)
			}
		}
		if n, err := db.FindNoteByID(alice, n1.ID); err != nil || n.Body != n1.Body {
			t.Errorf("FindNoteByID after restore: %+v %v", n, err)
		}
		_, err = db.FindNoteByID(alice, gone.ID)
		mustCode(t, err, graph.ENOTFOUND)
		if st, _ := db.Stats(alice); st.Notes != 3 {
			t.Errorf("round %d: stats notes=%d, want 3", round, st.Notes)
		}

		var acts []string
		for _, e := range allEvents(t, db, graph.EventFilter{}) {
			if e.RequestID == rid {
				acts = append([]string{e.Action + " " + e.Target + " " + e.Actor}, acts...)
			}
		}
		want := []string{"identity.restore identity:jdxi mcp:bob", "tag.add identity:jdxi mcp:bob", "note.add " + n1.ID + " mcp:bob", "note.add " + n2.ID + " mcp:bob"}
		if strings.Join(acts, "|") != strings.Join(want, "|") {
			t.Fatalf("round %d: restore events\n%s\nwant\n%s", round, strings.Join(acts, "\n"), strings.Join(want, "\n"))
		}
		// The note's own history reads add, delete, add.
		evs := allEvents(t, db, graph.EventFilter{Target: n1.ID})
		if len(evs) != 1+2*round || evs[0].Action != graph.ActNoteAdd || evs[0].RequestID != rid {
			t.Fatalf("round %d: %s history: %v", round, n1.ID, actions(evs))
		}
	}
	rep, err := db.VerifyChangelog(alice)
	if err != nil || !rep.OK {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestAddNote_Repeat: the same note (target, kind, body, author) again within ten minutes
// is a retry: the first comes back marked Existed and nothing is written. Another author,
// kind or body, or the same after ten minutes, is a new note.
func TestAddNote_Repeat(t *testing.T) {
	t.Parallel()
	clock := &storetest.Clock{T: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	alice, bob := ctxActor("cli:alice"), ctxActor("mcp:bob")
	if _, err := db.CreateIdentity(alice, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	head := func() uint64 {
		evs, _, err := db.FindEvents(alice, graph.EventFilter{First: 1})
		if err != nil || len(evs) == 0 {
			t.Fatalf("head: %v", err)
		}
		return evs[0].Seq
	}
	add := func(ctx context.Context, kind, body string) *graph.Note {
		t.Helper()
		n, err := db.AddNote(ctx, graph.NoteCreate{Target: "korg-minilogue", Kind: kind, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := add(alice, "warning", "key C4 sticks")
	if first.Existed {
		t.Fatalf("a first note says it existed: %+v", first)
	}
	clock.T = clock.T.Add(9 * time.Minute)
	again := add(alice, "", "key C4 sticks") // kind warning ≠ info: a new note
	if again.Existed {
		t.Errorf("another kind was taken for a repeat")
	}
	before := head()
	same := add(alice, "warning", "key C4 sticks")
	if !same.Existed || same.ID != first.ID || !same.Time.Equal(first.Time) {
		t.Errorf("repeat within 10 min: %+v, want the first (%s) marked existed", same, first.ID)
	}
	if h := head(); h != before {
		t.Errorf("a repeated note wrote events (head %d → %d)", before, h)
	}
	if n := add(bob, "warning", "key C4 sticks"); n.Existed {
		t.Errorf("another author's same note was taken for a repeat")
	}
	if n := add(alice, "warning", "key C4 sticks!"); n.Existed {
		t.Errorf("another body was taken for a repeat")
	}
	clock.T = first.Time.Add(graph.NoteRepeatWindow)
	if n := add(alice, "warning", "key C4 sticks"); n.Existed {
		t.Errorf("the same note ten minutes later was taken for a repeat")
	}
	if _, total, _, err := db.FindNotes(alice, graph.NoteFilter{Target: "korg-minilogue"}); err != nil || total != 5 {
		t.Errorf("notes: %d (%v), want 5", total, err)
	}
}

// TestAddNote_RepeatEscaped: a repeat is found whatever the body's JSON looks like in the
// record (repeatedNote decodes only records that may hold the body): escaped characters
// (<, a quote, a newline), non-ASCII, and a body equal to another field's value.
func TestAddNote_RepeatEscaped(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t, store.Options{})
	alice := ctxActor("cli:alice")
	if _, err := db.CreateIdentity(alice, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"gain < 3 & > 1", `say "hi"`, "line one\nline two", "Größe: ∞ 🎹", "cli:alice", "plain body"} {
		first, err := db.AddNote(alice, graph.NoteCreate{Target: "korg-minilogue", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		again, err := db.AddNote(alice, graph.NoteCreate{Target: "korg-minilogue", Body: body})
		if err != nil {
			t.Fatal(err)
		}
		if first.Existed || !again.Existed || again.ID != first.ID {
			t.Errorf("body %q: first %s (existed %v), again %s (existed %v); want the first back, marked existed", body, first.ID, first.Existed, again.ID, again.Existed)
		}
	}
	if _, total, _, err := db.FindNotes(alice, graph.NoteFilter{Target: "korg-minilogue"}); err != nil || total != 6 {
		t.Errorf("notes: %d (%v), want 6", total, err)
	}
}
