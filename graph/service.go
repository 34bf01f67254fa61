package graph

// Service is everything the edges (CLI, GraphQL, MCP, the socket) can ask of devgraph: one
// verb per operation, grouped by noun. It is implemented over a local store by
// identity.Service and by remote.Client over a running server's socket, with the same
// results and the same events. An edge should ask for the smaller interfaces it uses;
// Service is what a transport serves whole.
//
// Internal plumbing — how discovery records devices (DeviceStore) and how the robot
// fleet saves its records (RobotStore) — is not part of it, so nothing that reaches
// devgraph through an edge can write those records.
type Service interface {
	Resolver
	IdentityService
	HintService
	TagService
	NoteService
	DeviceService
	RobotService
	ChangelogService
	DatabaseService
	RelationService
	ClientService
	TraversalService
}

// Store is the persistent graph: what the store implements for the identity service,
// discovery and the robot fleet. Every method is one transaction; every write records its
// changelog events (one per node changed, sharing the context's request id and actor) in
// that same transaction, or writes nothing. ELOCKED when the file is held elsewhere.
type Store interface {
	Resolver
	IdentityService
	HintService
	TagService
	NoteService
	RelationStore
	DeviceStore
	RobotStore
	ChangelogService
	DatabaseService
}

// Notifier tells subscribers about committed changes: fn is called after each committed
// write with its events, never while a transaction is open, and never holds up a writer.
// A subscriber that falls too far behind is dropped (the store logs why): fn is then
// called once with nil as its last call — it has missed changes, should treat what it
// keeps as stale, and may subscribe again. fn is never called with nil otherwise.
// Different subscriptions may be called concurrently. The returned func cancels the
// subscription; it may be called from inside fn, and only a nil call already decided
// may follow it (mcptools' server copes with one after Close).
type Notifier interface {
	Subscribe(fn func(events []*Event)) (cancel func())
}
