// Package querytest builds the whole read/write stack GraphQL runs on, for tests of query
// and of the transports that carry it (http): a real store in a temp dir, the demo rig as
// live hardware with a simulated robot, the identity service, and an executor.
package querytest

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

// Env is a real store in a temp dir, the demo rig as live hardware, the identity service
// over both, and an executor over the service (New).
type Env struct {
	T    testing.TB
	DB   *store.DB
	Svc  *identity.Service
	Exec *query.Executor
	Ctx  context.Context // actor test:seed

	RobotClock *robot.FakeClock // drives the simulated robot "scout"
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

func New(t testing.TB, opts query.Options) *Env {
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
	return &Env{T: t, DB: db, Svc: svc, Exec: exec, Ctx: ctx, RobotClock: robotClock}
}

// Seed writes a small studio: named identities with tags, hints and notes, fillers for
// paging, and the JD-Xi bound to its demo device.
func (e *Env) Seed() {
	e.T.Helper()
	must := func(err error) {
		e.T.Helper()
		if err != nil {
			e.T.Fatal(err)
		}
	}
	_, err := e.Svc.CreateIdentity(e.Ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Slug: "jdxi",
		Data: json.RawMessage(`{"room":"studio","year":2015}`), Tags: []string{"role:synth", "manufacturer:roland"}})
	must(err)
	_, err = e.Svc.CreateIdentity(e.Ctx, graph.IdentityCreate{Name: "Focusrite Scarlett 2i2", Slug: "scarlett",
		Tags:  []string{"role:audio-interface", "manufacturer:focusrite"},
		Hints: []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "1235:8210"}}})
	must(err)
	_, err = e.Svc.CreateIdentity(e.Ctx, graph.IdentityCreate{Name: "Arturia BeatStep", Slug: "beatstep", Tags: []string{"role:controller"}})
	must(err)
	for i := 0; i < 120; i++ {
		c := graph.IdentityCreate{Name: fmt.Sprintf("Filler %03d", i), Slug: fmt.Sprintf("filler-%03d", i)}
		if i%3 == 0 {
			c.Tags = []string{"project:live-set"}
		}
		_, err = e.Svc.CreateIdentity(e.Ctx, c)
		must(err)
	}
	for i, body := range []string{"Factory reset done.", "Firmware 1.1 installed.", "Left knob is **scratchy**."} {
		kind := []string{"info", "success", "warning"}[i]
		_, err = e.Svc.AddNote(e.Ctx, graph.NoteCreate{Target: "identity:jdxi", Kind: kind, Body: body})
		must(err)
	}
	_, err = e.Svc.Bind(e.Ctx, graph.BindInput{Ref: "usb:3-3.2", IdentityID: "identity:jdxi"})
	must(err)
	_, err = e.Svc.UpdateTags(e.Ctx, "usb:3-3.2", []string{"location:desk"}, nil)
	must(err)
}

// SeedCable binds the BeatStep (Seed's identity) to its demo device and declares, through
// GraphQL, a cable from its MIDI OUT to the JD-Xi's MIDI IN, so a trace from the BeatStep
// crosses the cable and the JD-Xi's observed subscription to Bitwig Studio. It returns the
// cable's id. Call Seed first.
func (e *Env) SeedCable() string {
	e.T.Helper()
	if _, err := e.Svc.Bind(e.Ctx, graph.BindInput{Ref: "usb:3-4.1", IdentityID: "identity:beatstep"}); err != nil {
		e.T.Fatal(err)
	}
	d := e.OK(`mutation { relate(input: {from: "beatstep", fromPort: "MIDI OUT", type: "cable", to: "jdxi", toPort: "MIDI IN", attrs: {kind: "midi-din", length: "1.5m"}}){ action relation { id } } }`, nil)
	id, _ := Get(d, "relate.relation.id").(string)
	if Get(d, "relate.action") != "add" || !strings.HasPrefix(id, "rel:") {
		e.T.Fatalf("relate: %v", d)
	}
	return id
}

// Do runs a request and fails the test on transport-level surprises; it returns the
// response decoded as JSON maps.
func (e *Env) Do(q string, vars map[string]any) map[string]any {
	e.T.Helper()
	return e.DoCtx(graph.WithActor(context.Background(), "test:gql"), q, vars)
}

func (e *Env) DoCtx(ctx context.Context, q string, vars map[string]any) map[string]any {
	e.T.Helper()
	resp := e.Exec.Execute(ctx, query.Request{Query: q, Variables: vars}, false)
	b, err := json.Marshal(resp)
	if err != nil {
		e.T.Fatalf("marshal response: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.T.Fatal(err)
	}
	return out
}

// OK runs a request that must succeed and returns its data.
func (e *Env) OK(q string, vars map[string]any) map[string]any {
	e.T.Helper()
	out := e.Do(q, vars)
	if errs, has := out["errors"]; has {
		e.T.Fatalf("query failed: %v\nquery: %s", errs, q)
	}
	data, _ := out["data"].(map[string]any)
	if data == nil {
		e.T.Fatalf("no data: %v", out)
	}
	return data
}

// Get walks a decoded JSON value by a dotted path ("identity.tags.0.name").
func Get(v any, path string) any {
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

// GetList is Get for a list (nil when path holds none).
func GetList(v any, path string) []any {
	l, _ := Get(v, path).([]any)
	return l
}
