package robot

import (
	"fmt"
	"math"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// Limits and defaults of the simulator and of every navigation.
const (
	DefaultTickRate = 50               // Hz
	MinTickRate     = 50               // Hz
	MaxTickRate     = 1000             // Hz
	DefaultTimeout  = 30 * time.Second // well below the 60 s most MCP clients wait
	MaxTimeout      = 10 * time.Minute
	RobotRadius     = 0.2 // m; obstacles are inflated by it
	MaxGeofence     = 256 // points
	ProgressEvery   = 200 * time.Millisecond
	NotifyEvery     = 100 * time.Millisecond // motion updates to subscribers: ≤ 10 Hz per robot

	// Battery drain, in percent.
	drainIdlePerS   = 0.002
	drainPerMetre   = 0.1
	drainPerRadian  = 0.02
	turnAccelFactor = 4.0 // angular acceleration limit = factor × max turn rate, per second
)

// The arrival threshold: a navigation has arrived within it of the goal. 0.3 m is the
// bound robot MCP servers commonly promise, so it is the largest a caller may set.
const (
	DefaultArrival = 0.15 // m
	MaxArrival     = 0.3  // m
)

// DefaultParams are a new robot's parameters (no geofence).
func DefaultParams() graph.RobotParams {
	return graph.RobotParams{
		MaxSpeed:         1.0,
		MaxTurnRate:      2.0,
		MaxAccel:         1.0,
		ArrivalThreshold: DefaultArrival,
		LowBattery:       15,
		DetectRange:      5,
		GraspReach:       0.6,
	}
}

// paramRange is one parameter's valid range: lo < v (or lo ≤ v when loIncl) and v ≤ hi.
type paramRange struct {
	field  string
	lo, hi float64
	loIncl bool
	unit   string
}

var (
	rangeMaxSpeed    = paramRange{"max_speed", 0, 3, false, "m/s"}
	rangeMaxTurnRate = paramRange{"max_turn_rate", 0, 6, false, "rad/s"}
	rangeMaxAccel    = paramRange{"max_accel", 0, 5, false, "m/s²"}
	rangeArrival     = paramRange{"arrival_threshold", 0.05, MaxArrival, true, "m"}
	rangeLowBattery  = paramRange{"low_battery", 0, 50, true, "%"}
	rangeDetect      = paramRange{"detect_range", 0, 50, false, "m"}
	rangeReach       = paramRange{"grasp_reach", 0, 2, false, "m"}
)

func (r paramRange) check(v float64) error {
	op := "<"
	if r.loIncl {
		op = "≤"
	}
	want := fmt.Sprintf("want %g %s %s ≤ %g (%s)", r.lo, op, r.field, r.hi, r.unit)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return graph.FieldErrorf(graph.EINVALID, r.field, "%s is not a finite number; %s", r.field, want)
	}
	if v > r.hi || v < r.lo || (v == r.lo && !r.loIncl) {
		return graph.FieldErrorf(graph.EINVALID, r.field, "%s=%g is out of range; %s", r.field, v, want)
	}
	return nil
}

