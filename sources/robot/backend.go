package robot

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

// Backend is one robot as the Fleet drives it. The built-in simulator implements it; an
// adapter for a real robot (a serial or network protocol) would too. The Fleet adds what
// every backend shares on top: naming by ref, persistence, changelog events and
// subscriptions.
//
// Methods never block on the robot moving except Navigate. Errors are *graph.Error:
// EINVALID for input the caller can fix (naming the field and the next step), ENOTFOUND
// for an unknown object, ECONFLICT for a command the robot's current state forbids.
type Backend interface {
	// Status is the robot as it is now.
	Status() graph.RobotState
	// CheckGoal validates a goal without moving: finite coordinates within range, a
	// timeout 0 ≤ t ≤ MaxTimeout, the robot armed, the goal inside the geofence.
	CheckGoal(goal graph.Goal) error
	// Navigate drives to goal and blocks until the navigation ends (see the package
	// comment for every outcome). It returns an error only for a goal CheckGoal refuses.
	Navigate(ctx context.Context, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error)
	// Stop is the emergency stop: motion halts at once, the robot is disarmed and its
	// state is "stopped" until it is armed again. A navigation ends "disarmed".
	Stop() graph.RobotState
	// Arm enables motion; arming a stopped robot returns it to idle.
	Arm() (graph.RobotState, error)
	// Disarm cuts motor power (motion halts at once, a navigation ends "disarmed").
	Disarm() graph.RobotState
	// Detect lists the free objects within detect range, nearest first.
	Detect() ([]graph.DetectedObject, error)
	// Grasp closes the gripper on an object within grasp reach; it then moves with the robot.
	Grasp(objectID string) (graph.RobotState, error)
	// Release opens the gripper, leaving the held object at the robot's position.
	Release() (graph.RobotState, error)
	// Parameters are the robot's tunable parameters.
	Parameters() graph.RobotParams
	// SetParameters validates every field of u and applies all of them or none.
	SetParameters(u graph.RobotParamsUpdate) (graph.RobotState, error)
}
