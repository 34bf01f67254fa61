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

const robotForms = "Name a robot by its identity (identity:<slug>) or its device ref (robot:<name>); robot_status without arguments lists them."

var robotParam = param{name: "robot", typ: "string", required: true, maxLen: 100,
	desc: "the robot: identity id or device ref", example: `"robot:scout"`}

// MaxNavigateTimeout bounds robot_navigate's timeout_s; the default (0) lets the fleet
// choose one below the 60 s most clients wait for a tool call.
const MaxNavigateTimeout = 600

func robotStateOut() mcp.ToolOutputSchema {
	return outputSchema(
		outProp{"robot", "object", "the robot's state: ref, identity_id, pose {x, y, heading}, state, battery %, armed, gripper, holding, goal, params", true},
	)
}

func (s *Server) robotTools() []*toolDef {
	simple := func(name, title, desc string, idempotent bool, fn func(ctx context.Context, robot string) (*graph.RobotState, error)) *toolDef {
		return &toolDef{
			name: name, title: title, desc: desc + " " + robotForms,
			params:   []param{robotParam, whyParam},
			out:      robotStateOut(),
			write:    true,
			readOnly: false, destructive: false, idempotent: idempotent, openWorld: true,
			handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
				st, err := fn(ctx, strings.TrimSpace(c.str("robot")))
				if err != nil {
					return nil, err
				}
				return result(map[string]any{"robot": st}, robotLine(st))
			},
		}
	}
	params := s.parametersTool()
	return []*toolDef{
		s.statusTool(),
		s.navigateTool(),
		simple("robot_stop", "Emergency-stop a robot",
			"Stop a robot at once (e-stop): it halts, any navigation ends as preempted, and it is disarmed — call robot_arm before moving it again. Always answered immediately, even while other calls are running.",
			true, s.svc.RobotStop),
		simple("robot_arm", "Arm a robot",
			"Arm a robot so it may move; robots start disarmed and robot_stop disarms them. Needed before robot_navigate.",
			true, s.svc.RobotArm),
		simple("robot_disarm", "Disarm a robot",
			"Disarm a robot: it stops and will not move until armed again. Use when a mission is done.",
			true, s.svc.RobotDisarm),
		s.detectTool(),
		s.graspTool(),
		simple("robot_release", "Release the held object",
			"Open the gripper and drop the held object where the robot stands.",
			true, s.svc.RobotRelease),
		params,
	}
}

