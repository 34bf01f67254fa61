package graph

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
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
	ActNoteMove        = "note.move" // a merge moves the merged-away identity's notes to the survivor
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
	ActRelationAdd     = "relation.add"    // target the relation; after the relation
	ActRelationUpdate  = "relation.update" // attrs or ports changed, or a merge moved an end
	ActRelationRemove  = "relation.remove" // before the relation
	ActChangelogPrune  = "changelog.prune" // target ChangelogTarget; after a Prune
)

// ChangelogTarget is the target of the changelog's own events (a prune).
const ChangelogTarget = "changelog"

// Prune is what a changelog.prune event records in its after: the events dropped and the
// checkpoint the retained chain links to.
type Prune struct {
	FirstSeq   uint64    `json:"first_seq"`  // the first event dropped
	LastSeq    uint64    `json:"last_seq"`   // the last event dropped: the checkpoint
	Checkpoint string    `json:"checkpoint"` // event LastSeq's hash (hex): the head at the cut
	Dropped    int       `json:"dropped"`
	Before     time.Time `json:"before"` // events older than this were dropped
}

// PruneReport is the last prune as VerifyChangelog finds it: its Prune and who made it.
type PruneReport struct {
	Prune
	EventSeq uint64    `json:"event_seq"` // the changelog.prune event
	Actor    string    `json:"actor"`
	Time     time.Time `json:"time"`
}

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
	Problem    string `json:"problem,omitempty"`    // what is wrong, in words
	Checkpoint string `json:"checkpoint,omitempty"` // "<seq>:<hash>" the retained chain links to, after a prune
	// PrunedBy is the last prune, when its changelog.prune event is kept (nil when the
	// chain was never pruned, or only by a devgraph that wrote no such event).
	PrunedBy *PruneReport `json:"pruned_by,omitempty"`
}

// CanonicalEvent returns the bytes the hash chain covers for e (everything but PrevHash and
// Hash). The encoding is fixed and must never change, or every stored chain breaks (the
// golden test in changelog_test.go pins it):
//
//	"devgraph.event.v1"            17 bytes, a domain separator
//	seq                             8 bytes, big-endian
//	time                            8 bytes, big-endian two's-complement Unix nanoseconds (UTC)
//	id, actor, action, target,
//	before, after, message,
//	request_id                      each as a 4-byte big-endian length followed by the bytes
//	                                (before/after: the JSON exactly as stored; absent = length 0)
//
// and the chain is hash = SHA-256(prev_hash ‖ CanonicalEvent(e)) (see ChainHash), prev_hash
// being the previous event's 32 raw hash bytes (32 zero bytes before the first event).
func CanonicalEvent(e *Event) []byte {
	n := 17 + 16 + 8*4 + len(e.ID) + len(e.Actor) + len(e.Action) + len(e.Target) +
		len(e.Before) + len(e.After) + len(e.Message) + len(e.RequestID)
	b := make([]byte, 0, n)
	b = append(b, "devgraph.event.v1"...)
	b = binary.BigEndian.AppendUint64(b, e.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time.UnixNano()))
	for _, f := range [][]byte{[]byte(e.ID), []byte(e.Actor), []byte(e.Action), []byte(e.Target),
		e.Before, e.After, []byte(e.Message), []byte(e.RequestID)} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b
}

// ChainHash returns e's hash in the chain: SHA-256(prev ‖ CanonicalEvent(e)), prev being
// the previous event's raw hash (zero before the first event). e's own PrevHash and Hash
// are not read.
func ChainHash(prev [32]byte, e *Event) [32]byte {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(CanonicalEvent(e))
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// ChangelogService reads and maintains the audit changelog.
type ChangelogService interface {
	// FindEvents returns changelog events newest first and the cursor of the next page
	// ("" on the last). No match is an empty page; a malformed glob or cursor is EINVALID.
	FindEvents(ctx context.Context, f EventFilter) (evs []*Event, next string, err error)
	// VerifyChangelog checks the hash chain and names the first broken event.
	VerifyChangelog(ctx context.Context) (*VerifyReport, error)
	// PruneChangelog drops events older than before, keeping a checkpoint so the rest
	// stays verifiable, and records the cut as a changelog.prune event (target
	// ChangelogTarget, after a Prune) in the same transaction. Returns how many were
	// dropped (0 writes nothing). EFORBIDDEN without WithPrunePermission on ctx; a zero
	// or future before is EINVALID.
	PruneChangelog(ctx context.Context, before time.Time) (int, error)
}
