package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// countTx counts the write transactions db opens from now on.
func countTx(db *store.DB) *atomic.Int64 {
	var n atomic.Int64
	store.SetTxObserver(db, func(begin bool) {
		if begin {
			n.Add(1)
		}
	})
	return &n
}

// head is the changelog's newest event seq ("" when empty).
func head(t *testing.T, db *store.DB) string {
	t.Helper()
	evs, _, err := db.FindEvents(context.Background(), graph.EventFilter{First: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		return ""
	}
	return fmt.Sprint(evs[0].Seq, evs[0].Hash)
}

func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("bulk:t%06d", i)
	}
	return out
}

// TestDB_MessageRefusedBeforeWrite is defect 1's validation half at the store: whatever
// interface made the context, a message with a raw byte, a NUL or over 1,024 bytes is
// refused naming the field, before any transaction, and nothing is written.
func TestDB_MessageRefusedBeforeWrite(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	for _, name := range []string{"Roland JD-Xi", "Keystep"} {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	before := head(t, db)
	txs := countTx(db)
	for name, tc := range map[string]struct{ msg, want string }{
		"RawByte":   {"\xff", "message is not valid UTF-8"},
		"NUL":       {"why\x00not", "message contains a NUL byte"},
		"TooLong":   {strings.Repeat("é", 1024), "message is 2048 bytes; the limit is 1024"},
		"Surrogate": {"\xed\xa0\x80", "message is not valid UTF-8"}, // CESU-8 of \ud800
	} {
		t.Run(name, func(t *testing.T) {
			mctx := graph.WithMessage(ctx, tc.msg)
			_, err := db.UpdateTags(mctx, "roland-jd-xi", []string{"role:synth"}, nil)
			if got := graph.ErrorMessage(err); !strings.Contains(got, tc.want) {
				t.Fatalf("tag: err=%q, want %q", got, tc.want)
			}
			if got, want := graph.ErrorField(err), "message"; got != want {
				t.Fatalf("field=%q, want %q", got, want)
			}
			if _, err := db.AddNote(mctx, graph.NoteCreate{Target: "roland-jd-xi", Body: "hello"}); graph.ErrorField(err) != "message" {
				t.Fatalf("note: err=%v, want the message refused", err)
			}
			if _, err := db.Relate(mctx, graph.RelationCreate{From: "keystep", Type: "controls", To: "roland-jd-xi", DryRun: true}); graph.ErrorField(err) != "message" {
				t.Fatalf("relate dry run: err=%v, want the message refused", err)
			}
		})
	}
	if n := txs.Load(); n != 0 {
		t.Fatalf("%d write transactions opened for refused messages, want 0", n)
	}
	if got := head(t, db); got != before {
		t.Fatalf("changelog head moved: %s, was %s", got, before)
	}
	t.Run("LimitOK", func(t *testing.T) {
		msg := strings.Repeat("é", 512) // exactly 1,024 bytes
		if _, err := db.UpdateTags(graph.WithMessage(ctx, msg), "roland-jd-xi", []string{"role:synth"}, nil); err != nil {
			t.Fatalf("a 1,024-byte message: %v", err)
		}
	})
}

// TestDB_UpdateTags_Caps is defect 4: one call adds at most 32 tags and removes at most
// 32; 50,000 are refused at once, before any transaction opens, naming the field and cap.
func TestDB_UpdateTags_Caps(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	before := head(t, db)
	txs := countTx(db)
	for name, tc := range map[string]struct {
		add, remove []string
		field, want string
	}{
		"Add50000":    {manyTags(50000), nil, "add", "add has 50000 tags; the limit is 32 per call"},
		"Add33":       {manyTags(33), nil, "add", "add has 33 tags; the limit is 32 per call"},
		"Remove33":    {nil, manyTags(33), "remove", "remove has 33 tags; the limit is 32 per call"},
		"Remove50000": {manyTags(1), manyTags(50000), "remove", "remove has 50000 tags"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := db.UpdateTags(ctx, "jdxi", tc.add, tc.remove)
			if got, want := graph.ErrorCode(err), graph.ELIMIT; got != want {
				t.Fatalf("code=%q, want %q (err %v)", got, want, err)
			}
			if got := graph.ErrorMessage(err); !strings.Contains(got, tc.want) {
				t.Fatalf("err=%q, want %q", got, tc.want)
			}
			if got := graph.ErrorField(err); got != tc.field {
				t.Fatalf("field=%q, want %q", got, tc.field)
			}
		})
	}
	t.Run("CreateIdentity33", func(t *testing.T) {
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Many", Tags: manyTags(33)})
		if graph.ErrorField(err) != "tags" || graph.ErrorCode(err) != graph.ELIMIT {
			t.Fatalf("err=%v, want tags refused", err)
		}
	})
	if n := txs.Load(); n != 0 {
		t.Fatalf("%d write transactions opened for refused calls, want 0", n)
	}
	if got := head(t, db); got != before {
		t.Fatalf("changelog head moved: %s, was %s", got, before)
	}

	t.Run("AtTheCap", func(t *testing.T) {
		tags, err := db.UpdateTags(ctx, "jdxi", manyTags(32), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tags) != 32 {
			t.Fatalf("%d tags, want 32", len(tags))
		}
		tags, err = db.UpdateTags(ctx, "jdxi", []string{"role:synth"}, manyTags(32))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(tags, " "), "role:synth"; got != want {
			t.Fatalf("tags=%q, want %q", got, want)
		}
	})
}

