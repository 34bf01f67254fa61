package graph

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// FingerprintKind names a kind of evidence. Unknown kinds are rejected, never coerced.
type FingerprintKind string

const (
	FPUSBSerial      FingerprintKind = "usb_serial"      // vid:pid:serial — unit
	FPMAC            FingerprintKind = "mac"             // aa:bb:cc:dd:ee:ff — unit
	FPRobotSerial    FingerprintKind = "robot_serial"    // unit
	FPUSBID          FingerprintKind = "usb_id"          // vid:pid — model
	FPUSBPath        FingerprintKind = "usb_path"        // bus-port path, 3-3.1.2 — place
	FPALSACardID     FingerprintKind = "alsa_card_id"    // name
	FPALSALongname   FingerprintKind = "alsa_longname"   // name
	FPMIDIClient     FingerprintKind = "midi_client"     // sequencer client name — name
	FPPipeWireDevice FingerprintKind = "pipewire_device" // device.name — name
)

// Class decides how a fingerprint kind counts in a match.
type Class string

const (
	ClassUnit  Class = "unit"  // one unit in the world: alone it is enough; two identities may not hold it
	ClassModel Class = "model" // every unit of a model shares it
	ClassPlace Class = "place" // the port, not the unit
	ClassName  Class = "name"  // what a subsystem calls it
)

var kindClass = map[FingerprintKind]Class{
	FPUSBSerial:      ClassUnit,
	FPMAC:            ClassUnit,
	FPRobotSerial:    ClassUnit,
	FPUSBID:          ClassModel,
	FPUSBPath:        ClassPlace,
	FPALSACardID:     ClassName,
	FPALSALongname:   ClassName,
	FPMIDIClient:     ClassName,
	FPPipeWireDevice: ClassName,
}

// FingerprintKinds lists every known kind, sorted.
func FingerprintKinds() []FingerprintKind {
	out := make([]FingerprintKind, 0, len(kindClass))
	for k := range kindClass {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Class returns the kind's class, or "" for an unknown kind.
func (k FingerprintKind) Class() Class { return kindClass[k] }

// Valid reports whether k is a known kind.
func (k FingerprintKind) Valid() bool { _, ok := kindClass[k]; return ok }

// Fingerprint is one piece of (kind, value) evidence. A device shows fingerprints; an
// identity stores them as hints.
type Fingerprint struct {
	Kind  FingerprintKind `json:"kind"`
	Value string          `json:"value"`
}

func (f Fingerprint) String() string { return string(f.Kind) + "=" + f.Value }

// Class returns the fingerprint's class.
func (f Fingerprint) Class() Class { return f.Kind.Class() }

const maxFingerprintValue = 512

var (
	hex4Re    = regexp.MustCompile(`^[0-9a-f]{4}$`)
	usbPathRe = regexp.MustCompile(`^[0-9]{1,3}-[0-9]{1,3}(\.[0-9]{1,3}){0,6}$`)
	macRe     = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)
)

// ParseFingerprint parses "kind=value" (or "kind:value" for kinds whose values have no
// leading kind prefix ambiguity) and normalises it.
func ParseFingerprint(s string) (Fingerprint, error) {
	i := strings.IndexByte(s, '=')
	if i < 0 {
		return Fingerprint{}, FieldErrorf(EINVALID, "fingerprint", "fingerprint %q: want kind=value, e.g. usb_id=0582:01a9 (kinds: %s)", s, kindList())
	}
	return NormalizeFingerprint(FingerprintKind(strings.TrimSpace(s[:i])), s[i+1:])
}

func kindList() string {
	ks := FingerprintKinds()
	ss := make([]string, len(ks))
	for i, k := range ks {
		ss[i] = string(k)
	}
	return strings.Join(ss, ", ")
}

// NormalizeFingerprint validates a fingerprint typed by a user or read from hardware and
// returns its canonical form: hex lowercased for vid/pid and MACs, whitespace trimmed.
// Serials and names keep their case; text read from hardware should be escaped with
// EscapeHardwareText before it gets here.
func NormalizeFingerprint(kind FingerprintKind, value string) (Fingerprint, error) {
	if !kind.Valid() {
		return Fingerprint{}, FieldErrorf(EINVALID, "kind", "unknown fingerprint kind %q; known kinds: %s", kind, kindList())
	}
	v := strings.TrimSpace(value)
	if err := ValidateText("value", v, 1, maxFingerprintValue); err != nil {
		// Say which fingerprint: a call may carry 32 of them.
		return Fingerprint{}, FieldErrorf(EINVALID, "value", "fingerprint %s: %s", kind, ErrorMessage(err))
	}
	bad := func(want string) error {
		return FieldErrorf(EINVALID, "value", "%s value %q: want %s", kind, value, want)
	}
	switch kind {
	case FPUSBID:
		v = strings.ToLower(v)
		p := strings.Split(v, ":")
		if len(p) != 2 || !hex4Re.MatchString(p[0]) || !hex4Re.MatchString(p[1]) {
			return Fingerprint{}, bad("vid:pid as 4 hex digits each, e.g. 0582:01a9")
		}
	case FPUSBSerial:
		p := strings.SplitN(v, ":", 3)
		if len(p) != 3 || !hex4Re.MatchString(strings.ToLower(p[0])) || !hex4Re.MatchString(strings.ToLower(p[1])) || p[2] == "" {
			return Fingerprint{}, bad("vid:pid:serial, e.g. 0582:01a9:A1B2C3")
		}
		v = strings.ToLower(p[0]) + ":" + strings.ToLower(p[1]) + ":" + p[2]
	case FPMAC:
		v = strings.ToLower(strings.ReplaceAll(v, "-", ":"))
		if !macRe.MatchString(v) {
			return Fingerprint{}, bad("six hex pairs, e.g. 00:1b:44:11:3a:b7")
		}
	case FPUSBPath:
		// On a fleet store the path carries its host: studio-a/3-3.1.2 (graph.QualifyHost).
		if _, path := SplitHost(v); !usbPathRe.MatchString(path) {
			return Fingerprint{}, bad("a bus-port path such as 3-3.1.2 (on a fleet store, host/path such as studio-a/3-3.1.2)")
		}
	}
	return Fingerprint{Kind: kind, Value: v}, nil
}

// SortFingerprints sorts by class strength (unit, model, place, name), then kind, then value.
func SortFingerprints(fps []Fingerprint) {
	rank := map[Class]int{ClassUnit: 0, ClassModel: 1, ClassPlace: 2, ClassName: 3}
	sort.SliceStable(fps, func(i, j int) bool {
		a, b := fps[i], fps[j]
		if ra, rb := rank[a.Class()], rank[b.Class()]; ra != rb {
			return ra < rb
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Value < b.Value
	})
}

// ContainsFingerprint reports whether fps holds f.
func ContainsFingerprint(fps []Fingerprint, f Fingerprint) bool {
	for _, x := range fps {
		if x == f {
			return true
		}
	}
	return false
}

// String form used in messages: kind=value.
func FormatFingerprints(fps []Fingerprint) string {
	ss := make([]string, len(fps))
	for i, f := range fps {
		ss[i] = f.String()
	}
	return fmt.Sprint(strings.Join(ss, ", "))
}
