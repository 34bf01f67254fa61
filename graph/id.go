package graph

import (
	"context"
	"regexp"
	"strings"
)

// Node kinds, the prefix of every id.
type Kind string

const (
	KindIdentity Kind = "identity"
	KindDevice   Kind = "device"
	KindNote     Kind = "note"
	KindTag      Kind = "tag"
	KindEvent    Kind = "event"
)

var slugRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidateSlug checks an identity slug: [a-z0-9][a-z0-9._-]{0,63}.
func ValidateSlug(slug string) error {
	if err := ValidateText("slug", slug, 0, 0); err != nil {
		return err // not UTF-8 or a NUL: said as every transport says it
	}
	if !slugRe.MatchString(slug) {
		return FieldErrorf(EINVALID, "slug", "slug %q: want 1-64 chars of a-z 0-9 . _ - starting with a letter or digit, e.g. roland-jd-xi", slug)
	}
	return nil
}

// Slugify makes a slug from a name: "Roland JD-Xi" → "roland-jd-xi". Characters outside
// [a-z0-9._-] become dashes; runs of dashes collapse; the result is cut to 64 chars.
// It returns "" when nothing usable is left.
func Slugify(name string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if f, ok := foldLatin[r]; ok {
			sb.WriteString(f)
			dash = false
			continue
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_':
			sb.WriteRune(r)
			dash = false
		default:
			if !dash && sb.Len() > 0 {
				sb.WriteByte('-')
				dash = true
			}
		}
	}
	s := strings.Trim(sb.String(), "-._")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-._")
	}
	if s == "" || ValidateSlug(s) != nil {
		return ""
	}
	return s
}

// IdentityID returns "identity:<slug>".
func IdentityID(slug string) string { return string(KindIdentity) + ":" + slug }

// DeviceID returns "device:<key>".
func DeviceID(key string) string { return string(KindDevice) + ":" + key }

// NoteID returns a fresh "note:<uuidv7>".
func NewNoteID() string { return string(KindNote) + ":" + NewUUIDv7() }

// SplitID splits "<kind>:<local>" into its kind and local part. ok is false when id has
// no known kind prefix.
func SplitID(id string) (kind Kind, local string, ok bool) {
	i := strings.IndexByte(id, ':')
	if i < 0 {
		return "", id, false
	}
	switch k := Kind(id[:i]); k {
	case KindIdentity, KindDevice, KindNote, KindTag, KindEvent, KindRelation, KindObserved, KindClient:
		return k, id[i+1:], true
	}
	return "", id, false
}

// KindOf returns the kind prefix of id, or "" when it has none.
func KindOf(id string) Kind {
	k, _, _ := SplitID(id)
	return k
}

// Device ref sources, the prefix of a ref, most physical first.
var RefSources = []string{"usb", "alsa", "pipewire", "robot"}

// IsRef reports whether s looks like a device ref (<source>:<local-id>).
func IsRef(s string) bool {
	_, s = SplitHost(s) // a fleet's ref carries its host: studio-a/usb:3-3.2
	i := strings.IndexByte(s, ':')
	if i <= 0 || i == len(s)-1 {
		return false
	}
	for _, src := range RefSources {
		if s[:i] == src {
			return true
		}
	}
	return false
}

// Resolver turns what a person or a model typed into a node id.
type Resolver interface {
	// ResolveID expands a typed id, bare slug or device ref into a full node id, checking
	// that the node exists. kinds limits what it may resolve to (none: any). ENOTFOUND
	// (with the closest existing id as a suggestion) when nothing matches.
	ResolveID(ctx context.Context, text string, kinds ...Kind) (string, error)
}
