package graph

import (
	"context"
	"encoding/json"
	"time"
)

// Identity is the stable name of one physical thing. Robots are identities too.
type Identity struct {
	ID        string          `json:"id"` // identity:<slug>
	Name      string          `json:"name"`
	Data      json.RawMessage `json:"data,omitempty"` // free-form JSON object
	Hints     []Fingerprint   `json:"hints"`
	Tags      []string        `json:"tags"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	// Notes and Devices are filled by reads that ask for them; they are not part of the
	// identity's changelog body.
	Notes   []*Note   `json:"notes,omitempty"`
	Devices []*Device `json:"devices,omitempty"`
}

// IdentityCreate is the input to create an identity.
type IdentityCreate struct {
	Name  string          `json:"name"`
	Slug  string          `json:"slug,omitempty"` // derived from Name when empty
	Data  json.RawMessage `json:"data,omitempty"`
	Hints []Fingerprint   `json:"hints,omitempty"`
	Tags  []string        `json:"tags,omitempty"`
}

// IdentityUpdate changes an identity's data; nil fields stay.
type IdentityUpdate struct {
	Name *string          `json:"name,omitempty"`
	Data *json.RawMessage `json:"data,omitempty"` // replaces the data object
}

// IdentityFilter selects identities. Zero values match everything.
type IdentityFilter struct {
	IDs   []string      `json:"ids,omitempty"`
	Name  string        `json:"name,omitempty"` // case-insensitive prefix of the name
	Tags  []string      `json:"tags,omitempty"` // all of these
	Hint  *Fingerprint  `json:"hint,omitempty"` // holds this hint
	First int           `json:"first,omitempty"`
	After string        `json:"after,omitempty"` // cursor from a previous page
	With  IdentityParts `json:"with,omitempty"`
}

// IdentityParts asks reads to fill the optional parts of an identity.
type IdentityParts struct {
	Notes   bool `json:"notes,omitempty"`
	Devices bool `json:"devices,omitempty"`
}

// IdentityService keeps identities: the stable names of physical things. Ids may be given
// in full ("identity:jdxi") or without their kind prefix where unambiguous ("jdxi").
// Every write records its changelog events in its own transaction, or writes nothing.
type IdentityService interface {
	// FindIdentityByID returns one identity with the parts asked for; ENOTFOUND (with the
	// closest existing id as a suggestion) when there is none.
	FindIdentityByID(ctx context.Context, id string, with IdentityParts) (*Identity, error)
	// FindIdentities returns a page of identities sorted by id, the total matching count,
	// and the cursor of the next page ("" on the last). No match is an empty page, not an
	// error; a malformed cursor is EINVALID.
	FindIdentities(ctx context.Context, f IdentityFilter) (ids []*Identity, total int, next string, err error)
	// CreateIdentity creates an identity (slug from the name unless given) with its
	// hints and tags: ECONFLICT on a taken slug or a unit hint held elsewhere, EINVALID on
	// a malformed name, slug, hint or tag.
	CreateIdentity(ctx context.Context, c IdentityCreate) (*Identity, error)
	// RenameIdentity changes the display name (the id stays); ENOTFOUND for a missing id.
	RenameIdentity(ctx context.Context, id, name string) (*Identity, error)
	// UpdateIdentity changes the name and/or data; ENOTFOUND for a missing id.
	UpdateIdentity(ctx context.Context, id string, u IdentityUpdate) (*Identity, error)
	// DeleteIdentity removes the identity, its hints, tags, notes and bindings, each
	// recorded; the identity.delete event's before carries the deleted notes (its
	// "notes"). ENOTFOUND for a missing id.
	DeleteIdentity(ctx context.Context, id string) error
	// MergeIdentities moves from's hints, tags, notes and bindings into into and deletes
	// from. ENOTFOUND for either missing; EINVALID when they are the same.
	MergeIdentities(ctx context.Context, from, into string) (*Identity, error)
	// RestoreIdentity brings back a deleted identity from its last recorded state: data,
	// hints, tags and the notes deleted with it (same ids, authors and times; note.add
	// events of the restoring request). ECONFLICT when the identity exists (it was never
	// deleted, or its slug is taken again), ENOTFOUND when no identity of that id was ever
	// recorded.
	RestoreIdentity(ctx context.Context, id string) (*Identity, error)
}
