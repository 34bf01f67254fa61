package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// robotEnv is a real devgraph with the demo fleet on a fake clock. A pump advances the
// clock (20 ms of simulation per millisecond or so) while running; paused, no robot
// moves and no navigation can end, which makes "every navigation is still blocked"
// a fact rather than a race.
type robotEnv struct {
	*env
	fleet  *robot.Fleet
	clock  *robot.FakeClock
	paused atomic.Bool
}

func newRobotEnv(t *testing.T, extra int) *robotEnv {
	t.Helper()
	return newRobotEnvOpts(t, envOpts{extra: extra})
}

// newRobotEnvOpts is newRobotEnv with the env options (readOnly, extra robots).
func newRobotEnvOpts(t *testing.T, o envOpts) *robotEnv {
	t.Helper()
	extra := o.extra
	db := storetest.MustOpen(t, store.Options{NoSync: true}) // no fsync: these tests do not crash the file
	clock := robot.NewFakeClock(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	fleet, err := robot.DemoFleet(robot.Options{Now: clock.Now, Every: clock.Every, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < extra; i++ {
		if err := fleet.AddSim(fmt.Sprintf("r%d", i), -8+float64(i), -8); err != nil {
			t.Fatal(err)
		}
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	live, dir := demoLive(t, false)
	live.Extra = []sources.Source{fleet}
	svc := identity.New(db, live, fleet)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	names := search.NewFinder(db)
	exec, err := newExecutor(svc, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })
	srv, err := New(svc, Options{
		ReadOnly: o.readOnly, Exec: exec, Finder: names, Notifier: svc, Version: "test", NotifyInterval: 20 * time.Millisecond,
		RobotEvents: func(fn func(ref string)) func() {
			return fleet.Subscribe(func(ref string, _ graph.RobotState) { fn(ref) })
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	re := &robotEnv{env: &env{t: t, svc: svc, srv: srv, rig: dir, live: live}, fleet: fleet, clock: clock}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			if !re.paused.Load() {
				clock.Advance(20 * time.Millisecond)
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return re
}

func (re *robotEnv) state(ref string) *graph.RobotState {
	st, err := re.fleet.Status(context.Background(), ref)
	if err != nil {
		re.t.Fatal(err)
	}
	return st
}

// TestRobotTools_Mission runs a whole fetch mission through a real client on every
// transport in both eras: status, arm, detect, drive with progress notifications, grasp,
// bring back, release, disarm, parameters — then a navigation cancelled by the client,
// which leaves the robot at rest short of its goal.
func TestRobotTools_Mission(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			re := newRobotEnv(t, 0)
			cn := re.dial(m.transport, m.modern, "pilot")
			ctx := context.Background()

			st := cn.ok("robot_status", nil)
			if n := len(st["robots"].([]any)); n != 2 {
				t.Fatalf("robot_status: %d robots, want scout and carrier", n)
			}
			scout := cn.ok("robot_status", map[string]any{"robot": "robot:scout"})
			if path(scout, "robots", 0, "armed") != false {
				t.Fatalf("scout starts armed? %v", scout)
			}
			// Subscribe to scout's state while it moves.
			stateURI := RobotStateURI("robot:scout")
			defer cn.subscribe(ctx, stateURI)()
			waitFor(t, func() bool { return re.srv.subs.count() == 1 }, "robot state subscription")

			// Driving disarmed is refused with the next step.
			if msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scout", "x": 1.0, "y": 0.0}); !strings.Contains(msg, "robot_arm") {
				t.Errorf("navigate disarmed: %q", msg)
			}
			cn.ok("robot_arm", map[string]any{"robot": "robot:scout"})
			det := cn.ok("robot_detect", map[string]any{"robot": "robot:scout"})
			var cube map[string]any
			for _, o := range det["objects"].([]any) {
				if path(o.(map[string]any), "id") == "red-cube" {
					cube = o.(map[string]any)
				}
			}
			if cube == nil {
				t.Fatalf("robot_detect: no red-cube in %v", det)
			}

			nav := func(x, y float64, token any) map[string]any {
				t.Helper()
				res, err := cn.callErr(ctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": x, "y": y, "timeout_s": 30.0},
					&mcp.Meta{ProgressToken: token})
				if err != nil || res.IsError {
					t.Fatalf("robot_navigate(%g, %g): %v %s", x, y, err, text(res))
				}
				return structured(t, res)
			}
			out := nav(2.85, -1.9, "to-cube")
			if out["status"] != graph.NavArrived {
				t.Fatalf("to the cube: %v", out)
			}
			prog := cn.notesOf("notifications/progress")
			if len(prog) == 0 {
				t.Fatal("no progress notifications while driving")
			}
			last := -1.0
			for _, p := range prog {
				if p.Params.AdditionalFields["progressToken"] != "to-cube" {
					t.Fatalf("progress with token %v", p.Params.AdditionalFields["progressToken"])
				}
				v := p.Params.AdditionalFields["progress"].(float64)
				if v < last {
					t.Fatalf("progress went backwards: %v after %v", v, last)
				}
				last = v
				if !strings.Contains(str(p.Params.AdditionalFields["message"]), "m to go") {
					t.Fatalf("progress message %v", p.Params.AdditionalFields["message"])
				}
			}
			cn.waitNote(string(mcp.MethodNotificationResourceUpdated), updatedFor(stateURI), 20*time.Second)

			g := cn.ok("robot_grasp", map[string]any{"robot": "scout", "object": "red-cube"})
			if path(g, "robot", "holding") != "red-cube" {
				t.Fatalf("grasp: %v", g)
			}
			if out := nav(0, 0, nil); out["status"] != graph.NavArrived {
				t.Fatalf("home: %v", out)
			}
			r := cn.ok("robot_release", map[string]any{"robot": "robot:scout"})
			if path(r, "robot", "holding") != nil {
				t.Fatalf("release: %v", r)
			}
			// Named by its bare name, the result still names the robot by its ref.
			res := cn.call("robot_detect", map[string]any{"robot": "scout"})
			det = structured(t, res)
			if det["robot"] != "robot:scout" || !strings.Contains(text(res), "robot:scout") {
				t.Errorf("robot_detect scout: robot %v, text %q; want its ref robot:scout", det["robot"], text(res))
			}
			if d := path(det, "objects", 0, "distance"); path(det, "objects", 0, "id") != "red-cube" || d.(float64) > 0.6 {
				t.Fatalf("the cube did not come home: %v", det)
			}

			p := cn.ok("robot_parameters", map[string]any{"robot": "robot:scout", "max_speed": 0.5})
			if path(p, "robot", "params", "max_speed") != 0.5 {
				t.Fatalf("parameters: %v", p)
			}
			if msg := cn.fails("robot_parameters", map[string]any{"robot": "robot:scout", "max_speed": 99.0}); !strings.Contains(msg, "max_speed") {
				t.Errorf("out of range: %q", msg)
			}
			if msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scout", "x": 50.0, "y": 0.0}); !strings.Contains(msg, "geofence") {
				t.Errorf("outside the fence: %q", msg)
			}
			if msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scout", "x": 1e9, "y": 0.0}); !strings.Contains(msg, "x=1e+09 is out of range") {
				t.Errorf("huge x: %q", msg)
			}
			if msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scott", "x": 1.0, "y": 0.0}); !strings.Contains(msg, "robot_status") {
				t.Errorf("unknown robot: %q", msg)
			}
			if msg := cn.fails("robot_navigate", map[string]any{"robot": "robot:scout", "x": 1.0, "y": 0.0, "timeout_s": -1.0}); !strings.Contains(msg, "timeout_s") {
				t.Errorf("negative timeout: %q", msg)
			}

			// Cancel: the client gives up mid-drive; the robot comes to rest short of
			// the goal and the navigation is recorded as cancelled.
			cctx, cancel := context.WithCancel(ctx)
			type callResult struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan callResult, 1)
			before := len(cn.notesOf("notifications/progress"))
			go func() {
				res, err := cn.callErr(cctx, "robot_navigate", map[string]any{"robot": "robot:scout", "x": -8.0, "y": 8.0}, &mcp.Meta{ProgressToken: 7})
				done <- callResult{res, err}
			}()
			waitFor(t, func() bool { return len(cn.notesOf("notifications/progress")) > before }, "progress before the cancel")
			cancel()
			// Over stdio and HTTP the client stops waiting (notifications/cancelled, or
			// the request's stream closed); in-process the handler's own result, which
			// says cancelled, comes back.
			if r := <-done; r.err != nil {
				if !errors.Is(r.err, context.Canceled) && !strings.Contains(r.err.Error(), "context canceled") {
					t.Fatalf("cancelled call returned %v", r.err)
				}
			} else if s := structured(t, r.res); s["status"] != graph.NavCancelled {
				t.Fatalf("cancelled call returned %v", s)
			}
			waitFor(t, func() bool { return re.state("robot:scout").State != graph.RobotNavigating }, "the robot at rest after the cancel")
			if s := re.state("robot:scout"); s.Pose.Y > 7 {
				t.Fatalf("robot reached the goal despite the cancel: %+v", s.Pose)
			}
			waitFor(t, func() bool {
				cl := cn.ok("graph_changelog", map[string]any{"action": "robot.navigate.end", "limit": 1, "bodies": true})
				return strings.Contains(fmt.Sprint(path(cl, "events", 0, "after")), graph.NavCancelled)
			}, "robot.navigate.end cancelled in the changelog")

			cn.ok("robot_disarm", map[string]any{"robot": "robot:scout"})
			cl := cn.ok("graph_changelog", map[string]any{"actor": "mcp:pilot", "action": "robot.*", "limit": 50})
			seen := map[string]bool{}
			for _, ev := range cl["events"].([]any) {
				seen[str(path(ev.(map[string]any), "action"))] = true
			}
			for _, a := range []string{"robot.arm", "robot.navigate.start", "robot.navigate.end", "robot.parameters", "robot.disarm"} {
				if !seen[a] {
					t.Errorf("changelog lacks %s by mcp:pilot: %v", a, seen)
				}
			}
		})
	}
}

