package robot

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

func TestNavigate_Arrives(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "robot:scout")
	c := startNav(t, context.Background(), f, "robot:scout", graph.Goal{X: 5, Y: 3})
	if st := status(t, f, "robot:scout"); st.State != graph.RobotNavigating {
		t.Fatalf("state=%q, want navigating", st.State)
	}
	driveUntilIdle(t, f, clk, 30*time.Second, "robot:scout")
	res := c.wait(t)
	if res.Status != graph.NavArrived {
		t.Fatalf("status=%q (%s), want arrived", res.Status, res.Message)
	}
	thr := DefaultParams().ArrivalThreshold
	if res.DistanceRemaining > thr || dist(res.Pose, 5, 3) > thr {
		t.Fatalf("arrived %.3f m from the goal (pose %+v), threshold %.2f", res.DistanceRemaining, res.Pose, thr)
	}
	if res.ElapsedS <= 0 || res.Battery >= 100 {
		t.Fatalf("elapsed=%g battery=%g: want time spent and battery used", res.ElapsedS, res.Battery)
	}
	// Progress came at a bounded rate with the distance shrinking.
	prog := c.progress()
	if len(prog) < 5 {
		t.Fatalf("got %d progress reports over %.1f s, want several", len(prog), res.ElapsedS)
	}
	if max := int(res.ElapsedS/ProgressEvery.Seconds()) + 1; len(prog) > max {
		t.Fatalf("got %d progress reports over %.1f s, want at most %d", len(prog), res.ElapsedS, max)
	}
	if first, last := prog[0].DistanceRemaining, prog[len(prog)-1].DistanceRemaining; !(last < first) {
		t.Fatalf("distance remaining went %.2f → %.2f, want it to shrink", first, last)
	}
	// It brakes to rest near the goal and stays armed and idle.
	clk.Advance(3 * time.Second)
	v, om, pose, _ := simOf(f, "scout")
	if v != 0 || om != 0 || dist(pose, 5, 3) > thr {
		t.Fatalf("after arrival v=%g ω=%g pose=%+v, want at rest within %.2f m of the goal", v, om, pose, thr)
	}
	if st := status(t, f, "robot:scout"); st.State != graph.RobotIdle || !st.Armed || st.Goal != nil {
		t.Fatalf("after arrival state=%q armed=%v goal=%v, want idle, armed, no goal", st.State, st.Armed, st.Goal)
	}
}

// The defaults robot MCP servers commonly promise: arrival within 0.15 m unless set (0.3 m
// at most), and a navigation that gives up after 30 s unless the call says otherwise.
func TestParams_Defaults(t *testing.T) {
	t.Parallel()
	if got, want := DefaultParams().ArrivalThreshold, 0.15; got != want {
		t.Fatalf("default arrival_threshold=%g, want %g", got, want)
	}
	if got, want := DefaultTimeout, 30*time.Second; got != want {
		t.Fatalf("default navigate timeout=%v, want %v", got, want)
	}
	t.Run("MaxAccepted", func(t *testing.T) {
		u := 0.3
		p, err := applyParams(DefaultParams(), graph.RobotParamsUpdate{ArrivalThreshold: &u}, graph.Point{}, nil)
		must(t, err)
		if p.ArrivalThreshold != 0.3 {
			t.Fatalf("arrival_threshold=%g, want 0.3", p.ArrivalThreshold)
		}
	})
	t.Run("StoredByAnOlderVersion", func(t *testing.T) {
		old := DefaultParams()
		old.ArrivalThreshold = 2 // older versions took up to 5 m
		p := storedParams(old)
		must(t, validParams(p))
		if p.ArrivalThreshold != MaxArrival {
			t.Fatalf("stored 2 m loads as %g, want %g", p.ArrivalThreshold, MaxArrival)
		}
	})
	t.Run("DefaultTimeoutEndsANavigation", func(t *testing.T) {
		f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
		arm(t, f, "scout")
		c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 500, Y: 0})
		driveUntilIdle(t, f, clk, 60*time.Second, "robot:scout")
		res := c.wait(t)
		if res.Status != graph.NavTimeout || math.Abs(res.ElapsedS-30) > 0.05 {
			t.Fatalf("status=%q elapsed=%g s, want timeout after 30 s", res.Status, res.ElapsedS)
		}
	})
}

