package graph

import (
	"errors"
	"strconv"
)

// What a Step advises. A step is chosen where the error is made, from what happened (a
// retried write, a unit hint's holder, a robot's state), and says it in no interface's
// words: each edge renders it as its own tool call (MCP), field or argument (GraphQL) or
// command and flag (CLI), after the problem text, which is the same everywhere.
const (
	StepList     = "list" // list nodes of Step.Kind (StepKind*); with ID, those of that node (relations, notes, clients)
	StepShow     = "show" // look at node ID (who holds what, what was done and when)
	StepBind     = "bind" // bind device Ref to Identity, or to a new identity named Name; Arg/Value may add one argument (force)
	StepPass     = "pass" // call again passing Arg (as the service names it) = Value; Value "" means leave Arg out
	StepUpdate   = "update-relation"
	StepRemove   = "remove-relation" // remove relation ID (or, with ID "", some of node Node's relations)
	StepDelNote  = "delete-note"     // delete some of node ID's notes
	StepArm      = "arm"             // arm Robot
	StepDetect   = "detect"          // list the objects near Robot
	StepGrasp    = "grasp"           // Robot grasps Object (Object "" : one of those detected)
	StepRelease  = "release"         // Robot releases what it holds
	StepNavigate = "navigate"        // Robot navigates to X, Y
	StepStop     = "stop"            // stop Robot
	StepPage     = "page"            // ask for less and page with the cursor
	StepRetry    = "retry"           // try again in a moment
	StepServe    = "serve"           // robots live in a serving process: start one
)

// What a StepList step lists.
const (
	ListIdentities    = "identity"
	ListDevices       = "device"   // every device, unplugged too
	ListUnbound       = "unbound"  // present devices with no binding
	ListBound         = "bound"    // devices bound to an identity
	ListRobots        = "robot"    //
	ListRelations     = "relation" // of node ID
	ListRelationTypes = "relation_type"
	ListTags          = "tag"
	ListNotes         = "note"   // of node ID
	ListClients       = "client" // the clients a device (ID) connects to
	ListChangelog     = "event"  // the changelog, for node ID when given
)

// Step is one next step an error advises: what to do (Do, one of the Step* constants) and
// the values it needs. Fields a step does not use stay empty.
type Step struct {
	Do       string   `json:"do"`
	Kind     string   `json:"kind,omitempty"`     // list: what to list (List*)
	ID       string   `json:"id,omitempty"`       // the node or relation the step is about
	Ref      string   `json:"ref,omitempty"`      // bind: the device
	Identity string   `json:"identity,omitempty"` // bind: an existing identity
	Name     string   `json:"name,omitempty"`     // bind: a new identity's name
	Arg      string   `json:"arg,omitempty"`      // pass (and bind): the argument, in the service's snake_case
	Value    string   `json:"value,omitempty"`    // pass: its value as text ("true", a slug); "" leaves it out
	Robot    string   `json:"robot,omitempty"`    // robot steps: the robot's ref
	Object   string   `json:"object,omitempty"`   // grasp: the object
	X        *float64 `json:"x,omitempty"`        // navigate: the goal
	Y        *float64 `json:"y,omitempty"`
}

// Next returns e with steps added to its advice (e itself, for chaining at the return).
func (e *Error) Next(steps ...Step) *Error {
	e.Steps = append(e.Steps, steps...)
	return e
}

// ErrorSteps returns the next steps of the first *Error in err's chain, if any.
func ErrorSteps(err error) []Step {
	var e *Error
	if errors.As(err, &e) {
		return e.Steps
	}
	return nil
}

// ListStep is a StepList step of kind (on node id, for the kinds that list a node's own).
func ListStep(kind, id string) Step { return Step{Do: StepList, Kind: kind, ID: id} }

// PassStep advises calling again with arg = value.
func PassStep(arg, value string) Step { return Step{Do: StepPass, Arg: arg, Value: value} }

// XY is a goal for a StepNavigate step.
func XY(x, y float64) (*float64, *float64) { return &x, &y }

// StepValue is a step's textual value (Step.Value) as a typed argument: true and false as
// booleans, numbers as numbers, anything else as the string. Each edge writes it in its own
// syntax (JSON for MCP, a literal for GraphQL).
func StepValue(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}
