package robot

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// nav is one navigation in flight.
type nav struct {
	goal     graph.Point
	start    time.Time
	deadline time.Time
	done     chan struct{} // closed when res is final
	res      graph.NavResult
	prog     graph.NavProgress // latest progress, under world.mu
	progCh   chan struct{}     // buffered 1: progress is waiting
	lastProg time.Time
}

// simRobot is one simulated differential-drive robot. Every field is guarded by world.mu.
type simRobot struct {
	w                 *world
	name, ref, serial string
	pose              graph.Pose
	v, om             float64 // linear (m/s) and angular (rad/s) velocity
	battery           float64
	armed             bool
	state             string
	holding           string
	params            graph.RobotParams
	nav               *nav
	lastNotify        time.Time
	member            *member // set once before the robot joins the world
}

var _ Backend = (*simRobot)(nil)

func (r *simRobot) pos() graph.Point { return graph.Point{X: r.pose.X, Y: r.pose.Y} }

func (r *simRobot) stateLocked() graph.RobotState {
	st := graph.RobotState{
		Ref:      r.ref,
		DeviceID: graph.DeviceID(deviceKey(r.serial)),
		Name:     r.name,
		Serial:   r.serial,
		Pose:     r.pose,
		State:    r.state,
		Battery:  r.battery,
		Armed:    r.armed,
		Gripper:  "open",
		Holding:  r.holding,
		Params:   r.params, // the geofence slice is never mutated in place
	}
	if r.holding != "" {
		st.Gripper = "closed"
	}
	if r.nav != nil {
		g := r.nav.goal
		st.Goal = &g
	}
	return st
}

// step advances the robot by dt seconds. world.mu is held.
func (r *simRobot) step(dt float64) {
	w := r.w
	if r.nav == nil && r.v == 0 && r.om == 0 {
		r.battery = math.Max(0, r.battery-drainIdlePerS*dt)
		return
	}
	p := r.params
	alpha := turnAccelFactor * p.MaxTurnRate
	var vDes, wDes float64
	if n := r.nav; n != nil {
		dx, dy := n.goal.X-r.pose.X, n.goal.Y-r.pose.Y
		dist := math.Hypot(dx, dy)
		switch {
		case dist <= p.ArrivalThreshold:
			r.finish(graph.NavArrived, "")
		case !w.now.Before(n.deadline):
			r.finish(graph.NavTimeout, fmt.Sprintf("not there after %g s; the robot was brought to rest %.2f m from the goal; give a longer timeout_s or a nearer goal", n.deadline.Sub(n.start).Seconds(), dist))
		case r.battery < p.LowBattery:
			r.finish(graph.NavLowBattery, fmt.Sprintf("battery %.1f%% fell below low_battery %.0f%%; the robot stopped", r.battery, p.LowBattery))
		default:
			if o := w.pathBlocked(r.pos(), n.goal); o != nil {
				r.finish(graph.NavBlocked, blockedMsg(o))
				break
			}
			e := wrapAngle(math.Atan2(dy, dx) - r.pose.Heading)
			wDes = math.Copysign(math.Min(p.MaxTurnRate, math.Min(4*math.Abs(e), math.Sqrt(2*alpha*math.Abs(e)))), e)
			vDes = math.Min(p.MaxSpeed, math.Sqrt(2*p.MaxAccel*dist)) * math.Max(0, math.Cos(e))
		}
	}
	// Acceleration, speed and turn-rate limits.
	r.v += clamp(vDes-r.v, -p.MaxAccel*dt, p.MaxAccel*dt)
	r.v = clamp(r.v, -p.MaxSpeed, p.MaxSpeed)
	r.om += clamp(wDes-r.om, -alpha*dt, alpha*dt)
	r.om = clamp(r.om, -p.MaxTurnRate, p.MaxTurnRate)

	th := r.pose.Heading + r.om*dt/2
	next := graph.Point{X: r.pose.X + r.v*math.Cos(th)*dt, Y: r.pose.Y + r.v*math.Sin(th)*dt}
	if p.Geofence != nil && !pointInPolygon(next, p.Geofence) {
		r.halt()
		if r.nav != nil {
			r.finish(graph.NavGeofence, fmt.Sprintf("the robot reached the edge of its geofence at (%.2f, %.2f) and stopped; the straight way to the goal leaves the fence, so send it to a waypoint first", r.pose.X, r.pose.Y))
		}
		return
	}
	if o := w.collides(r.pos(), next); o != nil {
		r.halt()
		if r.nav != nil {
			r.finish(graph.NavBlocked, blockedMsg(o))
		}
		return
	}
	r.pose = graph.Pose{X: next.X, Y: next.Y, Heading: wrapAngle(r.pose.Heading + r.om*dt)}
	r.battery = math.Max(0, r.battery-(drainIdlePerS+drainPerMetre*math.Abs(r.v)+drainPerRadian*math.Abs(r.om))*dt)
	if r.holding != "" {
		if o := w.object(r.holding); o != nil {
			o.X, o.Y = r.pose.X, r.pose.Y
		}
	}
	if n := r.nav; n != nil && w.now.Sub(n.lastProg) >= ProgressEvery {
		n.lastProg = w.now
		n.prog = graph.NavProgress{
			DistanceRemaining: math.Hypot(n.goal.X-r.pose.X, n.goal.Y-r.pose.Y),
			ElapsedS:          w.now.Sub(n.start).Seconds(),
			Pose:              r.pose,
		}
		select {
		case n.progCh <- struct{}{}:
		default:
		}
	}
	if r.v == 0 && r.om == 0 && r.nav == nil {
		w.notify(r, true)
	} else if w.now.Sub(r.lastNotify) >= NotifyEvery {
		r.lastNotify = w.now
		w.notify(r, false)
	}
}

