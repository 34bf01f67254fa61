package graph

import (
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

// Device is one physical piece of hardware as the sources see it, persisted under a
// stable key so offline devices stay known.
type Device struct {
	ID           string            `json:"id"`  // device:<key>
	Key          string            `json:"key"` // most stable evidence: sn:<vid>:<pid>:<serial>, path:<vid>:<pid>:<usbpath>, alsa:<card id>, pw:<device.name>, robot:<serial>
	Ref          string            `json:"ref"` // current (or last) ref, e.g. usb:3-3.2
	Aliases      []string          `json:"aliases,omitempty"`
	Source       string            `json:"source"`            // most physical source that sees it
	Sources      []string          `json:"sources,omitempty"` // every source that sees it
	Name         string            `json:"name"`
	Fingerprints []Fingerprint     `json:"fingerprints"`
	Attrs        map[string]string `json:"attrs,omitempty"` // manufacturer, product, driver, card number… (per-boot numbers live here, never in fingerprints)
	Infra        bool              `json:"infra,omitempty"` // hubs and other infrastructure: shown, never bound
	FirstSeen    time.Time         `json:"first_seen"`
	LastSeen     time.Time         `json:"last_seen"`
	Present      bool              `json:"present"`
	IdentityID   string            `json:"identity_id,omitempty"` // explicit binding
	Tags         []string          `json:"tags,omitempty"`
}

// DeviceFilter selects devices.
type DeviceFilter struct {
	All        bool     `json:"all,omitempty"` // include devices not present
	Source     string   `json:"source,omitempty"`
	IdentityID string   `json:"identity_id,omitempty"` // bound to this identity
	Tags       []string `json:"tags,omitempty"`
	First      int      `json:"first,omitempty"`
	After      string   `json:"after,omitempty"`
}

// Note is a message on an identity, device or robot.
type Note struct {
	ID     string    `json:"id"` // note:<uuidv7>
	Target string    `json:"target"`
	Kind   string    `json:"kind"` // info, success, warning, danger
	Body   string    `json:"body"` // markdown ≤ 16 KiB
	Author string    `json:"author"`
	Time   time.Time `json:"time"`
}

// NoteKinds are the valid note kinds.
var NoteKinds = []string{"info", "success", "warning", "danger"}

// NoteCreate is the input to add a note.
type NoteCreate struct {
	Target string `json:"target"`
	Kind   string `json:"kind,omitempty"` // default info
	Body   string `json:"body"`
}

// NoteFilter selects notes, newest first.
type NoteFilter struct {
	Target string `json:"target,omitempty"`
	Kind   string `json:"kind,omitempty"`
	First  int    `json:"first,omitempty"`
	After  string `json:"after,omitempty"`
}

// TagCount is a tag with the number of nodes carrying it.
type TagCount struct {
	Tag    string `json:"tag"`
	Count  int    `json:"count"`
	Seeded bool   `json:"seeded,omitempty"` // part of the seeded vocabulary
}

// TagFilter selects tags.
type TagFilter struct {
	Namespace string `json:"namespace,omitempty"`
	InUse     bool   `json:"in_use,omitempty"` // only tags on at least one node (else seeded ones too)
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

// Stats are cheap counters kept by the store.
type Stats struct {
	Identities    int    `json:"identities"`
	Devices       int    `json:"devices"`
	Notes         int    `json:"notes"`
	Events        uint64 `json:"events"`
	SchemaVersion int    `json:"schema_version"`
	FileBytes     int64  `json:"file_bytes"`
}

// ImportStats reports what an import wrote.
type ImportStats struct {
	Records int  `json:"records"`
	Events  int  `json:"events"`
	KeptLog bool `json:"kept_log"` // imported into an empty database: the chain was kept byte for byte
}
