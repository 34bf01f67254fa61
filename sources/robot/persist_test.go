package robot

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// waitFor polls cond (it depends on the fleet's notifier goroutine) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func robotEvents(t *testing.T, db graph.Store) []*graph.Event {
	t.Helper()
	evs, _, err := db.FindEvents(context.Background(), graph.EventFilter{Action: "robot.*", First: 100})
	if err != nil {
		t.Fatal(err)
	}
	// oldest first
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	return evs
}

func TestFleet_PersistsThroughStore(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	bg := context.Background()
	clk := NewFakeClock(t0)
	f, err := NewFleet(Options{Now: clk.Now, Every: clk.Every, Store: db})
	must(t, err)
	must(t, f.AddSim("scout", 1, 1))
	must(t, f.Open())

	recs, err := db.FindRobotRecords(bg)
	must(t, err)
	if len(recs) != 1 || recs[0].Ref != "robot:scout" || recs[0].Serial != "SIM-SCOUT-0001" || recs[0].Pose.X != 1 || recs[0].Params.MaxSpeed != DefaultParams().MaxSpeed {
		t.Fatalf("records after Open: %+v", recs)
	}

	ctx := graph.WithRequestID(graph.WithActor(bg, "mcp:test-client"), "req-1")
	_, err = f.Arm(ctx, "scout")
	must(t, err)
	_, err = f.Arm(ctx, "scout") // no change, no event
	must(t, err)
	speed := 2.5
	_, err = f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{MaxSpeed: &speed})
	must(t, err)
	_, err = f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{MaxSpeed: &speed}) // no change
	must(t, err)
	bad := 9.0
	_, err = f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{MaxSpeed: &bad}) // refused, no event
	wantCode(t, err, graph.EINVALID, "max_speed")

	c := startNav(t, ctx, f, "scout", graph.Goal{X: 6, Y: 4})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	if res := c.wait(t); res.Status != graph.NavArrived {
		t.Fatalf("status=%q", res.Status)
	}
	clk.Advance(3 * time.Second) // brake to rest: the pose is saved when the robot stops
	rest := status(t, f, "scout").Pose
	waitFor(t, "the rest pose in the store", func() bool {
		recs, err := db.FindRobotRecords(bg)
		return err == nil && len(recs) == 1 && recs[0].Pose == rest
	})

	// A navigation whose caller goes away still records its end with the caller's actor.
	cctx, cancel := context.WithCancel(graph.WithActor(bg, "cli:alice"))
	c = startNav(t, cctx, f, "scout", graph.Goal{X: 1, Y: 1})
	clk.Advance(time.Second)
	cancel()
	if res := c.wait(t); res.Status != graph.NavCancelled {
		t.Fatalf("status=%q, want cancelled", res.Status)
	}
	_, err = f.Disarm(ctx, "scout")
	must(t, err)
	_, err = f.Stop(graph.WithActor(bg, "cli:bob"), "scout")
	must(t, err)

	evs := robotEvents(t, db)
	want := []struct{ action, actor string }{
		{graph.ActRobotArm, "mcp:test-client"},
		{graph.ActRobotParameters, "mcp:test-client"},
		{graph.ActRobotNavStart, "mcp:test-client"},
		{graph.ActRobotNavEnd, "mcp:test-client"},
		{graph.ActRobotNavStart, "cli:alice"},
		{graph.ActRobotNavEnd, "cli:alice"},
		{graph.ActRobotDisarm, "mcp:test-client"},
		{graph.ActRobotStop, "cli:bob"},
	}
	if len(evs) != len(want) {
		for _, e := range evs {
			t.Logf("%s %s %s", e.Action, e.Actor, e.Target)
		}
		t.Fatalf("got %d robot events, want %d", len(evs), len(want))
	}
	for i, w := range want {
		e := evs[i]
		if e.Action != w.action || e.Actor != w.actor || e.Target != "device:robot:SIM-SCOUT-0001" {
			t.Fatalf("event %d = %s by %s on %s; want %s by %s on device:robot:SIM-SCOUT-0001", i, e.Action, e.Actor, e.Target, w.action, w.actor)
		}
	}
	if evs[0].RequestID != "req-1" || evs[3].RequestID != "req-1" {
		t.Fatalf("request ids %q, %q; want req-1", evs[0].RequestID, evs[3].RequestID)
	}
	var end graph.NavResult
	must(t, json.Unmarshal(evs[3].After, &end))
	if end.Status != graph.NavArrived {
		t.Fatalf("navigate.end after=%s, want the arrived result", evs[3].After)
	}
	var params graph.RobotParams
	must(t, json.Unmarshal(evs[1].After, &params))
	if params.MaxSpeed != 2.5 {
		t.Fatalf("parameters after=%s", evs[1].After)
	}
	must(t, f.Close())
	must(t, f.Close()) // safe twice
	final := status(t, f, "scout").Pose

	// A new fleet on the same store picks the robot up where it was, with its parameters.
	clk2 := NewFakeClock(t0)
	f2, err := NewFleet(Options{Now: clk2.Now, Every: clk2.Every, Store: db})
	must(t, err)
	must(t, f2.AddSim("scout", 0, 0))
	must(t, f2.Open())
	defer f2.Close()
	st := status(t, f2, "scout")
	if st.Pose != final || st.Params.MaxSpeed != 2.5 || st.Armed {
		t.Fatalf("restored pose=%+v (want %+v) max_speed=%g armed=%v", st.Pose, final, st.Params.MaxSpeed, st.Armed)
	}
}

