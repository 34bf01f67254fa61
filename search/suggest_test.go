package search_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// suggestDB is a small graph: identities (one of them with a note) and devices, some
// with uppercase keys and refs.
func suggestDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "cli:t")
	for _, c := range []graph.IdentityCreate{
		{Name: "JD-Xi", Slug: "jdxi"},
		{Name: "Roland JD-Xi", Slug: "roland-jd-xi"},
		{Name: "Korg Minilogue", Slug: "korg-minilogue"},
		{Name: "Arturia KeyStep", Slug: "arturia-keystep"},
		{Name: "Arturia BeatStep", Slug: "arturia-beatstep"},
		{Name: "Moog Subsequent 37", Slug: "subsequent-37"},
	} {
		if _, err := db.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	dev := func(key, ref string) *graph.ObservedDevice {
		src := strings.SplitN(ref, ":", 2)[0]
		return &graph.ObservedDevice{Key: key, Ref: ref, Source: src, Sources: []string{src}, Name: key}
	}
	snap := &graph.Snapshot{Taken: time.Now(), Sources: []graph.SourceStatus{{Name: "usb", OK: true}, {Name: "alsa", OK: true}, {Name: "robot", OK: true}},
		Devices: []*graph.ObservedDevice{
			dev("sn:0582:01a9:S1", "usb:3-3.2"),
			dev("path:1235:8210:3-3.1", "usb:3-3.1"),
			dev("robot:SCOUT1", "robot:scout"),
			dev("card:PCH", "alsa:card:PCH"),
		}}
	if _, err := db.ObserveDevices(graph.WithActor(context.Background(), "discovery:usb"), snap); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	return db
}

var suggestInputs = []struct {
	in    string
	kinds []graph.Kind
}{
	{"jdx1", nil}, {"identity:jdx", nil}, {"jd-xi", nil}, {"JDXI2", nil}, {"roland-jd-x", nil},
	{"mini_logue", nil}, {"identity:minilogue", nil}, {"xi-roland", nil}, {"KeyStep", nil},
	{"arturia", nil}, {"step-arturia", nil}, {"subseq", nil}, {"37", nil}, {"zzzzzzzzzzzzzz", nil},
	{"kdxi", []graph.Kind{graph.KindIdentity}}, {"korg", []graph.Kind{graph.KindIdentity}},
	{"usb:3-3.3", nil}, {"usb:3-3", nil}, {"usb:9-9", nil}, {"robot:scuot", nil}, {"alsa:card:pch", nil},
	{"device:sn:0582:01a9:S2", nil}, {"device:scout", nil}, {"device:card", nil}, {"device:path:1235", nil},
	{"sn:0582:01a9", []graph.Kind{graph.KindDevice}}, {"S1", []graph.Kind{graph.KindDevice}},
	{"note:0190", nil}, {"jdxi-note", []graph.Kind{graph.KindNote}},
	{"identity:jdxi", []graph.Kind{graph.KindDevice}}, {"", nil},
}

// The index answers every "did you mean" exactly as the store's own look at its keys
// does (in a graph small enough for the store to look at every key).
func TestFinder_SuggestID_AsTheStore(t *testing.T) {
	t.Parallel()
	db := suggestDB(t)
	ctx := context.Background()
	own := map[string]string{}
	for _, c := range suggestInputs {
		_, err := db.ResolveID(ctx, c.in, c.kinds...)
		own[c.in] = fmt.Sprintf("%s %v", graph.ErrorCode(err), err)
	}
	f := search.NewFinder(db)
	db.SetSuggester(f)
	for _, c := range suggestInputs {
		_, err := db.ResolveID(ctx, c.in, c.kinds...)
		if got, want := fmt.Sprintf("%s %v", graph.ErrorCode(err), err), own[c.in]; got != want {
			t.Errorf("ResolveID(%q) with the index:\n got %s\nwant %s", c.in, got, want)
		}
	}
	for _, c := range []struct{ in, says string }{
		{"jdx1", "did you mean identity:jdxi?"},
		{"xi-roland", "did you mean identity:roland-jd-xi?"},
		{"usb:3-3.3", "did you mean usb:3-3.2?"},
		{"robot:scuot", "did you mean robot:scout?"},
	} {
		if !strings.Contains(own[c.in], c.says) {
			t.Errorf("ResolveID(%q): %s lacks %q", c.in, own[c.in], c.says)
		}
	}
}

// The index sees a node created after it was built, and forgets a deleted one.
func TestFinder_SuggestID_KeepsUp(t *testing.T) {
	t.Parallel()
	db := suggestDB(t)
	f := search.NewFinder(db)
	db.SetSuggester(f)
	ctx := graph.WithActor(context.Background(), "cli:t")
	if err := f.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Elektron Digitakt", Slug: "elektron-digitakt"}); err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"digitakt", "elektron-digitakx"} { // found as a substring; by edit distance
		_, err := db.ResolveID(ctx, typed)
		if !strings.Contains(fmt.Sprint(err), "did you mean identity:elektron-digitakt?") {
			t.Fatalf("a new identity is not suggested for %q: %v", typed, err)
		}
	}
	if err := db.DeleteIdentity(ctx, "identity:elektron-digitakt"); err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"digitakt", "elektron-digitakx"} {
		_, err := db.ResolveID(ctx, typed)
		if graph.ErrorCode(err) != graph.ENOTFOUND || strings.Contains(err.Error(), "digitakt?") {
			t.Fatalf("a deleted identity is still suggested for %q: %v", typed, err)
		}
	}
	// Writes naming an unknown id get the same message as reads.
	_, err := db.UpdateTags(ctx, "jdx1", []string{"role:synth"}, nil)
	if !strings.Contains(fmt.Sprint(err), "did you mean identity:jdxi?") {
		t.Fatalf("a write's unknown id: %v", err)
	}
	if _, ok := err.(*graph.Error); !ok {
		t.Fatalf("the error is a %T, want *graph.Error", err)
	}
}

// In a kind with more names than the store looks at one by one, the index still finds
// a name containing the text anywhere, and a typo next to where the text sorts.
func TestFinder_SuggestID_Large(t *testing.T) {
	t.Parallel()
	src := newFakeSource()
	for i := range 5000 {
		src.addIdentity(fmt.Sprintf("identity:synth-%06d", i), fmt.Sprintf("Synth %d", i))
	}
	f := search.NewFinder(src)
	ctx := context.Background()
	for _, c := range []struct{ in, want string }{
		{"nth-004999", "identity:synth-004999"},
		{"synth-00499x", "identity:synth-004999"}, // the nearest before it sorts, as the store measured
		{"zzzz-qqqq-wwww", ""},
	} {
		got, ok := f.SuggestID(ctx, graph.KindIdentity, c.in)
		if !ok || got != c.want {
			t.Errorf("SuggestID(%q)=%q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	// Keys added after the lists were sorted: a few are merged in, many sort afresh.
	for _, n := range []int{3, 300} {
		for i := range n {
			src.addIdentity(fmt.Sprintf("identity:added-%d-%04d", n, i), "Added")
		}
		typo := fmt.Sprintf("added-%d-%04dx", n, n-1)
		if got, _ := f.SuggestID(ctx, graph.KindIdentity, typo); got != fmt.Sprintf("identity:added-%d-%04d", n, n-1) {
			t.Errorf("after adding %d: SuggestID(%q)=%q", n, typo, got)
		}
	}
	if _, ok := f.SuggestID(ctx, graph.KindNote, "0190"); ok {
		t.Error("notes are not in the index: ok should be false")
	}
}