// applyParams validates u against cur and returns the parameters afterwards. pos is the
// robot's position and goal its current goal (nil when idle): a geofence must contain both.
// Nothing is applied on error.
func applyParams(cur graph.RobotParams, u graph.RobotParamsUpdate, pos graph.Point, goal *graph.Point) (graph.RobotParams, error) {
	p := cur
	set := func(dst *float64, v *float64, r paramRange) error {
		if v == nil {
			return nil
		}
		if err := r.check(*v); err != nil {
			return err
		}
		*dst = *v
		return nil
	}
	for _, e := range []error{
		set(&p.MaxSpeed, u.MaxSpeed, rangeMaxSpeed),
		set(&p.MaxTurnRate, u.MaxTurnRate, rangeMaxTurnRate),
		set(&p.MaxAccel, u.MaxAccel, rangeMaxAccel),
		set(&p.ArrivalThreshold, u.ArrivalThreshold, rangeArrival),
		set(&p.LowBattery, u.LowBattery, rangeLowBattery),
		set(&p.DetectRange, u.DetectRange, rangeDetect),
		set(&p.GraspReach, u.GraspReach, rangeReach),
	} {
		if e != nil {
			return cur, e
		}
	}
	if u.Geofence != nil {
		fence, err := checkGeofence(*u.Geofence)
		if err != nil {
			return cur, err
		}
		if !pointInPolygon(pos, fence) {
			return cur, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence %s does not contain the robot at (%.2f, %.2f); the robot must stand inside its fence", describeFence(fence), pos.X, pos.Y)
		}
		if goal != nil && !pointInPolygon(*goal, fence) {
			return cur, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence %s does not contain the current goal (%.2f, %.2f); stop the robot or wait for it to arrive first", describeFence(fence), goal.X, goal.Y).Next(graph.Step{Do: graph.StepStop})
		}
		p.Geofence = fence
	}
	return p, nil
}

// storedParams adapts parameters stored by an older devgraph to today's ranges: an
// arrival threshold above MaxArrival (older versions took up to 5 m) becomes MaxArrival,
// so the robot keeps its parameters instead of refusing to load.
func storedParams(p graph.RobotParams) graph.RobotParams {
	if p.ArrivalThreshold > MaxArrival {
		p.ArrivalThreshold = MaxArrival
	}
	return p
}

// validParams checks a whole parameter set (as loaded from the store).
func validParams(p graph.RobotParams) error {
	for _, c := range []struct {
		v float64
		r paramRange
	}{
		{p.MaxSpeed, rangeMaxSpeed}, {p.MaxTurnRate, rangeMaxTurnRate}, {p.MaxAccel, rangeMaxAccel},
		{p.ArrivalThreshold, rangeArrival}, {p.LowBattery, rangeLowBattery},
		{p.DetectRange, rangeDetect}, {p.GraspReach, rangeReach},
	} {
		if err := c.r.check(c.v); err != nil {
			return err
		}
	}
	if p.Geofence != nil {
		if _, err := checkGeofence(p.Geofence); err != nil {
			return err
		}
	}
	return nil
}

// checkGeofence validates a simple polygon of 3..MaxGeofence finite points with non-zero
// area and returns a private copy (fences are never mutated in place).
func checkGeofence(pts []graph.Point) ([]graph.Point, error) {
	if len(pts) < 3 {
		return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence has %d points; want a simple polygon of at least 3 points, e.g. [{x:-10,y:-10},{x:10,y:-10},{x:10,y:10},{x:-10,y:10}]", len(pts))
	}
	if len(pts) > MaxGeofence {
		return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence has %d points; at most %d", len(pts), MaxGeofence)
	}
	out := make([]graph.Point, len(pts))
	for i, p := range pts {
		if err := graph.ValidateCoordinate(fmt.Sprintf("geofence[%d].x", i), p.X); err != nil {
			return nil, withField(err, "geofence")
		}
		if err := graph.ValidateCoordinate(fmt.Sprintf("geofence[%d].y", i), p.Y); err != nil {
			return nil, withField(err, "geofence")
		}
		out[i] = p
	}
	if math.Abs(polygonArea(out)) < 1e-9 {
		return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence encloses no area (its points are collinear or repeated); give the corners of the allowed region in order")
	}
	n := len(out)
	for i := 0; i < n; i++ {
		a1, a2 := out[i], out[(i+1)%n]
		for j := i + 1; j < n; j++ {
			if j == i+1 || (i == 0 && j == n-1) {
				continue // neighbours share a corner
			}
			if segmentsIntersect(a1, a2, out[j], out[(j+1)%n]) {
				return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence edges %d and %d cross; give a simple polygon with its corners in order around the region", i, j)
			}
		}
	}
	return out, nil
}

