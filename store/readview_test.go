package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// Reads made with a view see one snapshot; writes committed meanwhile appear once it is
// released; reads without the view see them at once.
func TestReadView_OneSnapshot(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:alice")
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi"}); err != nil {
		t.Fatal(err)
	}
	growAndFree(t, db)
	vctx, release, err := db.BeginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, rel2, err := db.BeginRead(vctx); err != nil || again != vctx {
		t.Fatalf("nested BeginRead: %v (a new context)", err)
	} else {
		rel2() // does nothing: the outer view stays open
	}
	before, _ := db.Stats(vctx)

	// A writer on another goroutine commits while the view is open (its pages come from
	// the free ones growAndFree left, so the commit need not wait for the view).
	done := make(chan error)
	go func() {
		_, err := db.RenameIdentity(ctx, "jdxi", "Roland JD-Xi")
		if err == nil {
			_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Scarlett"})
		}
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	id, err := db.FindIdentityByID(vctx, "jdxi", graph.IdentityParts{})
	if err != nil || id.Name != "JD-Xi" {
		t.Fatalf("in the view: %+v %v; want the name before the rename", id, err)
	}
	_, err = db.FindIdentityByID(vctx, "scarlett", graph.IdentityParts{})
	mustCode(t, err, graph.ENOTFOUND)
	if st, _ := db.Stats(vctx); st.Identities != before.Identities || st.Events != before.Events {
		t.Fatalf("stats moved inside the view: %+v → %+v", before, st)
	}
	if id, _ := db.FindIdentityByID(ctx, "jdxi", graph.IdentityParts{}); id.Name != "Roland JD-Xi" {
		t.Fatalf("outside the view: %q", id.Name)
	}

	release()
	release() // safe twice
	// A released view's context reads afresh.
	if id, err := db.FindIdentityByID(vctx, "jdxi", graph.IdentityParts{}); err != nil || id.Name != "Roland JD-Xi" {
		t.Fatalf("after release: %+v %v", id, err)
	}
}

// A write made with a context holding a view is refused at once (no deadlock), changes
// nothing, and the same write without the view succeeds.
func TestReadView_WriteInsideRefused(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:alice")
	vctx, release, err := db.BeginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	writes := map[string]func(c context.Context) error{
		"create": func(c context.Context) error {
			_, err := db.CreateIdentity(c, graph.IdentityCreate{Name: "X"})
			return err
		},
		"observe": func(c context.Context) error {
			_, err := db.ObserveDevices(c, &graph.Snapshot{Sources: []graph.SourceStatus{{Name: "usb", OK: true}},
				Devices: []*graph.ObservedDevice{dev("sn:1:2:3", "usb:1-1", fp("usb_serial", "0001:0002:3"))}})
			return err
		},
		"import": func(c context.Context) error {
			_, err := db.Import(c, strings.NewReader("{\"type\":\"header\",\"format\":\"devgraph-export\"}\n"), nil)
			return err
		},
	}
	for name, w := range writes {
		err := w(vctx)
		mustCode(t, err, graph.EINTERNAL)
		if !strings.Contains(err.Error(), "write inside a read view") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if st, _ := db.Stats(ctx); st.Identities != 0 || st.Devices != 0 || st.Events != 0 {
		t.Fatalf("a refused write changed the database: %+v", st)
	}
	release() // a write waits for open views when it has to grow the file
	if err := writes["create"](ctx); err != nil {
		t.Fatalf("the same write without the view: %v", err)
	}
}

// Many goroutines reading through one view at once (the view serialises them) and a
// writer growing the file: the writer finishes once the view is released.
func TestReadView_ConcurrentReadersAndGrowingWriter(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:alice")
	for i := range 20 {
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Unit %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	vctx, release, err := db.BeginRead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { // enough to outgrow the mapping: it may have to wait for the view
		var err error
		for i := 0; i < 200 && err == nil; i++ {
			_, err = db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Big %d", i), Data: []byte(`{"blob":"` + strings.Repeat("x", 4000) + `"}`)})
		}
		wrote <- err
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, total, _, err := db.FindIdentities(vctx, graph.IdentityFilter{First: 5})
				if err == nil && total != 20 {
					err = fmt.Errorf("total %d inside the view, want 20", total)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	release()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if st, _ := db.Stats(ctx); st.Identities != 220 {
		t.Fatalf("identities %d after the writer, want 220", st.Identities)
	}
}

// growAndFree grows the file and frees what it grew by, so the next few small writes
// reuse free pages instead of growing the file (a commit that grows the mapping waits
// for every open read transaction).
func growAndFree(t testing.TB, db interface {
	CreateIdentity(context.Context, graph.IdentityCreate) (*graph.Identity, error)
	DeleteIdentity(context.Context, string) error
	UpdateTags(context.Context, string, []string, []string) ([]string, error)
}) {
	t.Helper()
	ctx := graph.WithActor(context.Background(), "test:grow")
	var ids []string
	for i := range 64 {
		id, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Ballast %d", i), Data: []byte(`{"blob":"` + strings.Repeat("x", 8000) + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.ID)
	}
	for _, id := range ids {
		if err := db.DeleteIdentity(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	// One more write: it releases the deleted pages for reuse.
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Ballast end"}); err != nil {
		t.Fatal(err)
	}
}
