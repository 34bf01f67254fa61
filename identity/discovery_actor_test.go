package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store/storetest"
)

// The demo rig's first observation records each device's appear under
// discovery:<that device's source>, not one joined actor for the whole poll.
func TestService_DiscoveryActorPerDevice(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	live, err := sources.NewDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live.ShareWindow = -1
	clk := robot.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fleet, err := robot.DemoFleet(robot.Options{Store: db, Now: clk.Now, Every: clk.Every})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	live.Extra = append(live.Extra, fleet)
	svc := identity.New(db, live, fleet)
	ctx := graph.WithActor(context.Background(), "cli:tester")
	if _, _, _, err := svc.Devices(ctx, graph.DeviceFilter{}); err != nil {
		t.Fatal(err)
	}
	evs := events(t, ctx, svc)
	sourcesSeen := map[string]int{}
	for _, e := range evs {
		if e.Action != graph.ActDeviceAppear {
			continue
		}
		d, err := db.FindDeviceByID(ctx, e.Target)
		if err != nil {
			t.Fatal(err)
		}
		if want := "discovery:" + d.Source; e.Actor != want {
			t.Errorf("%s (source %s, sources %v) appeared as %q, want %q", e.Target, d.Source, d.Sources, e.Actor, want)
		}
		sourcesSeen[d.Source]++
	}
	for _, src := range []string{"usb", "alsa", "robot"} {
		if sourcesSeen[src] == 0 {
			t.Errorf("no device.appear from source %s in the first observation (saw %v)", src, sourcesSeen)
		}
	}
}
