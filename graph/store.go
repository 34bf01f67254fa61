package graph

import (
	"context"
	"io"
	"time"
)

// Store is the persistent graph. Every method is one transaction; every write records its
// changelog events (one per node changed, sharing the context's request id and actor) in
// that same transaction, or writes nothing. Ids may be given in full ("identity:jdxi") or,
// where unambiguous, without their kind prefix ("jdxi"); devices also by ref.
//
// Errors: ENOTFOUND for a missing id (its message suggests the closest existing one),
// EINVALID for malformed input (naming the field), ECONFLICT for a change that collides
// with existing state, ELOCKED when the file is held elsewhere.
type Store interface {
	// ResolveID expands a typed id, bare slug or device ref into a full node id, checking
	// that the node exists. kinds limits what it may resolve to (none: any).
	ResolveID(ctx context.Context, text string, kinds ...Kind) (string, error)

	FindIdentityByID(ctx context.Context, id string, with IdentityParts) (*Identity, error)
	// FindIdentities returns a page of identities sorted by id, the total matching count,
	// and the cursor of the next page ("" on the last).
	FindIdentities(ctx context.Context, f IdentityFilter) (ids []*Identity, total int, next string, err error)
	CreateIdentity(ctx context.Context, c IdentityCreate) (*Identity, error) // ECONFLICT on a taken slug
	RenameIdentity(ctx context.Context, id, name string) (*Identity, error)
	UpdateIdentity(ctx context.Context, id string, u IdentityUpdate) (*Identity, error)
	// DeleteIdentity removes the identity, its hints, tags, notes and bindings, each recorded;
	// the identity.delete event's before carries the deleted notes (its "notes").
	DeleteIdentity(ctx context.Context, id string) error
	// MergeIdentities moves from's hints, tags, notes and bindings into into and deletes from.
	MergeIdentities(ctx context.Context, from, into string) (*Identity, error)
	// RestoreIdentity brings back a deleted identity from its last recorded state: data,
	// hints, tags and the notes deleted with it (same ids, authors and times; note.add
	// events of the restoring request). ECONFLICT when the slug is taken again, ENOTFOUND
	// when it was never deleted.
	RestoreIdentity(ctx context.Context, id string) (*Identity, error)

	// AddHints adds fingerprints as hints. A unit-class fingerprint held by another
	// identity is ECONFLICT naming it unless move is set, which moves it (hint.move).
	// A hint the identity already holds is EINVALID ("duplicate").
	AddHints(ctx context.Context, id string, fps []Fingerprint, move bool) (*Identity, error)
	RemoveHints(ctx context.Context, id string, fps []Fingerprint) (*Identity, error)
	// FindHintHolders looks fingerprints up in the hint index: for each one, the ids of
	// the identities holding it. Never a scan.
	FindHintHolders(ctx context.Context, fps []Fingerprint) (map[Fingerprint][]string, error)

	// UpdateTags adds and removes tags (normalised) on any identity or device, returning
	// the node's tags afterwards. Adding a tag already there or removing one absent is a
	// no-op that writes no event.
	UpdateTags(ctx context.Context, target string, add, remove []string) ([]string, error)
	FindTags(ctx context.Context, f TagFilter) ([]TagCount, error)
	// FindTagged returns the node ids carrying tag, a page at a time.
	FindTagged(ctx context.Context, tag string, first int, after string) (ids []string, total int, next string, err error)

	AddNote(ctx context.Context, n NoteCreate) (*Note, error)
	// FindNoteByID finds one note by id ("note:<uuid>" or the bare uuid); ENOTFOUND with
	// the closest note id when it does not exist.
	FindNoteByID(ctx context.Context, id string) (*Note, error)
	FindNotes(ctx context.Context, f NoteFilter) (notes []*Note, total int, next string, err error)
	DeleteNote(ctx context.Context, id string) error

	// FindDeviceByID finds a device by id, key or any ref it has had.
	FindDeviceByID(ctx context.Context, idOrRef string) (*Device, error)
	FindDevices(ctx context.Context, f DeviceFilter) (devs []*Device, total int, next string, err error)
	// ObserveDevices reconciles a snapshot with the stored devices: new or returning
	// devices appear, present ones whose every source answered and none saw disappear,
	// seen-again ones only refresh last seen (no event). Returns the events written.
	// When the context's actor is the bare "discovery", each event's actor is
	// discovery:<that device's Source> (discovery:live when it has none), so one
	// snapshot spanning several sources records each change under its own source;
	// any other actor is used as given for every event.
	ObserveDevices(ctx context.Context, snap *Snapshot) ([]*Event, error)
	BindDevice(ctx context.Context, r BindRequest) (*BindResult, error)
	UnbindDevice(ctx context.Context, deviceID string) (*Device, error)

	FindRobotRecords(ctx context.Context) ([]*RobotRecord, error)
	// SaveRobot persists a robot's record and, when action is not "", records one event
	// with that action (robot.*) targeting the robot's device.
	SaveRobot(ctx context.Context, rec *RobotRecord, action string, before, after any) error

	// FindEvents returns changelog events newest first and the cursor of the next page.
	FindEvents(ctx context.Context, f EventFilter) (evs []*Event, next string, err error)
	VerifyChangelog(ctx context.Context) (*VerifyReport, error)
	// PruneChangelog drops events older than before, keeping a checkpoint so the rest
	// stays verifiable. Returns how many were dropped.
	PruneChangelog(ctx context.Context, before time.Time) (int, error)

	Stats(ctx context.Context) (*Stats, error)
	// Backup writes a consistent copy of the whole file to w while others keep working.
	Backup(ctx context.Context, w io.Writer) (int64, error)
	// Export writes every record and the changelog as JSON lines.
	Export(ctx context.Context, w io.Writer) error
	// Import reads Export's JSON lines in batched transactions, calling progress now and
	// then. Into an empty database the chain is kept byte for byte; into a non-empty one
	// the import records its own events. The whole input is checked first: malformed
	// input (EINVALID) or an identity, unit hint or note already here (ECONFLICT) writes
	// nothing, and the error names the first such line.
	Import(ctx context.Context, r io.Reader, progress func(records int)) (*ImportStats, error)
}