func withField(err error, field string) error {
	if e, ok := err.(*graph.Error); ok {
		return &graph.Error{Code: e.Code, Field: field, Message: "geofence: " + e.Message}
	}
	return err
}

func describeFence(f []graph.Point) string {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range f {
		minX, maxX = math.Min(minX, p.X), math.Max(maxX, p.X)
		minY, maxY = math.Min(minY, p.Y), math.Max(maxY, p.Y)
	}
	return fmt.Sprintf("(a polygon of %d points spanning x %g..%g, y %g..%g)", len(f), minX, maxX, minY, maxY)
}

func paramsEqual(a, b graph.RobotParams) bool {
	if a.MaxSpeed != b.MaxSpeed || a.MaxTurnRate != b.MaxTurnRate || a.MaxAccel != b.MaxAccel ||
		a.ArrivalThreshold != b.ArrivalThreshold || a.LowBattery != b.LowBattery ||
		a.DetectRange != b.DetectRange || a.GraspReach != b.GraspReach || len(a.Geofence) != len(b.Geofence) {
		return false
	}
	for i := range a.Geofence {
		if a.Geofence[i] != b.Geofence[i] {
			return false
		}
	}
	return true
}

// fullUpdate is the update that sets every parameter to p.
func fullUpdate(p graph.RobotParams) graph.RobotParamsUpdate {
	u := graph.RobotParamsUpdate{
		MaxSpeed: &p.MaxSpeed, MaxTurnRate: &p.MaxTurnRate, MaxAccel: &p.MaxAccel,
		ArrivalThreshold: &p.ArrivalThreshold, LowBattery: &p.LowBattery,
		DetectRange: &p.DetectRange, GraspReach: &p.GraspReach,
	}
	if p.Geofence != nil {
		u.Geofence = &p.Geofence
	}
	return u
}

// Geometry.

func pointInPolygon(p graph.Point, poly []graph.Point) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.Y > p.Y) != (b.Y > p.Y) && p.X < (b.X-a.X)*(p.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

func polygonArea(poly []graph.Point) float64 {
	s := 0.0
	for i := range poly {
		a, b := poly[i], poly[(i+1)%len(poly)]
		s += a.X*b.Y - b.X*a.Y
	}
	return s / 2
}

func cross(o, a, b graph.Point) float64 { return (a.X-o.X)*(b.Y-o.Y) - (a.Y-o.Y)*(b.X-o.X) }

func onSegment(a, b, p graph.Point) bool {
	return math.Min(a.X, b.X) <= p.X && p.X <= math.Max(a.X, b.X) && math.Min(a.Y, b.Y) <= p.Y && p.Y <= math.Max(a.Y, b.Y)
}

func segmentsIntersect(p1, p2, q1, q2 graph.Point) bool {
	d1, d2 := cross(q1, q2, p1), cross(q1, q2, p2)
	d3, d4 := cross(p1, p2, q1), cross(p1, p2, q2)
	if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) {
		return true
	}
	return (d1 == 0 && onSegment(q1, q2, p1)) || (d2 == 0 && onSegment(q1, q2, p2)) ||
		(d3 == 0 && onSegment(p1, p2, q1)) || (d4 == 0 && onSegment(p1, p2, q2))
}

// segmentPointDist is the distance from c to the segment a–b.
func segmentPointDist(a, b, c graph.Point) float64 {
	dx, dy := b.X-a.X, b.Y-a.Y
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = math.Max(0, math.Min(1, ((c.X-a.X)*dx+(c.Y-a.Y)*dy)/l2))
	}
	return math.Hypot(a.X+t*dx-c.X, a.Y+t*dy-c.Y)
}

func wrapAngle(a float64) float64 {
	a = math.Mod(a+math.Pi, 2*math.Pi)
	if a < 0 {
		a += 2 * math.Pi
	}
	return a - math.Pi
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
