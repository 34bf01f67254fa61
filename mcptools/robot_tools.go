package mcptools

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type robotIn struct {
	Robot string `json:"robot" mcp:"required,max=100"`
}

type robotWriteIn struct {
	robotIn
	whyIn
}

// robotView is a robot's state with its numbers rounded to 2 places.
type robotView struct {
	Ref      string             `json:"ref"`
	Identity string             `json:"identity,omitempty"`
	Name     string             `json:"name"`
	Pose     graph.Pose         `json:"pose" jsonschema:"x, y in metres, heading in radians"`
	State    string             `json:"state" jsonschema:"idle, navigating, sensing, manipulating, stopped or error"`
	Battery  float64            `json:"battery" jsonschema:"%"`
	Armed    bool               `json:"armed"`
	Gripper  string             `json:"gripper" jsonschema:"open or closed"`
	Holding  string             `json:"holding,omitempty" jsonschema:"the held object"`
	Goal     *graph.Point       `json:"goal,omitempty"`
	Params   *graph.RobotParams `json:"params,omitempty" jsonschema:"robot_parameters only"`
}

func roundPose(p graph.Pose) graph.Pose {
	return graph.Pose{X: round2(p.X), Y: round2(p.Y), Heading: round2(p.Heading)}
}

func viewRobot(st *graph.RobotState, params bool) robotView {
	v := robotView{Ref: st.Ref, Identity: st.IdentityID, Name: st.Name, Pose: roundPose(st.Pose), State: st.State,
		Battery: round2(st.Battery), Armed: st.Armed, Gripper: st.Gripper, Holding: st.Holding}
	if st.Goal != nil {
		v.Goal = &graph.Point{X: round2(st.Goal.X), Y: round2(st.Goal.Y)}
	}
	if params {
		p := st.Params
		v.Params = &p
	}
	return v
}

type robotOut struct {
	Robot robotView `json:"robot"`
}

func (s *Server) robotTools() []*toolDef {
	simple := func(name, title, desc string, idempotent bool, fn func(ctx context.Context, robot string) (*graph.RobotState, error)) *toolDef {
		return typed(s, &toolDef{
			name: name, title: title, desc: desc,
			out:   typedSchema[robotOut](nil),
			set:   toolsetRobots,
			write: true, readOnly: false, destructive: false, idempotent: idempotent, openWorld: true,
		}, func(ctx context.Context, c *call, in robotWriteIn) (*mcp.CallToolResult, error) {
			st, err := fn(ctx, strings.TrimSpace(in.Robot))
			if err != nil {
				return nil, err
			}
			return result(robotOut{Robot: viewRobot(st, false)}, robotLine(st))
		})
	}
	stop := simple("robot_stop", "Emergency-stop a robot",
		"Stop a robot at once (e-stop): it halts, a navigation under way ends \"disarmed\", and the robot is disarmed. Answered at once, even while other calls run, and offered on a read-only server too: stopping "+
			"is always allowed.",
		true, s.svc.RobotStop)
	stop.readOnlyVariant = stop
	release := simple("robot_release", "Release the held object",
		"Open the gripper and drop the held object where the robot stands.", true, s.svc.RobotRelease)
	release.destructive = true
	return []*toolDef{
		s.statusTool(),
		s.navigateTool(),
		stop,
		simple("robot_arm", "Arm a robot",
			"Arm a robot so it may move; robots start disarmed and robot_stop disarms them. Needed before robot_navigate.",
			true, s.svc.RobotArm),
		simple("robot_disarm", "Disarm a robot",
			"Disarm a robot: it stops and will not move until armed again.",
			true, s.svc.RobotDisarm),
		s.detectTool(),
		s.graspTool(),
		release,
		s.parametersTool(),
	}
}

