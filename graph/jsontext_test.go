package graph_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

func TestCheckJSONText(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		for _, doc := range []string{
			``, `{}`, `[]`, `null`, `"plain"`, `{"a":[1,2.5e3,true,false,null,"x"],"b":{}}`,
			`{"why":"two\nlines","emoji":"\ud83d\ude00 😀","fffd":"\ufffd �","esc":"\"\\\/\b\f\n\r\t"}`,
			`{"k":"\u00e9\u4e2d"} {"second":"value"}`,
			`[[[[{"deep":["ok"]}]]]]`,
			`{"tiny":1e-999,"big":1.7e308,"neg":-1.7e308}`, // underflow rounds to 0, as the decoder does
		} {
			if err := graph.CheckJSONText([]byte(doc)); err != nil {
				t.Errorf("CheckJSONText(%s) = %v, want nil", doc, err)
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		for _, tc := range []struct {
			doc, field string
			nul        bool
		}{
			{"{\"arguments\":{\"why\":\"a\xffb\"}}", "arguments.why", false},
			{`{"arguments":{"why":"\ud800"}}`, "arguments.why", false},
			{`{"arguments":{"why":"\ud800x"}}`, "arguments.why", false},
			{`{"arguments":{"why":"\ud800\u0041"}}`, "arguments.why", false},
			{`{"arguments":{"why":"\udc00"}}`, "arguments.why", false},
			{`{"arguments":{"why":"\uDFFF\uD800"}}`, "arguments.why", false},
			{`{"params":{"arguments":{"tags":["a:b","c:d","\ud800"]}}}`, "params.arguments.tags[2]", false},
			{`{"params":{"arguments":{"tags":["a:b","c:d","x\u0000"]}}}`, "params.arguments.tags[2]", true},
			{"{\"a\":\"x\x00y\"}", "a", true},
			{"{\"ok\":1, \"bad\xfe\":1}", `["bad\xfe"]`, false},
			{`{"attrs":{"a\ud800":"v"}}`, `attrs["a\ud800"]`, false},
			{`{"attrs":{"a b":"\u0000"}}`, `attrs["a b"]`, true},
			{`{"variables":{"message":"\ud800"},"query":"mutation"}`, "variables.message", false},
			{"[\"ok\",[\"\xc0\xaf\"]]", "[1][0]", false}, // an overlong encoding
			{"{\"s\":\"\xed\xa0\x80\"}", "s", false},     // a surrogate encoded in UTF-8
			{"\"\xff\"", "", false},
			{`[{},{"x":[]},{"y":"\ud800"}]`, "[2].y", false},
			{`{"arguments":{"x":1e999}}`, "arguments.x", false},
			{`{"variables":{"goal":[1,-1E+400]}}`, "variables.goal[1]", false},
		} {
			f, ok := graph.FindJSONTextFault([]byte(tc.doc))
			if !ok {
				t.Errorf("%q: no fault found, want %s", tc.doc, tc.field)
				continue
			}
			if f.Path != tc.field || f.NUL != tc.nul {
				t.Errorf("%q: fault %+v, want path %q nul %v", tc.doc, f, tc.field, tc.nul)
			}
			err := graph.CheckJSONText([]byte(tc.doc))
			if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != f.Refusal(f.Path).Field || !utf8.ValidString(graph.ErrorMessage(err)) {
				t.Errorf("%q: %v (field %q)", tc.doc, err, graph.ErrorField(err))
			}
		}
	})
	t.Run("SameWordsAsValidateText", func(t *testing.T) {
		for s, nul := range map[string]bool{"\xff": false, "a\x00": true} {
			want := graph.ValidateText("arguments.why", s, 0, 0)
			got := graph.JSONTextFault{Path: "arguments.why", NUL: nul}.Refusal("arguments.why")
			if got.Error() != want.Error() || got.Field != graph.ErrorField(want) {
				t.Errorf("%q: %q (field %q), ValidateText says %q", s, got, got.Field, want)
			}
		}
		if got, want := graph.CheckJSONText([]byte(`{"arguments":{"why":"\ud800"}}`)).Error(), "arguments.why is not valid UTF-8; send text as UTF-8"; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	})
	t.Run("MalformedLeftToTheDecoder", func(t *testing.T) {
		for _, doc := range []string{`{"a":`, `{"a":"\u12`, `{"a" 1}`, `"unterminated`, `{"a":"\x"}`, `]]]`, strings.Repeat("[", 20000) + `"\ud800"`} {
			_, _ = graph.FindJSONTextFault([]byte(doc)) // must not panic
		}
	})
}

