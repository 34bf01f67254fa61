package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

// Robots live in the running server (its simulator and its connections), so every robot
// verb goes through the server's socket.
func newRobotCmd(c *common) *cobra.Command {
	cmd := newGroupCmd("robot", "status|navigate|stop|arm|disarm|parameters (through a running server)",
		"want status, navigate, stop, arm, disarm or parameters",
		`  devgraph --demo robot status
  devgraph --demo robot arm scout
  devgraph --demo robot navigate scout -1.5 2
  devgraph --demo robot stop scout`)
	cmd.AddCommand(
		newRobotStatusCmd(c),
		newRobotNavigateCmd(c),
		newRobotCommandCmd(c, "stop", "stop a robot at once", "  devgraph --demo robot stop scout"),
		newRobotCommandCmd(c, "arm", "arm a robot so it may move", "  devgraph --demo robot arm scout --json"),
		newRobotCommandCmd(c, "disarm", "disarm a robot", `  devgraph --demo robot disarm scout -m "done for today"`),
		newRobotParametersCmd(c),
	)
	return cmd
}

func newRobotStatusCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [ROBOT]",
		Short: "list the robots, or one robot's state",
		Example: `  devgraph --demo robot status
  devgraph --demo robot status scout --json`,
		Args: nargs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return runRobotStatus(cmd.Context(), c, name, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print JSON")
	return cmd
}

// runRobotStatus lists the robots, or (name not "") shows one.
func runRobotStatus(ctx context.Context, o *common, name string, out io.Writer) error {
	return o.e.withService(ctx, o, openServer, func(ctx context.Context, svc graph.Service) error {
		var robots []*graph.RobotState
		var err error
		if name != "" {
			r, err := svc.Robot(ctx, name)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, r)
			}
			robots = []*graph.RobotState{r}
		} else {
			robots, err = svc.Robots(ctx)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, list[*graph.RobotState]{Items: nonNil(robots), Total: len(robots)})
			}
		}
		return printRobots(out, robots)
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

func newRobotCommandCmd(c *common, sub, short, example string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     sub + " ROBOT",
		Short:   short,
		Example: example,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRobotCommand(cmd.Context(), c, sub, args[0], c.e.stdout)
		},
	}
	addJSON(cmd, c, "print the robot's state as JSON")
	return cmd
}

// runRobotCommand sends stop, arm or disarm.
func runRobotCommand(ctx context.Context, o *common, sub, name string, out io.Writer) error {
	return o.e.withService(ctx, o, openServer, func(ctx context.Context, svc graph.Service) error {
		var r *graph.RobotState
		var err error
		switch sub {
		case "stop":
			r, err = svc.RobotStop(ctx, name)
		case "arm":
			r, err = svc.RobotArm(ctx, name)
		case "disarm":
			r, err = svc.RobotDisarm(ctx, name)
		}
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, r)
		}
		fmt.Fprintf(out, "%s: %s, armed %s, at (%.2f, %.2f)\n", r.Ref, r.State, yesNo(r.Armed), r.Pose.X, r.Pose.Y)
		return nil
	})
}

type robotNavigateOptions struct {
	*common
	timeout time.Duration
	quiet   bool
}

func newRobotNavigateCmd(c *common) *cobra.Command {
	o := &robotNavigateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "navigate ROBOT X Y",
		Short: "drive a robot to (x, y) metres and wait for the outcome",
		Long:  "drive a robot to (x, y) metres and wait for the outcome; negative coordinates are numbers, never flags",
		Example: `  devgraph --demo robot navigate scout 2 1.5
  devgraph --demo robot navigate scout -1.5 -2 --timeout 30s
  devgraph --demo robot navigate scout 0 0 --quiet --json`,
		// pflag would read -1.5 as a flag: navigate reads its own arguments.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, help, err := ownArgs(cmd, args)
			if err != nil {
				return err
			}
			if help {
				return cmd.Help()
			}
			if err := c.checkOutput(); err != nil {
				return err
			}
			if err := nargs(3, 3)(cmd, pos); err != nil {
				return err
			}
			return runRobotNavigate(cmd.Context(), o, pos, c.e.stdout)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "give up (and stop the robot) after this long (default: the server's)")
	cmd.Flags().BoolVar(&o.quiet, "quiet", false, "no progress lines")
	addJSON(cmd, c, "print the result as JSON")
	return cmd
}

func runRobotNavigate(ctx context.Context, o *robotNavigateOptions, pos []string, out io.Writer) error {
	x, err := parseCoord("x", pos[1])
	if err != nil {
		return err
	}
	y, err := parseCoord("y", pos[2])
	if err != nil {
		return err
	}
	if o.timeout < 0 {
		return graph.FieldErrorf(graph.EINVALID, "timeout", "--timeout %s is negative; give a positive duration such as 30s", o.timeout)
	}
	goal := graph.Goal{X: x, Y: y, TimeoutS: o.timeout.Seconds()}
	return o.e.withService(ctx, o.common, openServer, func(ctx context.Context, svc graph.Service) error {
		last := time.Time{}
		progress := func(p graph.NavProgress) {
			if o.quiet || time.Since(last) < 250*time.Millisecond {
				return
			}
			last = time.Now()
			fmt.Fprintf(o.e.stderr, "%s: %.2f m to go, at (%.2f, %.2f), %.1fs\n", pos[0], p.DistanceRemaining, p.Pose.X, p.Pose.Y, p.ElapsedS)
		}
		res, err := svc.RobotNavigate(ctx, pos[0], goal, progress)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, res)
		}
		msg := ""
		if res.Message != "" {
			msg = ": " + res.Message
		}
		fmt.Fprintf(out, "%s at (%.2f, %.2f), %.2f m from the goal after %.1fs, battery %.0f%%%s\n",
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

type robotParametersOptions struct {
	*common
	sets []string
}

// newRobotParametersCmd shows a robot's parameters, or sets some: `robot parameters
// scout --set max_speed=0.5 --set geofence=0,0;5,0;5,5;0,5`.
func newRobotParametersCmd(c *common) *cobra.Command {
	o := &robotParametersOptions{common: c}
	cmd := &cobra.Command{
		Use:     "parameters ROBOT",
		Aliases: []string{"params"},
		Short:   "show or change (--set NAME=VALUE) a robot's parameters",
		Example: `  devgraph --demo robot parameters scout
  devgraph --demo robot parameters scout --set max_speed=0.5 --set 'geofence=0,0;5,0;5,5;0,5'`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRobotParameters(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	cmd.Flags().StringArrayVar(&o.sets, "set", nil, "set a parameter, `NAME=VALUE`: max_speed, max_turn_rate, max_accel, arrival_threshold, low_battery, detect_range, grasp_reach (numbers) or geofence=x,y;x,y;… (repeatable)")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runRobotParameters(ctx context.Context, o *robotParametersOptions, name string, out io.Writer) error {
	u, err := parseParams(o.sets)
	if err != nil {
		return err
	}
	return o.e.withService(ctx, o.common, openServer, func(ctx context.Context, svc graph.Service) error {
		var r *graph.RobotState
		if len(o.sets) == 0 {
			r, err = svc.Robot(ctx, name)
		} else {
			r, err = svc.RobotSetParameters(ctx, name, u)
		}
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, r.Params)
		}
		p := r.Params
		t := newTable(out, "PARAMETER", "VALUE")
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
