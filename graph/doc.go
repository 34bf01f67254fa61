// Package graph is devgraph's shared vocabulary: the domain types (identities, devices,
// fingerprints, tags, notes, robots, changelog events), their ids and validation rules,
// error codes a caller can branch on, the context helpers that carry the actor and the
// request id, and the interfaces every other package meets at: one small interface per
// noun beside its types (IdentityService in identity.go, DeviceService in device.go,
// TagService in tag.go, NoteService in note.go, RobotService in robot.go, …), composed
// into Service (what the edges and the socket see) and Store (what the store implements,
// including the plumbing discovery and the robot fleet write through: DeviceStore,
// RobotStore). Finder, NameSource, NameIndex and Suggester (names.go) are the name
// index's seams: what GraphQL find and MCP graph_find ask, what the index reads (and the
// store's fast path to it), and how the store asks it for a "did you mean".
// GraphQLExecutor (graphql.go) is what the HTTP transport and the socket hand GraphQL
// requests to. Each method's comment says what it returns when
// something is missing or conflicting. limits.go holds the caps on one write's inputs and
// the checks the service/store boundary runs for every interface (ValidateMessage,
// NormalizeTagOps, NormalizeHints, NormalizeMatchFingerprints, ValidateGoal); text.go the
// text rules they build on (ValidateText).
//
// It imports the standard library and uuid, nothing of devgraph's own. Every other
// package talks to its neighbours in these types, never in bbolt byte slices, GraphQL
// maps or MCP structures.
//
// Ids are "<kind>:<local>": identity:<slug>, device:<key>, note:<uuidv7>,
// tag:<ns>:<value>. Devices are also addressed by refs ("usb:3-3.2", "alsa:card:PCH",
// "pipewire:<device.name>", "robot:scout") that say where the device is now.
package graph