func robotLine(st *graph.RobotState) string {
	armed := "disarmed"
	if st.Armed {
		armed = "armed"
	}
	line := fmt.Sprintf("%s (%s): %s, %s, at (%.2f, %.2f) heading %.2f rad, battery %.0f%%, gripper %s",
		st.Ref, orDash(st.IdentityID), st.State, armed, st.Pose.X, st.Pose.Y, st.Pose.Heading, st.Battery, orDash(st.Gripper))
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

func (s *Server) statusTool() *toolDef {
	return &toolDef{
		name:  "robot_status",
		title: "Robot status",
		desc: "Read one robot's state (pose x, y in metres and heading in radians, state idle|navigating|sensing|manipulating|stopped|error, " +
			"battery %, armed, gripper, held object, goal, parameters), or every robot when robot is omitted. " + robotForms,
		params: []param{{name: "robot", typ: "string", maxLen: 100, desc: "the robot; omit to list all", example: `"robot:scout"`}},
		out: outputSchema(
			outProp{"robots", "array", "robot states: ref, identity_id, pose, state, battery, armed, gripper, holding, goal, params", true},
		),
		readOnly: true, idempotent: true, openWorld: true,
		handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			var list []*graph.RobotState
			if r := strings.TrimSpace(c.str("robot")); r != "" {
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
			for _, st := range list {
				b.WriteString(robotLine(st) + "\n")
			}
			return result(map[string]any{"robots": nonNil(list)}, b.String())
		},
	}
}

func (s *Server) navigateTool() *toolDef {
	return &toolDef{
		name:  "robot_navigate",
		title: "Drive a robot to a point",
		desc: "Drive a robot to (x, y) in metres and wait until it gets there: the call returns when the robot is within its arrival " +
			"threshold (parameter arrival_threshold, default 0.15 m) or the navigation ends otherwise. status is arrived, timeout, " +
			"cancelled, blocked (an obstacle is in the way), geofence (goal outside the allowed area), low_battery, disarmed (call " +
			"robot_arm first) or preempted (a newer goal or robot_stop replaced it); the result also gives the final pose, distance " +
			"remaining, elapsed seconds and battery. timeout_s (default chosen by the robot, below 60 s; at most 600) bounds the wait; " +
			"on timeout or cancel the robot is stopped. One goal per robot: a second robot_navigate for the same robot preempts the " +
			"first. Different robots drive at once. Sends progress notifications (distance remaining) when the request has a " +
			"progressToken. " + robotForms,
		params: []param{
			robotParam,
			{name: "x", typ: "number", required: true, min: f64(-1e4), max: f64(1e4), service: true, desc: "goal x in metres", example: "2.5"},
			{name: "y", typ: "number", required: true, min: f64(-1e4), max: f64(1e4), service: true, desc: "goal y in metres", example: "-1.0"},
			{name: "timeout_s", typ: "number", min: f64(0.1), max: f64(MaxNavigateTimeout), desc: "seconds to wait before stopping the robot", example: "30"},
			whyParam,
		},
		out: outputSchema(
			outProp{"robot", "string", "the robot's ref", true},
			outProp{"status", "string", "arrived, timeout, cancelled, blocked, geofence, low_battery, disarmed or preempted", true},
			outProp{"pose", "object", "final pose {x, y, heading}", true},
			outProp{"distance_remaining", "number", "metres left to the goal", true},
			outProp{"elapsed_s", "number", "seconds driven", true},
			outProp{"battery", "number", "battery % at the end", true},
			outProp{"message", "string", "why it ended, in words", false},
		),
		write:    true,
		readOnly: false, destructive: false, idempotent: true, openWorld: true,
		handler: s.navigate,
	}
}

func (s *Server) navigate(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	goal := graph.Goal{X: c.num("x"), Y: c.num("y"), TimeoutS: c.num("timeout_s")}
	if err := graph.ValidateGoal(goal); err != nil {
		return nil, err // before the status read below
	}
	robot := strings.TrimSpace(c.str("robot"))
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
	out := structOf(res)
	out["robot"] = st.Ref
	return result(out, text)
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

func (s *Server) detectTool() *toolDef {
	return &toolDef{
		name:  "robot_detect",
		title: "Detect objects near a robot",
		desc: "List the objects the robot's sensors see within its detect_range: id, kind, position (x, y), distance and bearing " +
			"(radians relative to the robot's heading). Use the id with robot_grasp after driving within grasp_reach. " + robotForms,
		params: []param{robotParam},
		out: outputSchema(
			outProp{"robot", "string", "the robot's ref", true},
			outProp{"objects", "array", "objects: id, kind, x, y, distance, bearing", true},
		),
		readOnly: true, idempotent: true, openWorld: true,
		handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			robot := strings.TrimSpace(c.str("robot"))
			objs, err := s.svc.RobotDetect(ctx, robot)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d object(s) in range of %s:\n", len(objs), robot)
			for _, o := range objs {
				fmt.Fprintf(&b, "- %s (%s) at (%.2f, %.2f), %.2f m away\n", o.ID, o.Kind, o.X, o.Y, o.Distance)
			}
			return result(map[string]any{"robot": robot, "objects": nonNil(objs)}, b.String())
		},
	}
}

func (s *Server) graspTool() *toolDef {
	return &toolDef{
		name:  "robot_grasp",
		title: "Grasp an object",
		desc: "Close the gripper on an object within the robot's grasp_reach (get ids and distances from robot_detect; drive closer " +
			"with robot_navigate if it is out of reach). The object then moves with the robot until robot_release. " + robotForms,
		params: []param{robotParam,
			{name: "object", typ: "string", required: true, maxLen: 100, desc: "the object id from robot_detect", example: `"crate-1"`},
			whyParam},
		out:      robotStateOut(),
		write:    true,
		readOnly: false, destructive: false, idempotent: false, openWorld: true,
		handler: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			st, err := s.svc.RobotGrasp(ctx, strings.TrimSpace(c.str("robot")), strings.TrimSpace(c.str("object")))
			if err != nil {
				return nil, err
			}
			return result(map[string]any{"robot": st}, robotLine(st))
		},
	}
}