func robotLine(st *graph.RobotState) string {
	armed := "disarmed"
	if st.Armed {
		armed = "armed"
	}
	who := st.Ref
	if st.IdentityID != "" {
		who += " (" + st.IdentityID + ")"
	}
	line := fmt.Sprintf("%s: %s, %s, at (%.2f, %.2f) heading %.2f rad, battery %.0f%%, gripper %s",
		who, st.State, armed, st.Pose.X, st.Pose.Y, st.Pose.Heading, st.Battery, orDash(st.Gripper))
	if st.Holding != "" {
		line += ", holding " + st.Holding
	}
	if st.Goal != nil {
		line += fmt.Sprintf(", goal (%.2f, %.2f)", st.Goal.X, st.Goal.Y)
	}
	return line
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type statusIn struct {
	Robot string `json:"robot" jsonschema:"omit to list every robot" mcp:"max=100"`
}

type statusOut struct {
	Robots []robotView `json:"robots"`
}

func (s *Server) statusTool() *toolDef {
	return typed(s, &toolDef{
		name:  "robot_status",
		title: "Robot status",
		desc:  "Read a robot's state (pose, state, battery %, armed, gripper, held object, goal), or every robot's when robot is omitted.",
		out:   typedSchema[statusOut](nil),
		set:   toolsetRobots, readOnly: true, idempotent: true, openWorld: true,
	}, func(ctx context.Context, c *call, in statusIn) (*mcp.CallToolResult, error) {
		var list []*graph.RobotState
		if r := strings.TrimSpace(in.Robot); r != "" {
			st, err := s.svc.Robot(ctx, r)
			if err != nil {
				return nil, err
			}
			list = []*graph.RobotState{st}
		} else {
			all, err := s.svc.Robots(ctx)
			if err != nil {
				return nil, err
			}
			list = all
		}
		var b strings.Builder
		if len(list) == 0 {
			b.WriteString("No robots are connected.\n")
		}
		out := statusOut{Robots: []robotView{}}
		for _, st := range list {
			out.Robots = append(out.Robots, viewRobot(st, false))
			b.WriteString(robotLine(st) + "\n")
		}
		return result(out, b.String())
	})
}

type navigateIn struct {
	Robot    string  `json:"robot" mcp:"required,max=100"`
	X        float64 `json:"x" jsonschema:"metres" mcp:"required,min=-10000,max=10000,svc"`
	Y        float64 `json:"y" jsonschema:"metres" mcp:"required,min=-10000,max=10000,svc"`
	TimeoutS float64 `json:"timeout_s" jsonschema:"seconds before it stops (default 30)" mcp:"xmin=0,max=600,svc"`
	whyIn
}

type navigateOut struct {
	Robot             string     `json:"robot" jsonschema:"its ref"`
	Status            string     `json:"status"`
	Pose              graph.Pose `json:"pose" jsonschema:"where it ended"`
	DistanceRemaining float64    `json:"distance_remaining" jsonschema:"metres"`
	ElapsedS          float64    `json:"elapsed_s"`
	Battery           float64    `json:"battery"`
	Message           string     `json:"message,omitempty" jsonschema:"why it ended"`
}

var navStatuses = []string{graph.NavArrived, graph.NavTimeout, graph.NavCancelled, graph.NavBlocked, graph.NavGeofence,
	graph.NavLowBattery, graph.NavDisarmed, graph.NavPreempted}

func (s *Server) navigateTool() *toolDef {
	return typed(s, &toolDef{
		name:  "robot_navigate",
		title: "Drive a robot to a point",
		desc: "Drive an armed robot to (x, y) and wait for the outcome: arrived, timeout, cancelled, blocked, geofence, low_battery, " +
			"disarmed (robot_stop, robot_disarm) or preempted (a newer goal), with the final pose and distance left. On timeout or " +
			"cancel the robot stops. Reports progress given a progressToken.",
		out:   typedSchema[navigateOut](map[string][]string{"properties.status": navStatuses}),
		set:   toolsetRobots,
		write: true, readOnly: false, destructive: true, idempotent: true, openWorld: true,
	}, s.navigate)
}

func (s *Server) navigate(ctx context.Context, c *call, in navigateIn) (*mcp.CallToolResult, error) {
	goal := graph.Goal{X: in.X, Y: in.Y, TimeoutS: in.TimeoutS}
	if err := graph.ValidateGoal(goal); err != nil {
		return nil, err // before the status read below
	}
	robot := strings.TrimSpace(in.Robot)
	st, err := s.svc.Robot(ctx, robot)
	if err != nil {
		return nil, err
	}
	progress := s.progressReporter(ctx, c)
	res, err := s.svc.RobotNavigate(ctx, robot, goal, progress)
	if ctx.Err() != nil {
		// The client cancelled (notifications/cancelled) or went away: the robot must
		// not keep driving towards a goal nobody waits for.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		if cur, serr := s.svc.Robot(stopCtx, robot); serr == nil && cur.State == graph.RobotNavigating {
			if _, serr := s.svc.RobotStop(stopCtx, robot); serr != nil {
				s.log.Warn("stop after cancelled navigation failed", "robot", robot, "err", serr)
			}
		}
		cancel()
	}
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("%s: %s at (%.2f, %.2f), %.2f m from the goal after %.1f s, battery %.0f%%.",
		st.Ref, res.Status, res.Pose.X, res.Pose.Y, res.DistanceRemaining, res.ElapsedS, res.Battery)
	if res.Message != "" {
		text += " " + res.Message
	}
	switch res.Status {
	case graph.NavDisarmed:
		text += " Call robot_arm, then navigate again."
	case graph.NavGeofence:
		text += " Pick a goal inside the geofence (see robot_parameters)."
	case graph.NavBlocked:
		text += " Try a goal around the obstacle."
	}
	return result(navigateOut{Robot: st.Ref, Status: res.Status, Pose: roundPose(res.Pose), DistanceRemaining: round2(res.DistanceRemaining),
		ElapsedS: round2(res.ElapsedS), Battery: round2(res.Battery), Message: res.Message}, text)
}

