package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Relation kinds of id.
const (
	KindRelation Kind = "rel"    // a declared relation: rel:<uuidv7>
	KindObserved Kind = "obs"    // an observed relation: obs:<hash of its tuple>
	KindClient   Kind = "client" // an application a source sees: client:<source>:<name>
)

// NewRelationID returns a fresh "rel:<uuidv7>".
func NewRelationID() string { return string(KindRelation) + ":" + NewUUIDv7() }

// Relation types.
const (
	RelCable     = "cable"      // a physical connection between ports; attrs.kind required
	RelControls  = "controls"   // one thing drives another (a controller, a sequencer)
	RelMountedOn = "mounted_on" // a sensor mounted on a robot
	RelPartOf    = "part_of"
	RelLocatedIn = "located_in"
	RelPoweredBy = "powered_by"

	RelVia        = "via"        // observed: a USB device → the hub it hangs off
	RelLinked     = "linked"     // observed: a PipeWire link, output port → input port
	RelSubscribed = "subscribed" // observed: an ALSA sequencer subscription
)

// SeedRelationTypes are the declared types every database offers; ReservedRelationTypes
// only sources may produce (never declared).
var (
	SeedRelationTypes     = []string{RelCable, RelControls, RelMountedOn, RelPartOf, RelLocatedIn, RelPoweredBy}
	ReservedRelationTypes = []string{RelVia, RelLinked, RelSubscribed}
	// TraceTypes are the relations a trace follows; via is a path relation, never traced.
	TraceTypes = []string{RelCable, RelLinked, RelSubscribed, RelControls}
	// CableKinds are the values attrs.kind of a cable may take.
	CableKinds = []string{"midi-din", "trs-midi", "usb", "audio", "cv", "gate", "power", "ethernet", "serial"}
)

// Limits on relations, the same on every interface and both backends.
const (
	MaxRelationType     = 32   // [a-z0-9][a-z0-9_-]{0,31}
	MaxPort             = 64   // bytes
	MaxRelationAttrs    = 16   // keys
	MaxRelationAttrKey  = 64   // bytes
	MaxRelationAttrVal  = 256  // bytes
	MaxRelationAttrSize = 4096 // bytes, keys and values together
	MaxRelationsPerNode = 1000 // declared relations touching one node, either end
	MaxNotesPerNode     = 500
)

var relTypeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Relation is a directed, typed edge between two nodes (identities, devices, robots,
// and for observed relations clients), optionally between named ports. A declared
// relation (rel:<uuidv7>) is persisted and audited; an observed one (obs:<hash>, Observed
// true, Source set) is what a source sees right now and is never stored.
type Relation struct {
	ID       string            `json:"id"`
	Type     string            `json:"type"`
	From     string            `json:"from"` // node id: identity:…, device:…, client:…
	FromPort string            `json:"from_port,omitempty"`
	To       string            `json:"to"`
	ToPort   string            `json:"to_port,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	Observed bool              `json:"observed,omitempty"`
	Source   string            `json:"source,omitempty"` // observed: usb, alsa, pipewire
	Author   string            `json:"author,omitempty"` // declared: the actor who added it
	Created  time.Time         `json:"created_at,omitzero"`
	Updated  time.Time         `json:"updated_at,omitzero"` // declared: last relation.update
}

// RelationCreate declares a relation. From and To may be typed as any id form the
// Resolver accepts ("jdxi", "usb:3-3.2"); the stored relation holds full node ids.
type RelationCreate struct {
	From     string            `json:"from"`
	FromPort string            `json:"from_port,omitempty"`
	Type     string            `json:"type"`
	To       string            `json:"to"`
	ToPort   string            `json:"to_port,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	NewType  bool              `json:"new_type,omitempty"` // allow a type neither seeded nor in use
	DryRun   bool              `json:"dry_run,omitempty"`
}

// RelationUpdate changes a declared relation's attrs or ports. A nil field is left
// alone; Attrs replaces the whole map (an empty map clears it); an empty port string
// clears the port.
type RelationUpdate struct {
	// No omitempty: an empty map (clear them) must not travel as an absent one (leave
	// them alone); nil travels as null.
	Attrs    map[string]string `json:"attrs"`
	FromPort *string           `json:"from_port,omitempty"`
	ToPort   *string           `json:"to_port,omitempty"`
	DryRun   bool              `json:"dry_run,omitempty"`
}

// RelationRemove names the declared relation to remove: by ID, or by its tuple
// (From, FromPort, Type, To, ToPort) when ID is "".
type RelationRemove struct {
	ID       string `json:"id,omitempty"`
	From     string `json:"from,omitempty"`
	FromPort string `json:"from_port,omitempty"`
	Type     string `json:"type,omitempty"`
	To       string `json:"to,omitempty"`
	ToPort   string `json:"to_port,omitempty"`
	DryRun   bool   `json:"dry_run,omitempty"`
}

// RelationChange reports what a relation write did (or, dry, would do).
type RelationChange struct {
	Relation *Relation `json:"relation"`
	// Action is "add", "update" or "remove" for a change, "none" when nothing was
	// written (a repeated add returning the existing relation, an update to the same
	// values).
	Action string `json:"action"`
	DryRun bool   `json:"dry_run,omitempty"`
	Events int    `json:"events"`
}

// Directions a relation list or traversal follows, relative to the node asked about.
const (
	DirOut  = "out"
	DirIn   = "in"
	DirBoth = "both"
)

// RelationFilter selects relations. Node "" lists every declared relation (observed ones
// need a node, or Observed set to list the whole live set).
type RelationFilter struct {
	Node      string   `json:"node,omitempty"`      // relations touching this node (any id form)
	Direction string   `json:"direction,omitempty"` // out, in or both (default)
	Types     []string `json:"types,omitempty"`
	// Declared / Observed choose the kinds listed; both false means both.
	Declared bool   `json:"declared,omitempty"`
	Observed bool   `json:"observed,omitempty"`
	First    int    `json:"first,omitempty"`
	After    string `json:"after,omitempty"`
}

// RelationTypeCount is a relation type with the number of declared relations using it.
type RelationTypeCount struct {
	Type     string `json:"type"`
	Count    int    `json:"count"`
	Seeded   bool   `json:"seeded,omitempty"`
	Reserved bool   `json:"reserved,omitempty"` // observed only: via, linked, subscribed
}

// RelationService keeps relations. Node ids may be typed in any form the Resolver
// accepts. Every write records one relation.* event per relation changed, in its own
// transaction, or writes nothing.
type RelationService interface {
	// Relate declares a relation. Adding the same (from, from_port, type, to, to_port)
	// again returns the existing relation with Action "none" and writes nothing; the same
	// tuple with other attrs is ECONFLICT naming the existing relation. ENOTFOUND (with a
	// suggestion) for an unknown node; EINVALID for a tag, note, relation or client
	// endpoint, a self-loop, a reserved, malformed or (without NewType) unknown type, an
	// oversize port or attrs, a cable without attrs.kind; ELIMIT when a node already holds
	// MaxRelationsPerNode relations.
	Relate(ctx context.Context, c RelationCreate) (*RelationChange, error)
	// UpdateRelation changes a declared relation's attrs or ports; ENOTFOUND for an
	// unknown id, EINVALID for an observed relation or bad attrs/ports, ECONFLICT when
	// the new tuple is another relation's.
	UpdateRelation(ctx context.Context, id string, u RelationUpdate) (*RelationChange, error)
	// Unrelate removes a declared relation by id or tuple; ENOTFOUND when there is none
	// (with a suggestion), EINVALID for an observed relation.
	Unrelate(ctx context.Context, r RelationRemove) (*RelationChange, error)
	// FindRelationByID finds one relation, declared (rel:…) or, on the service, observed
	// (obs:…); ENOTFOUND with the closest id otherwise.
	FindRelationByID(ctx context.Context, id string) (*Relation, error)
	// FindRelations lists relations, declared first (sorted by id) then observed, a page
	// at a time, with the total of both and the next cursor. On a node, the relations of
	// its vertex: an identity's own and those of its present bound devices, a present
	// bound device's identity's and its fellow devices' as well as its own. ENOTFOUND for an unknown node.
	FindRelations(ctx context.Context, f RelationFilter) (rels []*Relation, total int, next string, err error)
	// RelationTypes lists the seeded and reserved types and every type in use, with counts.
	RelationTypes(ctx context.Context) ([]RelationTypeCount, error)
}

// Client is an application a source sees (an ALSA sequencer client such as Bitwig
// Studio, a PipeWire stream such as Firefox): an endpoint of observed relations only,
// live, never stored. Id client:<source>:<name>, "#2" appended for a second of the name.
type Client struct {
	ID     string            `json:"id"`
	Source string            `json:"source"` // alsa, pipewire
	Name   string            `json:"name"`
	Attrs  map[string]string `json:"attrs,omitempty"` // per-boot numbers (client number, object id) live here
}

// ClientService lists the clients the sources see right now.
type ClientService interface {
	// Clients lists the live clients, sorted by id.
	Clients(ctx context.Context) ([]*Client, error)
	// Client finds one live client; ENOTFOUND (with a suggestion) when no source sees it.
	Client(ctx context.Context, id string) (*Client, error)
}

// ObservedRelationID is an observed relation's id: obs:<first 16 hex digits of the
// SHA-256 of its tuple>, stable while the relation stays.
func ObservedRelationID(typ, from, fromPort, to, toPort string) string {
	h := sha256.New()
	for _, s := range []string{typ, from, strings.ToLower(fromPort), to, strings.ToLower(toPort)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return string(KindObserved) + ":" + hex.EncodeToString(h.Sum(nil)[:8])
}

// ClientID returns client:<source>:<name>, with "#n" appended for the n-th (n ≥ 2)
// client of the same source and name.
func ClientID(source, name string, n int) string {
	id := string(KindClient) + ":" + source + ":" + name
	if n >= 2 {
		id += "#" + strconv.Itoa(n)
	}
	return id
}

// RelationStore is the store's side of relations: declared relations only (FindRelations
// on a node lists that node's own declared relations, with no vertex expansion and the
// Observed filter ignored), and RelationsOf for traversal.
type RelationStore interface {
	RelationService
	// RelationsOf returns every declared relation touching any of the nodes, either
	// direction, sorted by id; unknown nodes simply have none.
	RelationsOf(ctx context.Context, nodes []string) ([]*Relation, error)
}