func blockedMsg(o *Obstacle) string {
	return fmt.Sprintf("obstacle %s at (%g, %g), radius %g m, lies on the straight way to the goal; the simulator does not plan around obstacles, so send the robot to a waypoint beside it first", o.ID, o.X, o.Y, o.R)
}

// halt stops motion at once (e-stop, disarm, a safety stop at a fence or obstacle).
func (r *simRobot) halt() {
	wasMoving := r.v != 0 || r.om != 0
	r.v, r.om = 0, 0
	if wasMoving && r.nav == nil {
		r.w.notify(r, true)
	}
}

// finish ends the current navigation with status. The robot keeps whatever velocity it
// has and brakes to rest at its acceleration limit over the next ticks (halt first for a
// hard stop). world.mu is held.
func (r *simRobot) finish(status, msg string) {
	n := r.nav
	if n == nil {
		return
	}
	r.nav = nil
	if r.state == graph.RobotNavigating {
		r.state = graph.RobotIdle
	}
	n.res = graph.NavResult{
		Status:            status,
		Pose:              r.pose,
		DistanceRemaining: math.Hypot(n.goal.X-r.pose.X, n.goal.Y-r.pose.Y),
		ElapsedS:          r.w.now.Sub(n.start).Seconds(),
		Battery:           r.battery,
		Message:           msg,
	}
	close(n.done)
	r.w.notify(r, false)
}

func (r *simRobot) Status() graph.RobotState {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	return r.stateLocked()
}

func (r *simRobot) CheckGoal(goal graph.Goal) error {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	_, err := r.checkGoalLocked(goal)
	return err
}

func (r *simRobot) checkGoalLocked(goal graph.Goal) (time.Duration, error) {
	if err := graph.ValidateCoordinate("x", goal.X); err != nil {
		return 0, err
	}
	if err := graph.ValidateCoordinate("y", goal.Y); err != nil {
		return 0, err
	}
	t := goal.TimeoutS
	switch {
	case math.IsNaN(t) || math.IsInf(t, 0):
		return 0, graph.FieldErrorf(graph.EINVALID, "timeout_s", "timeout_s is not a finite number; give seconds, 0 < timeout_s ≤ %.0f (omit it for %.0f)", MaxTimeout.Seconds(), DefaultTimeout.Seconds())
	case t < 0 || t > MaxTimeout.Seconds():
		return 0, graph.FieldErrorf(graph.EINVALID, "timeout_s", "timeout_s=%g is out of range; give seconds, 0 < timeout_s ≤ %.0f (omit it for %.0f; most MCP clients give up after 60)", t, MaxTimeout.Seconds(), DefaultTimeout.Seconds())
	}
	if !r.armed {
		return 0, graph.FieldErrorf(graph.EINVALID, "robot", "%s is not armed (state %s); arm it first, then navigate", r.ref, r.state).Next(graph.Step{Do: graph.StepArm, Robot: r.ref})
	}
	g := graph.Point{X: goal.X, Y: goal.Y}
	if f := r.params.Geofence; f != nil && !pointInPolygon(g, f) {
		return 0, graph.FieldErrorf(graph.EINVALID, "x", "goal (%g, %g) is outside %s's geofence %s; choose a goal inside it", goal.X, goal.Y, r.ref, describeFence(f))
	}
	d := DefaultTimeout
	if t > 0 {
		d = time.Duration(t * float64(time.Second))
	}
	return d, nil
}