// TestRobotStop_AnsweredWhileNavigationsBlock starts more navigations than mcp-go's
// stdio worker pool has workers (5) — with the clock stopped, so none can finish — and
// checks robot_stop is answered at once and ends its robot's navigation, over stdio
// and HTTP in both eras.
func TestRobotStop_AnsweredWhileNavigationsBlock(t *testing.T) {
	t.Parallel()
	const extra = 8 // plus scout and carrier: 10 robots navigating at once
	for _, m := range modes[2:] {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			re := newRobotEnv(t, extra)
			cn := re.dial(m.transport, m.modern, "fleet-ops")
			ctx := context.Background()
			// Each drives 2 m straight along +y, clear of the demo world's obstacles.
			robots := []string{"robot:scout", "robot:carrier"}
			goals := [][2]float64{{0, 2}, {2, 2}}
			for i := 0; i < extra; i++ {
				robots = append(robots, fmt.Sprintf("robot:r%d", i))
				goals = append(goals, [2]float64{-8 + float64(i), -6})
			}
			for _, r := range robots {
				cn.ok("robot_arm", map[string]any{"robot": r})
			}
			re.paused.Store(true)
			var wg sync.WaitGroup
			results := make([]map[string]any, len(robots))
			for i, r := range robots {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := cn.callErr(ctx, "robot_navigate", map[string]any{"robot": r, "x": goals[i][0], "y": goals[i][1]}, nil)
					if err != nil || res.IsError {
						t.Errorf("navigate %s: %v %v", r, err, res)
						return
					}
					results[i] = structured(t, res)
				}()
			}
			waitFor(t, func() bool {
				for _, r := range robots {
					if re.state(r).State != graph.RobotNavigating {
						return false
					}
				}
				return true
			}, "every robot navigating")

			// The clock stands still: every navigation is blocked. robot_stop answers.
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			res, err := cn.callErr(sctx, "robot_stop", map[string]any{"robot": "robot:carrier"}, nil)
			cancel()
			if err != nil || res.IsError {
				t.Fatalf("robot_stop while %d navigations block: %v %v", len(robots), err, res)
			}
			if s := structured(t, res); path(s, "robot", "state") != graph.RobotStopped || path(s, "robot", "armed") != false {
				t.Fatalf("robot_stop: %v", s)
			}
			// And reads keep working too.
			cn.ok("robot_status", nil)

			re.paused.Store(false)
			wg.Wait()
			for i, r := range results {
				if r == nil {
					continue
				}
				want := graph.NavArrived
				if robots[i] == "robot:carrier" {
					want = graph.NavDisarmed
				}
				if r["status"] != want {
					t.Errorf("%s ended %v, want %s", robots[i], r["status"], want)
				}
			}
		})
	}
}
