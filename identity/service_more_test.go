package identity_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

func eventCount(t testing.TB, ctx context.Context, svc *identity.Service) int {
	t.Helper()
	return len(events(t, ctx, svc))
}

func TestService_Bind(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	if _, err := svc.Unbound(ctx); err != nil { // observe the rig
		t.Fatal(err)
	}
	const scarlett = "identity:scarlett"
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Focusrite Scarlett", Slug: "scarlett"})

	for _, tc := range []struct {
		name, code, field string
		in                graph.BindInput
		want              []string
	}{
		{"ErrNoRef", graph.EINVALID, "ref", graph.BindInput{NewName: "X"}, []string{"no device ref", "step list unbound"}},
		{"ErrUnknownRef", graph.ENOTFOUND, "ref", graph.BindInput{Ref: "usb:3-9", NewName: "X"}, []string{"unknown device ref usb:3-9; did you mean usb:3-", "step list unbound"}},
		{"ErrUnknownRefNearSynth", graph.ENOTFOUND, "ref", graph.BindInput{Ref: "usb:3-3.9", NewName: "X"}, []string{"did you mean usb:3-3."}},
		{"ErrUnknownIdentity", graph.ENOTFOUND, "", graph.BindInput{Ref: "usb:3-3.2", IdentityID: "scarlet"}, []string{"scarlett"}},
		{"ErrInfra", graph.EINVALID, "ref", graph.BindInput{Ref: "usb:3-3", NewName: "Hub"}, []string{"infrastructure"}},
		{"ErrBothTargets", graph.EINVALID, "identity", graph.BindInput{Ref: "usb:3-3.2", IdentityID: "scarlett", NewName: "X"}, []string{"not both"}},
		{"ErrNoTarget", graph.EINVALID, "identity", graph.BindInput{Ref: "usb:3-3.2"}, []string{"new name", "step list identity"}},
		{"ErrSlugWithoutNew", graph.EINVALID, "slug", graph.BindInput{Ref: "usb:3-3.2", IdentityID: "scarlett", Slug: "x"}, []string{"new name", "step pass slug"}},
		{"ErrBadSlug", graph.EINVALID, "slug", graph.BindInput{Ref: "usb:3-3.2", NewName: "JD", Slug: "Bad Slug"}, []string{"slug"}},
		{"ErrBadName", graph.EINVALID, "new_name", graph.BindInput{Ref: "usb:3-3.2", NewName: "bad\x00name"}, []string{"NUL"}},
		{"ErrTakenSlug", graph.ECONFLICT, "", graph.BindInput{Ref: "usb:3-3.2", NewName: "Scarlett"}, []string{"scarlett"}},
		{"ErrUnitHeldElsewhere", graph.ECONFLICT, "", graph.BindInput{Ref: "usb:3-3.1", NewName: "Other Interface", Slug: "other"}, []string{scarlett, "step show " + scarlett, "step pass move"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := eventCount(t, ctx, svc)
			_, err := svc.Bind(ctx, tc.in)
			if got := graph.ErrorCode(err); got != tc.code {
				t.Fatalf("code=%q (%v), want %q", got, err, tc.code)
			}
			if tc.field != "" && graph.ErrorField(err) != tc.field {
				t.Errorf("field=%q, want %q", graph.ErrorField(err), tc.field)
			}
			for _, s := range tc.want {
				if want, ok := strings.CutPrefix(s, "step "); ok {
					// The advice is a step (each edge words it), never words in the message.
					if !hasStep(err, want) {
						t.Errorf("steps %+v lack %q", graph.ErrorSteps(err), want)
					}
					continue
				}
				if !strings.Contains(graph.ErrorMessage(err), s) {
					t.Errorf("message %q lacks %q", graph.ErrorMessage(err), s)
				}
			}
			if after := eventCount(t, ctx, svc); after != before {
				t.Errorf("a refused bind wrote %d events", after-before)
			}
		})
	}

	t.Run("DryRunConflict", func(t *testing.T) {
		before := eventCount(t, ctx, svc)
		res := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Other Interface", Slug: "other", DryRun: true})
		if len(res.Conflicts) == 0 || !strings.Contains(strings.Join(res.Conflicts, "; "), scarlett) {
			t.Errorf("conflicts=%q, want one naming %s", res.Conflicts, scarlett)
		}
		if res.Match == nil || res.Match.IdentityID != scarlett || res.Match.Confidence != graph.High {
			t.Errorf("afterwards the serial still reads as %s: %s", scarlett, why(res.Match))
		}
		if after := eventCount(t, ctx, svc); after != before {
			t.Errorf("dry run wrote %d events", after-before)
		}
	})
	t.Run("DryRunMove", func(t *testing.T) {
		res := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Other Interface", Slug: "other", DryRun: true, Move: true})
		if len(res.HintsMoved) == 0 || len(res.Conflicts) != 0 {
			t.Errorf("moved=%v conflicts=%q, want the serial moved and no conflict", res.HintsMoved, res.Conflicts)
		}
		if res.Match == nil || res.Match.IdentityID != "identity:other" || res.Match.Confidence != graph.High {
			t.Errorf("afterwards it should read as identity:other: %s", why(res.Match))
		}
	})
	t.Run("Move", func(t *testing.T) {
		res := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.1", NewName: "Other Interface", Slug: "other", Move: true})
		if res.Device.IdentityID != "identity:other" || res.Match.IdentityID != "identity:other" || res.Match.Confidence != graph.High {
			t.Errorf("after the move: bound=%s match %s", res.Device.IdentityID, why(res.Match))
		}
		evs, _, err := svc.FindEvents(ctx, graph.EventFilter{Action: graph.ActHintMove})
		if err != nil || len(evs) == 0 {
			t.Errorf("no hint.move event: %v", err)
		}
	})
	t.Run("ExistingIdentityBySlug", func(t *testing.T) {
		// Another model: forced, as a second device of one thing would be.
		res := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-6", IdentityID: "scarlett", Force: true})
		if res.Created || res.Identity.ID != scarlett || res.Device.IdentityID != scarlett {
			t.Errorf("bind to an existing identity: created=%v identity=%s device→%s", res.Created, res.Identity.ID, res.Device.IdentityID)
		}
		v := device(t, ctx, svc, "usb:3-6")
		if v.BoundTo != scarlett || v.BoundBy != "explicit" {
			t.Errorf("bound_to=%q by %q", v.BoundTo, v.BoundBy)
		}
	})
}

