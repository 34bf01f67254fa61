package mcptools

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// The compact views the tools return. Some clients hand a model only the structured
// content, so it carries what a model needs to act — ids, names, confidence, a score
// rounded to 2 places, the explanation in one sentence, next steps — and nothing it must
// wade through: raw and per-boot attrs, keys and times come only with detail: true.

// deviceView is a device as a model reads it.
type deviceView struct {
	ID           string        `json:"id"`
	Ref          string        `json:"ref"`
	Host         string        `json:"host,omitempty"`
	Name         string        `json:"name"`
	Present      bool          `json:"present"`
	HostOffline  bool          `json:"host_offline,omitempty" jsonschema:"its host (a fleet host) is offline: remembered as that host last saw it, not unplugged; nothing of it is live"`
	Identity     string        `json:"identity,omitempty" jsonschema:"the identity it is bound to"`
	BoundBy      string        `json:"bound_by,omitempty" jsonschema:"explicit, or match (a high unambiguous match)"`
	Infra        bool          `json:"infra,omitempty" jsonschema:"a hub or controller: shown, never bound"`
	Fingerprints []string      `json:"fingerprints,omitempty" jsonschema:"each as kind=value"`
	Tags         []string      `json:"tags,omitempty"`
	Nodes        []string      `json:"nodes,omitempty" jsonschema:"its /dev nodes now (their by-id links with detail: true)"`
	Match        *matchView    `json:"match,omitempty" jsonschema:"its best candidate identity"`
	Detail       *deviceDetail `json:"detail,omitempty" jsonschema:"with detail: true only"`
}

// deviceDetail is what detail: true adds to a device.
type deviceDetail struct {
	Key       string             `json:"key"`
	Source    string             `json:"source"`
	Sources   []string           `json:"sources,omitempty"`
	Aliases   []string           `json:"aliases,omitempty"`
	Attrs     map[string]string  `json:"attrs,omitempty" jsonschema:"raw and per-boot attributes"`
	FirstSeen string             `json:"first_seen"`
	LastSeen  string             `json:"last_seen"`
	Reasons   []string           `json:"reasons,omitempty" jsonschema:"the match's evidence, one line each"`
	Nodes     []graph.DeviceNode `json:"nodes,omitempty" jsonschema:"its /dev nodes with their kinds and stable links"`
}

// matchView is how a device reads against the identities.
type matchView struct {
	Identity   string  `json:"identity,omitempty" jsonschema:"the best candidate; absent when none"`
	Name       string  `json:"name,omitempty"`
	Score      float64 `json:"score" jsonschema:"0-1, rounded to 2 places"`
	Confidence string  `json:"confidence" jsonschema:"high, medium or low"`
	Ambiguous  bool    `json:"ambiguous,omitempty" jsonschema:"two identities claim the evidence"`
	Why        string  `json:"why" jsonschema:"the explanation in one sentence"`
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func fpStrings(fps []graph.Fingerprint) []string {
	out := make([]string, len(fps))
	for i, f := range fps {
		out[i] = f.String()
	}
	return out
}

func viewMatch(m *graph.Match) *matchView {
	if m == nil {
		return nil
	}
	return &matchView{Identity: m.IdentityID, Name: m.Name, Score: round2(m.Score), Confidence: string(m.Confidence),
		Ambiguous: m.Ambiguous, Why: m.Summary}
}

// viewDevice is the compact device; fps adds its fingerprints, detail the raw record.
func viewDevice(d *graph.Device, m *graph.Match, fps, detail bool) deviceView {
	v := deviceView{ID: d.ID, Ref: d.Ref, Name: d.Name, Present: d.Present, Identity: d.IdentityID, Infra: d.Infra,
		Tags: d.Tags, Match: viewMatch(m)}
	if d.IdentityID != "" {
		v.BoundBy = "explicit"
	}
	if h, _ := graph.SplitHost(d.Ref); detail || h != "" {
		// The machine it hangs on: asked for, or on a fleet (whose refs carry it anyway).
		v.Host = d.Host
	}
	if fps || detail {
		// The device is the subject (browsed, or listed as unbound): its /dev nodes too.
		v.Fingerprints = fpStrings(d.Fingerprints)
		v.Nodes = nodePaths(d.Nodes)
	}
	if detail {
		dd := &deviceDetail{Key: d.Key, Source: d.Source, Sources: d.Sources, Aliases: d.Aliases, Attrs: d.Attrs,
			FirstSeen: rfc3339(d.FirstSeen), LastSeen: rfc3339(d.LastSeen), Nodes: d.Nodes}
		if m != nil {
			for _, r := range m.Explanation {
				dd.Reasons = append(dd.Reasons, string(r.Kind)+"="+r.Value+": "+r.Note)
			}
		}
		v.Detail = dd
	}
	return v
}

// nodePaths are the paths of a device's /dev nodes.
func nodePaths(nodes []graph.DeviceNode) []string {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Path
	}
	return out
}

// viewDeviceView is viewDevice for a device read with its match and binding.
func viewDeviceView(d *graph.DeviceView, fps, detail bool) deviceView {
	v := viewDevice(&d.Device, d.Match, fps, detail)
	v.HostOffline = d.HostOffline
	if d.BoundTo != "" {
		v.Identity, v.BoundBy = d.BoundTo, d.BoundBy
	}
	if v.Match != nil && v.Identity != "" && v.Match.Identity == v.Identity {
		v.Match = nil // bound to its best candidate: the binding says it
	}
	return v
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// identityView is an identity as a model reads it.
type identityView struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags"`
	Hints []string `json:"hints,omitempty" jsonschema:"fingerprints as kind=value"`
	Data  any      `json:"data,omitempty" jsonschema:"its free-form JSON object"`
}

func viewIdentity(id *graph.Identity, hints bool) *identityView {
	if id == nil {
		return nil
	}
	v := &identityView{ID: id.ID, Name: id.Name, Tags: nonNil(id.Tags)}
	if hints {
		v.Hints = fpStrings(id.Hints)
	}
	if len(id.Data) > 0 {
		var data any
		if json.Unmarshal(id.Data, &data) == nil {
			v.Data = data
		}
	}
	return v
}

// noteView is a note as a model reads it.
type noteView struct {
	ID     string `json:"id"`
	Target string `json:"target"`
	Kind   string `json:"kind"`
	Body   string `json:"body"`
	Author string `json:"author"`
	Time   string `json:"time"`
}

func viewNote(n *graph.Note) *noteView {
	if n == nil {
		return nil
	}
	return &noteView{ID: n.ID, Target: n.Target, Kind: n.Kind, Body: n.Body, Author: n.Author, Time: rfc3339(n.Time)}
}

// oneLine shortens text to one line of at most n bytes (cut at a rune boundary).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