func TestNavigate_TimeoutStops(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 50, Y: 0, TimeoutS: 2})
	driveUntilIdle(t, f, clk, 10*time.Second, "robot:scout")
	res := c.wait(t)
	if res.Status != graph.NavTimeout {
		t.Fatalf("status=%q, want timeout", res.Status)
	}
	if math.Abs(res.ElapsedS-2) > 0.05 {
		t.Fatalf("elapsed=%g s, want 2", res.ElapsedS)
	}
	clk.Advance(3 * time.Second)
	v, om, p1, _ := simOf(f, "scout")
	clk.Advance(2 * time.Second)
	_, _, p2, _ := simOf(f, "scout")
	if v != 0 || om != 0 || p1 != p2 {
		t.Fatalf("after timeout v=%g ω=%g, pose %+v → %+v: want the robot at rest", v, om, p1, p2)
	}
	st := status(t, f, "scout")
	if st.State != graph.RobotIdle || !st.Armed {
		t.Fatalf("after timeout state=%q armed=%v, want idle and still armed (brought to rest, not e-stopped)", st.State, st.Armed)
	}
}

func TestNavigate_CancelStops(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "scout")
	ctx, cancel := context.WithCancel(context.Background())
	c := startNav(t, ctx, f, "scout", graph.Goal{X: 8, Y: 0})
	clk.Advance(2 * time.Second)
	if v, _, _, _ := simOf(f, "scout"); v <= 0 {
		t.Fatalf("v=%g after 2 s, want the robot driving", v)
	}
	cancel()
	res := c.wait(t)
	if res.Status != graph.NavCancelled {
		t.Fatalf("status=%q, want cancelled", res.Status)
	}
	clk.Advance(3 * time.Second)
	v, om, p1, _ := simOf(f, "scout")
	clk.Advance(time.Second)
	_, _, p2, _ := simOf(f, "scout")
	if v != 0 || om != 0 || p1 != p2 {
		t.Fatalf("after cancel v=%g ω=%g pose %+v → %+v, want at rest", v, om, p1, p2)
	}
	if st := status(t, f, "scout"); st.State != graph.RobotIdle || st.Goal != nil {
		t.Fatalf("after cancel state=%q goal=%v, want idle without goal", st.State, st.Goal)
	}
}

func TestNavigate_Refusals(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{Geofence: DemoGeofence}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	ctx := context.Background()

	t.Run("Disarmed", func(t *testing.T) {
		_, err := f.Navigate(ctx, "scout", graph.Goal{X: 1, Y: 1}, nil)
		wantCode(t, err, graph.EINVALID, "robot")
		if s := graph.ErrorSteps(err); len(s) != 1 || s[0].Do != graph.StepArm || s[0].Robot != "robot:scout" {
			t.Fatalf("message %q, steps %+v: want the step of arming robot:scout", graph.ErrorMessage(err), s)
		}
	})
	arm(t, f, "scout")
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		goal  graph.Goal
		field string
		text  string
	}{
		{"NaN", graph.Goal{X: nan, Y: 1}, "x", "finite"},
		{"Inf", graph.Goal{X: 1, Y: math.Inf(-1)}, "y", "finite"},
		{"Huge", graph.Goal{X: 1e9, Y: 1}, "x", "out of range"},
		{"NegativeTimeout", graph.Goal{X: 1, Y: 1, TimeoutS: -1}, "timeout_s", "timeout_s"},
		{"NaNTimeout", graph.Goal{X: 1, Y: 1, TimeoutS: nan}, "timeout_s", "timeout_s"},
		{"LongTimeout", graph.Goal{X: 1, Y: 1, TimeoutS: 1e6}, "timeout_s", "timeout_s"},
		{"OutsideGeofence", graph.Goal{X: 15, Y: 0}, "x", "geofence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Navigate(ctx, "scout", tc.goal, nil)
			wantCode(t, err, graph.EINVALID, tc.field)
			if !strings.Contains(graph.ErrorMessage(err), tc.text) {
				t.Fatalf("message %q lacks %q", graph.ErrorMessage(err), tc.text)
			}
		})
	}
	clk.Advance(time.Second)
	st := status(t, f, "scout")
	if st.Pose != (graph.Pose{}) || st.State != graph.RobotIdle || st.Goal != nil {
		t.Fatalf("after refusals pose=%+v state=%q goal=%v, want nothing moved", st.Pose, st.State, st.Goal)
	}
}

func TestNavigate_LeavesGeofence(t *testing.T) {
	t.Parallel()
	// An L-shaped fence: the straight way from the bottom arm to the top of the vertical
	// arm cuts across the missing corner.
	fence := []graph.Point{{X: 0, Y: 0}, {X: 10, Y: 0}, {X: 10, Y: 2}, {X: 2, Y: 2}, {X: 2, Y: 10}, {X: 0, Y: 10}}
	f, clk := newFleet(t, Options{Geofence: fence}, func(f *Fleet) { must(t, f.AddSim("scout", 8, 1)) })
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 1, Y: 8})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	res := c.wait(t)
	if res.Status != graph.NavGeofence {
		t.Fatalf("status=%q (%s), want geofence", res.Status, res.Message)
	}
	if !pointInPolygon(graph.Point{X: res.Pose.X, Y: res.Pose.Y}, fence) {
		t.Fatalf("robot stopped at %+v, outside its fence", res.Pose)
	}
	v, om, _, _ := simOf(f, "scout")
	if v != 0 || om != 0 {
		t.Fatalf("at the fence v=%g ω=%g, want halted", v, om)
	}
}

