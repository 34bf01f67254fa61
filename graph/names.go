package graph

import "context"

// FindQuery asks a Finder for nodes by name.
type FindQuery struct {
	Text  string   // letters of the name in order ("jdxi"); empty: every name, sorted
	Tags  []string // nodes carrying all of these
	Kind  string   // "", "identity", "device" or "robot"
	First int      // at most this many (default 20, at most MaxPageSize)
}

// FindHit is one node a Finder found, best first.
type FindHit struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"` // identity, device or robot
	Name    string `json:"name"`
	Score   int    `json:"score"`   // fuzzy score, higher is better
	Matched []int  `json:"matched"` // byte offsets of the name that matched
	// Tags are the node's tags, sorted, when the Finder holds them (nil when it does not:
	// read the node). Not part of any wire format.
	Tags []string `json:"-"`
}

// Finder finds identities, devices and robots by name, tags and kind: the one ranking
// behind GraphQL find and MCP graph_find.
type Finder interface {
	// Find returns at most q.First nodes whose names match q.Text best (by name when the
	// text is empty), keeping only those carrying every tag of q.Tags and of q.Kind.
	// Nothing matching is an empty list, not an error. A text longer than 200 bytes or
	// not valid UTF-8, a malformed tag or an unknown kind is EINVALID naming the field.
	// A write made before Find returned is seen by it.
	Find(ctx context.Context, q FindQuery) ([]FindHit, error)
}

// NameSource is what a name index reads: the identities and devices with their names and
// tags, and the changelog that says which of them changed. graph.Store provides it.
type NameSource interface {
	DeviceReader
	// FindIdentities returns a page of identities sorted by id, the total and the next
	// cursor ("" on the last page).
	FindIdentities(ctx context.Context, f IdentityFilter) (ids []*Identity, total int, next string, err error)
	// FindIdentityByID returns the identity, or ENOTFOUND when it no longer exists.
	FindIdentityByID(ctx context.Context, id string, with IdentityParts) (*Identity, error)
	// FindEvents returns changelog events newest first and the cursor of the next page;
	// an empty log is an empty list.
	FindEvents(ctx context.Context, f EventFilter) (evs []*Event, next string, err error)
}

// Suggester names the existing node closest to an id that names nothing: the "did you
// mean" of an ENOTFOUND. The store asks it after the failed read or write has ended,
// never inside a transaction, so it may read through the store itself.
type Suggester interface {
	// SuggestID returns how to name the existing node of kind k closest to local (the
	// text typed, without its kind prefix): its full id, or for a device also a ref. It
	// returns "" when nothing is close enough, and ok false when it keeps no names of
	// kind k or cannot answer now; the caller then looks for itself.
	SuggestID(ctx context.Context, k Kind, local string) (id string, ok bool)
}

// NameKey is one identity as the store's name index holds it: its id and its name
// lowercased (strings.ToLower).
type NameKey struct {
	ID    string
	Lower string
}

// NodeChange is what one changelog event says a name index may need to re-read: the
// event's action and its target.
type NodeChange struct {
	Seq    uint64
	Action string
	Target string
}

// NameIndex is the fast path a name index takes when its NameSource also offers it (the
// store does): the store's own name and tag indexes and its changelog's event headers,
// read without decoding an identity or an event body. Each method also returns the
// changelog head (the newest event's seq) its read reflects.
type NameIndex interface {
	// EachIdentityName calls size once with how many identities the store counts (a
	// size for what fn fills), then fn with every identity's id and lowercased name, from
	// the name index, in name order. fn may keep the strings.
	EachIdentityName(ctx context.Context, size func(total int), fn func(key NameKey)) (head uint64, err error)
	// IdentityDisplayNames returns the names of the identities ids, at the same
	// positions; "" for one that does not exist.
	IdentityDisplayNames(ctx context.Context, ids []string) ([]string, error)
	// NodeTags returns every tagged node's tags (node id → tags, sorted), from the tag
	// index.
	NodeTags(ctx context.Context) (tags map[string][]string, head uint64, err error)
	// ChangesSince returns the events after seq, oldest first, when there are at most max
	// of them and none was pruned; otherwise complete is false (and changes nil), and
	// the caller reads everything afresh. A head at or below seq returns no changes.
	ChangesSince(ctx context.Context, seq uint64, max int) (changes []NodeChange, head uint64, complete bool, err error)
}