func TestService_Unbind(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"})
	d, err := svc.Unbind(ctx, "usb:3-3.2")
	if err != nil || d.IdentityID != "" {
		t.Fatalf("unbind: %+v %v", d, err)
	}
	// The hints stay, so the synth is still recognised — by its match now.
	v := device(t, ctx, svc, "usb:3-3.2")
	if v.BoundTo != "identity:roland-jd-xi" || v.BoundBy != "match" {
		t.Errorf("after unbind: bound_to=%q by %q", v.BoundTo, v.BoundBy)
	}
	if evs, _, _ := svc.FindEvents(ctx, graph.EventFilter{Action: graph.ActDeviceUnbind}); len(evs) != 1 {
		t.Errorf("%d device.unbind events, want 1", len(evs))
	}
	_, err = svc.Unbind(ctx, "usb:9-9")
	if graph.ErrorCode(err) != graph.ENOTFOUND || !strings.Contains(graph.ErrorMessage(err), "did you mean") {
		t.Errorf("unbind of an unknown ref: %v", err)
	}
	if _, err := svc.Unbind(ctx, " "); graph.ErrorCode(err) != graph.EINVALID {
		t.Errorf("unbind of nothing: %v", err)
	}
}

func TestService_Match(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"})
	m, err := svc.Match(ctx, []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "0582:01A9"}, {Kind: graph.FPMIDIClient, Value: "JD-Xi"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.IdentityID != "identity:roland-jd-xi" || m.Confidence != graph.High || m.Name != "Roland JD-Xi" {
		t.Errorf("match by model and name: %s", why(m))
	}
	// the twins' model is shown by two present devices: typed, it cannot be high
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-1", NewName: "Nano A", Slug: "nano-a"})
	m, err = svc.Match(ctx, []graph.Fingerprint{{Kind: graph.FPUSBID, Value: "0944:0117"}, {Kind: graph.FPMIDIClient, Value: "nanoKONTROL2"}})
	if err != nil || m.Confidence == graph.High {
		t.Errorf("twins' model and name typed: %s %v", why(m), err)
	}
	for _, bad := range [][]graph.Fingerprint{nil, {{Kind: "serial", Value: "x"}}, {{Kind: graph.FPUSBID, Value: "nope"}}} {
		if _, err := svc.Match(ctx, bad); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("match %v: err=%v, want EINVALID", bad, err)
		}
	}
}