func TestNavigate_Blocked(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) {
		must(t, f.AddSim("scout", 0, 0))
		must(t, f.AddObstacle(Obstacle{ID: "pillar", X: 3, Y: 0.1, R: 0.5}))
	})
	arm(t, f, "scout")
	t.Run("AtStart", func(t *testing.T) {
		c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 6, Y: 0})
		res := c.wait(t)
		if res.Status != graph.NavBlocked || !strings.Contains(res.Message, "pillar") {
			t.Fatalf("status=%q message=%q, want blocked naming pillar", res.Status, res.Message)
		}
		if res.ElapsedS != 0 || res.Pose != (graph.Pose{}) {
			t.Fatalf("blocked after %g s at %+v, want at once without moving", res.ElapsedS, res.Pose)
		}
	})
	t.Run("OnTheWay", func(t *testing.T) {
		c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 0, Y: 6})
		clk.Advance(2 * time.Second)
		_, _, pose, _ := simOf(f, "scout")
		must(t, f.AddObstacle(Obstacle{ID: "crate", X: 0, Y: 4.5, R: 0.5}))
		clk.Advance(tick)
		res := c.wait(t)
		if res.Status != graph.NavBlocked || !strings.Contains(res.Message, "crate") {
			t.Fatalf("status=%q message=%q, want blocked naming crate", res.Status, res.Message)
		}
		if d := dist(res.Pose, pose.X, pose.Y); d > 0.05 {
			t.Fatalf("blocked %.3f m after the obstacle appeared, want within one tick", d)
		}
	})
}

func TestBattery_MonotonicAndLow(t *testing.T) {
	t.Parallel()
	low := DefaultParams()
	f, clk := newFleet(t, Options{}, func(f *Fleet) {
		must(t, f.AddSim("scout", 0, 0))
		must(t, f.AddSimRobot(SimConfig{Name: "weak", X: 0, Y: 2, Battery: low.LowBattery + 0.3, Params: &low}))
	})
	arm(t, f, "scout")
	arm(t, f, "weak")
	_, _, _, prev := simOf(f, "scout")
	start := prev
	for _, g := range []graph.Goal{{X: 4, Y: 0}, {X: 4, Y: 4}, {X: -3, Y: 1}} {
		c := startNav(t, context.Background(), f, "scout", g)
		for status(t, f, "scout").Goal != nil {
			clk.Advance(tick)
			_, _, _, b := simOf(f, "scout")
			if b > prev {
				t.Fatalf("battery rose %g → %g", prev, b)
			}
			prev = b
		}
		if res := c.wait(t); res.Status != graph.NavArrived {
			t.Fatalf("status=%q, want arrived", res.Status)
		}
	}
	if !(prev < start) {
		t.Fatalf("battery %g → %g after three trips, want it drained", start, prev)
	}
	idle := prev
	clk.Advance(10 * time.Second)
	if _, _, _, b := simOf(f, "scout"); !(b < idle) || idle-b > 0.1 {
		t.Fatalf("idle 10 s: battery %g → %g, want a little drain", idle, b)
	}

	c := startNav(t, context.Background(), f, "weak", graph.Goal{X: 9, Y: 2})
	driveUntilIdle(t, f, clk, 30*time.Second, "weak")
	res := c.wait(t)
	if res.Status != graph.NavLowBattery || res.Battery >= low.LowBattery {
		t.Fatalf("status=%q battery=%g, want low_battery below %g", res.Status, res.Battery, low.LowBattery)
	}
	c = startNav(t, context.Background(), f, "weak", graph.Goal{X: 0, Y: 5})
	if res := c.wait(t); res.Status != graph.NavLowBattery || res.ElapsedS != 0 {
		t.Fatalf("second goal on low battery: status=%q elapsed=%g, want low_battery at once", res.Status, res.ElapsedS)
	}
}