// progressReporter returns the progress callback for a navigation: when the request
// carries a progressToken it sends notifications/progress (progress = metres covered
// towards the goal, total = the distance at the start, never decreasing), at most
// five a second.
func (s *Server) progressReporter(ctx context.Context, c *call) func(graph.NavProgress) {
	var token mcp.ProgressToken
	if c.req.Params.Meta != nil {
		token = c.req.Params.Meta.ProgressToken
	}
	if token == nil {
		return nil
	}
	var (
		mu    sync.Mutex
		total = -1.0
		best  float64
		last  time.Time
	)
	return func(p graph.NavProgress) {
		mu.Lock()
		defer mu.Unlock()
		if total < 0 {
			total = p.DistanceRemaining
		}
		done := total - p.DistanceRemaining
		if done < best {
			done = best
		}
		now := time.Now()
		if now.Sub(last) < 200*time.Millisecond && p.DistanceRemaining > 0 {
			best = done
			return
		}
		last, best = now, done
		if math.IsNaN(done) || math.IsInf(done, 0) {
			return
		}
		err := s.mcp.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token,
			"progress":      done,
			"total":         total,
			"message":       fmt.Sprintf("%.2f m to go after %.1f s", p.DistanceRemaining, p.ElapsedS),
		})
		if err != nil {
			s.log.Debug("progress notification not sent", "err", err)
		}
	}
}

type detectOut struct {
	Robot   string                 `json:"robot"`
	Objects []graph.DetectedObject `json:"objects" jsonschema:"bearing in radians from the robot's heading"`
}

func (s *Server) detectTool() *toolDef {
	return typed(s, &toolDef{
		name:  "robot_detect",
		title: "Detect objects near a robot",
		desc: "List the objects the robot's sensors see within its detect_range: id, kind, position, distance and bearing. " +
			"Grasp one with robot_grasp once within grasp_reach.",
		out: typedSchema[detectOut](nil),
		set: toolsetRobots, readOnly: true, idempotent: true, openWorld: true,
	}, func(ctx context.Context, c *call, in robotIn) (*mcp.CallToolResult, error) {
		st, err := s.svc.Robot(ctx, strings.TrimSpace(in.Robot))
		if err != nil {
			return nil, err
		}
		robot := st.Ref // however the model named it, the result names it by its ref
		objs, err := s.svc.RobotDetect(ctx, robot)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d object(s) in range of %s:\n", len(objs), robot)
		for i, o := range objs {
			objs[i].X, objs[i].Y, objs[i].Distance, objs[i].Bearing = round2(o.X), round2(o.Y), round2(o.Distance), round2(o.Bearing)
			fmt.Fprintf(&b, "- %s (%s) at (%.2f, %.2f), %.2f m away\n", o.ID, o.Kind, o.X, o.Y, o.Distance)
		}
		return result(detectOut{Robot: robot, Objects: nonNil(objs)}, b.String())
	})
}

type graspIn struct {
	Robot  string `json:"robot" mcp:"required,max=100"`
	Object string `json:"object" jsonschema:"an id from robot_detect" mcp:"required,max=100"`
	whyIn
}

func (s *Server) graspTool() *toolDef {
	return typed(s, &toolDef{
		name:  "robot_grasp",
		title: "Grasp an object",
		desc: "Close the gripper on an object within the robot's grasp_reach (robot_detect gives ids and distances; drive closer " +
			"with robot_navigate). The object moves with the robot until robot_release.",
		out:   typedSchema[robotOut](nil),
		set:   toolsetRobots,
		write: true, readOnly: false, destructive: true, idempotent: false, openWorld: true,
	}, func(ctx context.Context, c *call, in graspIn) (*mcp.CallToolResult, error) {
		st, err := s.svc.RobotGrasp(ctx, strings.TrimSpace(in.Robot), strings.TrimSpace(in.Object))
		if err != nil {
			return nil, err
		}
		return result(robotOut{Robot: viewRobot(st, false)}, robotLine(st))
	})
}

