package graph

import (
	"encoding/json"
	"time"
)

// Event is one changelog entry: one node changed.
type Event struct {
	Seq       uint64          `json:"seq"`
	ID        string          `json:"id"`   // uuidv7
	Time      time.Time       `json:"time"` // UTC, ns
	Actor     string          `json:"actor"`
	Action    string          `json:"action"` // <kind>.<verb>
	Target    string          `json:"target"` // node id
	Before    json.RawMessage `json:"before,omitempty"`
	After     json.RawMessage `json:"after,omitempty"`
	Message   string          `json:"message,omitempty"`
	RequestID string          `json:"request_id"`
	PrevHash  string          `json:"prev_hash"` // hex
	Hash      string          `json:"hash"`      // hex
}

// Changelog actions.
const (
	ActIdentityCreate  = "identity.create"
	ActIdentityRename  = "identity.rename"
	ActIdentityUpdate  = "identity.update"
	ActIdentityDelete  = "identity.delete"
	ActIdentityMerge   = "identity.merge"
	ActIdentityRestore = "identity.restore"
	ActHintAdd         = "hint.add"
	ActHintRemove      = "hint.remove"
	ActHintMove        = "hint.move"
	ActTagAdd          = "tag.add"
	ActTagRemove       = "tag.remove"
	ActNoteAdd         = "note.add"
	ActNoteDelete      = "note.delete"
	ActDeviceBind      = "device.bind"
	ActDeviceUnbind    = "device.unbind"
	ActDeviceAppear    = "device.appear"
	ActDeviceDisappear = "device.disappear"
	ActRobotArm        = "robot.arm"
	ActRobotDisarm     = "robot.disarm"
	ActRobotStop       = "robot.stop"
	ActRobotNavStart   = "robot.navigate.start"
	ActRobotNavEnd     = "robot.navigate.end"
	ActRobotParameters = "robot.parameters"
)

// EventFilter selects changelog events, newest first.
type EventFilter struct {
	Since  time.Time `json:"since,omitempty"`
	Until  time.Time `json:"until,omitempty"`
	Target string    `json:"target,omitempty"`
	Actor  string    `json:"actor,omitempty"`  // glob, e.g. mcp:*
	Action string    `json:"action,omitempty"` // glob, e.g. hint.*
	First  int       `json:"first,omitempty"`
	After  string    `json:"after,omitempty"` // cursor: continue below this point
}

// VerifyReport is the outcome of checking the changelog's hash chain.
type VerifyReport struct {
	OK         bool   `json:"ok"`
	Checked    uint64 `json:"checked"`
	FirstSeq   uint64 `json:"first_seq"` // first event checked (after a prune, the checkpoint's successor)
	HeadSeq    uint64 `json:"head_seq"`
	HeadHash   string `json:"head_hash"`
	BrokenSeq  uint64 `json:"broken_seq,omitempty"` // first broken event
	BrokenID   string `json:"broken_id,omitempty"`
	Problem    string `json:"problem,omitempty"` // what is wrong, in words
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Page limits shared by every listing.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// ClampFirst returns n bounded to [1, MaxPageSize], DefaultPageSize when n ≤ 0.
func ClampFirst(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	if n > MaxPageSize {
		return MaxPageSize
	}
	return n
}
