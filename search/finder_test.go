package search_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// findDB is a small studio in a real store: named identities with tags, fillers for
// paging, and a robot device bound to the identity "Scout".
func findDB(t *testing.T) (*store.DB, context.Context) {
	t.Helper()
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(context.Background(), "test:seed")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi", Tags: []string{"role:synth", "manufacturer:roland"}})
	must(err)
	_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Arturia BeatStep", Slug: "beatstep", Tags: []string{"role:controller"}})
	must(err)
	for i := 0; i < 120; i++ {
		_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Filler %03d", i), Slug: fmt.Sprintf("filler-%03d", i)})
		must(err)
	}
	snap := &graph.Snapshot{Taken: time.Now(), Sources: []graph.SourceStatus{{Name: "robot", OK: true}},
		Devices: []*graph.ObservedDevice{{Key: "robot:SCOUT1", Ref: "robot:scout", Source: "robot", Sources: []string{"robot"}, Name: "scout"}}}
	_, err = db.ObserveDevices(graph.WithActor(context.Background(), "discovery:robot"), snap)
	must(err)
	_, err = db.BindDevice(ctx, graph.BindRequest{DeviceID: "device:robot:SCOUT1", New: &graph.IdentityCreate{Name: "Scout", Slug: "scout"}})
	must(err)
	return db, ctx
}

func has(hits []graph.FindHit, id string) bool {
	for _, h := range hits {
		if h.ID == id {
			return true
		}
	}
	return false
}

// The index follows creates, renames, tags and deletes made after it was built.
// (query's TestFinder_KeepsUp checks the same of the executor's own index.)
func TestFinder_KeepsUp(t *testing.T) {
	t.Parallel()
	db, ctx := findDB(t)
	f := search.NewFinder(db)
	defer f.Close()
	find := func(text string, tags ...string) []graph.FindHit {
		t.Helper()
		hits, err := f.Find(ctx, graph.FindQuery{Text: text, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if hits := find("jdxi"); !has(hits, "identity:jdxi") {
		t.Fatalf("jdxi: %v", hits)
	}
	id := "identity:wobble-n"
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Wobblefrog Sampler", Slug: "wobble-n"}); err != nil {
		t.Fatal(err)
	}
	if hits := find("wobblefrog"); !has(hits, id) {
		t.Errorf("a new identity is not found: %v", hits)
	}
	if _, err := db.RenameIdentity(ctx, id, "Quaxle Drum Machine"); err != nil {
		t.Fatal(err)
	}
	if hits := find("wobblefrog"); has(hits, id) {
		t.Errorf("the old name still finds it: %v", hits)
	}
	if hits := find("quaxle"); !has(hits, id) || hits[0].Name != "Quaxle Drum Machine" {
		t.Errorf("the new name does not find it: %v", hits)
	}
	if _, err := db.UpdateTags(ctx, id, []string{"role:drum-machine"}, nil); err != nil {
		t.Fatal(err)
	}
	if hits := find("", "role:drum-machine"); len(hits) != 1 || hits[0].ID != id {
		t.Errorf("tag filter after tagging: %v", hits)
	}
	if err := db.DeleteIdentity(ctx, id); err != nil {
		t.Fatal(err)
	}
	if hits := find("quaxle"); has(hits, id) {
		t.Errorf("a deleted identity is still found: %v", hits)
	}
	if hits, err := f.Find(ctx, graph.FindQuery{Text: "scout", Kind: "robot"}); err != nil || len(hits) == 0 || hits[0].Kind != "robot" {
		t.Errorf("robot kind: %v %v", hits, err)
	}
	hits, err := f.Find(ctx, graph.FindQuery{Text: "filler", First: 5})
	if err != nil || len(hits) != 5 {
		t.Errorf("first 5: %v %v", hits, err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("not best first: %v", hits)
		}
	}
	if _, err := f.Find(ctx, graph.FindQuery{Kind: "synth"}); graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "kind" {
		t.Errorf("unknown kind: %v", err)
	}
}

// viewAt is a context reading the fake source as it was at seq (a read view begun then).
type viewAt struct{}

// A find made inside an older read view than the index's last sync keeps the index as it
// is: no full rebuild back to the old snapshot. (query's TestReadView_FinderKeepsNewerIndex
// checks the same over real read views.)
func TestFinder_KeepsNewerIndex(t *testing.T) {
	t.Parallel()
	src := newFakeSource()
	src.addIdentity("identity:jdxi", "Roland JD-Xi")
	f := search.NewFinder(src)
	bg := context.Background()
	if err := f.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	vctx := context.WithValue(bg, viewAt{}, uint64(len(src.events)))
	src.addIdentity("identity:subsequent-37", "Moog Subsequent 37")
	hits, err := f.Find(bg, graph.FindQuery{Text: "subsequent"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("find after the write: %v %v", hits, err)
	}
	rebuilds := src.deviceReads
	hits, err = f.Find(vctx, graph.FindQuery{Text: "subsequent"})
	if err != nil {
		t.Fatal(err)
	}
	if src.deviceReads != rebuilds {
		t.Fatalf("a find in an older view rebuilt the index (%d device reads)", src.deviceReads-rebuilds)
	}
	if len(hits) == 0 {
		t.Fatal("the newer index lost the new identity")
	}
}

// TestFinder_FoundAfterTheAnswer: a first Find served with an answer hook closes Found
// only once the edge says the answer has been sent; one without a hook, on return.
func TestFinder_FoundAfterTheAnswer(t *testing.T) {
	db, ctx := findDB(t)
	f := search.NewFinder(db)
	hooked, answered := graph.WithAnswerHook(ctx)
	if _, err := f.Find(hooked, graph.FindQuery{Text: "jd-xi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.Found():
		t.Fatal("Found closed before the first find's answer was sent")
	default:
	}
	answered()
	select {
	case <-f.Found():
	default:
		t.Fatal("Found still open after the first find's answer was sent")
	}

	plain := search.NewFinder(db)
	if _, err := plain.Find(ctx, graph.FindQuery{Text: "jd-xi"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-plain.Found():
	default:
		t.Fatal("Found still open after a find without an answer hook returned")
	}
}