// paramsIn sets robot parameters; the bounds are the fleet's (sources/robot).
type paramsIn struct {
	Robot            string   `json:"robot" mcp:"required,max=100"`
	MaxSpeed         *float64 `json:"max_speed" mcp:"xmin=0,max=3,svc"`
	MaxTurnRate      *float64 `json:"max_turn_rate" mcp:"xmin=0,max=6,svc"`
	MaxAccel         *float64 `json:"max_accel" mcp:"xmin=0,max=5,svc"`
	ArrivalThreshold *float64 `json:"arrival_threshold" mcp:"min=0.05,max=0.3,svc"`
	LowBattery       *float64 `json:"low_battery" mcp:"min=0,max=50,svc"`
	DetectRange      *float64 `json:"detect_range" mcp:"xmin=0,max=50,svc"`
	GraspReach       *float64 `json:"grasp_reach" mcp:"xmin=0,max=2,svc"`
	Geofence         []string `json:"geofence" jsonschema:"the allowed area: at least 3 \"x,y\" points in metres; [] removes it" mcp:"max=256,svc"`
	whyIn
}

func (s *Server) parametersTool() *toolDef {
	get := typed(s, &toolDef{
		name:  "robot_parameters",
		title: "Robot parameters",
		desc:  "Read a robot's parameters: max_speed, max_turn_rate, max_accel, arrival_threshold, low_battery, detect_range, grasp_reach, geofence. Read-only on this server.",
		out:   typedSchema[robotOut](nil),
		set:   toolsetRobots, readOnly: true, idempotent: true, openWorld: true,
	}, func(ctx context.Context, c *call, in robotIn) (*mcp.CallToolResult, error) {
		return s.parameters(ctx, c, paramsIn{Robot: in.Robot})
	})
	set := typed(s, &toolDef{
		name:  "robot_parameters",
		title: "Read or set robot parameters",
		desc:  "Read a robot's parameters, or set the ones given (the others stay); units are m, s, rad and % (low_battery ends a navigation). A value out of range is refused and nothing changes.",
		out:   typedSchema[robotOut](nil),
		set:   toolsetRobots,
		write: true, readOnly: false, destructive: true, idempotent: true, openWorld: true, // a set replaces values
	}, s.parameters)
	set.readOnlyVariant = get // in read-only mode the tool stays, reading only
	return set
}

func (s *Server) parameters(ctx context.Context, c *call, in paramsIn) (*mcp.CallToolResult, error) {
	robot := strings.TrimSpace(in.Robot)
	u := graph.RobotParamsUpdate{MaxSpeed: in.MaxSpeed, MaxTurnRate: in.MaxTurnRate, MaxAccel: in.MaxAccel,
		ArrivalThreshold: in.ArrivalThreshold, LowBattery: in.LowBattery, DetectRange: in.DetectRange, GraspReach: in.GraspReach}
	set := u != (graph.RobotParamsUpdate{})
	if c.has("geofence") {
		pts, err := parsePoints(in.Geofence)
		if err != nil {
			return nil, err
		}
		u.Geofence = &pts
		set = true
	}
	var st *graph.RobotState
	var err error
	if set {
		st, err = s.svc.RobotSetParameters(ctx, robot, u)
	} else {
		st, err = s.svc.Robot(ctx, robot)
	}
	if err != nil {
		return nil, err
	}
	p := st.Params
	text := fmt.Sprintf("%s parameters: max_speed %g m/s, max_turn_rate %g rad/s, max_accel %g m/s², arrival_threshold %g m, low_battery %g%%, detect_range %g m, grasp_reach %g m, geofence %d point(s).",
		st.Ref, p.MaxSpeed, p.MaxTurnRate, p.MaxAccel, p.ArrivalThreshold, p.LowBattery, p.DetectRange, p.GraspReach, len(p.Geofence))
	if set {
		text = "Updated. " + text
	}
	return result(robotOut{Robot: viewRobot(st, true)}, text)
}

func parsePoints(list []string) ([]graph.Point, error) {
	pts := make([]graph.Point, 0, len(list))
	for i, s := range list {
		var p graph.Point
		if _, err := fmt.Sscanf(strings.ReplaceAll(s, " ", ""), "%g,%g", &p.X, &p.Y); err != nil {
			return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence point %d %q: want \"x,y\" in metres, e.g. \"-5,5\"", i, s)
		}
		if err := graph.ValidateCoordinate("geofence", p.X); err != nil {
			return nil, err
		}
		if err := graph.ValidateCoordinate("geofence", p.Y); err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	if len(pts) > 0 && len(pts) < 3 {
		return nil, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence needs at least 3 points (or [] to remove it); got %d", len(pts))
	}
	return pts, nil
}
