package mcptools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestSchema_BoundsMatchService holds every bound an input schema shows to the limit
// behind it. A bound marked svc is the service's (the same on every interface), so it
// must equal that limit; any other is a check of this package's own (ids, cursors,
// filters the service takes unbounded) and is listed here with its reason. A bound in
// neither list fails, so a new one cannot drift.
func TestSchema_BoundsMatchService(t *testing.T) {
	t.Parallel()
	slugMax := 0
	for n := 1; n < 100 && graph.ValidateSlug(strings.Repeat("a", n)) == nil; n++ {
		slugMax = n
	}
	// The service's limits, by argument name (max, then min where it has one).
	service := map[string][2]float64{
		"why":       {graph.MaxMsgLen},
		"new_name":  {graph.MaxNameLen},
		"name":      {graph.MaxNameLen},
		"slug":      {float64(slugMax)},
		"body":      {graph.MaxNoteLen},
		"add":       {graph.MaxTagsPerCall},
		"remove":    {graph.MaxTagsPerCall},
		"hints":     {graph.MaxHintsPerCall},
		"from_port": {graph.MaxPort},
		"to_port":   {graph.MaxPort},
		"port":      {graph.MaxPort},
		"type":      {graph.MaxRelationType},
		"max_depth": {graph.MaxPathDepth, 1},
		"x":         {1e4, -1e4},
		"y":         {1e4, -1e4},
		"geofence":  {robot.MaxGeofence},
		"timeout_s": {robot.MaxTimeout.Seconds(), 0}, // the fleet takes 0 < timeout_s ≤ 600
	}
	// This package's own checks: what they bound and why the service has none.
	own := map[string]float64{
		"limit":          DefaultMaxPage, // the server's page cap (Options.MaxPage)
		"cursor":         512,            // cursors this package hands out are short
		"text":           200,            // graph_find's text (graph_suggest_tags: 64)
		"namespace":      32,             // a tag namespace is at most 32 bytes
		"tags":           16,             // graph_find's tag filter
		"types":          16,             // graph_trace's type filter
		"kind":           0,
		"depth":          3,        // graph_browse's walk
		"query":          64 << 10, // the GraphQL executor's document cap is checked there too
		"operation_name": 200,
		"since":          64, "until": 64, "actor": 100, "action": 64,
		// ids and refs: resolved by the service, which takes any length
		"ref": 300, "identity": 100, "target": 300, "id": 300, "from": 300, "to": 300, "into": 100,
		"note_id": 100, "robot": 100, "object": 100,
	}
	if slugMax != 64 {
		t.Fatalf("slug limit %d", slugMax)
	}
	// The robot parameters: the fleet accepts each bound and refuses just past it.
	fleet := robotFleetForBounds(t)
	for _, td := range allToolDefs() {
		for _, p := range td.params {
			var bound, low float64
			has := false
			if p.maxLen > 0 {
				bound, has = float64(p.maxLen), true
			}
			if p.max != nil {
				bound, has = *p.max, true
			}
			if p.min != nil {
				low = *p.min
			}
			if !has {
				continue
			}
			where := fmt.Sprintf("%s.%s", td.name, p.name)
			if fp, ok := robotParamField(p.name); ok {
				if !p.service {
					t.Errorf("%s: the fleet checks it; mark it svc", where)
				}
				checkRobotBound(t, fleet, where, fp, bound, low, p.exclusiveMin)
				continue
			}
			if p.service {
				lim, ok := service[p.name]
				if !ok {
					t.Errorf("%s: bound %g marked svc, but no service limit is listed for it", where, bound)
					continue
				}
				if bound != lim[0] || p.min != nil && low != lim[1] {
					t.Errorf("%s: schema says %g..%g, the service's limit is %g..%g", where, low, bound, lim[1], lim[0])
				}
				continue
			}
			lim, ok := own[p.name]
			if !ok {
				t.Errorf("%s: bound %g is neither the service's nor listed as ours", where, bound)
				continue
			}
			if _, svc := service[p.name]; svc {
				t.Errorf("%s: the service has a limit for it; mark it svc", where)
			}
			if p.name != "text" && p.name != "id" && p.name != "identity" && bound != lim {
				t.Errorf("%s: bound %g, listed %g", where, bound, lim)
			}
		}
	}
}

func robotParamField(name string) (func(*graph.RobotParamsUpdate, float64), bool) {
	set := map[string]func(*graph.RobotParamsUpdate, float64){
		"max_speed":         func(u *graph.RobotParamsUpdate, v float64) { u.MaxSpeed = &v },
		"max_turn_rate":     func(u *graph.RobotParamsUpdate, v float64) { u.MaxTurnRate = &v },
		"max_accel":         func(u *graph.RobotParamsUpdate, v float64) { u.MaxAccel = &v },
		"arrival_threshold": func(u *graph.RobotParamsUpdate, v float64) { u.ArrivalThreshold = &v },
		"low_battery":       func(u *graph.RobotParamsUpdate, v float64) { u.LowBattery = &v },
		"detect_range":      func(u *graph.RobotParamsUpdate, v float64) { u.DetectRange = &v },
		"grasp_reach":       func(u *graph.RobotParamsUpdate, v float64) { u.GraspReach = &v },
	}
	fn, ok := set[name]
	return fn, ok
}

func robotFleetForBounds(t *testing.T) *robot.Fleet {
	t.Helper()
	db := storetest.MustOpen(t, store.Options{NoSync: true})
	clock := robot.NewFakeClock(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	fleet, err := robot.NewFleet(robot.Options{Now: clock.Now, Every: clock.Every, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.AddSim("probe", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	return fleet
}

// checkRobotBound: the fleet takes max and min (or refuses min when it is exclusive) and
// refuses values just outside.
func checkRobotBound(t *testing.T, fleet *robot.Fleet, where string, set func(*graph.RobotParamsUpdate, float64), max, min float64, exclusive bool) {
	t.Helper()
	try := func(v float64) error {
		var u graph.RobotParamsUpdate
		set(&u, v)
		_, err := fleet.SetParameters(context.Background(), "robot:probe", u)
		return err
	}
	if err := try(max); err != nil {
		t.Errorf("%s: the fleet refuses the schema's maximum %g: %v", where, max, err)
	}
	if err := try(max + 0.001); err == nil {
		t.Errorf("%s: the fleet takes %g, past the schema's maximum", where, max+0.001)
	}
	if err := try(min); (err == nil) == exclusive {
		t.Errorf("%s: at the schema's minimum %g (exclusive %v) the fleet says %v", where, min, exclusive, err)
	}
	if err := try(min - 0.001); err == nil {
		t.Errorf("%s: the fleet takes %g, below the schema's minimum", where, min-0.001)
	}
	// Put back a value every later check can move from.
	_ = try(min + (max-min)/2)
}

// TestNavigate_TimeoutDefault holds robot_navigate's timeout_s description to the
// fleet's default: a model that omits it must know how long the call may take.
func TestNavigate_TimeoutDefault(t *testing.T) {
	t.Parallel()
	want := fmt.Sprintf("default %.0f", robot.DefaultTimeout.Seconds())
	for _, td := range allToolDefs() {
		for _, p := range td.params {
			if td.name == "robot_navigate" && p.name == "timeout_s" {
				if !strings.Contains(p.desc, want) {
					t.Fatalf("timeout_s description %q does not say %q", p.desc, want)
				}
				return
			}
		}
	}
	t.Fatal("robot_navigate has no timeout_s")
}