func TestService_Sources(t *testing.T) {
	t.Parallel()
	svc, _, ctx := newService(t)
	st, err := svc.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range st {
		names[s.Name] = s.OK
	}
	for _, n := range []string{"usb", "alsa", "pipewire"} {
		if !names[n] {
			t.Errorf("source %s not reported ok: %+v", n, st)
		}
	}
}

// TestService_Poll shows hot-plug reaching the changelog through the background loop,
// with no request touching live state.
func TestService_Poll(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	db := storetest.MustOpen(t)
	svc := identity.New(db, r.live, nil)
	svc.PollInterval = 10 * time.Millisecond
	var mu sync.Mutex
	var heard []*graph.Event
	cancel := svc.Subscribe(func(evs []*graph.Event) {
		mu.Lock()
		heard = append(heard, evs...)
		mu.Unlock()
	})
	defer cancel()
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitFor := func(what string, ok func([]*graph.Event) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			evs, _, err := db.FindEvents(ctx, graph.EventFilter{First: graph.MaxPageSize})
			if err != nil {
				t.Fatal(err)
			}
			if ok(evs) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		evs, _, _ := db.FindEvents(ctx, graph.EventFilter{First: 50})
		for _, e := range evs {
			t.Log(e.Actor, e.Action, e.Target)
		}
		t.Fatalf("the poll loop never recorded %s", what)
	}
	has := func(action, target, actor string) func([]*graph.Event) bool {
		return func(evs []*graph.Event) bool {
			for _, e := range evs {
				if e.Action == action && e.Target == target && e.Actor == actor {
					return true
				}
			}
			return false
		}
	}
	waitFor("the rig appearing", has(graph.ActDeviceAppear, "device:path:0582:01a9:3-3.2", "discovery:usb"))
	r.move("3-6", "3-9")
	waitFor("the keyboard leaving 3-6", has(graph.ActDeviceDisappear, "device:path:04d9:1702:3-6", "discovery:usb"))
	waitFor("the keyboard arriving at 3-9", has(graph.ActDeviceAppear, "device:path:04d9:1702:3-9", "discovery:usb"))
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	mu.Lock()
	n := len(heard)
	mu.Unlock()
	if n == 0 {
		t.Error("subscribers heard nothing through the service's Subscribe")
	}
}

func TestService_AutoBind(t *testing.T) {
	t.Parallel()
	svc, r, ctx := newService(t)
	svc.AutoBind = true
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"})
	r.move("3-3.2", "3-5")
	v := device(t, ctx, svc, "usb:3-5")
	if v.IdentityID != "identity:roland-jd-xi" || v.BoundBy != "explicit" {
		t.Fatalf("auto-bind: identity=%q by %q, match %s", v.IdentityID, v.BoundBy, why(v.Match))
	}
	evs, _, err := svc.FindEvents(ctx, graph.EventFilter{Action: graph.ActDeviceBind, Target: "device:path:0582:01a9:3-5"})
	if err != nil || len(evs) != 1 || evs[0].Actor != "discovery:usb" {
		t.Fatalf("auto-bind event: %+v %v", evs, err)
	}
	// twins are never auto-bound to each other's identity
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-1", NewName: "Nano A", Slug: "nano-a"})
	r.move("3-2", "3-8")
	if v := device(t, ctx, svc, "usb:3-8"); v.IdentityID != "" {
		t.Errorf("the other twin was auto-bound to %s", v.IdentityID)
	}
}

