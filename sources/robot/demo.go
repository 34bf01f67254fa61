package robot

import "github.com/devgraph/devgraph/graph"

// DemoGeofence is the demo world's fence: a 20 × 20 m square around the origin.
var DemoGeofence = []graph.Point{{X: -10, Y: -10}, {X: 10, Y: -10}, {X: 10, Y: 10}, {X: -10, Y: 10}}

// DemoFleet returns an unopened fleet with the demo world: robots scout at (0, 0) and
// carrier at (2, 0) inside DemoGeofence, two obstacles (pillar at (4, 2.5), crate at
// (-3, -4)) and three objects (red-cube at (3, -2), blue-ball at (-2, 3), green-cone at
// (6, 6)). opts.Geofence is replaced by DemoGeofence.
func DemoFleet(opts Options) (*Fleet, error) {
	opts.Geofence = DemoGeofence
	f, err := NewFleet(opts)
	if err != nil {
		return nil, err
	}
	for _, o := range []Obstacle{
		{ID: "pillar", X: 4, Y: 2.5, R: 0.5},
		{ID: "crate", X: -3, Y: -4, R: 0.7},
	} {
		if err := f.AddObstacle(o); err != nil {
			return nil, err
		}
	}
	for _, o := range []Object{
		{ID: "red-cube", Kind: "cube", X: 3, Y: -2},
		{ID: "blue-ball", Kind: "ball", X: -2, Y: 3},
		{ID: "green-cone", Kind: "cone", X: 6, Y: 6},
	} {
		if err := f.AddObject(o); err != nil {
			return nil, err
		}
	}
	if err := f.AddSim("scout", 0, 0); err != nil {
		return nil, err
	}
	if err := f.AddSim("carrier", 2, 0); err != nil {
		return nil, err
	}
	return f, nil
}
