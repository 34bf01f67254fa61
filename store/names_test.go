package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// The name index's reads (graph.NameIndex): names and tags from their indexes, display
// names, and the changelog by its headers, which says when it cannot tell (pruned, too
// many) so the caller reads everything afresh.
func TestDB_NameIndex(t *testing.T) {
	db := storetest.MustOpen(t)
	ctx := graph.WithActor(t.Context(), "test:names")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi", Tags: []string{"role:synth", "location:studio"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Arturia BeatStep", Slug: "beatstep"}); err != nil {
		t.Fatal(err)
	}
	var keys []graph.NameKey
	total := -1
	head, err := db.EachIdentityName(ctx, func(n int) { total = n }, func(k graph.NameKey) {
		keys = append(keys, k)
	})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 {
		t.Errorf("EachIdentityName: total %d, want 2", total)
	}
	want := []graph.NameKey{{ID: "identity:beatstep", Lower: "arturia beatstep"}, {ID: "identity:jdxi", Lower: "roland jd-xi"}}
	if !reflect.DeepEqual(keys, want) || head == 0 {
		t.Fatalf("EachIdentityName = %v, head %d; want %v", keys, head, want)
	}
	names, err := db.IdentityDisplayNames(ctx, []string{"identity:jdxi", "identity:gone", "identity:beatstep"})
	if got, want := names, []string{"Roland JD-Xi", "", "Arturia BeatStep"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("IdentityDisplayNames = %q %v, want %q", got, err, want)
	}
	tags, tagHead, err := db.NodeTags(ctx)
	if got, want := tags, map[string][]string{"identity:jdxi": {"location:studio", "role:synth"}}; err != nil || !reflect.DeepEqual(got, want) || tagHead != head {
		t.Fatalf("NodeTags = %v (head %d) %v, want %v (head %d)", got, tagHead, err, want, head)
	}

	if _, err := db.RenameIdentity(ctx, "identity:beatstep", "BeatStep Pro"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "identity:jdxi", []string{"status:ok"}, nil); err != nil {
		t.Fatal(err)
	}
	changes, now, complete, err := db.ChangesSince(ctx, head, 100)
	if err != nil || !complete || now != head+2 || len(changes) != 2 {
		t.Fatalf("ChangesSince(%d) = %v, head %d, complete %v, %v", head, changes, now, complete, err)
	}
	if c := changes[0]; c.Seq != head+1 || c.Action != graph.ActIdentityRename || c.Target != "identity:beatstep" {
		t.Errorf("first change = %+v", c)
	}
	if c := changes[1]; c.Action != graph.ActTagAdd || c.Target != "identity:jdxi" {
		t.Errorf("second change = %+v", c)
	}
	if changes, _, complete, _ := db.ChangesSince(ctx, now, 100); !complete || len(changes) != 0 {
		t.Errorf("nothing new: %v %v", changes, complete)
	}
	if changes, _, complete, _ := db.ChangesSince(ctx, head, 1); complete || changes != nil {
		t.Errorf("more than max: %v %v, want incomplete", changes, complete)
	}
	if _, err := db.PruneChangelog(graph.WithPrunePermission(ctx), time.Now()); err != nil {
		t.Fatal(err)
	}
	if changes, _, complete, err := db.ChangesSince(ctx, head, 100); err != nil || complete || changes != nil {
		t.Errorf("after a prune: %v %v %v, want incomplete", changes, complete, err)
	}
}
