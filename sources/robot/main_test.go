package robot

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestMain fails the package when a goroutine outlives its tests: everything a fleet
// starts (the tick loop, the notifier, saves) must have ended when Close returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Close joins every goroutine the fleet started: the wall clock's tick loop, the notifier
// and the first save of a robot added while running. Not parallel: goleak sees every
// goroutine of the process.
func TestFleet_CloseLeavesNoGoroutine(t *testing.T) {
	db := storetest.MustOpen(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the store's own are not the fleet's
	f, err := NewFleet(Options{Store: db})             // the real clock
	must(t, err)
	must(t, f.AddSim("scout", 0, 0))
	cancel := f.Subscribe(func(string, graph.RobotState) {})
	defer cancel()
	must(t, f.Open())
	must(t, f.AddSim("late", 0, 3)) // recorded from a goroutine of its own
	arm(t, f, "scout")
	c := startNav(t, context.Background(), f, "scout", graph.Goal{X: 9, Y: 0})
	must(t, f.Close())
	if res := c.wait(t); res.Status != graph.NavCancelled {
		t.Fatalf("status=%q, want cancelled at shutdown", res.Status)
	}
	must(t, f.Close()) // safe twice
}
