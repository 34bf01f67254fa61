package robot

import (
	"context"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// The battery is saved with the record (at rest and with events) and a new fleet on the
// same store starts the robot with it, never full again.
func TestFleet_BatteryPersists(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	bg := context.Background()
	clk := NewFakeClock(t0)
	f, err := NewFleet(Options{Now: clk.Now, Every: clk.Every, Store: db})
	must(t, err)
	must(t, f.AddSim("scout", 0, 0))
	must(t, f.Open())
	recs, err := db.FindRobotRecords(bg)
	must(t, err)
	if len(recs) != 1 || recs[0].Battery != 100 {
		t.Fatalf("first record %+v, want battery 100", recs)
	}

	arm(t, f, "scout")
	c := startNav(t, bg, f, "scout", graph.Goal{X: 8, Y: 6})
	driveUntilIdle(t, f, clk, 60*time.Second, "scout")
	if res := c.wait(t); res.Status != graph.NavArrived {
		t.Fatalf("status=%q", res.Status)
	}
	clk.Advance(3 * time.Second) // brake to rest: the record is saved
	if b := status(t, f, "scout").Battery; b >= 100 {
		t.Fatalf("battery %g after a 10 m drive, want it drained", b)
	}
	// The rest save carries the drained battery (idle drain goes on, so not to the digit).
	waitFor(t, "the drained battery in the store", func() bool {
		recs, err := db.FindRobotRecords(bg)
		return err == nil && len(recs) == 1 && recs[0].Battery < 100 && recs[0].Battery > 0
	})
	_, err = f.Disarm(bg, "scout") // an event saves the record too
	must(t, err)
	must(t, f.Close())
	recs, err = db.FindRobotRecords(bg)
	must(t, err)
	saved := recs[0].Battery
	if final := status(t, f, "scout").Battery; saved < final || saved >= 100 {
		t.Fatalf("saved battery %g; the robot ended at %g", saved, final)
	}

	// A new fleet on the same store: the robot starts with the saved battery.
	clk2 := NewFakeClock(t0)
	f2, err := NewFleet(Options{Now: clk2.Now, Every: clk2.Every, Store: db})
	must(t, err)
	must(t, f2.AddSim("scout", 0, 0))
	must(t, f2.Open())
	defer f2.Close()
	if got := status(t, f2, "scout").Battery; got != saved {
		t.Fatalf("restored battery %g, want the saved %g", got, saved)
	}
}

// A stored battery below low_battery keeps a restored robot from setting off, and the
// battery comes back even when the rest of the record is refused.
func TestFleet_RestoredLowBattery(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	bg := context.Background()
	bad := DefaultParams()
	bad.MaxSpeed = 99 // out of range: the stored parameters are ignored
	must(t, db.SaveRobot(bg, &graph.RobotRecord{Ref: "robot:scout", Serial: SimSerial("scout"), Name: "scout",
		Pose: graph.Pose{X: 1, Y: 1}, Params: bad, Battery: 9.5}, "", nil, nil))
	must(t, db.SaveRobot(bg, &graph.RobotRecord{Ref: "robot:rover", Serial: SimSerial("rover"), Name: "rover",
		Pose: graph.Pose{X: 2, Y: 0}, Params: DefaultParams(), Battery: 150}, "", nil, nil))

	f, clk := newFleet(t, Options{Store: db}, func(f *Fleet) {
		must(t, f.AddSim("scout", 0, 0))
		must(t, f.AddSim("rover", 0, 0))
	})
	st := status(t, f, "scout")
	if st.Battery != 9.5 || st.Params.MaxSpeed != DefaultParams().MaxSpeed {
		t.Fatalf("scout battery %g max_speed %g; want the stored 9.5 and the default speed", st.Battery, st.Params.MaxSpeed)
	}
	if got := status(t, f, "rover").Battery; got != 100 {
		t.Fatalf("rover battery %g from a stored 150, want it clamped to 100", got)
	}
	arm(t, f, "scout")
	c := startNav(t, bg, f, "scout", graph.Goal{X: 3, Y: 0})
	clk.Advance(tick)
	if res := c.wait(t); res.Status != graph.NavLowBattery {
		t.Fatalf("status=%q, want low_battery for a robot restored at 9.5 %%", res.Status)
	}
}
