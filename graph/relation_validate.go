package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The one validation of relation input every interface uses (CLI, GraphQL, MCP, the
// socket, the store). Each error is an *Error naming its field and the next step.

// NormalizeRelationType trims and lowercases t, then checks it with ValidateRelationType.
func NormalizeRelationType(t string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(t))
	if err := ValidateRelationType(n); err != nil {
		return "", err
	}
	return n, nil
}

// ValidateRelationType checks a relation type's grammar, [a-z0-9][a-z0-9_-]{0,31}. The
// reserved observed types (via, linked, subscribed) pass: they are valid in filters; only
// a declaration refuses them (NormalizeRelationCreate).
func ValidateRelationType(t string) error {
	if err := ValidateText("type", t, 0, 0); err != nil {
		return err // not UTF-8 or a NUL: said as every transport says it
	}
	if t == "" {
		return FieldErrorf(EINVALID, "type", "type is empty; give a relation type such as %s", strings.Join(SeedRelationTypes, ", ")).Next(ListStep(ListRelationTypes, ""))
	}
	if !relTypeRe.MatchString(t) {
		shown := t
		if len(shown) > 40 || !utf8.ValidString(shown) {
			shown = fmt.Sprintf("%.40q…", shown)
		} else {
			shown = fmt.Sprintf("%q", shown)
		}
		return FieldErrorf(EINVALID, "type", "type %s: want 1-%d chars of a-z 0-9 _ - starting with a letter or digit, e.g. cable or mounted_on", shown, MaxRelationType).Next(ListStep(ListRelationTypes, ""))
	}
	return nil
}

// IsReservedRelationType reports whether t is one only the sources produce.
func IsReservedRelationType(t string) bool { return slices.Contains(ReservedRelationTypes, t) }

// IsSeedRelationType reports whether t is in the seeded vocabulary.
func IsSeedRelationType(t string) bool { return slices.Contains(SeedRelationTypes, t) }

// NormalizePort trims a port name and turns inner runs of white space into one space. A
// port is free text ≤ MaxPort bytes, valid UTF-8 without NUL or control characters; ""
// (no port) is valid. Ports keep the case typed for display and compare by PortKey.
func NormalizePort(p string) (string, error) {
	if !utf8.ValidString(p) {
		return "", FieldErrorf(EINVALID, "port", "port is not valid UTF-8; send text as UTF-8")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", FieldErrorf(EINVALID, "port", "port contains a NUL byte; remove it")
	}
	n := strings.Join(strings.Fields(p), " ")
	for _, r := range n {
		if unicode.IsControl(r) {
			return "", FieldErrorf(EINVALID, "port", "port %q contains a control character; give a plain name such as \"MIDI OUT\"", n)
		}
	}
	if len(n) > MaxPort {
		return "", FieldErrorf(EINVALID, "port", "port is %d bytes; the limit is %d (give a short name such as \"MIDI OUT\")", len(n), MaxPort)
	}
	return n, nil
}

// PortKey is how ports compare: case-insensitively.
func PortKey(p string) string { return strings.ToLower(p) }

// ValidateRelationAttrs checks attrs as they are: ≤ MaxRelationAttrs keys, each key 1-64
// bytes and each value ≤ 256 bytes of valid UTF-8 without NUL, ≤ 4 KiB in all.
func ValidateRelationAttrs(a map[string]string) error {
	if len(a) > MaxRelationAttrs {
		return FieldErrorf(EINVALID, "attrs", "attrs has %d keys; the limit is %d (keep attrs small: kind, length, colour, channel …)", len(a), MaxRelationAttrs)
	}
	size := 0
	for _, k := range sortedKeys(a) {
		v := a[k]
		if k == "" {
			return FieldErrorf(EINVALID, "attrs", "attrs has an empty key; name every attribute, e.g. {\"kind\":\"midi-din\"}")
		}
		if err := ValidateText("attrs key", k, 1, 0); err != nil {
			return FieldErrorf(EINVALID, "attrs", "%s", ErrorMessage(err))
		}
		if len(k) > MaxRelationAttrKey {
			return FieldErrorf(EINVALID, "attrs", "attrs key %.20q… is %d bytes; the limit is %d", k, len(k), MaxRelationAttrKey)
		}
		if err := ValidateText("attrs."+k, v, 0, 0); err != nil {
			// attrs.<key>, as the transports name a JSON path
			return FieldErrorf(EINVALID, "attrs", "%s", ErrorMessage(err))
		}
		if len(v) > MaxRelationAttrVal {
			return FieldErrorf(EINVALID, "attrs", "attrs.%s is %d bytes; the limit is %d", k, len(v), MaxRelationAttrVal)
		}
		size += len(k) + len(v)
	}
	if size > MaxRelationAttrSize {
		return FieldErrorf(EINVALID, "attrs", "attrs are %d bytes in all; the limit is %d (keep long text in a note)", size, MaxRelationAttrSize)
	}
	return nil
}