func (r *simRobot) Navigate(ctx context.Context, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	w := r.w
	w.mu.Lock()
	timeout, err := r.checkGoalLocked(goal)
	if err == nil && w.closed {
		err = graph.Errorf(graph.EUNAVAILABLE, "the robot fleet has shut down; restart devgraph serve")
	}
	if err != nil {
		w.mu.Unlock()
		return nil, err
	}
	if r.nav != nil {
		r.finish(graph.NavPreempted, fmt.Sprintf("a new goal (%g, %g) replaced this one", goal.X, goal.Y))
	}
	n := &nav{
		goal:     graph.Point{X: goal.X, Y: goal.Y},
		start:    w.now,
		deadline: w.now.Add(timeout),
		done:     make(chan struct{}),
		progCh:   make(chan struct{}, 1),
		lastProg: w.now,
	}
	r.nav = n
	r.state = graph.RobotNavigating
	dist := math.Hypot(n.goal.X-r.pose.X, n.goal.Y-r.pose.Y)
	switch {
	case dist <= r.params.ArrivalThreshold:
		r.finish(graph.NavArrived, "already within the arrival threshold")
	case r.battery < r.params.LowBattery:
		r.finish(graph.NavLowBattery, fmt.Sprintf("battery %.1f%% is below low_battery %.0f%%; the robot will not set off", r.battery, r.params.LowBattery))
	default:
		if o := w.pathBlocked(r.pos(), n.goal); o != nil {
			r.finish(graph.NavBlocked, blockedMsg(o))
		} else {
			w.notify(r, false)
		}
	}
	w.mu.Unlock()

	for {
		select {
		case <-n.done:
			return &n.res, nil
		case <-n.progCh:
			w.mu.Lock()
			pr := n.prog
			w.mu.Unlock()
			if progress != nil {
				progress(pr)
			}
		case <-ctx.Done():
			w.mu.Lock()
			if r.nav == n {
				r.finish(graph.NavCancelled, "the caller cancelled; the robot was brought to rest")
			}
			w.mu.Unlock()
			<-n.done
			return &n.res, nil
		}
	}
}

func (r *simRobot) Stop() graph.RobotState {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.armed = false
	r.halt()
	r.finish(graph.NavDisarmed, "emergency stop; arm the robot again before the next goal")
	r.state = graph.RobotStopped
	r.w.notify(r, false)
	return r.stateLocked()
}

func (r *simRobot) Arm() (graph.RobotState, error) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if !r.armed {
		r.armed = true
		if r.state == graph.RobotStopped {
			r.state = graph.RobotIdle
		}
		r.w.notify(r, false)
	}
	return r.stateLocked(), nil
}

func (r *simRobot) Disarm() graph.RobotState {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if r.armed || r.nav != nil {
		r.armed = false
		r.halt()
		r.finish(graph.NavDisarmed, "the robot was disarmed; arm it again before the next goal")
		r.w.notify(r, false)
	}
	return r.stateLocked()
}

func (r *simRobot) Detect() ([]graph.DetectedObject, error) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	var out []graph.DetectedObject
	for _, o := range r.w.objects {
		if o.HeldBy != "" {
			continue
		}
		dx, dy := o.X-r.pose.X, o.Y-r.pose.Y
		d := math.Hypot(dx, dy)
		if d > r.params.DetectRange {
			continue
		}
		out = append(out, graph.DetectedObject{
			ID: o.ID, Kind: o.Kind, X: o.X, Y: o.Y, Distance: d,
			Bearing: wrapAngle(math.Atan2(dy, dx) - r.pose.Heading),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Distance < out[j].Distance })
	return out, nil
}

