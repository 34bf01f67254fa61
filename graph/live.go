package graph

import (
	"context"
	"time"
)

// ObservedDevice is one physical device as the sources see it right now, already merged
// across sources (a USB synth that is also an ALSA card, a sequencer client and PipeWire
// objects is one ObservedDevice).
type ObservedDevice struct {
	Key          string            `json:"key"` // see Device.Key
	Ref          string            `json:"ref"`
	Source       string            `json:"source"`
	Sources      []string          `json:"sources"`
	Name         string            `json:"name"`
	Fingerprints []Fingerprint     `json:"fingerprints"`
	Attrs        map[string]string `json:"attrs,omitempty"`
	Infra        bool              `json:"infra,omitempty"`
	Nodes        []DeviceNode      `json:"nodes,omitempty"` // /dev nodes it provides now
}

// SourceStatus says whether one source answered.
type SourceStatus struct {
	Name     string        `json:"name"` // usb, alsa, pipewire, robot
	OK       bool          `json:"ok"`
	Error    string        `json:"error,omitempty"` // why not, in words
	Devices  int           `json:"devices"`
	Duration time.Duration `json:"duration_ns"`
	Root     string        `json:"root,omitempty"` // where it reads from
}

// Snapshot is one reading of every source.
type Snapshot struct {
	Taken time.Time `json:"taken"`
	// Actor is recorded on the changelog events this snapshot causes when it is
	// reconciled (DeviceStore.ObserveDevices); "" records each device's change as
	// discovery:<its Source>.
	Actor   string            `json:"actor,omitempty"`
	Devices []*ObservedDevice `json:"devices"`
	// Relations are what the sources see connecting things right now (via, linked,
	// subscribed), Observed true, ids obs:<hash>; their ends are device ids (device:<key>
	// of a device in Devices) or client ids (a Client in Clients).
	Relations []*Relation    `json:"relations,omitempty"`
	Clients   []*Client      `json:"clients,omitempty"`
	Sources   []SourceStatus `json:"sources"`
}

// SourceOK reports whether the named source answered in this snapshot.
func (s *Snapshot) SourceOK(name string) bool {
	for _, st := range s.Sources {
		if st.Name == name {
			return st.OK
		}
	}
	return false
}

// Live reads the hardware. Snapshot may return a cached reading no older than the
// implementation's sharing window. A failing source is reported in Sources, never as an
// error; the error is for a cancelled context.
type Live interface {
	Snapshot(ctx context.Context) (*Snapshot, error)
}

// Confidence of a match.
type Confidence string

const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// MatchReason is one line of a match's explanation.
type MatchReason struct {
	Kind   FingerprintKind `json:"kind"`
	Value  string          `json:"value"`
	Class  Class           `json:"class"`
	Weight float64         `json:"weight"` // how much it counted
	Note   string          `json:"note"`   // why, in words
}

// Candidate is one identity a device could be.
type Candidate struct {
	IdentityID string        `json:"identity_id"`
	Name       string        `json:"name"`
	Score      float64       `json:"score"`
	Confidence Confidence    `json:"confidence"`
	Reasons    []MatchReason `json:"reasons"`
}

// Match is how a device (or a set of fingerprints) reads against the identities.
type Match struct {
	IdentityID  string        `json:"identity_id,omitempty"` // best candidate, "" when none
	Name        string        `json:"name,omitempty"`
	Score       float64       `json:"score"` // [0, 1]
	Confidence  Confidence    `json:"confidence"`
	Ambiguous   bool          `json:"ambiguous,omitempty"` // two identities claim the evidence
	Explanation []MatchReason `json:"explanation"`
	Summary     string        `json:"summary"` // one sentence
	Candidates  []Candidate   `json:"candidates,omitempty"`
}

// DeviceView is a device with how it reads against the identities.
type DeviceView struct {
	Device
	Match    *Match `json:"match,omitempty"`
	BoundTo  string `json:"bound_to,omitempty"` // identity id: explicit binding, else a high unambiguous match
	BoundBy  string `json:"bound_by,omitempty"` // "explicit" or "match"
	Identity string `json:"identity_name,omitempty"`
	// HostOffline: the device's host is a fleet host that is not live (its lease
	// expired). The device is remembered as that host last recorded it — Present is
	// what it last saw, not unplugged — and has no nodes or observed relations.
	HostOffline bool `json:"host_offline,omitempty"`
}

// BindRequest is the store-level bind: one transaction that may create the identity,
// adds the hints it lacks, and records the device → identity binding.
type BindRequest struct {
	DeviceID   string          `json:"device_id"`
	IdentityID string          `json:"identity_id,omitempty"` // existing identity, or
	New        *IdentityCreate `json:"new,omitempty"`         // a new one
	Hints      []Fingerprint   `json:"hints,omitempty"`       // the device's fingerprints to copy in
	Move       bool            `json:"move,omitempty"`        // move unit hints held by another identity instead of failing
	Force      bool            `json:"force,omitempty"`       // bind even where the device's evidence contradicts the identity's hints
	DryRun     bool            `json:"dry_run,omitempty"`     // do everything, report it, commit nothing
}

// BindResult reports what a bind did (or, dry, would do).
type BindResult struct {
	Device     *Device       `json:"device"`
	Identity   *Identity     `json:"identity"`
	Created    bool          `json:"created"`
	HintsAdded []Fingerprint `json:"hints_added"`
	HintsMoved []Fingerprint `json:"hints_moved,omitempty"`
	Conflicts  []string      `json:"conflicts,omitempty"` // dry run: what would fail, in words
	Match      *Match        `json:"match,omitempty"`     // how the device reads afterwards
	DryRun     bool          `json:"dry_run,omitempty"`
	// AlreadyBound: the device was bound to this identity already and the bind would change
	// nothing (a retried bind); nothing was written.
	AlreadyBound bool `json:"already_bound,omitempty"`
	Events       int  `json:"events"`
}

// BindInput is the user-level bind: a device ref (or id) to an identity or a new one.
type BindInput struct {
	Ref        string `json:"ref"`
	IdentityID string `json:"identity_id,omitempty"`
	NewName    string `json:"new_name,omitempty"`
	Slug       string `json:"slug,omitempty"`
	Move       bool   `json:"move,omitempty"`
	Force      bool   `json:"force,omitempty"` // bind despite evidence that contradicts the identity's hints
	DryRun     bool   `json:"dry_run,omitempty"`
}