func TestLimits_HoldEveryTick(t *testing.T) {
	t.Parallel()
	p := DefaultParams()
	p.MaxSpeed, p.MaxTurnRate, p.MaxAccel = 1.5, 1.2, 0.8
	f, clk := newFleet(t, Options{Params: &p}, func(f *Fleet) { must(t, f.AddSimRobot(SimConfig{Name: "scout", Heading: math.Pi})) })
	arm(t, f, "scout")
	dt := tick.Seconds()
	const eps = 1e-9
	alpha := turnAccelFactor * p.MaxTurnRate
	pv, pom, ppose, _ := simOf(f, "scout")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	goals := []graph.Goal{{X: 6, Y: 2}, {X: -4, Y: -5}, {X: 7, Y: -6, TimeoutS: 3}}
	ticks := 0
	check := func() {
		v, om, pose, _ := simOf(f, "scout")
		if math.Abs(v) > p.MaxSpeed+eps || math.Abs(om) > p.MaxTurnRate+eps {
			t.Fatalf("tick %d: v=%g ω=%g over max_speed %g / max_turn_rate %g", ticks, v, om, p.MaxSpeed, p.MaxTurnRate)
		}
		if math.Abs(v-pv) > p.MaxAccel*dt+eps || math.Abs(om-pom) > alpha*dt+eps {
			t.Fatalf("tick %d: Δv=%g Δω=%g over the acceleration limits %g / %g", ticks, v-pv, om-pom, p.MaxAccel*dt, alpha*dt)
		}
		if d := dist(pose, ppose.X, ppose.Y); d > p.MaxSpeed*dt+eps {
			t.Fatalf("tick %d: moved %g m, more than max_speed allows", ticks, d)
		}
		if dh := math.Abs(wrapAngle(pose.Heading - ppose.Heading)); dh > p.MaxTurnRate*dt+eps {
			t.Fatalf("tick %d: turned %g rad, more than max_turn_rate allows", ticks, dh)
		}
		pv, pom, ppose = v, om, pose
		ticks++
	}
	for _, g := range goals {
		c := startNav(t, ctx, f, "scout", g)
		for status(t, f, "scout").Goal != nil {
			clk.Advance(tick)
			check()
		}
		c.wait(t)
	}
	// Braking after the timeout is limited too.
	for range 200 {
		clk.Advance(tick)
		check()
	}
	if ticks < 500 {
		t.Fatalf("checked only %d ticks", ticks)
	}
}

func TestGraspCarryRelease(t *testing.T) {
	t.Parallel()
	clk := NewFakeClock(t0)
	f, err := DemoFleet(Options{Now: clk.Now, Every: clk.Every})
	must(t, err)
	must(t, f.Open())
	defer f.Close()
	ctx := context.Background()
	arm(t, f, "scout")

	objs, err := f.Detect(ctx, "scout")
	must(t, err)
	var cube *graph.DetectedObject
	for i := range objs {
		if objs[i].ID == "red-cube" {
			cube = &objs[i]
		}
	}
	if cube == nil {
		t.Fatalf("detect from (0,0) = %+v, want red-cube at (3,-2)", objs)
	}
	if math.Abs(cube.Distance-math.Hypot(3, 2)) > 1e-9 || math.Abs(cube.Bearing-math.Atan2(-2, 3)) > 1e-9 {
		t.Fatalf("red-cube distance=%g bearing=%g, want %g and %g", cube.Distance, cube.Bearing, math.Hypot(3, 2), math.Atan2(-2, 3))
	}
	for _, o := range objs {
		if o.ID == "green-cone" {
			t.Fatalf("green-cone at (6,6) is beyond detect range but was reported")
		}
	}

	_, err = f.Grasp(ctx, "scout", "red-cube")
	wantCode(t, err, graph.EINVALID, "object")
	_, err = f.Grasp(ctx, "scout", "red-cub")
	wantCode(t, err, graph.ENOTFOUND, "object")
	if !strings.Contains(graph.ErrorMessage(err), "red-cube") {
		t.Fatalf("message %q does not suggest red-cube", graph.ErrorMessage(err))
	}

	c := startNav(t, ctx, f, "scout", graph.Goal{X: 3, Y: -2})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	if res := c.wait(t); res.Status != graph.NavArrived {
		t.Fatalf("status=%q, want arrived", res.Status)
	}
	clk.Advance(2 * time.Second)
	st, err := f.Grasp(ctx, "scout", "red-cube")
	must(t, err)
	if st.Gripper != "closed" || st.Holding != "red-cube" {
		t.Fatalf("after grasp gripper=%q holding=%q", st.Gripper, st.Holding)
	}
	_, err = f.Grasp(ctx, "carrier", "red-cube")
	wantCode(t, err, graph.EINVALID, "robot") // carrier is not armed
	arm(t, f, "carrier")
	_, err = f.Grasp(ctx, "carrier", "red-cube")
	if code := graph.ErrorCode(err); code != graph.ECONFLICT && code != graph.EINVALID {
		t.Fatalf("carrier grasping scout's cube: %v, want a refusal", err)
	}

	c = startNav(t, ctx, f, "scout", graph.Goal{X: -1, Y: -6})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	if res := c.wait(t); res.Status != graph.NavArrived {
		t.Fatalf("status=%q (%s), want arrived", res.Status, res.Message)
	}
	clk.Advance(2 * time.Second)
	_, _, pose, _ := simOf(f, "scout")
	cubeAt := func() Object {
		for _, o := range f.Objects() {
			if o.ID == "red-cube" {
				return o
			}
		}
		t.Fatal("red-cube vanished")
		return Object{}
	}
	if o := cubeAt(); o.X != pose.X || o.Y != pose.Y || o.HeldBy != "robot:scout" {
		t.Fatalf("carried cube at (%g,%g) held by %q, robot at (%g,%g)", o.X, o.Y, o.HeldBy, pose.X, pose.Y)
	}
	if objs, _ := f.Detect(ctx, "scout"); len(objs) != 0 && objs[0].ID == "red-cube" {
		t.Fatalf("detect reports the held cube")
	}
	st, err = f.Release(ctx, "scout")
	must(t, err)
	if st.Gripper != "open" || st.Holding != "" {
		t.Fatalf("after release gripper=%q holding=%q", st.Gripper, st.Holding)
	}
	_, err = f.Release(ctx, "scout")
	wantCode(t, err, graph.ECONFLICT, "")
	c = startNav(t, ctx, f, "scout", graph.Goal{X: 0, Y: 0})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	c.wait(t)
	if o := cubeAt(); o.X != pose.X || o.Y != pose.Y || o.HeldBy != "" || dist(pose, 3, -2) < 4 {
		t.Fatalf("released cube at (%g,%g) held by %q, want left at (%g,%g)", o.X, o.Y, o.HeldBy, pose.X, pose.Y)
	}
}

