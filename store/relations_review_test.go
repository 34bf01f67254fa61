package store_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestRelation_ImportIntoEmptyChecksTuplesEndsCaps: into an empty database an import writes
// relation records as they are, so the check pass must refuse what the store could never
// hold: two relations with one tuple (ports compare case-insensitively), a relation to a
// node the file does not have, a node past MaxRelationsPerNode. Each is EINVALID naming
// the line, and nothing is written (the file then also passes CheckFile).
func TestRelation_ImportIntoEmptyChecksTuplesEndsCaps(t *testing.T) {
	t.Parallel()
	ctx := ctxActor("cli:t")
	hdr := `{"type":"header","format":"devgraph","version":3}` + "\n"
	ident := func(slug string) string {
		return `{"type":"identity","identity":{"id":"identity:` + slug + `","name":"` + slug + `","hints":[],"tags":[],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}}` + "\n"
	}
	rel := func(id, from, fromPort, to string) string {
		return fmt.Sprintf(`{"type":"relation","relation":{"id":"rel:%s","type":"controls","from":"%s","from_port":"%s","to":"%s"}}`, id, from, fromPort, to) + "\n"
	}
	many := ""
	for i := range graph.MaxRelationsPerNode + 1 {
		many += rel(fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", i), "identity:a", fmt.Sprintf("out %d", i), "identity:b")
	}
	for _, c := range []struct {
		name, lines, want string
	}{
		{"same tuple twice", rel("0190aaaa-0000-7000-8000-000000000001", "identity:a", "MIDI OUT", "identity:b") +
			rel("0190aaaa-0000-7000-8000-000000000002", "identity:a", "midi out", "identity:b"), "line 5"},
		{"unknown end", rel("0190aaaa-0000-7000-8000-000000000001", "identity:a", "", "identity:c"), "line 4"},
		{"unknown device end", rel("0190aaaa-0000-7000-8000-000000000001", "device:sn:nowhere", "", "identity:b"), "line 4"},
		{"past the cap", many, fmt.Sprintf("line %d", 3+graph.MaxRelationsPerNode+1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := storetest.MustOpen(t)
			before := snapshot(t, db)
			_, err := db.Import(ctx, strings.NewReader(hdr+ident("a")+ident("b")+c.lines), nil)
			if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was imported") {
				t.Fatalf("import: %v; want EINVALID at %s", err, c.want)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("import wrote %s → %s", before, after)
			}
			if _, total, _, _ := db.FindRelations(ctx, graph.RelationFilter{}); total != 0 {
				t.Fatalf("%d relations written", total)
			}
		})
	}
}

// TestRelation_RepeatAddWritesNothing: a repeated add (and an update to the same values)
// answers "none" and its transaction's write set is empty — not even the changelog head
// is put again, so nothing reaches the file's pages or a cluster's commit.
func TestRelation_RepeatAddWritesNothing(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	c := cable("keystep", "MIDI OUT", "jdxi", "MIDI IN", "midi-din")
	first, err := db.Relate(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ops []store.WriteOp
	store.SetBeforeCommit(db, func(o []store.WriteOp) error {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, o...)
		return nil
	})
	before := state(t, db)
	c.FromPort, c.ToPort = "midi out", "midi in"
	again, err := db.Relate(ctx, c)
	if err != nil || again.Action != "none" || again.Relation.ID != first.Relation.ID {
		t.Fatalf("repeat add: %+v %v", again, err)
	}
	same, err := db.UpdateRelation(ctx, first.Relation.ID, graph.RelationUpdate{Attrs: map[string]string{"kind": "midi-din"}})
	if err != nil || same.Action != "none" {
		t.Fatalf("same update: %+v %v", same, err)
	}
	mustUnchanged(t, db, before, "a repeat add")
	mu.Lock()
	defer mu.Unlock()
	for _, o := range ops {
		t.Errorf("a repeat add wrote %s %q", o.Bucket, o.Key)
	}
}

