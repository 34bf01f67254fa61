package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/fixture"
	"github.com/devgraph/devgraph/store/storetest"
)

// viewSpy is the real identity service with hooks: it counts read views and their
// releases, and lets a test act inside a resolver.
type viewSpy struct {
	*identity.Service
	mu       sync.Mutex
	log      []string
	begun    atomic.Int32
	released atomic.Bool
	onFind   func(ctx context.Context) // called once, after the first FindIdentityByID
	onStats  func(ctx context.Context) // called by Stats before it reads
}

func (s *viewSpy) note(what string) {
	s.mu.Lock()
	s.log = append(s.log, what)
	s.mu.Unlock()
}

func (s *viewSpy) BeginRead(ctx context.Context) (context.Context, func(), error) {
	vctx, release, err := s.Service.BeginRead(ctx)
	if err != nil {
		return ctx, nil, err
	}
	s.begun.Add(1)
	s.released.Store(false)
	s.note("begin")
	return vctx, func() { s.note("release"); s.released.Store(true); release() }, nil
}

func (s *viewSpy) FindIdentityByID(ctx context.Context, id string, with graph.IdentityParts) (*graph.Identity, error) {
	out, err := s.Service.FindIdentityByID(ctx, id, with)
	if fn := s.onFind; fn != nil {
		s.onFind = nil
		fn(ctx)
	}
	return out, err
}

func (s *viewSpy) Stats(ctx context.Context) (*graph.Stats, error) {
	if s.onStats != nil {
		s.onStats(ctx)
	}
	return s.Service.Stats(ctx)
}

func newSpy(t *testing.T, e *env, opts query.Options) (*viewSpy, *query.Executor) {
	t.Helper()
	spy := &viewSpy{Service: e.svc}
	exec, err := query.New(spy, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })
	return spy, exec
}

func run(t *testing.T, exec *query.Executor, q string) map[string]any {
	t.Helper()
	resp := exec.Execute(graph.WithActor(context.Background(), "test:gql"), query.Request{Query: q}, false)
	if len(resp.Errors) > 0 {
		t.Fatalf("query failed: %+v", resp.Errors)
	}
	b, err := json.Marshal(resp.Data)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	return data
}

