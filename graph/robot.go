package graph

import (
	"context"
	"math"
)

// Robot states.
const (
	RobotIdle         = "idle"
	RobotNavigating   = "navigating"
	RobotSensing      = "sensing"
	RobotManipulating = "manipulating"
	RobotStopped      = "stopped"
	RobotError        = "error"
)

// Navigation outcomes.
const (
	NavArrived    = "arrived"
	NavTimeout    = "timeout"
	NavCancelled  = "cancelled"
	NavBlocked    = "blocked"
	NavGeofence   = "geofence"
	NavLowBattery = "low_battery"
	NavDisarmed   = "disarmed"
	NavPreempted  = "preempted"
)

// Point is a position in metres.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Pose is a position in metres and a heading in radians.
type Pose struct {
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Heading float64 `json:"heading"`
}

// RobotParams are a robot's tunable parameters.
type RobotParams struct {
	MaxSpeed         float64 `json:"max_speed"`         // m/s
	MaxTurnRate      float64 `json:"max_turn_rate"`     // rad/s
	MaxAccel         float64 `json:"max_accel"`         // m/s²
	ArrivalThreshold float64 `json:"arrival_threshold"` // m
	LowBattery       float64 `json:"low_battery"`       // % below which navigation ends
	DetectRange      float64 `json:"detect_range"`      // m
	GraspReach       float64 `json:"grasp_reach"`       // m
	Geofence         []Point `json:"geofence,omitempty"`
}

// RobotParamsUpdate sets some parameters; nil fields stay.
type RobotParamsUpdate struct {
	MaxSpeed         *float64 `json:"max_speed,omitempty"`
	MaxTurnRate      *float64 `json:"max_turn_rate,omitempty"`
	MaxAccel         *float64 `json:"max_accel,omitempty"`
	ArrivalThreshold *float64 `json:"arrival_threshold,omitempty"`
	LowBattery       *float64 `json:"low_battery,omitempty"`
	DetectRange      *float64 `json:"detect_range,omitempty"`
	GraspReach       *float64 `json:"grasp_reach,omitempty"`
	Geofence         *[]Point `json:"geofence,omitempty"`
}

// RobotState is a robot as it is now.
type RobotState struct {
	Ref        string      `json:"ref"`            // robot:<name>
	Host       string      `json:"host,omitempty"` // the machine that drives it
	DeviceID   string      `json:"device_id,omitempty"`
	IdentityID string      `json:"identity_id,omitempty"`
	Name       string      `json:"name"`
	Serial     string      `json:"serial"`
	Pose       Pose        `json:"pose"`
	State      string      `json:"state"`
	Battery    float64     `json:"battery"` // %
	Armed      bool        `json:"armed"`
	Gripper    string      `json:"gripper"`           // open, closed
	Holding    string      `json:"holding,omitempty"` // object id
	Goal       *Point      `json:"goal,omitempty"`
	Params     RobotParams `json:"params"`
}

// Goal is a navigation request.
type Goal struct {
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	TimeoutS float64 `json:"timeout_s,omitempty"` // 0: the default
}

// NavProgress is reported while a robot drives.
type NavProgress struct {
	DistanceRemaining float64 `json:"distance_remaining"`
	ElapsedS          float64 `json:"elapsed_s"`
	Pose              Pose    `json:"pose"`
}

// NavResult is how a navigation ended.
type NavResult struct {
	Status            string  `json:"status"`
	Pose              Pose    `json:"pose"`
	DistanceRemaining float64 `json:"distance_remaining"`
	ElapsedS          float64 `json:"elapsed_s"`
	Battery           float64 `json:"battery"`
	Message           string  `json:"message,omitempty"`
}

// DetectedObject is an object a robot's sensors report.
type DetectedObject struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	X        float64 `json:"x"`
	Y        float64 `json:"y"`
	Distance float64 `json:"distance"`
	Bearing  float64 `json:"bearing"` // radians, relative to heading
}

