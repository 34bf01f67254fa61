package graph

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeRelationCreate(t *testing.T) {
	t.Parallel()
	got, err := NormalizeRelationCreate(RelationCreate{From: " keystep ", FromPort: "  MIDI \t OUT ", Type: " Cable ", To: "jdxi", ToPort: "MIDI IN", Attrs: map[string]string{" Kind ": " MIDI-DIN ", "length": "2m"}})
	if err != nil {
		t.Fatal(err)
	}
	want := RelationCreate{From: "keystep", FromPort: "MIDI OUT", Type: "cable", To: "jdxi", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din", "length": "2m"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	again, err := NormalizeRelationCreate(got)
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("not idempotent: %+v %v", again, err)
	}
	bad := []struct {
		c     RelationCreate
		field string
		want  string
	}{
		{RelationCreate{From: "a", Type: "via", To: "b"}, "type", "via is observed only; the sources add it"},
		{RelationCreate{From: "a", Type: "Linked", To: "b"}, "type", "observed only"},
		{RelationCreate{From: "a", Type: "-x", To: "b"}, "type", "a-z 0-9"},
		{RelationCreate{From: "a", Type: "", To: "b"}, "type", "type is empty"},
		{RelationCreate{From: "a", Type: "x\xff", To: "b"}, "type", "UTF-8"},
		{RelationCreate{From: "a", Type: "controls", To: "a"}, "to", "self-loop"},
		{RelationCreate{From: "client:alsa:Bitwig Studio", Type: "controls", To: "b"}, "from", "live endpoints cannot be declared"},
		{RelationCreate{From: "a", Type: "controls", To: "tag:role:synth"}, "to", "tags are not"},
		{RelationCreate{From: "a", Type: "controls", To: "obs:0011"}, "to", "relations are not"},
		{RelationCreate{From: "", Type: "controls", To: "b"}, "from", "from is empty"},
		{RelationCreate{From: "a", Type: "cable", To: "b"}, "attrs", "needs attrs.kind"},
		{RelationCreate{From: "a", Type: "cable", To: "b", Attrs: map[string]string{"kind": "hdmi"}}, "attrs", "want one of"},
		{RelationCreate{From: "a", Type: "controls", To: "b", FromPort: strings.Repeat("p", 65)}, "from_port", "limit is 64"},
		{RelationCreate{From: "a", Type: "controls", To: "b", ToPort: "a\x1bb"}, "to_port", "control character"},
		{RelationCreate{From: "a", Type: "controls", To: "b", Attrs: map[string]string{"k": " "}}, "attrs", "empty"},
		{RelationCreate{From: "a", Type: "controls", To: "b", Attrs: map[string]string{"K": "1", "k": "2"}}, "attrs", "twice"},
		{RelationCreate{From: "a", Type: "controls", To: "b", Attrs: map[string]string{strings.Repeat("k", 65): "1"}}, "attrs", "limit is 64"},
	}
	for _, tc := range bad {
		_, err := NormalizeRelationCreate(tc.c)
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field || !strings.Contains(ErrorMessage(err), tc.want) {
			t.Errorf("%+v: %s %q %q; want field %q containing %q", tc.c, ErrorCode(err), ErrorField(err), ErrorMessage(err), tc.field, tc.want)
		}
	}
}

func TestRelationAttrsLimits(t *testing.T) {
	t.Parallel()
	a := map[string]string{}
	for i := 0; i < 16; i++ {
		a[strings.Repeat(string(rune('a'+i)), 64)] = strings.Repeat("v", 190)
	}
	// 16 × (64 + 190) = 4064 bytes: fits
	if err := ValidateRelationAttrs(a); err != nil {
		t.Fatal(err)
	}
	a[strings.Repeat("a", 64)] = strings.Repeat("v", 256) // 4130 bytes
	if err := ValidateRelationAttrs(a); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "4096") {
		t.Fatalf("total: %v", err)
	}
	if err := ValidateRelationAttrs(map[string]string{"k": "a\x00"}); ErrorCode(err) != EINVALID || ErrorField(err) != "attrs" {
		t.Fatalf("NUL: %v", err)
	}
}

