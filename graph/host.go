package graph

import (
	"regexp"
	"strings"
)

// A host is the machine a device is attached to and the robots it drives (DESIGN.md
// "host"). Its name is a slug, the first DNS label of the machine's name, lowercased:
// 1-63 chars of a-z 0-9 and -, starting with a letter or digit. In a bbolt file it is a
// field of each device; on a fleet store refs, device keys and usb_path fingerprints
// carry it before a slash ("studio-a/usb:3-3.2", "device:studio-a/path:0582:0160:3-3.2",
// "studio-a/3-3.2") and actors after an at sign ("cli:alice@studio-a").

// Hosted is a store that knows whose hardware it records: discovery qualifies what it
// observes by it, and reads resolve bare refs on it.
type Hosted interface {
	// Host is this machine's host name.
	Host() string
	// MultiHost reports whether the store is a fleet's: refs, device keys and usb_path
	// fingerprints carry their host (an etcd store) rather than being this machine's
	// alone (a bbolt file).
	MultiHost() bool
}

var hostRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// HostSlug makes a host name from the operating system's host name: its first DNS label,
// lowercased, with every character outside a-z 0-9 - turned into a dash and the ends
// trimmed. "Studio-A.lab.example" → "studio-a". It returns "localhost" when nothing
// usable is left.
func HostSlug(osHostname string) string {
	label, _, _ := strings.Cut(strings.TrimSpace(osHostname), ".")
	var sb strings.Builder
	for _, r := range strings.ToLower(label) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	s := strings.Trim(sb.String(), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "" {
		return "localhost"
	}
	return s
}

// ValidateHost checks a host name given by a person (--host-name, DEVGRAPH_HOST_NAME).
func ValidateHost(name string) error {
	if err := ValidateText("host_name", name, 0, 0); err != nil {
		return err
	}
	if !hostRe.MatchString(name) {
		return FieldErrorf(EINVALID, "host_name", "host name %q: want 1-63 chars of a-z 0-9 - starting with a letter or digit (the first label of the machine's DNS name, lowercased), e.g. studio-a", name)
	}
	return nil
}

// QualifyHost prefixes a ref, device key or usb_path value with its host
// ("studio-a/usb:3-3.2"); s already qualified, or host "", comes back as it is.
func QualifyHost(host, s string) string {
	if host == "" || s == "" {
		return s
	}
	if h, _ := SplitHost(s); h != "" {
		return s
	}
	return host + "/" + s
}

// SplitHost splits a qualified ref, key or usb_path value into its host and the rest;
// host is "" when s carries none. A host is what comes before the first slash when that
// is a valid host name (refs and keys name their source, with a colon, first; usb paths
// hold no slash).
func SplitHost(s string) (host, rest string) {
	i := strings.IndexByte(s, '/')
	if i <= 0 || !hostRe.MatchString(s[:i]) {
		return "", s
	}
	return s[:i], s[i+1:]
}

// QualifyDeviceID qualifies the key of a device id: "device:path:…" →
// "device:studio-a/path:…". Other ids come back as they are.
func QualifyDeviceID(host, id string) string {
	key, ok := strings.CutPrefix(id, string(KindDevice)+":")
	if !ok || host == "" {
		return id
	}
	return DeviceID(QualifyHost(host, key))
}

// QualifyFingerprint qualifies a place fingerprint (usb_path) with its host; the other
// kinds name the thing wherever it is and come back as they are.
func QualifyFingerprint(host string, f Fingerprint) Fingerprint {
	if f.Kind == FPUSBPath {
		f.Value = QualifyHost(host, f.Value)
	}
	return f
}

// QualifyObserved returns a copy of od as the fleet stores it: its key, ref and usb_path
// fingerprints carry host.
func QualifyObserved(host string, od *ObservedDevice) *ObservedDevice {
	cp := *od
	cp.Key, cp.Ref = QualifyHost(host, od.Key), QualifyHost(host, od.Ref)
	cp.Fingerprints = make([]Fingerprint, len(od.Fingerprints))
	for i, f := range od.Fingerprints {
		cp.Fingerprints[i] = QualifyFingerprint(host, f)
	}
	return &cp
}

// ActorAt is actor as a fleet records it, with the host it acted on: "cli:alice" on
// studio-a → "cli:alice@studio-a". An actor that already ends with that host, or host "",
// comes back as it is.
func ActorAt(actor, host string) string {
	if host == "" || actor == "" || strings.HasSuffix(actor, "@"+host) {
		return actor
	}
	return actor + "@" + host
}

// SplitActorHost splits "cli:alice@studio-a" into "cli:alice" and "studio-a"; host is ""
// when the actor names none (the part after the last @ is not a host name).
func SplitActorHost(actor string) (who, host string) {
	i := strings.LastIndexByte(actor, '@')
	if i <= 0 || !hostRe.MatchString(actor[i+1:]) {
		return actor, ""
	}
	return actor[:i], actor[i+1:]
}

// QualifySnapshot returns a copy of snap as a fleet host records it: every device's key,
// ref and usb_path fingerprints, and the device ends of the observed relations, carry host.
func QualifySnapshot(host string, snap *Snapshot) *Snapshot {
	if snap == nil || host == "" {
		return snap
	}
	cp := *snap
	cp.Devices = make([]*ObservedDevice, len(snap.Devices))
	for i, od := range snap.Devices {
		if od != nil {
			cp.Devices[i] = QualifyObserved(host, od)
		}
	}
	cp.Relations = make([]*Relation, len(snap.Relations))
	for i, r := range snap.Relations {
		if r == nil {
			continue
		}
		rc := *r
		rc.From, rc.To = QualifyDeviceID(host, r.From), QualifyDeviceID(host, r.To)
		cp.Relations[i] = &rc
	}
	if snap.Relations == nil {
		cp.Relations = nil
	}
	return &cp
}