func TestNavigate_Preempted(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "scout")
	first := startNav(t, context.Background(), f, "scout", graph.Goal{X: 8, Y: 0})
	clk.Advance(2 * time.Second)
	second := startNav(t, context.Background(), f, "scout", graph.Goal{X: 0, Y: 5})
	res1 := first.wait(t)
	if res1.Status != graph.NavPreempted || !strings.Contains(res1.Message, "(0, 5)") {
		t.Fatalf("first goal: status=%q message=%q, want preempted by (0, 5)", res1.Status, res1.Message)
	}
	if v, _, _, _ := simOf(f, "scout"); v <= 0 {
		t.Fatalf("v=%g after preemption, want the robot still driving", v)
	}
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	if res2 := second.wait(t); res2.Status != graph.NavArrived || dist(res2.Pose, 0, 5) > 0.3 {
		t.Fatalf("second goal: status=%q pose=%+v, want arrived at (0,5)", res2.Status, res2.Pose)
	}
}

func TestFleet_ConcurrentNavigationAndStop(t *testing.T) {
	t.Parallel()
	names := []string{"r0", "r1", "r2", "r3", "r4"}
	f, clk := newFleet(t, Options{}, func(f *Fleet) {
		for i, n := range names {
			must(t, f.AddSim(n, 0, float64(i)))
		}
	})
	ctx := context.Background()
	calls := map[string]*navCall{}
	for i, n := range names {
		arm(t, f, n)
		calls[n] = startNav(t, ctx, f, n, graph.Goal{X: 6, Y: float64(i) * 1.5})
	}
	clk.Advance(time.Second)
	// Stop answers while every other robot's Navigate blocks; no clock advance needed.
	st, err := f.Stop(ctx, "r2")
	must(t, err)
	if st.State != graph.RobotStopped || st.Armed {
		t.Fatalf("after stop state=%q armed=%v, want stopped and disarmed", st.State, st.Armed)
	}
	if res := calls["r2"].wait(t); res.Status != graph.NavDisarmed {
		t.Fatalf("stopped robot's navigation: %q, want disarmed", res.Status)
	}
	if v, om, _, _ := simOf(f, "r2"); v != 0 || om != 0 {
		t.Fatalf("e-stopped robot still moving v=%g ω=%g", v, om)
	}
	_, err = f.Navigate(ctx, "r2", graph.Goal{X: 1, Y: 1}, nil)
	wantCode(t, err, graph.EINVALID, "robot")

	rest := []string{"r0", "r1", "r3", "r4"}
	for _, n := range rest {
		if st := status(t, f, n); st.State != graph.RobotNavigating {
			t.Fatalf("%s state=%q while r2 was stopped, want navigating", n, st.State)
		}
	}
	driveUntilIdle(t, f, clk, 60*time.Second, rest...)
	for i, n := range names {
		if n == "r2" {
			continue
		}
		res := calls[n].wait(t)
		if res.Status != graph.NavArrived || dist(res.Pose, 6, float64(i)*1.5) > 0.3 {
			t.Fatalf("%s: status=%q pose=%+v, want arrived", n, res.Status, res.Pose)
		}
	}
	_, _, pose, _ := simOf(f, "r2")
	clk.Advance(time.Second)
	if _, _, p2, _ := simOf(f, "r2"); p2 != pose {
		t.Fatalf("e-stopped robot moved %+v → %+v", pose, p2)
	}
	arm(t, f, "r2")
	if st := status(t, f, "r2"); st.State != graph.RobotIdle || !st.Armed {
		t.Fatalf("re-armed state=%q armed=%v, want idle and armed", st.State, st.Armed)
	}
}

