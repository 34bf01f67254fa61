package identity

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// Scene is the snapshot context a match is read in: how many present devices show each
// fingerprint, so twins (two present devices showing the same evidence) are recognised.
type Scene struct {
	shown map[graph.Fingerprint]int
	keys  map[string]bool
	nodes map[string][]graph.DeviceNode // device key → its /dev nodes now (infrastructure too)
}

// NewScene builds the context from the present, non-infrastructure devices of a
// snapshot. A nil snapshot (no hardware) gives an empty scene.
func NewScene(snap *graph.Snapshot) *Scene {
	s := &Scene{shown: map[graph.Fingerprint]int{}, keys: map[string]bool{}, nodes: map[string][]graph.DeviceNode{}}
	if snap == nil {
		return s
	}
	for _, d := range snap.Devices {
		if d != nil && len(d.Nodes) > 0 {
			s.nodes[d.Key] = d.Nodes
		}
		s.add(d)
	}
	return s
}

// add counts a present device in the scene (infrastructure is never counted).
func (s *Scene) add(d *graph.ObservedDevice) {
	if d == nil || d.Infra || s.keys[d.Key] {
		return
	}
	s.keys[d.Key] = true
	for _, f := range dedupe(d.Fingerprints) {
		s.shown[f]++
	}
}

// Nodes returns the /dev nodes the present device keyed key provides now (nil when none,
// or when the device is not in the snapshot).
func (s *Scene) Nodes(key string) []graph.DeviceNode {
	if s == nil {
		return nil
	}
	return s.nodes[key]
}

// Shown returns how many present devices show f, counting the subject itself: a subject
// in the scene is already counted (at least 1), one outside it (an offline device, a
// typed set of fingerprints) adds itself.
func (s *Scene) Shown(f graph.Fingerprint, inScene bool) int {
	n := 0
	if s != nil {
		n = s.shown[f]
	}
	if inScene {
		return max(n, 1)
	}
	return n + 1
}

// InScene reports whether the device with this key is present in the snapshot.
func (s *Scene) InScene(key string) bool { return s != nil && key != "" && s.keys[key] }

// Subject is one set of fingerprints to match: a device, or fingerprints typed by a user.
type Subject struct {
	Fingerprints []graph.Fingerprint
	InScene      bool // the subject is one of the scene's present devices
}

// Evidence is what the matcher reads: the hint index's answer for the subjects'
// fingerprints and the candidate identities it loaded.
type Evidence struct {
	Holders    map[graph.Fingerprint][]string
	Identities map[string]*graph.Identity
}

// Weights of evidence that does not make a match high (rule 4).
const (
	wUnitShared   = 0.3
	wModel        = 0.3
	wPlace        = 0.15
	wName         = 0.1
	wNamesMax     = 0.3
	capNotHigh    = 0.75
	mediumFrom    = 0.4
	capDiffUnit   = 0.3
	maxLoaded     = 4 // candidates per subject whose identity is loaded
	maxCandidates = 5 // candidates a match lists
)

type rule int

const (
	ruleNone rule = iota
	rulePlace
	ruleModelName
	ruleUnit
)

// scored is one candidate's reading before it becomes a graph.Candidate.
type scored struct {
	id        string
	score     float64
	rule      rule
	ambiguous bool
	reasons   []graph.MatchReason
	twinOf    []string // other identities holding the same model, for the place rule
	summary   string
}

// Matcher reads fingerprints against the identities through the store's hint index.
type Matcher struct {
	Store MatchStore
}

// MatchStore is what matching reads: the hint index and identities by id.
type MatchStore interface {
	FindHintHolders(ctx context.Context, fps []graph.Fingerprint) (map[graph.Fingerprint][]string, error)
	FindIdentities(ctx context.Context, f graph.IdentityFilter) ([]*graph.Identity, int, string, error)
}

// MatchSubjects matches every subject in one pass: one batched hint-index lookup for all
// their fingerprints and one batched load of the best candidates.
func (m *Matcher) MatchSubjects(ctx context.Context, scene *Scene, subjects []Subject) ([]*graph.Match, error) {
	return m.match(ctx, scene, subjects, nil)
}

