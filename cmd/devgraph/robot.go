package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// Robots live in the running server (its simulator and its connections), so every robot
// verb goes through the server's socket.
func runRobot(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "status":
		return robotStatus(ctx, e, rest)
	case "navigate":
		return robotNavigate(ctx, e, rest)
	case "stop", "arm", "disarm":
		return robotCommand(ctx, e, sub, rest)
	case "parameters", "params":
		return robotParameters(ctx, e, rest)
	case "":
		if err := e.groupHelp("robot", rest, robotSubs); err != nil {
			return err
		}
		return usagef("robot: missing subcommand; want status, navigate, stop, arm, disarm or parameters")
	}
	return usagef("robot: unknown subcommand %q; want status, navigate, stop, arm, disarm or parameters", sub)
}

var robotSubs = []subcmd{
	{"status", "[ROBOT]", "list the robots, or one robot's state"},
	{"navigate", "ROBOT X Y", "drive a robot to (x, y) metres and wait for the outcome"},
	{"stop", "ROBOT", "stop a robot at once"},
	{"arm", "ROBOT", "arm a robot so it may move"},
	{"disarm", "ROBOT", "disarm a robot"},
	{"parameters", "ROBOT", "show or change (--set NAME=VALUE) a robot's parameters"},
}

func robotStatus(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("robot status", "[ROBOT] [--json]", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openServer, func(ctx context.Context, svc graph.Service) error {
		var robots []*graph.RobotState
		if len(pos) == 1 {
			r, err := svc.Robot(ctx, pos[0])
			if err != nil {
				return err
			}
			if *jsonOut {
				return writeJSON(e.stdout, r)
			}
			robots = []*graph.RobotState{r}
		} else {
			robots, err = svc.Robots(ctx)
			if err != nil {
				return err
			}
			if *jsonOut {
				return writeJSON(e.stdout, list[*graph.RobotState]{Items: nonNil(robots), Total: len(robots)})
			}
		}
		return printRobots(e.stdout, robots)
	})
}

func printRobots(w io.Writer, robots []*graph.RobotState) error {
	t := newTable(w, "ROBOT", "IDENTITY", "STATE", "ARMED", "X", "Y", "HEADING", "BATTERY", "GRIPPER", "GOAL")
	for _, r := range robots {
		goal := "-"
		if r.Goal != nil {
			goal = fmt.Sprintf("(%.2f, %.2f)", r.Goal.X, r.Goal.Y)
		}
		gripper := r.Gripper
		if r.Holding != "" {
			gripper += " holding " + r.Holding
		}
		t.row(r.Ref, r.IdentityID, r.State, yesNo(r.Armed), fmt.Sprintf("%.2f", r.Pose.X), fmt.Sprintf("%.2f", r.Pose.Y),
			fmt.Sprintf("%.2f", r.Pose.Heading), fmt.Sprintf("%.0f%%", r.Battery), gripper, goal)
	}
	return t.flush()
}

func robotCommand(ctx context.Context, e *env, sub string, args []string) error {
	fs, c := e.flags("robot "+sub, "ROBOT [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the robot's state as JSON")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openServer, func(ctx context.Context, svc graph.Service) error {
		var r *graph.RobotState
		switch sub {
		case "stop":
			r, err = svc.RobotStop(ctx, pos[0])
		case "arm":
			r, err = svc.RobotArm(ctx, pos[0])
		case "disarm":
			r, err = svc.RobotDisarm(ctx, pos[0])
		}
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, r)
		}
		fmt.Fprintf(e.stdout, "%s: %s, armed %s, at (%.2f, %.2f)\n", r.Ref, r.State, yesNo(r.Armed), r.Pose.X, r.Pose.Y)
		return nil
	})
}

func robotNavigate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("robot navigate", "ROBOT X Y [--timeout 30s] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	timeout := fs.Duration("timeout", 0, "give up (and stop the robot) after this long (default: the server's)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	pos, err := parse(fs, args, 3, 3)
	if err != nil {
		return err
	}
	x, err := parseCoord("x", pos[1])
	if err != nil {
		return err
	}
	y, err := parseCoord("y", pos[2])
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return graph.FieldErrorf(graph.EINVALID, "timeout", "--timeout %s is negative; give a positive duration such as 30s", *timeout)
	}
	goal := graph.Goal{X: x, Y: y, TimeoutS: timeout.Seconds()}
	return e.withService(ctx, c, openServer, func(ctx context.Context, svc graph.Service) error {
		last := time.Time{}
		progress := func(p graph.NavProgress) {
			if *quiet || time.Since(last) < 250*time.Millisecond {
				return
			}
			last = time.Now()
			fmt.Fprintf(e.stderr, "%s: %.2f m to go, at (%.2f, %.2f), %.1fs\n", pos[0], p.DistanceRemaining, p.Pose.X, p.Pose.Y, p.ElapsedS)
		}
		res, err := svc.RobotNavigate(ctx, pos[0], goal, progress)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, res)
		}
		msg := ""
		if res.Message != "" {
			msg = ": " + res.Message
		}
		fmt.Fprintf(e.stdout, "%s at (%.2f, %.2f), %.2f m from the goal after %.1fs, battery %.0f%%%s\n",
			res.Status, res.Pose.X, res.Pose.Y, res.DistanceRemaining, res.ElapsedS, res.Battery, msg)
		if res.Status != graph.NavArrived {
			return graph.Errorf(graph.EUNAVAILABLE, "%s did not arrive: %s", pos[0], res.Status)
		}
		return nil
	})
}