func TestFleet_DisarmDuringNavigation(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 8, Y: 0})
	clk.Advance(time.Second)
	_, err := f.Disarm(context.Background(), "scout")
	must(t, err)
	if res := c.wait(t); res.Status != graph.NavDisarmed {
		t.Fatalf("status=%q, want disarmed", res.Status)
	}
	_, err = f.Grasp(context.Background(), "scout", "anything")
	wantCode(t, err, graph.EINVALID, "robot")
}

func TestFleet_UnknownRobot(t *testing.T) {
	t.Parallel()
	f, _ := newFleet(t, Options{}, func(f *Fleet) {
		must(t, f.AddSim("scout", 0, 0))
		must(t, f.AddSim("carrier", 2, 0))
	})
	ctx := context.Background()
	_, err := f.Status(ctx, "robot:scot")
	wantCode(t, err, graph.ENOTFOUND, "robot")
	if !strings.Contains(graph.ErrorMessage(err), "did you mean robot:scout") {
		t.Fatalf("message %q lacks the suggestion", graph.ErrorMessage(err))
	}
	_, err = f.Navigate(ctx, "robot:nobody", graph.Goal{X: 1, Y: 1}, nil)
	wantCode(t, err, graph.ENOTFOUND, "robot")
	for _, ref := range []string{"robot:scout", "scout", "device:robot:SIM-SCOUT-0001"} {
		if st, err := f.Status(ctx, ref); err != nil || st.Ref != "robot:scout" {
			t.Fatalf("Status(%q) = %v, %v; want robot:scout", ref, st, err)
		}
	}
}

func TestFleet_SetParameters(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{Geofence: DemoGeofence}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	ctx := context.Background()
	fp := func(v float64) *float64 { return &v }
	fence := func(pts ...graph.Point) *[]graph.Point { return &pts }
	before := status(t, f, "scout").Params
	for _, tc := range []struct {
		name  string
		u     graph.RobotParamsUpdate
		field string
	}{
		{"SpeedZero", graph.RobotParamsUpdate{MaxSpeed: fp(0)}, "max_speed"},
		{"SpeedHigh", graph.RobotParamsUpdate{MaxSpeed: fp(3.5)}, "max_speed"},
		{"SpeedNaN", graph.RobotParamsUpdate{MaxSpeed: fp(math.NaN())}, "max_speed"},
		{"TurnHigh", graph.RobotParamsUpdate{MaxTurnRate: fp(7)}, "max_turn_rate"},
		{"AccelNegative", graph.RobotParamsUpdate{MaxAccel: fp(-1)}, "max_accel"},
		{"ArrivalLow", graph.RobotParamsUpdate{ArrivalThreshold: fp(0.01)}, "arrival_threshold"},
		{"ArrivalHigh", graph.RobotParamsUpdate{ArrivalThreshold: fp(6)}, "arrival_threshold"},
		{"ArrivalPastTheBound", graph.RobotParamsUpdate{ArrivalThreshold: fp(0.31)}, "arrival_threshold"},
		{"LowBatteryHigh", graph.RobotParamsUpdate{LowBattery: fp(60)}, "low_battery"},
		{"LowBatteryInf", graph.RobotParamsUpdate{LowBattery: fp(math.Inf(1))}, "low_battery"},
		{"Mixed", graph.RobotParamsUpdate{MaxSpeed: fp(2), GraspReach: fp(9)}, "grasp_reach"},
		{"FenceTwoPoints", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: -1, Y: -1}, graph.Point{X: 1, Y: 1})}, "geofence"},
		{"FenceBowtie", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: -1, Y: -1}, graph.Point{X: 1, Y: 1}, graph.Point{X: 1, Y: -1}, graph.Point{X: -1, Y: 1})}, "geofence"},
		{"FenceNaN", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: -1, Y: -1}, graph.Point{X: math.NaN(), Y: 1}, graph.Point{X: 1, Y: -1})}, "geofence"},
		{"FenceCollinear", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: -1, Y: -1}, graph.Point{X: 0, Y: 0}, graph.Point{X: 1, Y: 1})}, "geofence"},
		{"FenceWithoutRobot", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: 5, Y: 5}, graph.Point{X: 6, Y: 5}, graph.Point{X: 6, Y: 6})}, "geofence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.SetParameters(ctx, "scout", tc.u)
			wantCode(t, err, graph.EINVALID, tc.field)
			if !strings.Contains(graph.ErrorMessage(err), tc.field) {
				t.Fatalf("message %q does not name %s", graph.ErrorMessage(err), tc.field)
			}
			if got := status(t, f, "scout").Params; !paramsEqual(got, before) {
				t.Fatalf("params changed on a refused update: %+v", got)
			}
		})
	}
	t.Run("OK", func(t *testing.T) {
		st, err := f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{MaxSpeed: fp(2.5), ArrivalThreshold: fp(0.1),
			Geofence: fence(graph.Point{X: -5, Y: -5}, graph.Point{X: 5, Y: -5}, graph.Point{X: 5, Y: 5}, graph.Point{X: -5, Y: 5})})
		must(t, err)
		if st.Params.MaxSpeed != 2.5 || st.Params.ArrivalThreshold != 0.1 || len(st.Params.Geofence) != 4 || st.Params.MaxTurnRate != before.MaxTurnRate {
			t.Fatalf("params after update: %+v", st.Params)
		}
		arm(t, f, "scout")
		_, err = f.Navigate(ctx, "scout", graph.Goal{X: 7, Y: 0}, nil)
		wantCode(t, err, graph.EINVALID, "x") // outside the new, smaller fence
		c := startNav(t, ctx, f, "scout", graph.Goal{X: 4, Y: 0})
		_, err = f.SetParameters(ctx, "scout", graph.RobotParamsUpdate{Geofence: fence(graph.Point{X: -2, Y: -2}, graph.Point{X: 2, Y: -2}, graph.Point{X: 2, Y: 2}, graph.Point{X: -2, Y: 2})})
		wantCode(t, err, graph.EINVALID, "geofence") // would leave the current goal outside
		driveUntilIdle(t, f, clk, 30*time.Second, "scout")
		if res := c.wait(t); res.Status != graph.NavArrived || res.DistanceRemaining > 0.1 {
			t.Fatalf("status=%q remaining=%g, want arrived within the new 0.1 m threshold", res.Status, res.DistanceRemaining)
		}
	})
}

func TestParseSimSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want SimSpec
		ok   bool
	}{
		{"scout", SimSpec{Name: "scout"}, true},
		{"Carrier@2,-1.5", SimSpec{Name: "carrier", X: 2, Y: -1.5}, true},
		{" r2 @ 0.5 , 3 ", SimSpec{Name: "r2", X: 0.5, Y: 3}, true},
		{"", SimSpec{}, false},
		{"bad name", SimSpec{}, false},
		{"scout@1", SimSpec{}, false},
		{"scout@x,1", SimSpec{}, false},
		{"scout@NaN,1", SimSpec{}, false},
		{"scout@1,1e9", SimSpec{}, false},
	} {
		got, err := ParseSimSpec(tc.in)
		if tc.ok && (err != nil || got != tc.want) {
			t.Errorf("ParseSimSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if !tc.ok && graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("ParseSimSpec(%q) = %+v, %v; want EINVALID", tc.in, got, err)
		}
	}
	clk := NewFakeClock(t0)
	f, _ := NewFleet(Options{Now: clk.Now, Every: clk.Every})
	must(t, f.AddSimSpec("scout@1,2"))
	wantCode(t, f.AddSimSpec("scout"), graph.ECONFLICT, "")
	st, err := f.Status(context.Background(), "scout")
	must(t, err)
	if st.Pose.X != 1 || st.Pose.Y != 2 || st.Serial != "SIM-SCOUT-0001" || st.Armed || st.Battery != 100 {
		t.Fatalf("spec robot: %+v", st)
	}
}

func TestFleet_Scan(t *testing.T) {
	t.Parallel()
	clk := NewFakeClock(t0)
	f, err := DemoFleet(Options{Now: clk.Now, Every: clk.Every})
	must(t, err)
	if f.Name() != "robot" {
		t.Fatalf("Name()=%q", f.Name())
	}
	devs, err := f.Scan(context.Background())
	must(t, err)
	if len(devs) != 2 {
		t.Fatalf("scan found %d robots, want 2", len(devs))
	}
	d := devs[1] // sorted by name: carrier, scout
	if d.Key != "robot:SIM-SCOUT-0001" || d.Ref != "robot:scout" || d.Source != "robot" || d.Attrs["sim"] != "true" {
		t.Fatalf("scout device: %+v", d)
	}
	if len(d.Fingerprints) != 1 || d.Fingerprints[0] != (graph.Fingerprint{Kind: graph.FPRobotSerial, Value: "SIM-SCOUT-0001"}) {
		t.Fatalf("scout fingerprints: %v", d.Fingerprints)
	}
	if fp, err := graph.NormalizeFingerprint(d.Fingerprints[0].Kind, d.Fingerprints[0].Value); err != nil || fp != d.Fingerprints[0] {
		t.Fatalf("fingerprint does not normalise to itself: %v %v", fp, err)
	}
}

