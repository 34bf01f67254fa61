package graph

import (
	"math"
	"unicode/utf8"
)

// The caps on one write's inputs and the checks that enforce them. They run at the
// service/store boundary every interface passes through (the CLI opening the file, the
// socket server, GraphQL, MCP, discovery and robots alike), so the limits and their
// problem text are the same everywhere; an edge may only add advice in its own vocabulary.
// Text caps (MaxNameLen, MaxNoteLen, MaxDataLen, MaxMsgLen) sit beside ValidateText in
// text.go; relation caps beside the relation checks in relation_validate.go.
const (
	// MaxTagsPerCall caps the tags one call adds, and separately the tags it removes.
	MaxTagsPerCall = 32
	// MaxHintsPerCall caps the hints one call adds or removes (identity create included).
	MaxHintsPerCall = 32
	// MaxFingerprintsPerMatch caps the fingerprints one match reads.
	MaxFingerprintsPerMatch = 64
)

// ValidateMessage checks a change's "why" (the changelog message): valid UTF-8, no NUL
// bytes, at most MaxMsgLen bytes; empty is fine (no message). The store refuses a write
// whose context carries a bad message before its transaction begins.
func ValidateMessage(msg string) error {
	return ValidateText("message", msg, 0, MaxMsgLen)
}

// perCall refuses a list of more than max items given to one call. Every per-call cap
// says it in these words, naming the field, the count and the cap.
func perCall(field, what string, n, max int) error {
	if n <= max {
		return nil
	}
	return FieldErrorf(ELIMIT, field, "%s has %d %s; the limit is %d per call: split the change into several calls", field, n, what, max)
}

// NormalizeTagOps normalises one call's tag change: at most MaxTagsPerCall tags to add and
// as many to remove (counted as given, before normalising, so a huge list is refused at
// once), each normalised with NormalizeTag, duplicates dropped keeping the first's place,
// and no tag both added and removed. Linear in the number of tags.
func NormalizeTagOps(add, remove []string) (adds, removes []string, err error) {
	if err := perCall("add", "tags", len(add), MaxTagsPerCall); err != nil {
		return nil, nil, err
	}
	if err := perCall("remove", "tags", len(remove), MaxTagsPerCall); err != nil {
		return nil, nil, err
	}
	if adds, err = NormalizeTagSet(add); err != nil {
		return nil, nil, err
	}
	if removes, err = NormalizeTagSet(remove); err != nil {
		return nil, nil, err
	}
	if len(adds) > 0 && len(removes) > 0 {
		removed := make(map[string]bool, len(removes))
		for _, t := range removes {
			removed[t] = true
		}
		for _, t := range adds {
			if removed[t] {
				return nil, nil, FieldErrorf(EINVALID, "tags", "tag %s is both added and removed; give it once", t)
			}
		}
	}
	return adds, removes, nil
}

// NormalizeTags normalises the tags a new node starts with (field "tags"): the same cap,
// normalisation and de-duplication as the tags a call adds.
func NormalizeTags(tags []string) ([]string, error) {
	if err := perCall("tags", "tags", len(tags), MaxTagsPerCall); err != nil {
		return nil, err
	}
	return NormalizeTagSet(tags)
}

// NormalizeTagSet normalises a node's tags as a whole (an import, a filter, the capped
// calls above): each tag normalised, duplicates dropped, order kept; linear, and no cap.
func NormalizeTagSet(tags []string) ([]string, error) {
	return normalizeSet(tags, NormalizeTag, nil)
}

// NormalizeHints normalises the hints one call adds or removes (field "hints"): at most
// MaxHintsPerCall, each a valid fingerprint, none given twice.
func NormalizeHints(fps []Fingerprint) ([]Fingerprint, error) {
	if err := perCall("hints", "hints", len(fps), MaxHintsPerCall); err != nil {
		return nil, err
	}
	return NormalizeHintSet(fps)
}

// NormalizeHintSet is NormalizeHints without the per-call cap, for an identity's hints as
// a whole (an import, a bind copying a device's fingerprints).
func NormalizeHintSet(fps []Fingerprint) ([]Fingerprint, error) {
	return normalizeSet(fps, normalizeFP, func(n Fingerprint) error {
		return FieldErrorf(EINVALID, "hints", "hint %s is given twice; give each hint once", n)
	})
}

func normalizeFP(f Fingerprint) (Fingerprint, error) { return NormalizeFingerprint(f.Kind, f.Value) }

// normalizeSet normalises each item of in, keeping the order, in one pass: an item
// normalised to one seen before is dropped, or refused with twice's error when it is
// given.
func normalizeSet[S any, T comparable](in []S, norm func(S) (T, error), twice func(T) error) ([]T, error) {
	out := make([]T, 0, len(in))
	seen := make(map[T]bool, len(in))
	for _, x := range in {
		n, err := norm(x)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			if twice != nil {
				return nil, twice(n)
			}
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// NormalizeMatchFingerprints normalises the fingerprints a match reads (field
// "fingerprints"): at least one, at most MaxFingerprintsPerMatch, each valid; a repeated
// one counts once.
func NormalizeMatchFingerprints(fps []Fingerprint) ([]Fingerprint, error) {
	if len(fps) == 0 {
		return nil, FieldErrorf(EINVALID, "fingerprints", "no fingerprints given; pass at least one kind=value, e.g. usb_id=0582:01a9")
	}
	if len(fps) > MaxFingerprintsPerMatch {
		return nil, FieldErrorf(ELIMIT, "fingerprints", "fingerprints has %d fingerprints; the limit is %d per match: match fewer at a time", len(fps), MaxFingerprintsPerMatch)
	}
	return normalizeSet(fps, normalizeFP, nil)
}

// ValidateGoal checks a navigation goal before any robot moves: x and y finite metres
// within ±10000 (ValidateCoordinate) and timeout_s a finite number. Its range (and the
// geofence) is the fleet's to check: it knows its robots' limits.
func ValidateGoal(g Goal) error {
	if err := ValidateCoordinate("x", g.X); err != nil {
		return err
	}
	if err := ValidateCoordinate("y", g.Y); err != nil {
		return err
	}
	if math.IsNaN(g.TimeoutS) || math.IsInf(g.TimeoutS, 0) {
		return FieldErrorf(EINVALID, "timeout_s", "timeout_s is not a finite number; give seconds, or omit it for the default")
	}
	return nil
}

// ClipMessage shortens a message devgraph writes itself (an auto-bind's summary of a
// match) to at most MaxMsgLen bytes, cutting at a rune boundary and marking the cut with
// "…", so it passes ValidateMessage. Text a user typed is refused, never clipped.
func ClipMessage(s string) string {
	if len(s) <= MaxMsgLen {
		return s
	}
	const mark = "…"
	cut := MaxMsgLen - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