// TestRelation_RestoreBringsBackOnlyWhatTheDeleteRemoved: the events of one request share
// its request id (an HTTP request with two GraphQL mutations, say). A relation removed by
// an unrelate earlier in the delete's request was not removed by the delete, and a
// restore leaves it gone; the relations the delete's cascade removed come back.
func TestRelation_RestoreBringsBackOnlyWhatTheDeleteRemoved(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	x, err := db.Relate(ctx, graph.RelationCreate{From: "keystep", Type: "controls", To: "jdxi"})
	if err != nil {
		t.Fatal(err)
	}
	y, err := db.Relate(ctx, graph.RelationCreate{From: "scout", Type: "controls", To: "jdxi"})
	if err != nil {
		t.Fatal(err)
	}
	one := graph.WithRequestID(ctx, graph.NewRequestID())
	if _, err := db.Unrelate(one, graph.RelationRemove{ID: x.Relation.ID}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteIdentity(one, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreIdentity(ctx, "jdxi"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindRelationByID(ctx, y.Relation.ID); err != nil {
		t.Errorf("the relation the delete removed is not back: %v", err)
	}
	if r, err := db.FindRelationByID(ctx, x.Relation.ID); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Errorf("the relation unrelated before the delete came back: %+v %v", r, err)
	}
}

// TestRelation_RestoreAfterMergeBringsBackNoRelations: a merge's delete removes no
// relation (the merge moved them to the survivor, or dropped the self-loops and
// duplicates it made): restoring the merged-away identity brings back none of them, as it
// brings back none of the hints, tags and notes the merge moved.
func TestRelation_RestoreAfterMergeBringsBackNoRelations(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "X", Slug: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []graph.RelationCreate{
		{From: "keystep", Type: "controls", To: "jdxi"}, // a self-loop after the merge: dropped
		{From: "keystep", Type: "controls", To: "x"},    // a duplicate of jdxi's: dropped
		{From: "jdxi", Type: "controls", To: "x"},
		{From: "keystep", Type: "part_of", To: "x"}, // moved
	} {
		if _, err := db.Relate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.MergeIdentities(ctx, "keystep", "jdxi"); err != nil {
		t.Fatal(err)
	}
	merged := state(t, db).rels
	if _, err := db.RestoreIdentity(ctx, "keystep"); err != nil {
		t.Fatal(err)
	}
	if got := state(t, db).rels; got != merged {
		t.Fatalf("restore after merge changed the relations:\n%s\n→ %s", merged, got)
	}
}

// TestRelation_UnknownIDSaysWhatToDo: removing, updating or reading a relation that does
// not exist is ENOTFOUND on "id", in words ("unknown relation", not the id prefix "rel")
// with the next step.
func TestRelation_UnknownIDSaysWhatToDo(t *testing.T) {
	t.Parallel()
	db, ctx := relFixture(t)
	const id = "rel:0190aaaa-0000-7000-8000-000000000000"
	_, e1 := db.Unrelate(ctx, graph.RelationRemove{ID: id})
	_, e2 := db.UpdateRelation(ctx, id, graph.RelationUpdate{})
	_, e3 := db.FindRelationByID(ctx, id)
	for _, err := range []error{e1, e2, e3} {
		msg := graph.ErrorMessage(err)
		if graph.ErrorCode(err) != graph.ENOTFOUND || graph.ErrorField(err) != "id" ||
			!strings.Contains(msg, `unknown relation "`+id+`"`) || !slices.Contains(graph.ErrorSteps(err), graph.ListStep(graph.ListRelations, "")) {
			t.Errorf("%v (field %q): want ENOTFOUND on id, saying unknown relation and how to list them", err, graph.ErrorField(err))
		}
	}
}

// TestImport_NotesPastTheCap: a node holds at most MaxNotesPerNode notes. Into an empty
// database an import with more on one node is EINVALID naming the line, nothing written;
// into a non-empty one the notes past the cap on a node already here are skipped, as
// relations past theirs are.
func TestImport_NotesPastTheCap(t *testing.T) {
	t.Parallel()
	ctx := ctxActor("cli:t")
	hdr := `{"type":"header","format":"devgraph","version":3}` + "\n"
	ident := `{"type":"identity","identity":{"id":"identity:a","name":"a","hints":[],"tags":[],"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"}}` + "\n"
	notes := ""
	for i := range graph.MaxNotesPerNode + 1 {
		notes += fmt.Sprintf(`{"type":"note","note":{"id":"note:0190aaaa-0000-7000-8000-%012d","target":"identity:a","kind":"info","body":"n","author":"cli:t","created_at":"2026-01-01T00:00:00Z"}}`, i) + "\n"
	}
	db := storetest.MustOpen(t)
	before := snapshot(t, db)
	_, err := db.Import(ctx, strings.NewReader(hdr+ident+notes), nil)
	if want := fmt.Sprintf("line %d", 2+graph.MaxNotesPerNode+1); graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), want) {
		t.Fatalf("import: %v; want EINVALID at %s", err, want)
	}
	if after := snapshot(t, db); after != before {
		t.Fatalf("import wrote %s → %s", before, after)
	}

	// Into a non-empty database: a device known here already holds notes.
	db2, _ := relFixture(t)
	for i := range graph.MaxNotesPerNode - 1 {
		if _, err := db2.AddNote(ctx, graph.NoteCreate{Target: "usb:3-3.1", Body: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	dev := ""
	for i := range 3 {
		dev += fmt.Sprintf(`{"type":"note","note":{"id":"note:0190bbbb-0000-7000-8000-%012d","target":"device:path:1c75:0263:3-3.1","kind":"info","body":"m","author":"cli:t","created_at":"2026-01-01T00:00:00Z"}}`, i) + "\n"
	}
	if _, err := db2.Import(ctx, strings.NewReader(hdr+dev), nil); err != nil {
		t.Fatal(err)
	}
	if _, total, _, err := db2.FindNotes(ctx, graph.NoteFilter{Target: "usb:3-3.1"}); err != nil || total != graph.MaxNotesPerNode {
		t.Fatalf("the device holds %d notes (%v), want %d", total, err, graph.MaxNotesPerNode)
	}
}
