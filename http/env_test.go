package http_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// env is a real store in a temp dir, the demo rig as live hardware, the identity service
// over both, and a GraphQL executor over the service: what cmd hands the http package.
type env struct {
	t    testing.TB
	db   *store.DB
	svc  *identity.Service
	exec *query.Executor
	ctx  context.Context

	robotClock *robot.FakeClock
}

// fakeClock hands out strictly increasing times so changelog and golden output are stable.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func newEnv(t testing.TB, opts query.Options) *env {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	live, err := sources.NewDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live.Now = clock.Now
	live.ShareWindow = -1
	// A simulated robot on a fake clock (tests advance it) with a cup within reach.
	robotClock := robot.NewFakeClock(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	fleet, err := robot.NewFleet(robot.Options{Store: db, Now: robotClock.Now, Every: robotClock.Every})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddSim("scout", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddObject(robot.Object{ID: "cup", Kind: "cup", X: 0.4, Y: 0}); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	live.Extra = append(live.Extra, fleet)
	svc := identity.New(db, live, fleet)
	svc.Now = clock.Now
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	exec, err := query.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })
	ctx := graph.WithActor(context.Background(), "test:seed")
	return &env{t: t, db: db, svc: svc, exec: exec, ctx: ctx, robotClock: robotClock}
}

// seed writes a small studio: named identities with tags, hints and notes, fillers for
// paging, and the JD-Xi bound to its demo device.
func (e *env) seed() {
	e.t.Helper()
	must := func(err error) {
		e.t.Helper()
		if err != nil {
			e.t.Fatal(err)
		}
	}
	_, err := e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi",
		Data: json.RawMessage(`{"room":"studio","year":2015}`), Tags: []string{"role:synth", "manufacturer:roland"}})
	must(err)
	_, err = e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: "Focusrite Scarlett 2i2", Slug: "scarlett",
		Tags:  []string{"role:audio-interface", "manufacturer:focusrite"},
		Hints: []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "1235:8210"}}})
	must(err)
	_, err = e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: "Arturia BeatStep", Slug: "beatstep", Tags: []string{"role:controller"}})
	must(err)
	for i := 0; i < 120; i++ {
		c := graph.IdentityCreate{Name: fmt.Sprintf("Filler %03d", i), Slug: fmt.Sprintf("filler-%03d", i)}
		if i%3 == 0 {
			c.Tags = []string{"project:live-set"}
		}
		_, err = e.svc.CreateIdentity(e.ctx, c)
		must(err)
	}
	for i, body := range []string{"Factory reset done.", "Firmware 1.1 installed.", "Left knob is **scratchy**."} {
		kind := []string{"info", "success", "warning"}[i]
		_, err = e.svc.AddNote(e.ctx, graph.NoteCreate{Target: "identity:jdxi", Kind: kind, Body: body})
		must(err)
	}
	_, err = e.svc.Bind(e.ctx, graph.BindInput{Ref: "usb:3-3.2", IdentityID: "identity:jdxi"})
	must(err)
	_, err = e.svc.UpdateTags(e.ctx, "usb:3-3.2", []string{"location:desk"}, nil)
	must(err)
}

// do runs a request and fails the test on transport-level surprises; it returns the
// response decoded as JSON maps.
func (e *env) do(q string, vars map[string]any) map[string]any {
	e.t.Helper()
	return e.doCtx(graph.WithActor(context.Background(), "test:gql"), q, vars)
}

func (e *env) doCtx(ctx context.Context, q string, vars map[string]any) map[string]any {
	e.t.Helper()
	resp := e.exec.Execute(ctx, query.Request{Query: q, Variables: vars}, false)
	b, err := json.Marshal(resp)
	if err != nil {
		e.t.Fatalf("marshal response: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// ok runs a request that must succeed and returns its data.
func (e *env) ok(q string, vars map[string]any) map[string]any {
	e.t.Helper()
	out := e.do(q, vars)
	if errs, has := out["errors"]; has {
		e.t.Fatalf("query failed: %v\nquery: %s", errs, q)
	}
	data, _ := out["data"].(map[string]any)
	if data == nil {
		e.t.Fatalf("no data: %v", out)
	}
	return data
}

// get walks a decoded JSON value by a dotted path ("identity.tags.0.name").
func get(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscanf(p, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func getList(v any, path string) []any {
	l, _ := get(v, path).([]any)
	return l
}