// Service is everything the edges (CLI, GraphQL, MCP) can ask of devgraph: the store plus
// live hardware, matching, binding and robots. It is implemented over a local store and
// by the client of a running server, with the same results and the same events.
type Service interface {
	Store

	// Devices lists devices with their match (present only unless f.All).
	Devices(ctx context.Context, f DeviceFilter) (devs []*DeviceView, total int, next string, err error)
	// Device finds one device by id or ref, with its match.
	Device(ctx context.Context, idOrRef string) (*DeviceView, error)
	// Unbound lists present devices without a high, unambiguous match or explicit binding.
	Unbound(ctx context.Context) ([]*DeviceView, error)
	// Match reads fingerprints against the identities.
	Match(ctx context.Context, fps []Fingerprint) (*Match, error)
	Bind(ctx context.Context, in BindInput) (*BindResult, error)
	Unbind(ctx context.Context, ref string) (*Device, error)
	// Sources reports each source's status from the latest snapshot.
	Sources(ctx context.Context) ([]SourceStatus, error)

	// Robots, named by identity id, device id or ref.
	Robots(ctx context.Context) ([]*RobotState, error)
	Robot(ctx context.Context, robot string) (*RobotState, error)
	RobotNavigate(ctx context.Context, robot string, goal Goal, progress func(NavProgress)) (*NavResult, error)
	RobotStop(ctx context.Context, robot string) (*RobotState, error)
	RobotArm(ctx context.Context, robot string) (*RobotState, error)
	RobotDisarm(ctx context.Context, robot string) (*RobotState, error)
	RobotDetect(ctx context.Context, robot string) ([]DetectedObject, error)
	RobotGrasp(ctx context.Context, robot, objectID string) (*RobotState, error)
	RobotRelease(ctx context.Context, robot string) (*RobotState, error)
	RobotSetParameters(ctx context.Context, robot string, u RobotParamsUpdate) (*RobotState, error)
}

// Notifier tells subscribers about committed changes: fn is called after each committed
// write with its events, never while a transaction is open, and must not block for long.
// The returned func cancels the subscription.
type Notifier interface {
	Subscribe(fn func(events []*Event)) (cancel func())
}