func TestDecodeRelationAttrs(t *testing.T) {
	t.Parallel()
	got, err := DecodeRelationAttrs([]byte(` {"kind":"midi-din","Colour":" red "} `))
	if err != nil || !reflect.DeepEqual(got, map[string]string{"kind": "midi-din", "colour": "red"}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, raw := range []string{"", "null", "  "} {
		if got, err := DecodeRelationAttrs([]byte(raw)); err != nil || got != nil {
			t.Fatalf("%q: %v %v", raw, got, err)
		}
	}
	for _, raw := range []string{`[]`, `"kind"`, `{"kind":1}`, `{"kind":{"a":"b"}}`, `{"kind":"a"`, `{"a":"b"}{}`, `42`, `{"a":null}`} {
		_, err := DecodeRelationAttrs([]byte(raw))
		if ErrorCode(err) != EINVALID || ErrorField(err) != "attrs" || !strings.Contains(err.Error(), `attrs must be a JSON object of string values, e.g. {"kind":"midi-din"}`) {
			if raw == `{"a":null}` && ErrorCode(err) == EINVALID {
				continue // null decodes as "", refused as an empty value
			}
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestNormalizePort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "  ": "", " MIDI  OUT ": "MIDI OUT", "Input 1": "Input 1", "Ausgang Ü": "Ausgang Ü"} {
		got, err := NormalizePort(in)
		if err != nil || got != want {
			t.Errorf("NormalizePort(%q)=%q %v, want %q", in, got, err, want)
		}
	}
	if PortKey("MIDI Out") != PortKey("midi OUT") {
		t.Fatal("ports compare case-insensitively")
	}
	for _, in := range []string{strings.Repeat("é", 33), "a\x00", "\xff", "a\x07b"} {
		if _, err := NormalizePort(in); ErrorCode(err) != EINVALID || ErrorField(err) != "port" {
			t.Errorf("NormalizePort(%q): %v", in, err)
		}
	}
}

// FuzzRelationInput decodes a RelationCreate from JSON and normalises it: it never
// panics, every error is an *Error naming a field, and a normalised result normalises to
// itself.
func FuzzRelationInput(f *testing.F) {
	f.Add([]byte(`{"from":"keystep","from_port":"MIDI OUT","type":"cable","to":"jdxi","to_port":"MIDI IN","attrs":{"kind":"midi-din"}}`))
	f.Add([]byte(`{"from":" a ","type":" Controls ","to":"b","attrs":{" K ":" v "}}`))
	f.Add([]byte(`{"from":"a","type":"via","to":"b"}`))
	f.Add([]byte(`{"from":"client:alsa:x","type":"cable","to":"b","attrs":{"kind":"USB"}}`))
	f.Add([]byte(`{"from":"a","type":"new-type","to":"b","from_port":"\u0085x\u00a0","attrs":{"İ":"ß"}}`))
	f.Add([]byte(`{"attrs":[1,2]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c RelationCreate
		var probe struct {
			Attrs json.RawMessage `json:"attrs"`
		}
		if json.Unmarshal(raw, &probe) == nil {
			if a, err := DecodeRelationAttrs(probe.Attrs); err != nil {
				if ErrorField(err) != "attrs" {
					t.Fatalf("attrs error without its field: %v", err)
				}
			} else if err := ValidateRelationAttrs(a); err != nil {
				t.Fatalf("decoded attrs fail validation: %v", err)
			}
		}
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		n, err := NormalizeRelationCreate(c)
		if err != nil {
			var e *Error
			if !asError(err, &e) || e.Field == "" || e.Message == "" {
				t.Fatalf("error %v is not an *Error with a field", err)
			}
			return
		}
		n2, err := NormalizeRelationCreate(n)
		if err != nil {
			t.Fatalf("normalised %+v fails again: %v", n, err)
		}
		if !reflect.DeepEqual(n, n2) {
			t.Fatalf("not idempotent: %+v → %+v", n, n2)
		}
		if err := ValidateRelationAttrs(n.Attrs); err != nil {
			t.Fatalf("normalised attrs invalid: %v", err)
		}
	})
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}