// TestDB_UpdateTags_Duplicates: 32 entries naming 2 tags in several spellings count as 32
// items (the cap is on what the call gives) and write one tag.add per tag.
func TestDB_UpdateTags_Duplicates(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	var add []string
	for i := 0; i < 16; i++ {
		add = append(add, []string{"role:synth", " Role: Synth ", "location:studio desk", "LOCATION:Studio Desk"}[i%4])
		add = append(add, "role:synth")
	}
	if len(add) != graph.MaxTagsPerCall {
		t.Fatalf("test gives %d tags", len(add))
	}
	evs0 := countEvents(t, db)
	tags, err := db.UpdateTags(ctx, "jdxi", add, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(tags, " "), "location:studio-desk role:synth"; got != want {
		t.Fatalf("tags=%q, want %q", got, want)
	}
	if got, want := countEvents(t, db)-evs0, 2; got != want {
		t.Fatalf("%d events, want %d (one tag.add per tag)", got, want)
	}
	// The same 32 again: nothing to add, nothing written.
	if _, err := db.UpdateTags(ctx, "jdxi", add, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := countEvents(t, db)-evs0, 2; got != want {
		t.Fatalf("%d events after a repeat, want %d", got, want)
	}
	// Duplicated removals remove once.
	if _, err := db.UpdateTags(ctx, "jdxi", nil, []string{"role:synth", "ROLE:SYNTH", "role:synth"}); err != nil {
		t.Fatal(err)
	}
	if got, want := countEvents(t, db)-evs0, 3; got != want {
		t.Fatalf("%d events after removing, want %d", got, want)
	}
	_, err = db.UpdateTags(ctx, "jdxi", []string{"role:synth"}, []string{"Role:Synth"})
	if got, want := graph.ErrorMessage(err), "tag role:synth is both added and removed"; !strings.Contains(got, want) {
		t.Fatalf("err=%q, want %q", got, want)
	}
}

func countEvents(t *testing.T, db *store.DB) int {
	t.Helper()
	s, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(s.Events)
}

// TestDB_Hints_Caps: at most 32 hints per call (add, remove, a new identity's), refused
// before any transaction.
func TestDB_Hints_Caps(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	txs := countTx(db)
	fps := serialHints(33)
	_, err := db.AddHints(ctx, "jdxi", fps, false)
	if got, want := graph.ErrorMessage(err), "hints has 33 hints; the limit is 32 per call"; !strings.Contains(got, want) || graph.ErrorField(err) != "hints" {
		t.Fatalf("add: err=%q, want %q", got, want)
	}
	if _, err := db.RemoveHints(ctx, "jdxi", fps); graph.ErrorCode(err) != graph.ELIMIT {
		t.Fatalf("remove: err=%v, want ELIMIT", err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Many", Hints: fps}); graph.ErrorCode(err) != graph.ELIMIT {
		t.Fatalf("create: err=%v, want ELIMIT", err)
	}
	if n := txs.Load(); n != 0 {
		t.Fatalf("%d write transactions opened for refused calls, want 0", n)
	}
	if _, err := db.AddHints(ctx, "jdxi", fps[:32], false); err != nil {
		t.Fatalf("32 hints: %v", err)
	}
}

func serialHints(n int) []graph.Fingerprint {
	out := make([]graph.Fingerprint, n)
	for i := range out {
		out[i] = graph.Fingerprint{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%06d", i)}
	}
	return out
}

// TestDB_CheckConsistencyOpen: the full page check runs on an open database beside a
// writer (doctor asks a running server for it).
func TestDB_CheckConsistencyOpen(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Unit"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.UpdateTags(ctx, "unit", []string{"role:synth"}, nil)
		done <- err
	}()
	if err := db.CheckConsistency(ctx); err != nil {
		t.Fatalf("CheckConsistency: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := db.CheckConsistency(ctx); err != nil {
		t.Fatalf("CheckConsistency after a write: %v", err)
	}
}

// TestDB_DataText: an identity's data is JSON a user typed; a string in it that decoding
// would garble (a lone surrogate escape, which every JSON decoder reads as U+FFFD) or a
// \u0000 is refused naming its path, as the socket, GraphQL and MCP already refuse it in
// their request bodies, so the CLI on the file does not store what they refuse.
func TestDB_DataText(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "X"}); err != nil {
		t.Fatal(err)
	}
	before := head(t, db)
	for data, field := range map[string]string{
		`{"a":"\ud800"}`:           "data.a",
		`{"a":{"b c":["\u0000"]}}`: `data.a["b c"][0]`,
		`{"\udc00":1}`:             `data["\udc00"]`,
	} {
		d := json.RawMessage(data)
		_, err := db.UpdateIdentity(ctx, "x", graph.IdentityUpdate{Data: &d})
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != field {
			t.Errorf("update data %s: err=%v field %q, want INVALID naming %s", data, err, graph.ErrorField(err), field)
		}
		_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Y", Data: d})
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != field {
			t.Errorf("create with data %s: err=%v field %q, want INVALID naming %s", data, err, graph.ErrorField(err), field)
		}
	}
	if got := head(t, db); got != before {
		t.Fatalf("the changelog moved: %s, was %s", got, before)
	}
	d := json.RawMessage(`{"a":"caf\u00e9 \ud83d\ude00"}`)
	if _, err := db.UpdateIdentity(ctx, "x", graph.IdentityUpdate{Data: &d}); err != nil {
		t.Fatalf("valid escapes: %v", err)
	}
}