// jsonQuoteKeepingBytes writes s as a JSON string with only quote, backslash and control
// characters escaped: its bytes, valid UTF-8 or not, stay as they are.
func jsonQuoteKeepingBytes(s []byte) []byte {
	out := []byte{'"'}
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c < 0x20 && c != 0:
			out = append(out, []byte(`\u00`+strconv.FormatUint(uint64(c)|0x100, 16)[1:])...)
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}

func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `[1,{"x":"\u0000"}]`, "plain", "\xed\xa0\x80", "a\x00b", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any input: never panics, and a fault's refusal is valid text.
		if f, ok := graph.FindJSONTextFault(b); ok && !utf8.ValidString(f.Refusal(f.Path).Message) {
			t.Fatalf("refusal of %q is not UTF-8: %q", b, f.Refusal(f.Path).Message)
		}
		// b as a raw string value: refused exactly when utf8.Valid refuses it or it holds
		// a NUL, and named by its key.
		doc := append(append([]byte(`{"k":[`), jsonQuoteKeepingBytes(b)...), "]}"...)
		f, ok := graph.FindJSONTextFault(doc)
		if want := !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0; ok != want {
			t.Fatalf("%q: fault %v, want %v", b, ok, want)
		}
		if ok && (f.Path != "k[0]" || f.NUL != (bytes.IndexByte(b, 0) >= 0 && utf8.Valid(b[:bytes.IndexByte(b, 0)]))) {
			t.Fatalf("%q: fault %+v", b, f)
		}
		// What passes decodes without encoding/json replacing anything.
		if !ok && json.Valid(doc) {
			var v map[string][]string
			if err := json.Unmarshal(doc, &v); err != nil || v["k"][0] != string(b) {
				t.Fatalf("%q decodes to %q (%v)", b, v["k"], err)
			}
		}
	})
}

func TestCheckValueText(t *testing.T) {
	t.Parallel()
	type inner struct {
		Why  string            `json:"why"`
		Tags []string          `json:"tags,omitempty"`
		Attr map[string]string `json:"attrs"`
		Raw  json.RawMessage   `json:"data"`
	}
	type Embedded struct {
		Note string `json:"note"`
	}
	type outer struct {
		Embedded
		Arguments *inner `json:"arguments"`
		Skip      string `json:"-"`
		Plain     string
	}
	for _, tc := range []struct {
		v     any
		field string
		nul   bool
	}{
		{outer{Arguments: &inner{Why: "a\xffb"}}, "arguments.why", false},
		{outer{Arguments: &inner{Tags: []string{"a:b", "c:d", "\xed\xa0\x80"}}}, "arguments.tags[2]", false},
		{outer{Arguments: &inner{Tags: []string{"x\x00"}}}, "arguments.tags[0]", true},
		{outer{Arguments: &inner{Attr: map[string]string{"ok": "1", "b\xff": "v"}}}, `arguments.attrs["b\xff"]`, false},
		{outer{Arguments: &inner{Attr: map[string]string{"kind": "\x00"}}}, "arguments.attrs.kind", true},
		{outer{Embedded: Embedded{Note: "\xff"}}, "note", false},
		{outer{Plain: "\xff"}, "Plain", false},
		{map[string]any{"message": "two\nlines \xc3"}, "message", false},
	} {
		err := graph.CheckValueText(tc.v)
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v (field %q), want field %q", tc.v, err, graph.ErrorField(err), tc.field)
		}
		if want := (graph.JSONTextFault{Path: tc.field, NUL: tc.nul}).Refusal(tc.field); err != nil && err.Error() != want.Error() {
			t.Errorf("%+v: %q, want %q", tc.v, err, want)
		}
	}
	for _, v := range []any{nil, outer{Skip: "\xff", Arguments: &inner{Why: "fine", Raw: json.RawMessage("{\"a\":\"\xff\"}")}}, map[string]any{"a": []any{"ok", 1, nil}}} {
		if err := graph.CheckValueText(v); err != nil {
			t.Errorf("%+v: %v, want nil", v, err)
		}
	}
}

// BenchmarkCheckJSONText measures the check every transport runs before decoding, beside
// the decoding itself (which it must stay well under): a 1 MiB tool call of mixed text.
func BenchmarkCheckJSONText(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_note","arguments":{"tags":[`)
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"role:synth-` + strconv.Itoa(i) + ` Grüße 🎹 \"quoted\" \ud83d\ude00"`)
	}
	sb.WriteString(`]}}}`)
	doc := []byte(sb.String())
	b.Run("CheckJSONText", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if err := graph.CheckJSONText(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