var paramFields = []struct {
	name, desc string
	min, max   float64
}{
	{"max_speed", "top speed, m/s", 0, 3},
	{"max_turn_rate", "top turn rate, rad/s", 0, 6},
	{"max_accel", "acceleration limit, m/s²", 0, 5},
	{"arrival_threshold", "how close counts as arrived, m", 0.05, 5},
	{"low_battery", "battery % below which navigation ends", 0, 50},
	{"detect_range", "sensor range, m", 0, 50},
	{"grasp_reach", "how far the gripper reaches, m", 0, 2},
}

func (s *Server) parametersTool() *toolDef {
	get := &toolDef{
		name:     "robot_parameters",
		title:    "Robot parameters",
		desc:     "Read a robot's parameters (max_speed m/s, max_turn_rate rad/s, max_accel m/s², arrival_threshold m, low_battery %, detect_range m, grasp_reach m, geofence polygon). Read-only on this server. " + robotForms,
		params:   []param{robotParam},
		out:      robotStateOut(),
		readOnly: true, idempotent: true, openWorld: true,
		handler: s.parameters,
	}
	ps := []param{robotParam}
	for _, f := range paramFields {
		ps = append(ps, param{name: f.name, typ: "number", min: f64(f.min), max: f64(f.max), desc: fmt.Sprintf("set: %s (%g-%g)", f.desc, f.min, f.max)})
	}
	ps = append(ps, param{name: "geofence", typ: "array", maxLen: 64,
		desc:    "set: the allowed area as a polygon of at least 3 \"x,y\" points in metres; [] removes it",
		example: `["-5,-5", "5,-5", "5,5", "-5,5"]`}, whyParam)
	return &toolDef{
		name:  "robot_parameters",
		title: "Read or set robot parameters",
		desc: "Read a robot's parameters, or set some of them: give only the ones to change. max_speed m/s (above 0, at most 3), " +
			"max_turn_rate rad/s (above 0, at most 6), max_accel m/s² (above 0, at most 5), arrival_threshold m (0.05-5), low_battery % (0-50), " +
			"detect_range m (above 0, at most 50), grasp_reach m (above 0, at most 2), geofence as \"x,y\" points. Values out of range are refused and nothing changes. " + robotForms,
		params:   ps,
		out:      robotStateOut(),
		write:    true,
		readOnly: false, destructive: false, idempotent: true, openWorld: true,
		handler: s.parameters,
		// In read-only mode the tool stays, reading only.
		readOnlyVariant: get,
	}
}

func (s *Server) parameters(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	robot := strings.TrimSpace(c.str("robot"))
	var u graph.RobotParamsUpdate
	set := false
	ptrs := map[string]**float64{
		"max_speed": &u.MaxSpeed, "max_turn_rate": &u.MaxTurnRate, "max_accel": &u.MaxAccel,
		"arrival_threshold": &u.ArrivalThreshold, "low_battery": &u.LowBattery,
		"detect_range": &u.DetectRange, "grasp_reach": &u.GraspReach,
	}
	for _, f := range paramFields {
		if v := c.numPtr(f.name); v != nil {
			*ptrs[f.name] = v
			set = true
		}
	}
	if c.has("geofence") {
		pts, err := parsePoints(c.list("geofence"))
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
	return result(map[string]any{"robot": st}, text)
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