func parseCoord(field, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, graph.FieldErrorf(graph.EINVALID, field, "%s %q is not a number; give metres, e.g. 1.5", field, s)
	}
	if err := graph.ValidateCoordinate(field, v); err != nil {
		return 0, err
	}
	return v, nil
}

// robotParameters shows a robot's parameters, or sets some: `robot parameters scout
// --set max_speed=0.5 --set geofence=0,0;5,0;5,5;0,5`.
func robotParameters(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("robot parameters", "ROBOT [--set NAME=VALUE]… [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	var sets stringList
	fs.Var(&sets, "set", "set a parameter: max_speed, max_turn_rate, max_accel, arrival_threshold, low_battery, detect_range, grasp_reach (numbers) or geofence=x,y;x,y;… (repeatable)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	u, err := parseParams(sets)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openServer, func(ctx context.Context, svc graph.Service) error {
		var r *graph.RobotState
		if len(sets) == 0 {
			r, err = svc.Robot(ctx, pos[0])
		} else {
			r, err = svc.RobotSetParameters(ctx, pos[0], u)
		}
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, r.Params)
		}
		p := r.Params
		t := newTable(e.stdout, "PARAMETER", "VALUE")
		t.row("max_speed", fmt.Sprintf("%g m/s", p.MaxSpeed))
		t.row("max_turn_rate", fmt.Sprintf("%g rad/s", p.MaxTurnRate))
		t.row("max_accel", fmt.Sprintf("%g m/s²", p.MaxAccel))
		t.row("arrival_threshold", fmt.Sprintf("%g m", p.ArrivalThreshold))
		t.row("low_battery", fmt.Sprintf("%g %%", p.LowBattery))
		t.row("detect_range", fmt.Sprintf("%g m", p.DetectRange))
		t.row("grasp_reach", fmt.Sprintf("%g m", p.GraspReach))
		var pts []string
		for _, pt := range p.Geofence {
			pts = append(pts, fmt.Sprintf("%g,%g", pt.X, pt.Y))
		}
		t.row("geofence", joinOr(pts, "(none)"))
		return t.flush()
	})
}

func parseParams(sets []string) (graph.RobotParamsUpdate, error) {
	var u graph.RobotParamsUpdate
	for _, s := range sets {
		name, val, ok := strings.Cut(s, "=")
		if !ok {
			return u, graph.FieldErrorf(graph.EINVALID, "set", "--set %q: want NAME=VALUE, e.g. max_speed=0.5", s)
		}
		name = strings.TrimSpace(name)
		if name == "geofence" {
			var pts []graph.Point
			for _, pair := range strings.Split(val, ";") {
				if strings.TrimSpace(pair) == "" {
					continue
				}
				xs, ys, ok := strings.Cut(pair, ",")
				if !ok {
					return u, graph.FieldErrorf(graph.EINVALID, "geofence", "geofence point %q: want x,y", pair)
				}
				x, err := parseCoord("geofence", strings.TrimSpace(xs))
				if err != nil {
					return u, err
				}
				y, err := parseCoord("geofence", strings.TrimSpace(ys))
				if err != nil {
					return u, err
				}
				pts = append(pts, graph.Point{X: x, Y: y})
			}
			u.Geofence = &pts
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return u, graph.FieldErrorf(graph.EINVALID, name, "%s=%q is not a finite number", name, val)
		}
		p := &v
		switch name {
		case "max_speed":
			u.MaxSpeed = p
		case "max_turn_rate":
			u.MaxTurnRate = p
		case "max_accel":
			u.MaxAccel = p
		case "arrival_threshold":
			u.ArrivalThreshold = p
		case "low_battery":
			u.LowBattery = p
		case "detect_range":
			u.DetectRange = p
		case "grasp_reach":
			u.GraspReach = p
		default:
			return u, graph.FieldErrorf(graph.EINVALID, "set", "unknown parameter %q; known: max_speed, max_turn_rate, max_accel, arrival_threshold, low_battery, detect_range, grasp_reach, geofence", name)
		}
	}
	return u, nil
}