func TestFleet_CloseStopsAndRecords(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	clk := NewFakeClock(t0)
	f, err := NewFleet(Options{Now: clk.Now, Every: clk.Every, Store: db})
	must(t, err)
	must(t, f.AddSim("scout", 0, 0))
	must(t, f.AddSim("idle", 0, 3))
	must(t, f.Open())
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 9, Y: 0})
	clk.Advance(2 * time.Second)
	must(t, f.Close())
	if res := c.wait(t); res.Status != graph.NavCancelled {
		t.Fatalf("status=%q, want cancelled at shutdown", res.Status)
	}
	if st := status(t, f, "scout"); st.State != graph.RobotStopped || st.Armed {
		t.Fatalf("after Close state=%q armed=%v, want stopped and disarmed", st.State, st.Armed)
	}
	_, err = f.Navigate(context.Background(), "scout", graph.Goal{X: 1, Y: 1}, nil)
	wantCode(t, err, graph.EUNAVAILABLE, "")
	evs := robotEvents(t, db)
	last := evs[len(evs)-1]
	if last.Action != graph.ActRobotStop || last.Actor != "robot:scout" {
		t.Fatalf("last event %s by %s, want robot.stop by robot:scout", last.Action, last.Actor)
	}
	for _, e := range evs {
		if e.Target == "device:robot:SIM-IDLE-0001" {
			t.Fatalf("idle robot got a %s event at shutdown", e.Action)
		}
	}
	recs, err := db.FindRobotRecords(context.Background())
	must(t, err)
	for _, r := range recs {
		if r.Ref == "robot:scout" && r.Pose != status(t, f, "scout").Pose {
			t.Fatalf("stored pose %+v, robot stopped at %+v", r.Pose, status(t, f, "scout").Pose)
		}
	}
}

// failingStore is a Store whose SaveRobot fails: it only injects the failure (the
// persistence itself is tested against the real store above).
type failingStore struct{}

func (failingStore) FindRobotRecords(context.Context) ([]*graph.RobotRecord, error) { return nil, nil }
func (failingStore) SaveRobot(context.Context, *graph.RobotRecord, string, any, any) error {
	return errors.New("disk full")
}

func TestFleet_StoreFailure(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{Store: failingStore{}}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	ctx := context.Background()
	if _, err := f.Arm(ctx, "scout"); err == nil {
		t.Fatal("Arm succeeded although its event could not be recorded")
	}
	if st := status(t, f, "scout"); st.Armed {
		t.Fatal("robot armed although the arm was not recorded")
	}
	speed := 2.0
	if _, err := f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{MaxSpeed: &speed}); err == nil || status(t, f, "scout").Params.MaxSpeed == 2 {
		t.Fatalf("SetParameters: err=%v params=%+v, want an error and nothing changed", err, status(t, f, "scout").Params)
	}
	// The e-stop always takes effect.
	st, err := f.Stop(ctx, "scout")
	if err != nil || st.State != graph.RobotStopped {
		t.Fatalf("Stop with a failing store: %v, state %q", err, st.State)
	}
	clk.Advance(time.Second)
}

func TestFleet_Subscribe(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	type upd struct {
		ref string
		st  graph.RobotState
	}
	ch := make(chan upd, 10000)
	cancel := f.Subscribe(func(ref string, st graph.RobotState) { ch <- upd{ref, st} })
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 5, Y: 0})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	res := c.wait(t)
	clk.Advance(3 * time.Second)
	var got []graph.RobotState
	waitFor(t, "the robot at rest", func() bool {
		for {
			select {
			case u := <-ch:
				if u.ref != "robot:scout" {
					t.Fatalf("update for %q", u.ref)
				}
				got = append(got, u.st)
			default:
				return len(got) > 0 && got[len(got)-1].State == graph.RobotIdle && got[len(got)-1].Goal == nil &&
					got[len(got)-1].Pose == status(t, f, "scout").Pose
			}
		}
	})
	if !got[0].Armed || got[0].State != graph.RobotIdle {
		t.Fatalf("first update %+v, want the arm", got[0])
	}
	nav := 0
	for _, st := range got {
		if st.State == graph.RobotNavigating {
			nav++
		}
	}
	moving := res.ElapsedS + 3
	if nav < 10 || float64(len(got)) > moving*10+6 {
		t.Fatalf("%d updates (%d navigating) over %.1f s of motion; want regular updates at most 10 Hz", len(got), nav, moving)
	}
	cancel()
	arm(t, f, "scout")
	_, err := f.Disarm(context.Background(), "scout")
	must(t, err)
	time.Sleep(10 * time.Millisecond)
	select {
	case u := <-ch:
		t.Fatalf("update %+v after cancel", u)
	default:
	}
}