// overlay makes the index read as if a bind had happened (dry runs).
type overlay struct {
	ident *graph.Identity // the identity after the bind (hints included)
	add   []graph.Fingerprint
	moved map[graph.Fingerprint]bool // unit hints taken from their other holder
}

func (o *overlay) apply(ev *Evidence) {
	if o == nil {
		return
	}
	ident := *o.ident
	ident.Hints = nil
	for _, f := range o.ident.Hints {
		hs := ev.Holders[f]
		if f.Class() == graph.ClassUnit && !o.moved[f] && len(hs) > 0 && !contains(hs, ident.ID) {
			continue // held elsewhere: the bind would be refused as a conflict
		}
		ident.Hints = append(ident.Hints, f)
	}
	for _, f := range o.add {
		hs := ev.Holders[f]
		if !graph.ContainsFingerprint(ident.Hints, f) {
			continue
		}
		if o.moved[f] {
			hs = nil
		}
		if !contains(hs, ident.ID) {
			hs = append(append([]string(nil), hs...), ident.ID)
		}
		ev.Holders[f] = hs
	}
	ev.Identities[ident.ID] = &ident
}

func (m *Matcher) match(ctx context.Context, scene *Scene, subjects []Subject, ov *overlay) ([]*graph.Match, error) {
	var all []graph.Fingerprint
	seen := map[graph.Fingerprint]bool{}
	for i := range subjects {
		subjects[i].Fingerprints = dedupe(subjects[i].Fingerprints)
		for _, f := range subjects[i].Fingerprints {
			if !seen[f] {
				seen[f] = true
				all = append(all, f)
			}
		}
	}
	ev := &Evidence{Holders: map[graph.Fingerprint][]string{}, Identities: map[string]*graph.Identity{}}
	if len(all) > 0 {
		h, err := m.Store.FindHintHolders(ctx, all)
		if err != nil {
			return nil, fmt.Errorf("find hint holders: %w", err)
		}
		ev.Holders = h
		if ev.Holders == nil {
			ev.Holders = map[graph.Fingerprint][]string{}
		}
	}
	if ov != nil {
		ov.apply(ev)
	}
	// Load the few leading candidates of each subject: their other hints decide
	// contradictions and moved ports, their names the match's name.
	want := map[string]bool{}
	for _, s := range subjects {
		for _, c := range Candidates(s, scene, ev) {
			want[c] = true
		}
	}
	if ov != nil {
		delete(want, ov.ident.ID)
	}
	if len(want) > 0 {
		ids := make([]string, 0, len(want))
		for id := range want {
			ids = append(ids, id)
		}
		loaded, err := loadIdentities(ctx, m.Store, ids)
		if err != nil {
			return nil, err
		}
		for id, x := range loaded {
			ev.Identities[id] = x
		}
	}
	out := make([]*graph.Match, len(subjects))
	for i, s := range subjects {
		out[i] = Score(s, scene, ev)
	}
	return out, nil
}

// loadIdentities loads identities by id in pages of the store's identity filter.
func loadIdentities(ctx context.Context, st MatchStore, ids []string) (map[string]*graph.Identity, error) {
	sort.Strings(ids)
	out := make(map[string]*graph.Identity, len(ids))
	for start := 0; start < len(ids); start += graph.MaxPageSize {
		chunk := ids[start:min(start+graph.MaxPageSize, len(ids))]
		after := ""
		for {
			page, _, next, err := st.FindIdentities(ctx, graph.IdentityFilter{IDs: chunk, First: graph.MaxPageSize, After: after})
			if err != nil {
				return nil, fmt.Errorf("load candidates: %w", err)
			}
			for _, x := range page {
				out[x.ID] = x
			}
			if next == "" || len(page) == 0 {
				break
			}
			after = next
		}
	}
	return out, nil
}