func (r *simRobot) Grasp(objectID string) (graph.RobotState, error) {
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !r.armed {
		return graph.RobotState{}, graph.FieldErrorf(graph.EINVALID, "robot", "%s is not armed (state %s); arm it first, then grasp", r.ref, r.state).Next(graph.Step{Do: graph.StepArm, Robot: r.ref})
	}
	if r.nav != nil {
		return graph.RobotState{}, graph.Errorf(graph.ECONFLICT, "%s is navigating; wait for it to arrive or stop it before grasping", r.ref).Next(graph.Step{Do: graph.StepStop, Robot: r.ref})
	}
	if r.holding != "" && r.holding == objectID {
		// A retried grasp: it is done; the robot's state says so.
		return graph.RobotState{}, graph.Errorf(graph.ECONFLICT, "%s holds %s already; nothing to grasp", r.ref, r.holding).Next(graph.ListStep(graph.ListRobots, ""))
	}
	if r.holding != "" {
		return graph.RobotState{}, graph.Errorf(graph.ECONFLICT, "%s already holds %s; release it first", r.ref, r.holding).Next(graph.Step{Do: graph.StepRelease, Robot: r.ref})
	}
	o := w.object(objectID)
	if o == nil {
		ids := make([]string, len(w.objects))
		for i, x := range w.objects {
			ids[i] = x.ID
		}
		return graph.RobotState{}, &graph.Error{Code: graph.ENOTFOUND, Field: "object", Message: fmt.Sprintf("no object %q%s; detect lists the objects near the robot", objectID, graph.DidYouMean(objectID, ids)), Steps: []graph.Step{{Do: graph.StepDetect, Robot: r.ref}}}
	}
	if o.HeldBy != "" {
		return graph.RobotState{}, graph.Errorf(graph.ECONFLICT, "object %s is held by %s; it must release it first", o.ID, o.HeldBy).Next(graph.Step{Do: graph.StepRelease, Robot: o.HeldBy})
	}
	if d := math.Hypot(o.X-r.pose.X, o.Y-r.pose.Y); d > r.params.GraspReach {
		return graph.RobotState{}, graph.FieldErrorf(graph.EINVALID, "object", "object %s is %.2f m away, beyond grasp_reach %.2f m; navigate to (%g, %g) first", o.ID, d, r.params.GraspReach, o.X, o.Y).Next(navTo(r.ref, o.X, o.Y))
	}
	o.HeldBy = r.ref
	o.X, o.Y = r.pose.X, r.pose.Y
	r.holding = o.ID
	w.notify(r, false)
	return r.stateLocked(), nil
}

func (r *simRobot) Release() (graph.RobotState, error) {
	w := r.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if !r.armed {
		return graph.RobotState{}, graph.FieldErrorf(graph.EINVALID, "robot", "%s is not armed (state %s); arm it first, then release", r.ref, r.state).Next(graph.Step{Do: graph.StepArm, Robot: r.ref})
	}
	if r.holding == "" {
		return graph.RobotState{}, graph.Errorf(graph.ECONFLICT, "%s holds nothing; grasp an object first", r.ref).Next(
			graph.Step{Do: graph.StepDetect, Robot: r.ref}, graph.Step{Do: graph.StepGrasp, Robot: r.ref})
	}
	if o := w.object(r.holding); o != nil {
		o.HeldBy = ""
		o.X, o.Y = r.pose.X, r.pose.Y
	}
	r.holding = ""
	w.notify(r, false)
	return r.stateLocked(), nil
}

func (r *simRobot) Parameters() graph.RobotParams {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	return r.params
}

func (r *simRobot) SetParameters(u graph.RobotParamsUpdate) (graph.RobotState, error) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	var goal *graph.Point
	if r.nav != nil {
		goal = &r.nav.goal
	}
	p, err := applyParams(r.params, u, r.pos(), goal)
	if err != nil {
		// Steps made without the robot at hand (stop it) name it here.
		var ge *graph.Error
		if errors.As(err, &ge) {
			for i := range ge.Steps {
				if ge.Steps[i].Robot == "" {
					ge.Steps[i].Robot = r.ref
				}
			}
		}
		return graph.RobotState{}, err
	}
	r.params = p
	r.w.notify(r, false)
	return r.stateLocked(), nil
}

// restore puts a persisted battery, pose and parameters back. The battery always comes
// back (clamped to 0..100, so a robot never starts above what it had); a pose or
// parameters that fail validation are ignored (the defaults stay) and reported.
func (r *simRobot) restore(rec *graph.RobotRecord) error {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.battery = math.Min(100, math.Max(0, rec.Battery))
	if math.IsNaN(rec.Battery) {
		r.battery = 0
	}
	for _, v := range []float64{rec.Pose.X, rec.Pose.Y, rec.Pose.Heading} {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e4 {
			return fmt.Errorf("stored pose %+v is not finite", rec.Pose)
		}
	}
	r.pose = rec.Pose
	r.pose.Heading = wrapAngle(r.pose.Heading)
	rec.Params = storedParams(rec.Params)
	if err := validParams(rec.Params); err != nil {
		return fmt.Errorf("stored parameters: %w", err)
	}
	if rec.Params.Geofence != nil && !pointInPolygon(r.pos(), rec.Params.Geofence) {
		return fmt.Errorf("stored geofence does not contain the stored pose")
	}
	r.params = rec.Params
	return nil
}

// navTo is the step of driving robot to (x, y).
func navTo(robot string, x, y float64) graph.Step {
	s := graph.Step{Do: graph.StepNavigate, Robot: robot}
	s.X, s.Y = graph.XY(x, y)
	return s
}