// NormalizeRelationAttrs trims keys and values and lowercases keys, refusing a blank key
// or value and two keys that become one, then checks the limits. nil or empty gives nil.
func NormalizeRelationAttrs(a map[string]string) (map[string]string, error) {
	if len(a) == 0 {
		return nil, nil
	}
	if len(a) > MaxRelationAttrs {
		return nil, ValidateRelationAttrs(a)
	}
	out := make(map[string]string, len(a))
	for _, k := range sortedKeys(a) {
		v := a[k]
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, FieldErrorf(EINVALID, "attrs", "attrs are not valid UTF-8; send text as UTF-8")
		}
		nk := strings.ToLower(strings.TrimSpace(k))
		nv := strings.TrimSpace(v)
		if nk == "" {
			return nil, FieldErrorf(EINVALID, "attrs", "attrs has an empty key; name every attribute, e.g. {\"kind\":\"midi-din\"}")
		}
		if nv == "" {
			return nil, FieldErrorf(EINVALID, "attrs", "attrs.%s is empty; give a value or leave the key out", nk)
		}
		if _, dup := out[nk]; dup {
			return nil, FieldErrorf(EINVALID, "attrs", "attrs key %q is given twice (keys compare lowercase); give it once", nk)
		}
		out[nk] = nv
	}
	if err := ValidateRelationAttrs(out); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedKeys(a map[string]string) []string {
	ks := make([]string, 0, len(a))
	for k := range a {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

const attrsObjectMsg = `attrs must be a JSON object of string values, e.g. {"kind":"midi-din"}`

// DecodeRelationAttrs decodes attrs typed as JSON: an object of string values (null or
// empty input is no attrs), normalised and checked as NormalizeRelationAttrs does.
func DecodeRelationAttrs(raw []byte) (map[string]string, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if len(t) > 4*MaxRelationAttrSize {
		return nil, FieldErrorf(EINVALID, "attrs", "attrs are %d bytes; the limit is %d", len(t), MaxRelationAttrSize)
	}
	if !utf8.Valid(t) {
		return nil, FieldErrorf(EINVALID, "attrs", "attrs are not valid UTF-8; send text as UTF-8")
	}
	if t[0] != '{' {
		return nil, FieldErrorf(EINVALID, "attrs", "%s", attrsObjectMsg)
	}
	var m map[string]string
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, FieldErrorf(EINVALID, "attrs", "%s", attrsObjectMsg)
	}
	return NormalizeRelationAttrs(m)
}

// endpointKindError refuses an id of a kind that cannot be a declared relation's end.
func endpointKindError(field, id string) error {
	switch KindOf(id) {
	case KindClient:
		return FieldErrorf(EINVALID, field, "%s %s is a client: live endpoints cannot be declared; declare the relation on the device or identity instead", field, id)
	case KindTag:
		return FieldErrorf(EINVALID, field, "%s %s is a tag; tags are not relation endpoints (relate identities, devices or robots, and tag those)", field, id).Next(ListStep(ListIdentities, ""))
	case KindNote:
		return FieldErrorf(EINVALID, field, "%s %s is a note; notes are not relation endpoints (relate identities, devices or robots)", field, id)
	case KindRelation, KindObserved:
		return FieldErrorf(EINVALID, field, "%s %s is a relation; relations are not relation endpoints (relate identities, devices or robots)", field, id)
	case KindEvent:
		return FieldErrorf(EINVALID, field, "%s %s is a changelog event; relate identities, devices or robots", field, id)
	}
	return nil
}

// ValidateRelationEndpoint checks the text naming one end of a declared relation: non-empty
// valid text that does not name a client, tag, note, relation or event. field is "from"
// or "to".
func ValidateRelationEndpoint(field, id string) error {
	if strings.TrimSpace(id) == "" {
		return FieldErrorf(EINVALID, field, "%s is empty; name an identity, device or robot, e.g. identity:roland-jd-xi, jdxi or usb:3-3.2", field)
	}
	if err := ValidateText(field, id, 1, 1024); err != nil {
		return err
	}
	return endpointKindError(field, strings.TrimSpace(id))
}

// NormalizeRelationCreate trims the endpoints, lowercases and checks the type (a reserved
// type is refused), normalises the ports and attrs and checks a cable's attrs.kind. It
// cannot know which types are in use or which nodes exist: the store checks those.
func NormalizeRelationCreate(c RelationCreate) (RelationCreate, error) {
	if err := ValidateRelationEndpoint("from", c.From); err != nil {
		return c, err
	}
	if err := ValidateRelationEndpoint("to", c.To); err != nil {
		return c, err
	}
	c.From, c.To = strings.TrimSpace(c.From), strings.TrimSpace(c.To)
	if !utf8.ValidString(c.Type) {
		return c, FieldErrorf(EINVALID, "type", "type is not valid UTF-8; give a relation type such as cable")
	}
	typ, err := NormalizeRelationType(c.Type)
	if err != nil {
		return c, err
	}
	if IsReservedRelationType(typ) {
		return c, FieldErrorf(EINVALID, "type", "%s is observed only; the sources add it. Declare another type, e.g. cable or controls", typ).Next(ListStep(ListRelationTypes, ""))
	}
	c.Type = typ
	if c.FromPort, err = normalizePortField("from_port", c.FromPort); err != nil {
		return c, err
	}
	if c.ToPort, err = normalizePortField("to_port", c.ToPort); err != nil {
		return c, err
	}
	if c.Attrs, err = NormalizeRelationAttrs(c.Attrs); err != nil {
		return c, err
	}
	if err := CheckCableKind(c.Type, c.Attrs); err != nil {
		return c, err
	}
	if c.From == c.To {
		return c, FieldErrorf(EINVALID, "to", "a relation from %s to itself is a self-loop; relate two different nodes", c.From)
	}
	return c, nil
}

func normalizePortField(field, p string) (string, error) {
	n, err := NormalizePort(p)
	if err != nil {
		msg := ErrorMessage(err)
		return "", FieldErrorf(EINVALID, field, "%s%s", field, strings.TrimPrefix(msg, "port"))
	}
	return n, nil
}

// NormalizeRelationUpdate normalises an update's ports and attrs (nil stays nil, an empty
// map stays empty: it clears the attrs).
func NormalizeRelationUpdate(u RelationUpdate) (RelationUpdate, error) {
	for _, p := range []struct {
		field string
		v     **string
	}{{"from_port", &u.FromPort}, {"to_port", &u.ToPort}} {
		if *p.v == nil {
			continue
		}
		n, err := normalizePortField(p.field, **p.v)
		if err != nil {
			return u, err
		}
		*p.v = &n
	}
	if u.Attrs != nil {
		a, err := NormalizeRelationAttrs(u.Attrs)
		if err != nil {
			return u, err
		}
		if a == nil {
			a = map[string]string{}
		}
		u.Attrs = a
	}
	return u, nil
}

// CheckCableKind requires a cable's attrs.kind to be one of CableKinds (lowercased in
// place); other types pass.
func CheckCableKind(typ string, attrs map[string]string) error {
	if typ != RelCable {
		return nil
	}
	k, ok := attrs["kind"]
	if !ok {
		return FieldErrorf(EINVALID, "attrs", "a cable needs attrs.kind, one of %s, e.g. {\"kind\":\"midi-din\"}", strings.Join(CableKinds, ", "))
	}
	lk := strings.ToLower(k)
	if !slices.Contains(CableKinds, lk) {
		return FieldErrorf(EINVALID, "attrs", "cable kind %q: want one of %s", k, strings.Join(CableKinds, ", "))
	}
	attrs["kind"] = lk
	return nil
}
