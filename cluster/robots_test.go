//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/sources/robot"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// robotHost is one host of a robot test: its front end, its own fleet and the router its
// edges would use.
type robotHost struct {
	fe     *FrontEnd
	fleet  *robot.Fleet
	robots *Robots
}

func openRobotHost(t *testing.T, c *etcdtest.Cluster, prefix, host string, sims ...string) *robotHost {
	t.Helper()
	return openRobotHostRO(t, c, prefix, host, false, sims...)
}

// openRobotHostRO is openRobotHost for a host serving --read-only or not.
func openRobotHostRO(t *testing.T, c *etcdtest.Cluster, prefix, host string, readOnly bool, sims ...string) *robotHost {
	t.Helper()
	return startRobots(t, openFront(t, c, prefix, host), readOnly, sims...)
}

// startRobots opens a robot router on fe and a fleet of the simulated robots sims
// behind it, both closed when the test ends.
func startRobots(t *testing.T, fe *FrontEnd, readOnly bool, sims ...string) *robotHost {
	t.Helper()
	r := NewRobots(fe)
	r.ReadOnly = readOnly
	fleet, err := robot.NewFleet(robot.Options{Store: r.Store(fe.DB()), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sims {
		if err := fleet.AddSimSpec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(fleet); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	t.Cleanup(func() { fleet.Close() }) // first: the robots stop, recorded through the router
	return &robotHost{fe: fe, fleet: fleet, robots: r}
}

// sameError fails unless the remote call's error is the local call's: code, field,
// message and advice.
func sameError(t *testing.T, what string, local, remote error) {
	t.Helper()
	if local == nil || remote == nil {
		t.Fatalf("%s: local error %v, remote error %v; want both", what, local, remote)
	}
	if graph.ErrorCode(local) != graph.ErrorCode(remote) || graph.ErrorMessage(local) != graph.ErrorMessage(remote) ||
		graph.ErrorField(local) != graph.ErrorField(remote) || !reflect.DeepEqual(graph.ErrorSteps(local), graph.ErrorSteps(remote)) {
		t.Fatalf("%s:\n local  %s %q field %q steps %+v\n remote %s %q field %q steps %+v", what,
			graph.ErrorCode(local), graph.ErrorMessage(local), graph.ErrorField(local), graph.ErrorSteps(local),
			graph.ErrorCode(remote), graph.ErrorMessage(remote), graph.ErrorField(remote), graph.ErrorSteps(remote))
	}
}

// progressLog collects a navigation's progress.
type progressLog struct {
	mu    sync.Mutex
	got   []graph.NavProgress
	first chan struct{}
}

func newProgressLog() *progressLog { return &progressLog{first: make(chan struct{})} }

func (p *progressLog) add(np graph.NavProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, np)
	if len(p.got) == 1 {
		close(p.first)
	}
}

// started waits for the first progress; it fails the test if the navigation ends (its
// result on ended) first.
func started[T any](t *testing.T, p *progressLog, ended chan T) {
	t.Helper()
	select {
	case <-p.first:
	case v := <-ended:
		t.Fatalf("the navigation ended before any progress: %+v", v)
	}
}

func (p *progressLog) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// countChanges subscribes to h's robot changes and counts those of ref; stop ends it.
func countChanges(h *robotHost, ref string) (count func() int, stop func()) {
	var mu sync.Mutex
	heard := 0
	stop = h.robots.Subscribe(func(r string) {
		if r == ref {
			mu.Lock()
			heard++
			mu.Unlock()
		}
	})
	return func() int { mu.Lock(); defer mu.Unlock(); return heard }, stop
}

func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// robotEvents reads a host's replica's robot events of action, newest first.
func robotEvents(t *testing.T, h *robotHost, action string) []*graph.Event {
	t.Helper()
	evs, _, err := h.fe.DB().FindEvents(context.Background(), graph.EventFilter{Action: action, First: 100})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestRobots_AcrossHosts: host b drives host a's robot through etcd exactly as a drives
// it itself — the same results and the same errors with the same advice, navigate with
// progress, cancel and a stop answered mid-drive — with the caller's actor on a's events,
// and no key left behind. The subtests run in order, each from where the last left the
// robot.
func TestRobots_AcrossHosts(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := openRobotHost(t, c, "/rb", "a", "scout@1,1")
	b := openRobotHost(t, c, "/rb", "b", "rover@0,0")
	ctx := graph.WithMessage(graph.WithRequestID(graph.WithActor(context.Background(), "mcp:agent-on-b"), "req-1"), "why from b")

	t.Run("List", func(t *testing.T) {
		for _, h := range []*robotHost{a, b} {
			states, err := h.robots.Robots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var refs []string
			for _, st := range states {
				refs = append(refs, st.Ref)
			}
			if got, want := strings.Join(refs, ","), "robot:rover,robot:scout"; got != want {
				t.Fatalf("%s lists %s, want %s", h.fe.Host(), got, want)
			}
		}
		// Named by ref, bare name or device id: the driving host's state.
		want, _ := a.fleet.Status(ctx, "robot:scout")
		qualified := "device:a/" + strings.TrimPrefix(want.DeviceID, "device:")
		for _, name := range []string{"robot:scout", "scout", want.DeviceID, "a/robot:scout", qualified} {
			got, err := b.robots.Status(ctx, name)
			if err != nil {
				t.Fatalf("status %q from b: %v", name, err)
			}
			got.Battery = want.Battery // it drains a little between the two reads
			g, w := asMap(t, got), asMap(t, want)
			if h, ok := g["host"]; ok && h != "a" { // where a state names its host
				t.Fatalf("status %q from b names host %v, want a", name, h)
			}
			delete(g, "host")
			delete(w, "host")
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("status %q from b: %+v, want %+v", name, got, want)
			}
		}
	})

	t.Run("SameErrors", func(t *testing.T) {
		_, lerr := a.robots.Navigate(ctx, "robot:scout", graph.Goal{X: 2, Y: 1}, nil)
		_, rerr := b.robots.Navigate(ctx, "robot:scout", graph.Goal{X: 2, Y: 1}, nil)
		sameError(t, "navigate unarmed", lerr, rerr)
		if !strings.Contains(graph.ErrorMessage(rerr), "arm") {
			t.Fatalf("navigate unarmed: %q", graph.ErrorMessage(rerr))
		}
		_, lerr = a.robots.SetParameters(ctx, "robot:scout", graph.RobotParamsUpdate{MaxSpeed: ptr(99)})
		_, rerr = b.robots.SetParameters(ctx, "robot:scout", graph.RobotParamsUpdate{MaxSpeed: ptr(99)})
		sameError(t, "max_speed 99", lerr, rerr)
		_, lerr = a.robots.Grasp(ctx, "robot:scout", "no-such-thing")
		_, rerr = b.robots.Grasp(ctx, "robot:scout", "no-such-thing")
		sameError(t, "grasp", lerr, rerr)
		_, lerr = a.robots.Release(ctx, "robot:scout")
		_, rerr = b.robots.Release(ctx, "robot:scout")
		sameError(t, "release", lerr, rerr)
		// An unknown robot: named among every host's robots, on either host.
		_, lerr = a.robots.Arm(ctx, "robot:scot")
		_, rerr = b.robots.Arm(ctx, "robot:scot")
		sameError(t, "unknown robot", lerr, rerr)
		if msg := graph.ErrorMessage(rerr); graph.ErrorCode(rerr) != graph.ENOTFOUND || !strings.Contains(msg, "did you mean robot:scout?") || !strings.Contains(msg, "robot:rover, robot:scout") {
			t.Fatalf("unknown robot: %s %q", graph.ErrorCode(rerr), msg)
		}
	})

	t.Run("ArmNavigateDisarm", func(t *testing.T) {
		st, err := b.robots.Arm(ctx, "robot:scout")
		if err != nil || !st.Armed {
			t.Fatalf("arm from b: %+v %v", st, err)
		}
		prog := newProgressLog()
		res, err := b.robots.Navigate(ctx, "robot:scout", graph.Goal{X: 2, Y: 1}, prog.add)
		if err != nil || res.Status != graph.NavArrived {
			t.Fatalf("navigate from b: %+v %v", res, err)
		}
		if prog.len() == 0 {
			t.Fatal("no progress from host a while driving")
		}
		if d := math.Hypot(res.Pose.X-2, res.Pose.Y-1); d > 0.15+1e-9 || res.DistanceRemaining > 0.15 {
			t.Fatalf("b was told the robot arrived at %+v, %g m from the goal", res.Pose, d)
		}
		objs, err := b.robots.Detect(ctx, "robot:scout")
		local, lerr := a.robots.Detect(ctx, "robot:scout")
		if err != nil || lerr != nil || !reflect.DeepEqual(objs, local) || (objs == nil) != (local == nil) {
			t.Fatalf("detect from b: %#v %v; on a: %#v %v", objs, err, local, lerr)
		}
		// The caller's actor (with the caller's host), request id and message are on a's
		// events, as b's replica reads them too.
		for _, h := range []*robotHost{a, b} {
			ends := robotEvents(t, h, graph.ActRobotNavEnd)
			if len(ends) == 0 || ends[0].Actor != "mcp:agent-on-b@b" || ends[0].RequestID != "req-1" || ends[0].Message != "why from b" {
				t.Fatalf("navigate.end events on %s %+v; want actor mcp:agent-on-b@b, request id req-1, message \"why from b\"", h.fe.Host(), ends)
			}
		}
		// A's own caller is a's.
		if _, err := a.robots.Disarm(graph.WithActor(context.Background(), "mcp:agent-on-a"), "robot:scout"); err != nil {
			t.Fatal(err)
		}
		if evs := robotEvents(t, a, graph.ActRobotDisarm); len(evs) == 0 || evs[0].Actor != "mcp:agent-on-a@a" {
			t.Fatalf("disarm on a: %+v", evs)
		}
		if _, err := b.robots.Arm(ctx, "robot:scout"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Subscribe", func(t *testing.T) {
		// b's subscribers hear of a's robot: from the changelog when a drives it for
		// itself, and from the progress of a navigation b asked for.
		count, stop := countChanges(b, "robot:scout")
		defer stop()
		if _, err := a.robots.Disarm(ctx, "robot:scout"); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "b hearing of a disarm made on a", 10*time.Second, func() bool { return count() > 0 })
		if _, err := a.robots.Arm(ctx, "robot:scout"); err != nil {
			t.Fatal(err)
		}
		before := count()
		prog := newProgressLog()
		if res, err := b.robots.Navigate(ctx, "robot:scout", graph.Goal{X: 1, Y: 1}, prog.add); err != nil || res.Status != graph.NavArrived {
			t.Fatalf("navigate from b: %+v %v", res, err)
		}
		if count() < before+prog.len() {
			t.Fatalf("b's subscribers heard %d changes over %d progress reports", count()-before, prog.len())
		}
	})

	t.Run("Stream", func(t *testing.T) {
		// a drives its robot itself: b's subscribers hear it move, and b reads its pose
		// as it goes from what a streams, at most every robotStreamEvery.
		count, stop := countChanges(b, "robot:scout")
		defer stop()
		written := a.robots.StatesWritten()
		prog := newProgressLog()
		done := make(chan *graph.NavResult, 1)
		start := time.Now()
		go func() {
			res, err := a.robots.Navigate(graph.WithActor(context.Background(), "cli:on-a"), "robot:scout", graph.Goal{X: 3, Y: 1}, prog.add)
			if err != nil {
				t.Errorf("navigate on a: %v", err)
			}
			done <- res
		}()
		started(t, prog, done)
		poses := map[graph.Pose]bool{}
		var res *graph.NavResult
	drive:
		for {
			select {
			case res = <-done:
				break drive
			case <-time.After(50 * time.Millisecond):
			}
			st, err := b.robots.Status(ctx, "scout")
			if err != nil {
				t.Fatalf("status from b while a drives: %v", err)
			}
			if st.State == graph.RobotNavigating {
				poses[st.Pose] = true
			}
		}
		elapsed := time.Since(start)
		if res == nil || res.Status != graph.NavArrived {
			t.Fatalf("navigate on a: %+v", res)
		}
		n := a.robots.StatesWritten() - written
		t.Logf("a drove for %s: %d states streamed, b heard %d, read %d poses on the move", elapsed.Round(time.Millisecond), n, count(), len(poses))
		if len(poses) < 3 {
			t.Fatalf("b read %d poses while a drove for %s; want it to follow the robot", len(poses), elapsed)
		}
		if max := int(elapsed/robotStreamEvery) + 3; n > max {
			t.Fatalf("a streamed %d states in %s; want at most %d (one per %s)", n, elapsed, max, robotStreamEvery)
		}
		waitUntil(t, "b hearing of the drive", 10*time.Second, func() bool { return count() >= 3 })
		// At rest b asks a: the same state as a's own.
		waitUntil(t, "b reading the robot at rest where a has it", 10*time.Second, func() bool {
			st, err := b.robots.Status(ctx, "robot:scout")
			local, _ := a.fleet.Status(ctx, "robot:scout")
			return err == nil && st.State == graph.RobotIdle && st.Pose == local.Pose
		})
	})

	t.Run("Cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		prog := newProgressLog()
		type navOut struct {
			res *graph.NavResult
			err error
		}
		done := make(chan navOut, 1)
		go func() {
			res, err := b.robots.Navigate(cctx, "robot:scout", graph.Goal{X: -8, Y: 8}, prog.add)
			done <- navOut{res, err}
		}()
		select {
		case <-prog.first:
		case out := <-done:
			t.Fatalf("navigation ended before any progress: %+v %v", out.res, out.err)
		}
		cancel()
		out := <-done
		if out.err != nil || out.res.Status != graph.NavCancelled {
			t.Fatalf("cancelled from b: %+v %v; want the cancelled result", out.res, out.err)
		}
		waitUntil(t, "the robot at rest", 10*time.Second, func() bool {
			st, _ := a.fleet.Status(ctx, "robot:scout")
			return st.State == graph.RobotIdle && st.Armed
		})
	})

	t.Run("StopMidDrive", func(t *testing.T) {
		prog := newProgressLog()
		done := make(chan *graph.NavResult, 1)
		go func() {
			res, err := b.robots.Navigate(ctx, "robot:scout", graph.Goal{X: 8, Y: -8}, prog.add)
			if err != nil {
				t.Errorf("navigate: %v", err)
			}
			done <- res
		}()
		started(t, prog, done)
		start := time.Now()
		st, err := b.robots.Stop(ctx, "robot:scout")
		t.Logf("robot_stop from b answered in %s (the robot stopped on a, its event committed)", time.Since(start).Round(time.Microsecond))
		if err != nil || st.State != graph.RobotStopped || st.Armed {
			t.Fatalf("stop from b: %+v %v", st, err)
		}
		if res := <-done; res == nil || res.Status != graph.NavDisarmed {
			t.Fatalf("the navigation a stop ended: %+v; want disarmed", res)
		}
		if stops := robotEvents(t, a, graph.ActRobotStop); len(stops) == 0 || stops[0].Actor != "mcp:agent-on-b@b" {
			t.Fatalf("stop events %+v", stops)
		}
		// And a's robot from a: nothing differs.
		if st, err := a.robots.Disarm(ctx, "robot:scout"); err != nil || st.State != graph.RobotStopped {
			t.Fatalf("disarm on a: %+v %v", st, err)
		}
	})

	t.Run("NothingLeftBehind", func(t *testing.T) {
		cli := c.Client(t)
		waitUntil(t, "no command keys", 10*time.Second, func() bool {
			resp, err := cli.Get(context.Background(), "/rb/robot/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
			if err != nil {
				return false
			}
			lists := 0
			for _, kv := range resp.Kvs {
				switch k := string(kv.Key); {
				case strings.HasSuffix(k, "/list"):
					lists++
				case !strings.Contains(k, "/state/"):
					return false
				}
			}
			return lists == 2
		})
		// An idle fleet writes nothing under P/robot/ (once the last change is streamed).
		settled := func() bool {
			n := a.robots.StatesWritten()
			time.Sleep(3 * robotStreamEvery)
			return a.robots.StatesWritten() == n
		}
		waitUntil(t, "the last state streamed", 10*time.Second, settled)
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for wr := range cli.Watch(wctx, "/rb/robot/", clientv3.WithPrefix()) {
			for _, ev := range wr.Events {
				t.Fatalf("an idle fleet wrote %s %s", ev.Type, ev.Kv.Key)
			}
		}
	})
}

// TestRobots_ReadOnlyHost: a host serving --read-only refuses every command from another
// host that would move or change its robot, before looking at the robot and changing
// nothing, with stopping it as the next step; status, detect and robot_stop still work.
func TestRobots_ReadOnlyHost(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := openRobotHostRO(t, c, "/ro", "a", true, "scout@1,1")
	b := openRobotHost(t, c, "/ro", "b")
	ctx := graph.WithActor(context.Background(), "mcp:agent-on-b")
	for what, call := range map[string]func() error{
		"driving a robot": func() error {
			_, err := b.robots.Navigate(ctx, "scout", graph.Goal{X: 2, Y: 1}, nil)
			return err
		},
		"arming a robot":              func() error { _, err := b.robots.Arm(ctx, "robot:scout"); return err },
		"disarming a robot":           func() error { _, err := b.robots.Disarm(ctx, "robot:scout"); return err },
		"grasping with a robot":       func() error { _, err := b.robots.Grasp(ctx, "robot:scout", "cup"); return err },
		"releasing a robot's gripper": func() error { _, err := b.robots.Release(ctx, "robot:scout"); return err },
		"changing a robot's parameters": func() error {
			_, err := b.robots.SetParameters(ctx, "robot:scout", graph.RobotParamsUpdate{MaxSpeed: ptr(0.5)})
			return err
		},
	} {
		err := call()
		want := "host a, which drives robot:scout, is read-only (--read-only): " + what + " is refused and nothing was changed"
		if graph.ErrorCode(err) != graph.EFORBIDDEN || !strings.HasPrefix(graph.ErrorMessage(err), want) {
			t.Fatalf("%s from b: %s %q; want %s %q…", what, graph.ErrorCode(err), graph.ErrorMessage(err), graph.EFORBIDDEN, want)
		}
		if steps := graph.ErrorSteps(err); len(steps) != 1 || steps[0] != (graph.Step{Do: graph.StepStop, Robot: "a/robot:scout"}) {
			t.Fatalf("%s from b: steps %+v; want stopping a/robot:scout", what, steps)
		}
	}
	if st, _ := a.fleet.Status(ctx, "robot:scout"); st.Armed || st.State != graph.RobotIdle || st.Params.MaxSpeed == 0.5 {
		t.Fatalf("the refused commands changed the robot: %+v", st)
	}
	if st, err := b.robots.Status(ctx, "robot:scout"); err != nil || st.Ref != "robot:scout" {
		t.Fatalf("status from b: %+v %v", st, err)
	}
	if _, err := b.robots.Detect(ctx, "robot:scout"); err != nil {
		t.Fatalf("detect from b: %v", err)
	}
	st, err := b.robots.Stop(ctx, "a/robot:scout") // the step's own robot
	if err != nil || st.State != graph.RobotStopped {
		t.Fatalf("robot_stop from b on a read-only host: %+v %v", st, err)
	}
	var byB []string
	for _, ev := range robotEvents(t, a, "") {
		if ev.Actor == "mcp:agent-on-b@b" {
			byB = append(byB, ev.Action)
		}
	}
	if strings.Join(byB, ",") != graph.ActRobotStop {
		t.Fatalf("events by b's agent after the refusals and the stop: %v; want the stop alone", byB)
	}
}

// TestRobots_DriverGone: a call to a host that goes away mid-navigation ends with a clear
// error when its claim expires, not a hang; a call to a host that is gone says so at once.
func TestRobots_DriverGone(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := openRobotHost(t, c, "/gone", "a", "scout@1,1")
	b := openRobotHost(t, c, "/gone", "b")
	ctx := graph.WithActor(context.Background(), "mcp:agent-on-b")
	if _, err := b.robots.Arm(ctx, "robot:scout"); err != nil {
		t.Fatal(err)
	}
	prog := newProgressLog()
	done := make(chan error, 1)
	go func() {
		_, err := b.robots.Navigate(ctx, "robot:scout", graph.Goal{X: -8, Y: -8}, prog.add)
		done <- err
	}()
	started(t, prog, done)
	// Host a vanishes without a word: its watch and lease keep-alives stop (a process
	// killed), and etcd expires its claim after HostTTL. Its client goes first: a host
	// whose robots are cancelled first answers the navigation it was driving (as at a
	// shutdown) if its client can still write, which no killed process does.
	cli := a.fe.cli
	a.fe.cancel()
	cli.Close()
	a.robots.cancel()
	select {
	case err := <-done:
		if graph.ErrorCode(err) != graph.EUNAVAILABLE || !strings.Contains(graph.ErrorMessage(err), "host a, which drives robot:scout, went offline") {
			t.Fatalf("navigate to a vanished host: %v", err)
		}
	case <-time.After(3 * HostTTL * time.Second):
		t.Fatal("navigate to a vanished host hangs")
	}
	_, err := b.robots.Status(ctx, "a/robot:scout")
	if graph.ErrorCode(err) != graph.EUNAVAILABLE || !strings.Contains(graph.ErrorMessage(err), "host a, which drives robot:scout, is offline") {
		t.Fatalf("status on a gone host: %v", err)
	}
}

// TestRobots_LeaseLost: a host cut off from the cluster past its lease stops its robots
// at once (a navigation ends disarmed), refuses to arm them while cut off, and records
// the stop once the cluster is back.
func TestRobots_LeaseLost(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := openRobotHost(t, c, "/lost", "a", "scout@1,1")
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := a.robots.Arm(ctx, "robot:scout"); err != nil {
		t.Fatal(err)
	}
	prog := newProgressLog()
	done := make(chan *graph.NavResult, 1)
	go func() {
		res, err := a.robots.Navigate(ctx, "robot:scout", graph.Goal{X: -8, Y: -8, TimeoutS: 120}, prog.add)
		if err != nil {
			t.Errorf("navigate: %v", err)
		}
		done <- res
	}()
	started(t, prog, done)
	c.Pause(0)
	paused := true
	defer func() {
		if paused {
			c.Resume(0)
		}
	}()
	select {
	case <-a.fe.Lost():
	case <-time.After(3 * HostTTL * time.Second):
		t.Fatal("the lease was not lost with the cluster paused")
	}
	res := <-done
	if res == nil || res.Status != graph.NavDisarmed {
		t.Fatalf("the navigation when the lease was lost: %+v; want disarmed", res)
	}
	st, _ := a.fleet.Status(ctx, "robot:scout")
	if st.State != graph.RobotStopped || st.Armed {
		t.Fatalf("after the lease was lost: %+v; want stopped", st)
	}
	if _, err := a.robots.Arm(ctx, "robot:scout"); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("arm while cut off: %v; want EUNAVAILABLE", err)
	}
	c.Resume(0)
	paused = false
	waitUntil(t, "the stop recorded after the cluster is back", 60*time.Second, func() bool {
		for _, ev := range robotEvents(t, a, graph.ActRobotStop) {
			var after struct {
				State string `json:"state"`
			}
			json.Unmarshal(ev.After, &after)
			if ev.Message == "host a lost its cluster lease" && who(ev.Actor) == "robot:scout" && after.State == graph.RobotStopped {
				return true
			}
		}
		return false
	})
	if rep, err := a.fe.DB().VerifyChangelog(context.Background()); err != nil || !rep.OK {
		t.Fatalf("changelog after the outage: %+v %v", rep, err)
	}
}

func ptr(f float64) *float64 { return &f }

// who is an actor without the host a fleet store adds (the host the change was made on).
func who(actor string) string {
	w, _ := graph.SplitActorHost(actor)
	return w
}

// asMap is v as JSON reads it.
func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRobots_ListFromStreams: the list of the fleet's robots on b is answered from a's
// published list and the states a streams (each robot's once with the list, then as it
// changes), without a command to a — the fleet's revision does not move — and with the
// fields a's own answer has; a robot whose streamed state b lacks makes b ask a.
func TestRobots_ListFromStreams(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a := openRobotHost(t, c, "/rl", "a", "scout@1,1", "rover@2,2")
	b := openRobotHost(t, c, "/rl", "b", "ranger@5,5")
	cli := c.Client(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	rev := func() int64 {
		resp, err := cli.Get(context.Background(), "/rl/schema")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	// compare checks b's list against each host's own answer: every field, the battery
	// to within what a robot at rest drains meanwhile (its idle drain is not streamed).
	compare := func(got []*graph.RobotState) {
		t.Helper()
		var want []*graph.RobotState
		for _, h := range []*robotHost{a, b} {
			sts, err := h.fleet.Robots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sts {
				cp := *st
				if h != b { // another host's robot names its host
					cp.Host = h.fe.Host()
				}
				want = append(want, &cp)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("b lists %d robots; want %d", len(got), len(want))
		}
		byRef := map[string]*graph.RobotState{}
		for _, st := range want {
			byRef[st.Ref] = st
		}
		for _, g := range got {
			w := byRef[g.Ref]
			if w == nil {
				t.Fatalf("b lists %s, which no host drives", g.Ref)
			}
			if math.Abs(g.Battery-w.Battery) > 0.5 {
				t.Errorf("%s: battery %.3f on b's list, %.3f on its host", g.Ref, g.Battery, w.Battery)
			}
			gj, _ := json.Marshal(hostedState{g, g.Host})
			g2, w2 := *g, *w
			g2.Battery, w2.Battery = 0, 0
			if !reflect.DeepEqual(g2, w2) {
				t.Errorf("%s on b's list:\n %s\nits host's:\n %+v", g.Ref, gj, w2)
			}
		}
	}
	// b's list asks a no more once a's states are streamed to b (and b has streamed its
	// own robot's, which would move the revision too).
	waitUntil(t, "a's robots' states streamed to b", 10*time.Second, func() bool {
		list := b.robots.lists()
		return b.robots.stream.streamed("a", list["a"]) != nil && b.robots.StatesWritten() > 0
	})
	before := rev()
	got, err := b.robots.Robots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := rev(); after != before {
		t.Errorf("listing the fleet's robots on b moved the cluster's revision %d → %d: a was sent a command", before, after)
	}
	compare(got)

	// A command from b (its outcome is newer than what a streamed) and the state a
	// streams after it: the list is read from that state, armed.
	if _, err := b.robots.Arm(ctx, "robot:scout"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a's armed state streamed to b", 10*time.Second, func() bool {
		list := b.robots.lists()
		sts := b.robots.stream.streamed("a", list["a"])
		for _, st := range sts {
			if st.Ref == "robot:scout" && st.Armed {
				return true
			}
		}
		return false
	})
	before = rev()
	got, err = b.robots.Robots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := rev(); after != before {
		t.Errorf("listing after the arm moved the revision %d → %d", before, after)
	}
	compare(got)

	// A robot b has no streamed state of: b asks a, with the same answer.
	if _, err := cli.Delete(context.Background(), "/rl/robot/a/state/robot:rover"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "b seeing rover's state gone", 10*time.Second, func() bool {
		list := b.robots.lists()
		return b.robots.stream.streamed("a", list["a"]) == nil
	})
	before = rev()
	got, err = b.robots.Robots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := rev(); after == before {
		t.Errorf("b listed a robot it has no streamed state of without asking a")
	}
	compare(got)
}
