package robot

import (
	"context"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const tick = 20 * time.Millisecond // 50 Hz

// newFleet opens a fleet on a fake clock; configure adds robots and the world before Open.
func newFleet(t *testing.T, opts Options, configure func(f *Fleet)) (*Fleet, *FakeClock) {
	t.Helper()
	clk := NewFakeClock(t0)
	opts.Now, opts.Every = clk.Now, clk.Every
	f, err := NewFleet(opts)
	if err != nil {
		t.Fatal(err)
	}
	if configure != nil {
		configure(f)
	}
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, clk
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func arm(t *testing.T, f *Fleet, ref string) {
	t.Helper()
	if _, err := f.Arm(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
}

func status(t *testing.T, f *Fleet, ref string) graph.RobotState {
	t.Helper()
	st, err := f.Status(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return *st
}

// navCall is a Navigate running in its own goroutine, as an MCP tool call would.
type navCall struct {
	ref  string
	goal graph.Goal
	done chan struct{}
	res  *graph.NavResult
	err  error

	mu   sync.Mutex
	prog []graph.NavProgress
}

func (c *navCall) progress() []graph.NavProgress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]graph.NavProgress(nil), c.prog...)
}

// startNav starts Navigate and returns once the robot has taken the goal (or the call
// has already returned).
func startNav(t *testing.T, ctx context.Context, f *Fleet, ref string, goal graph.Goal) *navCall {
	t.Helper()
	c := &navCall{ref: ref, goal: goal, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = f.Navigate(ctx, ref, goal, func(p graph.NavProgress) {
			c.mu.Lock()
			c.prog = append(c.prog, p)
			c.mu.Unlock()
		})
	}()
	for i := 0; ; i++ {
		select {
		case <-c.done:
			return c
		default:
		}
		st := status(t, f, ref)
		if st.Goal != nil && st.Goal.X == goal.X && st.Goal.Y == goal.Y {
			return c
		}
		if i > 200000 {
			t.Fatalf("navigation of %s to (%g, %g) never started", ref, goal.X, goal.Y)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// wait returns the call's result (the navigation must have ended in the world).
func (c *navCall) wait(t *testing.T) *graph.NavResult {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Navigate(%s) did not return after its navigation ended", c.ref)
	}
	if c.err != nil {
		t.Fatalf("Navigate(%s): %v", c.ref, c.err)
	}
	return c.res
}

// driveUntilIdle advances the fake clock one tick at a time until none of refs has a
// goal any more, or limit of simulated time has passed.
func driveUntilIdle(t *testing.T, f *Fleet, clk *FakeClock, limit time.Duration, refs ...string) {
	t.Helper()
	for el := time.Duration(0); el < limit; el += tick {
		busy := false
		for _, ref := range refs {
			if status(t, f, ref).Goal != nil {
				busy = true
			}
		}
		if !busy {
			return
		}
		clk.Advance(tick)
		runtime.Gosched() // let Navigate callers take their progress
	}
	t.Fatalf("robots %v still navigating after %v", refs, limit)
}

// sim reads a simulated robot's internals under the world lock.
func simOf(f *Fleet, name string) (v, om float64, pose graph.Pose, battery float64) {
	f.mu.RLock()
	r := f.members[name].sim
	f.mu.RUnlock()
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	return r.v, r.om, r.pose, r.battery
}

func dist(p graph.Pose, x, y float64) float64 { return math.Hypot(p.X-x, p.Y-y) }

func wantCode(t *testing.T, err error, code, field string) {
	t.Helper()
	if got := graph.ErrorCode(err); got != code {
		t.Fatalf("error code=%q (%v), want %q", got, err, code)
	}
	if field != "" && graph.ErrorField(err) != field {
		t.Fatalf("error field=%q (%v), want %q", graph.ErrorField(err), err, field)
	}
}
