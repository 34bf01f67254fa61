package graph

import (
	"context"
	"fmt"
	"time"
)

// In a fleet (an etcd store) each host publishes what its sources see right now and
// never store — observed relations, clients, the /dev nodes of its present devices —
// under a key that lives only as long as the host does, and every front end merges the
// other live hosts' state into its own live view. A host whose lease expired is offline:
// its devices stay remembered as it last recorded them (not unplugged), without nodes or
// observed relations. On one machine there is no fleet and every host is online.

// HostStatus says which hosts of a fleet are live.
type HostStatus interface {
	// HostOnline reports whether the named host is live. "" (a record without a host,
	// on one machine) is always online, and so is this host, except while a fleet
	// host's lease is lost (see LeaseLoss).
	HostOnline(host string) bool
	// HostsOnline lists the live hosts, this one included while it is online, sorted.
	HostsOnline() []string
}

// HostLive is one host's published live state.
type HostLive struct {
	Host string `json:"host"`
	// Devices are its present devices as the fleet names them (key, ref, fingerprints,
	// infra) with their /dev nodes now; their stored records say the rest.
	Devices   []*ObservedDevice `json:"devices,omitempty"`
	Relations []*Relation       `json:"relations,omitempty"` // observed, ends as the fleet names them
	Clients   []*Client         `json:"clients,omitempty"`   // ids client:<host>/<source>:<name>
	// Truncated says the state was cut to fit MaxHostLiveBytes (what was left out is
	// not seen from other hosts).
	Truncated bool `json:"truncated,omitempty"`
}

// MaxHostLiveBytes bounds one host's published live state.
const MaxHostLiveBytes = 512 << 10

// FleetLive is the rest of a fleet as this host sees it: which hosts are live, and the
// live state each other live host published.
type FleetLive interface {
	HostStatus
	// Elsewhere returns the live state of every other live host, sorted by host; nil on
	// one machine. The states are shared: treat them as read-only.
	Elsewhere() []*HostLive
}

// QualifyClientID names another host's client as the fleet sees it:
// client:alsa:Bitwig Studio on studio-b → client:studio-b/alsa:Bitwig Studio. An id
// already qualified, or host "", comes back as it is.
func QualifyClientID(host, id string) string {
	prefix := string(KindClient) + ":"
	if host == "" || len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return id
	}
	if h, _ := SplitHost(id[len(prefix):]); h != "" {
		return id
	}
	return prefix + host + "/" + id[len(prefix):]
}

// FleetHost is one host of a fleet as GraphQL's hosts and doctor show it: a live host
// (its claim exists) or one whose devices the graph remembers while it is not live.
type FleetHost struct {
	Name    string    `json:"name"`
	Online  bool      `json:"online"`
	Since   time.Time `json:"since,omitzero"`    // when it claimed its name (online hosts)
	Version string    `json:"version,omitempty"` // its devgraph's version (online hosts)
	Schema  int       `json:"schema,omitempty"`  // the schema its devgraph writes (online hosts)
	Devices int       `json:"devices"`           // devices the graph holds of it, present or remembered
}

// FleetHosts lists a fleet's hosts (a front end on an etcd store implements it).
type FleetHosts interface {
	// FleetHosts returns the live hosts and the hosts the graph's devices name, by name.
	FleetHosts(ctx context.Context) ([]FleetHost, error)
}

// LeaseLoss says a fleet host lost its cluster lease and is claiming its name again:
// since when, and the machine that holds the name meanwhile, when one does.
type LeaseLoss struct {
	Host      string    `json:"host"`
	Since     time.Time `json:"since"`
	HeldBy    string    `json:"held_by,omitempty"`   // the machine id of the name's holder meanwhile
	HeldSince time.Time `json:"held_since,omitzero"` // since when that machine holds it
}

// String is the loss as doctor says it.
func (l *LeaseLoss) String() string {
	s := fmt.Sprintf("this host (%s) lost its cluster lease at %s; claiming its name again", l.Host, l.Since.Format(time.RFC3339))
	if l.HeldBy != "" {
		s += fmt.Sprintf(" (held by another machine, %s, since %s)", l.HeldBy, l.HeldSince.Format(time.RFC3339))
	}
	return s
}

// WriteState says whether the graph takes writes right now: a fleet's front end is
// read-only while the cluster's graph is at another schema version (mid-upgrade).
type WriteState interface {
	// ReadOnly says why the graph takes no writes now ("" while it takes them).
	ReadOnly() string
	// OnReadOnly calls fn (on its own goroutine, never while the state is held) after
	// ReadOnly turns "" or stops being ""; cancel stops the calls.
	OnReadOnly(fn func()) (cancel func())
}