func TestService_NoHardware(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	svc := identity.New(db, nil, nil)
	ctx := graph.WithActor(context.Background(), "cli:tester")
	devs, total, _, err := svc.Devices(ctx, graph.DeviceFilter{})
	if err != nil || len(devs) != 0 || total != 0 {
		t.Errorf("devices without hardware: %v %d %v", devs, total, err)
	}
	if st, err := svc.Sources(ctx); err != nil || len(st) != 0 {
		t.Errorf("sources without hardware: %v %v", st, err)
	}
	_, err = svc.Robots(ctx)
	if graph.ErrorCode(err) != graph.EUNAVAILABLE || !hasStep(err, "serve") {
		t.Errorf("robots without a fleet: %v", err)
	}
	if _, err := svc.RobotStop(ctx, "robot:scout"); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Errorf("robot stop without a fleet: %v", err)
	}
	// the store's own methods are forwarded
	if _, err := svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk"}); err != nil {
		t.Fatal(err)
	}
	if x, err := svc.FindIdentityByID(ctx, "desk", graph.IdentityParts{}); err != nil || x.Name != "Desk" {
		t.Errorf("forwarded read: %+v %v", x, err)
	}
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestService_Robots(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	db := storetest.MustOpen(t)
	clk := robot.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fleet, err := robot.NewFleet(robot.Options{Store: db, Now: clk.Now, Every: clk.Every})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddSim("scout", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	r.live.Extra = append(r.live.Extra, fleet)
	svc := identity.New(db, r.live, fleet)
	ctx := graph.WithActor(context.Background(), "cli:tester")

	res := mustBind(t, ctx, svc, graph.BindInput{Ref: "robot:scout", NewName: "Scout Rover", Slug: "rover"})
	if res.Match == nil || res.Match.Confidence != graph.High {
		t.Errorf("robot after bind: %s", why(res.Match))
	}
	for _, name := range []string{"robot:scout", "identity:rover", "rover", res.Device.ID, "scout"} {
		st, err := svc.Robot(ctx, name)
		if err != nil {
			t.Errorf("robot %q: %v", name, err)
			continue
		}
		if st.Ref != "robot:scout" || st.IdentityID != "identity:rover" || st.DeviceID != res.Device.ID {
			t.Errorf("robot %q: ref=%s identity=%s device=%s", name, st.Ref, st.IdentityID, st.DeviceID)
		}
	}
	st, err := svc.RobotArm(ctx, "rover")
	if err != nil || !st.Armed {
		t.Errorf("arm by identity: %+v %v", st, err)
	}
	rs, err := svc.Robots(ctx)
	if err != nil || len(rs) != 1 || rs[0].IdentityID != "identity:rover" {
		t.Errorf("robots: %+v %v", rs, err)
	}
	_, err = svc.Robot(ctx, "rovr")
	if graph.ErrorCode(err) != graph.ENOTFOUND || !strings.Contains(graph.ErrorMessage(err), "robot:scout") {
		t.Errorf("unknown robot: %v", err)
	}
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"})
	if _, err := svc.Robot(ctx, "roland-jd-xi"); graph.ErrorCode(err) != graph.ENOTFOUND || !strings.Contains(graph.ErrorMessage(err), "not a robot") {
		t.Errorf("an identity that is no robot: %v", err)
	}
	if _, err := svc.Robot(ctx, "usb:3-1"); graph.ErrorCode(err) != graph.EINVALID {
		t.Errorf("a device that is no robot: %v", err)
	}
}

// TestService_ReadOnlyStore: a store that cannot record the snapshot does not take reads
// down with it.
func TestService_ReadOnlyStore(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	path := filepath.Join(t.TempDir(), "ro.db")
	db, err := store.Open(path, store.Options{NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := store.Open(path, store.Options{ReadOnly: true, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	svc := identity.New(ro, r.live, nil)
	ctx := context.Background()
	if _, err := svc.Unbound(ctx); err != nil {
		t.Errorf("unbound over a read-only store: %v", err)
	}
	if st, err := svc.Sources(ctx); err != nil || len(st) == 0 {
		t.Errorf("sources over a read-only store: %v %v", st, err)
	}
}

// hasStep reports whether err advises a step "do [kind|arg|id]" (e.g. "list unbound",
// "pass move", "show identity:x").
func hasStep(err error, want string) bool {
	for _, s := range graph.ErrorSteps(err) {
		for _, got := range []string{s.Do, s.Do + " " + s.Kind, s.Do + " " + s.Arg, s.Do + " " + s.ID} {
			if got == want {
				return true
			}
		}
	}
	return false
}