// ValidateCoordinate rejects NaN, Inf and absurd coordinates.
func ValidateCoordinate(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return FieldErrorf(EINVALID, field, "%s is not a finite number; give metres, e.g. 1.5", field)
	}
	if math.Abs(v) > 1e4 {
		return FieldErrorf(EINVALID, field, "%s=%g is out of range; coordinates are metres within ±10000", field, v)
	}
	return nil
}

// RobotService drives robots and reads their state. Robots are named by identity id,
// device id, ref ("robot:scout") or bare name; ENOTFOUND (with a suggestion) for others,
// EUNAVAILABLE when this process drives no robots. Commands to an unarmed or stopped
// robot are EINVALID saying what to do first; a bad goal or parameter is EINVALID and
// moves nothing.
type RobotService interface {
	Robots(ctx context.Context) ([]*RobotState, error)
	Robot(ctx context.Context, robot string) (*RobotState, error)
	// RobotNavigate blocks until the navigation ends (arrived, timeout, blocked, …);
	// progress (may be nil) is called as the robot drives; cancelling ctx stops it.
	RobotNavigate(ctx context.Context, robot string, goal Goal, progress func(NavProgress)) (*NavResult, error)
	// RobotStop is the emergency stop: always answered, never refused for being unarmed.
	RobotStop(ctx context.Context, robot string) (*RobotState, error)
	RobotArm(ctx context.Context, robot string) (*RobotState, error)
	RobotDisarm(ctx context.Context, robot string) (*RobotState, error)
	RobotDetect(ctx context.Context, robot string) ([]DetectedObject, error)
	RobotGrasp(ctx context.Context, robot, objectID string) (*RobotState, error)
	RobotRelease(ctx context.Context, robot string) (*RobotState, error)
	RobotSetParameters(ctx context.Context, robot string, u RobotParamsUpdate) (*RobotState, error)
}

// RobotStore keeps what the robot fleet saves between runs. It is plumbing for the fleet
// only: edges and the socket reach robots through RobotService.
type RobotStore interface {
	// FindRobotRecords returns every saved robot record (none: empty); on a fleet store,
	// only this host's, their refs without the host (as this host's sources name them).
	FindRobotRecords(ctx context.Context) ([]*RobotRecord, error)
	// SaveRobot persists a robot's record and, when action is not "", records one event
	// with that action (robot.*) targeting the robot's device.
	SaveRobot(ctx context.Context, rec *RobotRecord, action string, before, after any) error
}

// Fleet drives robots. Robots are named by ref (robot:<name>); ENOTFOUND for others.
// Navigate blocks until the goal is reached or the navigation otherwise ends; progress
// (may be nil) is called as the robot drives. A bad goal is EINVALID and moves nothing.
type Fleet interface {
	Robots(ctx context.Context) ([]*RobotState, error)
	Status(ctx context.Context, ref string) (*RobotState, error)
	Navigate(ctx context.Context, ref string, goal Goal, progress func(NavProgress)) (*NavResult, error)
	Stop(ctx context.Context, ref string) (*RobotState, error)
	Arm(ctx context.Context, ref string) (*RobotState, error)
	Disarm(ctx context.Context, ref string) (*RobotState, error)
	Detect(ctx context.Context, ref string) ([]DetectedObject, error)
	Grasp(ctx context.Context, ref, objectID string) (*RobotState, error)
	Release(ctx context.Context, ref string) (*RobotState, error)
	SetParameters(ctx context.Context, ref string, u RobotParamsUpdate) (*RobotState, error)
}

// RobotRecord is what the store keeps of a robot between runs.
type RobotRecord struct {
	Ref    string      `json:"ref"`
	Host   string      `json:"host,omitempty"` // the machine that drives it (the store fills it in)
	Serial string      `json:"serial"`
	Name   string      `json:"name"`
	Pose   Pose        `json:"pose"`
	Params RobotParams `json:"params"`
	// Battery is the charge (%) when the record was saved; a restored robot starts with it.
	// Records saved before it was kept read as 100 (every run then started full).
	Battery float64 `json:"battery"`
}