// growAndFree grows the file and frees what it grew by, so the next small writes reuse
// free pages: a commit that has to grow the mapping waits for every open read view.
func growAndFree(t *testing.T, svc graph.Store) {
	t.Helper()
	ctx := graph.WithActor(context.Background(), "test:grow")
	for i := range 64 {
		id, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Ballast %d", i), Data: []byte(`{"blob":"` + strings.Repeat("x", 8000) + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.DeleteIdentity(ctx, id.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Ballast end"}); err != nil {
		t.Fatal(err)
	}
}

// Every resolver of one query reads the same snapshot: writes committed by another
// goroutine after the first resolver's read are invisible to the others, and visible to
// the next query. The query takes exactly one view however many resolvers it runs.
func TestReadView_QuerySeesOneSnapshot(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	growAndFree(t, e.db)
	spy, exec := newSpy(t, e, query.Options{})
	before, err := e.svc.Stats(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	spy.onFind = func(context.Context) {
		// Another request, no view: it commits while this query is under way.
		wctx := graph.WithActor(context.Background(), "cli:other")
		done := make(chan error)
		go func() {
			_, err := e.svc.RenameIdentity(wctx, "jdxi", "JD-Xi renamed")
			if err == nil {
				_, err = e.svc.RenameIdentity(wctx, "scarlett", "Scarlett renamed")
			}
			if err == nil {
				_, err = e.svc.AddNote(wctx, graph.NoteCreate{Target: "beatstep", Body: "written mid-query"})
			}
			done <- err
		}()
		if err := <-done; err != nil {
			t.Errorf("concurrent write: %v", err)
		}
	}
	q := `{ a: identity(id:"jdxi"){ name } b: identity(id:"scarlett"){ name } c: identity(id:"beatstep"){ notes { totalCount } }
		stats { identities notes events } n: notes { totalCount } }`
	d := run(t, exec, q)
	if spy.onFind != nil {
		t.Fatal("the hook never ran")
	}
	if get(d, "a.name") != "Roland JD-Xi" || get(d, "b.name") != "Focusrite Scarlett 2i2" {
		t.Errorf("names %v / %v: a write committed mid-query leaked into it", get(d, "a.name"), get(d, "b.name"))
	}
	if get(d, "c.notes.totalCount") != float64(0) || get(d, "n.totalCount") != float64(before.Notes) ||
		get(d, "stats.notes") != float64(before.Notes) || fmt.Sprint(get(d, "stats.events")) != fmt.Sprint(before.Events) {
		t.Errorf("counts moved mid-query: %v (before %+v)", d, before)
	}
	if n := spy.begun.Load(); n != 1 || !spy.released.Load() {
		t.Errorf("views begun %d, released %v; want one, released", n, spy.released.Load())
	}
	d = run(t, exec, q)
	if get(d, "a.name") != "JD-Xi renamed" || get(d, "b.name") != "Scarlett renamed" || get(d, "c.notes.totalCount") != float64(1) {
		t.Errorf("the next query does not see the writes: %v", d)
	}
}

// A mutation holds no read view: its writes go through, and a query inside the same
// document is not possible (one operation per request).
func TestReadView_MutationHoldsNone(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	spy, exec := newSpy(t, e, query.Options{})
	resp := exec.Execute(graph.WithActor(context.Background(), "test:gql"), query.Request{Query: `mutation {
		addNote(target:"jdxi", body:"from a mutation"){ id }
		bind(ref:"usb:3-4.1", newName:"Arturia BeatStep 2"){ device { id } } }`}, false)
	if len(resp.Errors) > 0 {
		t.Fatalf("mutation: %+v", resp.Errors)
	}
	if n := spy.begun.Load(); n != 0 {
		t.Fatalf("a mutation began %d read views", n)
	}
	run(t, exec, `{ stats { notes } }`)
	if n := spy.begun.Load(); n != 1 {
		t.Fatalf("a query began %d read views, want 1", n)
	}
}

// On timeout the view is released only after graphql-go's executor has returned: a
// resolver still running past the deadline keeps reading through it safely.
func TestReadView_ReleasedAfterExecutorOnTimeout(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	spy, exec := newSpy(t, e, query.Options{Limits: query.Limits{Timeout: 20 * time.Millisecond}})
	spy.onStats = func(ctx context.Context) {
		<-ctx.Done() // the deadline passes while this resolver runs
		// Still inside the executor: the view must be open, and reads through it work.
		if spy.released.Load() {
			spy.note("read after release")
		}
		if _, err := spy.Service.FindIdentityByID(context.WithoutCancel(ctx), "jdxi", graph.IdentityParts{}); err != nil {
			spy.note("read failed: " + err.Error())
		}
		spy.note("resolver returned")
	}
	resp := exec.Execute(graph.WithActor(context.Background(), "test:gql"), query.Request{Query: `{ stats { identities } identity(id:"jdxi"){ name } }`}, false)
	if len(resp.Errors) == 0 {
		t.Fatalf("no error after the deadline: %+v", resp)
	}
	if code := resp.Errors[0].Extensions["code"]; code != graph.ELIMIT {
		t.Errorf("error code %v, want %s", code, graph.ELIMIT)
	}
	spy.mu.Lock()
	log := strings.Join(spy.log, " → ")
	spy.mu.Unlock()
	if log != "begin → resolver returned → release" {
		t.Fatalf("order %q; want the release after the resolver returned", log)
	}
}

// Live queries (devices with matches, unbound, sources) run while the poll loop records
// hot-plugs and another writer grows the file: every query finishes (no deadlock between
// a view and a writer waiting to grow the mapping).
func TestReadView_LiveQueriesWhilePollerWrites(t *testing.T) {
	db := storetest.MustOpen(t)
	// Each hot-plug writes a whole tree beside the others and swaps a symlink to it, so a
	// reading never sees a tree half-written (Rig.Write removes and rewrites in place: a
	// reading in between would miss devices that never left, such as the JD-Xi asked for
	// below). Old trees stay a while for readings still walking them.
	base := t.TempDir()
	root := filepath.Join(base, "rig")
	plug := func(i int, rig *fixture.Rig) error {
		tree := filepath.Join(base, fmt.Sprintf("tree-%d", i))
		if err := os.MkdirAll(tree, 0o755); err != nil {
			return err
		}
		if err := rig.Write(tree); err != nil {
			return err
		}
		tmp := root + ".new"
		if err := os.Symlink(tree, tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, root); err != nil {
			return err
		}
		if i >= 50 {
			return os.RemoveAll(filepath.Join(base, fmt.Sprintf("tree-%d", i-50)))
		}
		return nil
	}
	if err := plug(0, fixture.DemoRig()); err != nil {
		t.Fatal(err)
	}
	live := sources.Demo(root)
	live.ShareWindow = -1
	svc := identity.New(db, live, nil)
	svc.PollInterval = time.Millisecond
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	exec, err := query.New(svc, query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // hot-plug: the poller records appear/disappear
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rig := fixture.DemoRig()
			if i%2 == 0 {
				rig.Remove("3-4.1")
			}
			if err := plug(i, rig); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() { // a writer growing the file: its commits must remap now and then
		defer wg.Done()
		ctx := graph.WithActor(context.Background(), "cli:writer")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Grow %d", i), Data: []byte(`{"blob":"` + strings.Repeat("y", 6000) + `"}`)}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	q := `{ devices(filter: {all: true}){ totalCount nodes { id present match { confidence } } } unbound { nodes { id } } sources { name ok }
		d: device(id:"usb:3-3.2"){ id } identities(first: 3){ totalCount } }`
	var wq sync.WaitGroup
	for w := 0; w < 3; w++ {
		wq.Add(1)
		go func() {
			defer wq.Done()
			for range 40 {
				resp := exec.Execute(graph.WithActor(context.Background(), "test:gql"), query.Request{Query: q}, false)
				if len(resp.Errors) > 0 {
					t.Errorf("live query: %+v", resp.Errors)
					return
				}
			}
		}()
	}
	wq.Wait()
	close(stop)
	wg.Wait()
	evs, _, err := db.FindEvents(context.Background(), graph.EventFilter{Action: "device.*", First: 5})
	if err != nil || len(evs) == 0 {
		t.Fatalf("the poller recorded no device events (%v): the test did not exercise it", err)
	}
}

// countingStore counts full finder rebuilds (they page through every device).
type countingStore struct {
	graph.Store
	findDevices atomic.Int32
}

func (c *countingStore) FindDevices(ctx context.Context, f graph.DeviceFilter) ([]*graph.Device, int, string, error) {
	c.findDevices.Add(1)
	return c.Store.FindDevices(ctx, f)
}

// A find made inside an older read view than the index's last sync keeps the index as it
// is: no full rebuild back to the old snapshot.
func TestReadView_FinderKeepsNewerIndex(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	growAndFree(t, e.db)
	svc := &countingStore{Store: e.db} // the index reads the store, as serve wires it
	f := search.NewFinder(svc)
	bg := context.Background()
	if err := f.Refresh(bg); err != nil {
		t.Fatal(err)
	}
	vctx, release, err := e.svc.BeginRead(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := e.svc.CreateIdentity(graph.WithActor(bg, "cli:t"), graph.IdentityCreate{Name: "Moog Subsequent 37"}); err != nil {
		t.Fatal(err)
	}
	hits, err := f.Find(bg, graph.FindQuery{Text: "subsequent"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("find after the write: %v %v", hits, err)
	}
	rebuilds := svc.findDevices.Load()
	hits, err = f.Find(vctx, graph.FindQuery{Text: "subsequent"})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.findDevices.Load(); got != rebuilds {
		t.Fatalf("a find in an older view rebuilt the index (%d device reads)", got-rebuilds)
	}
	if len(hits) == 0 {
		t.Fatal("the newer index lost the new identity")
	}
}