func TestFakeClock_TicksInOrder(t *testing.T) {
	t.Parallel()
	clk := NewFakeClock(t0)
	var got []time.Duration
	stop := clk.Every(30*time.Millisecond, func(at time.Time) { got = append(got, at.Sub(t0)) })
	clk.Every(50*time.Millisecond, func(at time.Time) { got = append(got, -at.Sub(t0)) })
	clk.Advance(100 * time.Millisecond)
	stop()
	clk.Advance(100 * time.Millisecond)
	want := []time.Duration{30e6, -50e6, 60e6, 90e6, -100e6, -150e6, -200e6}
	if len(got) != len(want) {
		t.Fatalf("ticks %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ticks %v, want %v", got, want)
		}
	}
	if !clk.Now().Equal(t0.Add(200 * time.Millisecond)) {
		t.Fatalf("Now()=%v", clk.Now())
	}
}

func TestWallEvery(t *testing.T) {
	t.Parallel()
	var got []time.Time
	done := make(chan struct{})
	stop := wallEvery(time.Now)(time.Millisecond, func(at time.Time) {
		if len(got) < 5 {
			got = append(got, at)
			if len(got) == 5 {
				close(done)
			}
		}
	})
	<-done
	stop()
	stop() // safe twice
	// Scheduled times sit on the 1 ms grid; a stall longer than maxCatchUp ticks (a loaded
	// machine) may skip slots, never deliver one twice or off the grid.
	for i := 1; i < len(got); i++ {
		if d := got[i].Sub(got[i-1]); d <= 0 || d%time.Millisecond != 0 {
			t.Fatalf("scheduled ticks %v apart, want a positive multiple of 1ms", d)
		}
	}
}

func TestDemoFleet_World(t *testing.T) {
	t.Parallel()
	clk := NewFakeClock(t0)
	f, err := DemoFleet(Options{Now: clk.Now, Every: clk.Every})
	must(t, err)
	must(t, f.Open())
	defer f.Close()
	ctx := context.Background()
	robots, err := f.Robots(ctx)
	must(t, err)
	if len(robots) != 2 || robots[0].Ref != "robot:carrier" || robots[1].Ref != "robot:scout" || robots[0].Pose.X != 2 {
		t.Fatalf("demo robots: %+v", robots)
	}
	if len(f.Objects()) != 3 || len(f.Obstacles()) != 2 || len(robots[1].Params.Geofence) != 4 {
		t.Fatalf("demo world: %d objects, %d obstacles, fence %v", len(f.Objects()), len(f.Obstacles()), robots[1].Params.Geofence)
	}
	arm(t, f, "carrier")
	arm(t, f, "scout")
	// The pillar stands between the carrier and the green cone, not between the scout and it.
	c := startNav(t, ctx, f, "carrier", graph.Goal{X: 6, Y: 6})
	if res := c.wait(t); res.Status != graph.NavBlocked || !strings.Contains(res.Message, "pillar") {
		t.Fatalf("carrier to the green cone: %q %q, want blocked by the pillar", res.Status, res.Message)
	}
	c = startNav(t, ctx, f, "scout", graph.Goal{X: 6, Y: 6})
	driveUntilIdle(t, f, clk, 30*time.Second, "scout")
	if res := c.wait(t); res.Status != graph.NavArrived {
		t.Fatalf("scout to the green cone: %q %q, want arrived", res.Status, res.Message)
	}
	_, err = f.Grasp(ctx, "scout", "green-cone")
	must(t, err)
}

// TestNavigate_TimeoutMessage: a sub-second timeout is said as given, not rounded to
// "not there after 0 s".
func TestNavigate_TimeoutMessage(t *testing.T) {
	t.Parallel()
	f, clk := newFleet(t, Options{}, func(f *Fleet) { must(t, f.AddSim("scout", 0, 0)) })
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 50, Y: 0, TimeoutS: 0.25})
	driveUntilIdle(t, f, clk, 5*time.Second, "robot:scout")
	res := c.wait(t)
	if res.Status != graph.NavTimeout || !strings.Contains(res.Message, "after 0.25 s") {
		t.Fatalf("status=%q message=%q, want a timeout after 0.25 s", res.Status, res.Message)
	}
}