// Candidates returns the identities worth loading for a subject: those holding its
// strongest evidence, best first, at most a few.
func Candidates(s Subject, scene *Scene, ev *Evidence) []string {
	raw := map[string]float64{}
	for _, f := range s.Fingerprints {
		for _, id := range ev.Holders[f] {
			raw[id] += classWeight(f.Class())
		}
	}
	ids := make([]string, 0, len(raw))
	for id := range raw {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if raw[ids[i]] != raw[ids[j]] {
			return raw[ids[i]] > raw[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > maxLoaded {
		ids = ids[:maxLoaded]
	}
	return ids
}

func classWeight(c graph.Class) float64 {
	switch c {
	case graph.ClassUnit:
		return 1
	case graph.ClassModel:
		return wModel
	case graph.ClassPlace:
		return wPlace
	default:
		return wName
	}
}

// Score reads one subject against the evidence following the package's scoring rules.
// It is pure: everything it needs is in its arguments.
func Score(s Subject, scene *Scene, ev *Evidence) *graph.Match {
	fps := dedupe(s.Fingerprints)
	byID := map[string][]graph.Fingerprint{}
	for _, f := range fps {
		for _, id := range ev.Holders[f] {
			byID[id] = append(byID[id], f)
		}
	}
	if len(byID) == 0 {
		m := &graph.Match{Confidence: graph.Low, Explanation: []graph.MatchReason{}}
		if len(fps) == 0 {
			m.Summary = "no fingerprints to match"
		} else {
			m.Summary = "no identity holds any of these fingerprints; bind it to give it one"
		}
		return m
	}
	cands := make([]*scored, 0, len(byID))
	for id, agree := range byID {
		cands = append(cands, scoreOne(id, agree, fps, s.InScene, scene, ev))
	}
	// A unit fingerprint settles which unit this is: other candidates are at most medium.
	best := ruleNone
	for _, c := range cands {
		best = max(best, c.rule)
	}
	for _, c := range cands {
		if c.rule != ruleNone && c.rule < best {
			c.rule = ruleNone
			c.score = min(c.score, capNotHigh)
			c.reasons = append(c.reasons, graph.MatchReason{Note: "another identity matches on stronger evidence"})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].rule != cands[j].rule {
			return cands[i].rule > cands[j].rule
		}
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].id < cands[j].id
	})
	top := cands[0]
	m := &graph.Match{IdentityID: top.id, Score: round(top.score), Explanation: top.reasons}
	if x := ev.Identities[top.id]; x != nil {
		m.Name = x.Name
	}
	tie := len(cands) > 1 && cands[1].rule == top.rule && cands[1].score == top.score
	if tie && top.rule != ruleNone {
		// Two identities high on the same footing: neither can be trusted.
		for _, c := range cands[:2] {
			c.rule = ruleNone
			c.score = min(c.score, capNotHigh)
		}
		m.Score = round(top.score)
	}
	m.Ambiguous = top.ambiguous || tie
	switch {
	case top.rule != ruleNone && !m.Ambiguous:
		m.Confidence = graph.High
	case m.Score >= mediumFrom:
		m.Confidence = graph.Medium
	default:
		m.Confidence = graph.Low
	}
	if m.Explanation == nil {
		m.Explanation = []graph.MatchReason{}
	}
	if m.Ambiguous {
		// Say where the rivals were known too: the ports are what a person can check.
		m.Explanation = append([]graph.MatchReason(nil), m.Explanation...)
		for _, c := range cands[1:] {
			if c.score != top.score {
				continue
			}
			for _, r := range c.reasons {
				if r.Weight == 0 && r.Class == graph.ClassPlace {
					m.Explanation = append(m.Explanation, r)
				}
			}
		}
	}
	m.Summary = summary(m, top, cands)
	for _, c := range cands[:min(len(cands), maxCandidates)] {
		cc := graph.Candidate{IdentityID: c.id, Score: round(c.score), Reasons: c.reasons}
		if x := ev.Identities[c.id]; x != nil {
			cc.Name = x.Name
		}
		switch {
		case c.rule != ruleNone && !(c == top && m.Ambiguous):
			cc.Confidence = graph.High
		case c.score >= mediumFrom:
			cc.Confidence = graph.Medium
		default:
			cc.Confidence = graph.Low
		}
		m.Candidates = append(m.Candidates, cc)
	}
	return m
}

func scoreOne(id string, agree, fps []graph.Fingerprint, inScene bool, scene *Scene, ev *Evidence) *scored {
	c := &scored{id: id}
	graph.SortFingerprints(agree)
	ident := ev.Identities[id]
	others := func(f graph.Fingerprint) []string {
		var o []string
		for _, h := range ev.Holders[f] {
			if h != id {
				o = append(o, h)
			}
		}
		return o
	}
	shown := func(f graph.Fingerprint) int { return scene.Shown(f, inScene) }
	reason := func(f graph.Fingerprint, w float64, note string, args ...any) {
		c.reasons = append(c.reasons, graph.MatchReason{Kind: f.Kind, Value: f.Value, Class: f.Class(), Weight: round(w), Note: fmt.Sprintf(note, args...)})
	}

	var (
		unitHigh            bool
		model, modelUnique  *graph.Fingerprint
		uniqueNames, names  []graph.Fingerprint
		place, placeUnique  *graph.Fingerprint
		raw, nameW          float64
		sharedWith          = map[string]bool{}
		twinDevices         int
		ambiguousUnitHolder []string
	)
	for i := range agree {
		f := agree[i]
		o := others(f)
		for _, x := range o {
			sharedWith[x] = true
		}
		n := shown(f)
		switch f.Class() {
		case graph.ClassUnit:
			switch {
			case len(o) > 0:
				ambiguousUnitHolder = o
				raw += wUnitShared
				reason(f, wUnitShared, "unit fingerprint, but %s too: ambiguous", holds(o))
			case n > 1:
				raw += wUnitShared
				reason(f, wUnitShared, "unit fingerprint, but %d present devices show it (cloned serial): counts like a model", n)
			default:
				unitHigh = true
				reason(f, 1, "unit fingerprint: one unit in the world, held only by %s and shown only by this device", id)
			}
		case graph.ClassModel:
			f := f
			model = &f
			if len(o) == 0 && n == 1 {
				modelUnique = &f
			}
			twinDevices = max(twinDevices, n)
			raw += wModel
		case graph.ClassPlace:
			f := f
			place = &f
			if len(o) == 0 && n == 1 {
				placeUnique = &f
			}
			raw += wPlace
		case graph.ClassName:
			names = append(names, f)
			if len(o) == 0 && n == 1 {
				uniqueNames = append(uniqueNames, f)
			}
			if nameW < wNamesMax {
				nameW += wName
				raw += wName
			}
		}
	}
	shared := sortedKeys(sharedWith)

	// Contradictions: the identity's own unit fingerprints against the device's.
	contra, diffUnit := contradiction(ident, fps)

	switch {
	case unitHigh:
		c.rule, c.score = ruleUnit, 1
		c.summary = "a unit fingerprint held only by this identity"
	case modelUnique != nil && len(uniqueNames) > 0:
		c.rule = ruleModelName
		c.score = 0.85 + 0.05*float64(min(len(uniqueNames), 2))
		if place != nil {
			c.score += 0.05
		}
		c.summary = "model and names agree, held only by this identity and shown only by this device"
	case model != nil && placeUnique != nil:
		c.rule, c.score = rulePlace, 0.8
		c.twinOf = shared
		if len(shared) > 0 || twinDevices > 1 {
			c.summary = "the port is the only evidence: identical units swapped between ports can be told apart by nothing else"
		} else {
			c.summary = "model and port agree; no serial or name tells this unit apart, so the port is the only evidence"
		}
	default:
		c.score = min(raw, capNotHigh)
	}

	// Explain model, place and names now that the rule is known.
	if model != nil {
		o := others(*model)
		switch {
		case c.rule == ruleModelName || (modelUnique != nil && c.rule != rulePlace):
			reason(*model, wModel, "model agrees; held only by %s and shown only by this device", id)
		case len(o) > 0 && shown(*model) > 1:
			reason(*model, wModel, "model agrees, but %s too and %d present devices show it (twins): it cannot tell them apart", holds(o), shown(*model))
		case len(o) > 0:
			reason(*model, wModel, "model agrees, but %s too (identical units): it cannot tell them apart", holds(o))
		case shown(*model) > 1:
			reason(*model, wModel, "model agrees, but %d present devices show it (twins): it cannot tell them apart", shown(*model))
		default:
			reason(*model, wModel, "model agrees")
		}
	}
	for _, f := range names {
		o := others(f)
		switch {
		case len(o) > 0:
			reason(f, wName, "name agrees, but %s too", holds(o))
		case shown(f) > 1:
			reason(f, wName, "name agrees, but %d present devices show it", shown(f))
		case c.rule == ruleModelName:
			reason(f, wName, "name agrees with the model; held only by %s and shown only by this device", id)
		default:
			reason(f, wName, "name agrees")
		}
	}
	if place != nil {
		o := others(*place)
		switch {
		case c.rule == rulePlace && (len(c.twinOf) > 0 || twinDevices > 1):
			who := "another present device of the same model"
			if len(c.twinOf) > 0 {
				who = strings.Join(c.twinOf, ", ") + " (same model and names)"
			}
			reason(*place, wPlace, "the port is the only evidence telling it from %s: identical units swapped between ports can be told apart by nothing else", who)
		case c.rule == rulePlace:
			reason(*place, wPlace, "same port as when bound; with the model it is the only evidence (no serial or names)")
		case len(o) > 0:
			reason(*place, wPlace, "same port, but %s too", holds(o))
		case c.rule == ruleModelName:
			reason(*place, 0.05, "same port as before (the port is not the unit; it only adds a little)")
		default:
			reason(*place, wPlace, "same port (a port is where a unit is, not which unit)")
		}
	} else if ident != nil {
		for _, h := range ident.Hints {
			if h.Class() != graph.ClassPlace {
				continue
			}
			port := devicePort(fps)
			other := scene != nil && scene.shown[h] > 0
			was, _ := graph.SplitHost(h.Value)
			now, _ := graph.SplitHost(port)
			switch {
			case was != "" && now != "" && was != now:
				// On a fleet a port names its host: the unit is on another machine now.
				c.reasons = append(c.reasons, graph.MatchReason{Kind: h.Kind, Value: h.Value, Class: h.Class(), Note: fmt.Sprintf("%s was known on port %s; this device is on %s: it moved from host %s to host %s (a host and port are where a unit is, not which unit, so this does not count against it)", id, h.Value, port, was, now)})
			case port != "" && other:
				c.reasons = append(c.reasons, graph.MatchReason{Kind: h.Kind, Value: h.Value, Class: h.Class(), Note: fmt.Sprintf("%s was known on port %s, where another present device is now; this one is on %s", id, h.Value, port)})
			case port != "" && c.rule == ruleNone:
				c.reasons = append(c.reasons, graph.MatchReason{Kind: h.Kind, Value: h.Value, Class: h.Class(), Note: fmt.Sprintf("%s was known on port %s; this device is on %s", id, h.Value, port)})
			case port != "":
				c.reasons = append(c.reasons, graph.MatchReason{Kind: h.Kind, Value: h.Value, Class: h.Class(), Note: fmt.Sprintf("%s was known on port %s; this device is on %s: it moved ports (a port is where a unit is, not which unit, so this does not count against it)", id, h.Value, port)})
			}
		}
	}

	if len(ambiguousUnitHolder) > 0 {
		c.ambiguous = true
	}
	if c.rule == ruleNone && len(shared) > 0 && model != nil {
		// Model (and names) claimed by several identities with nothing to tell them apart.
		c.ambiguous = true
	}
	if contra != "" && c.rule != ruleUnit {
		if diffUnit {
			c.score = min(c.score, capDiffUnit)
		} else {
			c.score = min(c.score, capNotHigh)
		}
		c.rule = ruleNone
		c.reasons = append(c.reasons, graph.MatchReason{Note: contra})
	}
	return c
}

// contradiction reports whether the identity holds a unit fingerprint the device should
// show and does not: a different value of the same kind (a different unit, diff=true) or
// none at all.
func contradiction(ident *graph.Identity, fps []graph.Fingerprint) (note string, diff bool) {
	if ident == nil {
		return "", false
	}
	for _, h := range ident.Hints {
		if h.Class() != graph.ClassUnit || graph.ContainsFingerprint(fps, h) {
			continue
		}
		prefix := func(f graph.Fingerprint) string {
			if f.Kind != graph.FPUSBSerial {
				return ""
			}
			p := strings.SplitN(f.Value, ":", 3)
			if len(p) < 2 {
				return ""
			}
			return p[0] + ":" + p[1]
		}
		var same *graph.Fingerprint
		for i := range fps {
			if fps[i].Kind == h.Kind && prefix(fps[i]) == prefix(h) {
				same = &fps[i]
				break
			}
		}
		if same != nil {
			return fmt.Sprintf("%s holds %s but this device shows %s: a different unit", ident.ID, h, *same), true
		}
		if h.Kind == graph.FPUSBSerial && graph.ContainsFingerprint(fps, graph.Fingerprint{Kind: graph.FPUSBID, Value: prefix(h)}) {
			return fmt.Sprintf("%s holds %s but this device shows no serial: perhaps a different unit of the same model", ident.ID, h), false
		}
	}
	return "", false
}

func summary(m *graph.Match, top *scored, cands []*scored) string {
	who := m.IdentityID
	if m.Name != "" {
		who = fmt.Sprintf("%s (%s)", m.IdentityID, m.Name)
	}
	switch {
	case m.Confidence == graph.High:
		s := fmt.Sprintf("high: %s — %s", who, top.summary)
		for _, r := range top.reasons {
			if r.Weight == 0 && strings.Contains(r.Note, "moved ports") {
				s += "; it moved ports, which does not count against it"
				break
			}
		}
		return s + movedHosts(top)
	case m.Ambiguous:
		var ids []string
		for _, c := range cands {
			if c.score == top.score || contains(top.twinOf, c.id) {
				ids = append(ids, c.id)
			}
		}
		if len(ids) < 2 {
			for _, c := range cands {
				if c != top && len(ids) < 3 {
					ids = append(ids, c.id)
				}
			}
		}
		return fmt.Sprintf("%s, ambiguous: the evidence fits %s and nothing tells them apart; bind the device to say which", m.Confidence, strings.Join(uniq(append([]string{top.id}, ids...)), " and "))
	default:
		return fmt.Sprintf("%s: best candidate %s, but the evidence is not enough to be sure; bind the device to confirm", m.Confidence, who) + movedHosts(top)
	}
}

// movedHosts is "; it moved from host <was>" when the candidate was known on another
// host's port, else "".
func movedHosts(top *scored) string {
	for _, r := range top.reasons {
		if r.Weight != 0 || r.Kind != graph.FPUSBPath {
			continue
		}
		if _, rest, ok := strings.Cut(r.Note, ": it moved from host "); ok {
			was, _, _ := strings.Cut(rest, " ")
			return "; it moved from host " + was
		}
	}
	return ""
}

// devicePort returns the device's usb_path, or "".
func devicePort(fps []graph.Fingerprint) string {
	for _, f := range fps {
		if f.Kind == graph.FPUSBPath {
			return f.Value
		}
	}
	return ""
}

// holds renders "identity:a holds it" / "identity:a, identity:b hold it".
func holds(ids []string) string {
	if len(ids) == 1 {
		return ids[0] + " holds it"
	}
	return strings.Join(ids, ", ") + " hold it"
}

func dedupe(fps []graph.Fingerprint) []graph.Fingerprint {
	if len(fps) < 2 {
		return fps
	}
	seen := make(map[graph.Fingerprint]bool, len(fps))
	out := make([]graph.Fingerprint, 0, len(fps))
	for _, f := range fps {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func round(f float64) float64 { return float64(int(f*100+0.5)) / 100 }
