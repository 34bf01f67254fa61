package graph

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Go's encoding/json turns invalid UTF-8 and lone UTF-16 surrogate escapes ("\ud800"
// without its pair) into U+FFFD while it decodes, silently. Text a user sends must be
// refused instead (ValidateText), so every transport runs its raw JSON through
// CheckJSONText before decoding it.

// JSONTextFault locates the first string of a JSON document, value or object key, that
// is not text a user may send.
type JSONTextFault struct {
	// Path is the string's JSON path: "arguments.why", "tags[2]", `attrs["a b"]`, or ""
	// for a document that is one string. A bad object key is named by its own path.
	Path string
	// NUL is true for a NUL character (raw or \u0000); otherwise the string holds
	// invalid UTF-8 or a lone surrogate escape.
	NUL bool
	// Overflow is true for a number too big for a float64 (1e999): JSON has no infinity,
	// and a decoder would refuse it without naming the field.
	Overflow bool
}

// Refusal is the EINVALID error for the fault with field naming the input, worded as
// ValidateText words it, so every interface refuses the same text with the same words.
func (f JSONTextFault) Refusal(field string) *Error {
	if field == "" {
		field = "the JSON text"
	}
	if f.NUL {
		return FieldErrorf(EINVALID, field, "%s contains a NUL byte; remove it", field)
	}
	if f.Overflow {
		return FieldErrorf(EINVALID, field, "%s is not a finite number; give a number within ±1.7e308", field)
	}
	return FieldErrorf(EINVALID, field, "%s is not valid UTF-8; send text as UTF-8", field)
}

// RefusalIn is Refusal for a fault in a JSON document that is itself the value of field
// (an identity's "data", GraphQL's "variables"): the fault's path is named under it
// ("data.room", "variables[0]", or field itself for a document that is one string).
func (f JSONTextFault) RefusalIn(field string) *Error {
	switch {
	case f.Path == "":
	case strings.HasPrefix(f.Path, "["):
		field += f.Path
	default:
		field += "." + f.Path
	}
	return f.Refusal(field)
}

// CheckJSONText returns nil when every string of doc is valid UTF-8 without lone
// surrogate escapes or NUL characters and every number fits a float64, else the EINVALID
// *Error of JSONTextFault.Refusal naming the first bad value by its JSON path. Malformed
// JSON is left for the decoder to refuse.
func CheckJSONText(doc []byte) error {
	if f, ok := FindJSONTextFault(doc); ok {
		return f.Refusal(f.Path)
	}
	return nil
}

// maxJSONTextDepth matches encoding/json's nesting limit; deeper documents are left to
// the decoder, which refuses them.
const maxJSONTextDepth = 10000

// jsonFrame is one open object or array on the way down to a string.
type jsonFrame struct {
	object bool
	key    []byte // the raw key (between its quotes) of the member being read
	index  int    // the element being read
}

// FindJSONTextFault walks doc (one or more JSON values) and reports the first string
// holding invalid UTF-8, a lone surrogate escape or a NUL, or the first number too big
// for a float64. It stops without a fault at
// the first syntax error or beyond encoding/json's nesting depth.
func FindJSONTextFault(doc []byte) (JSONTextFault, bool) {
	var stack []jsonFrame
	i := 0
	// expectKey is true right after '{' or ',' inside an object.
	expectKey := false
	for {
		i = skipJSONSpace(doc, i)
		if i >= len(doc) {
			return JSONTextFault{}, false
		}
		c := doc[i]
		switch {
		case expectKey:
			if c == '}' && len(stack) > 0 {
				stack = stack[:len(stack)-1]
				expectKey = false
				i++
				continue
			}
			if c != '"' {
				return JSONTextFault{}, false
			}
			end, nul, ok, bad := scanJSONString(doc, i+1)
			top := &stack[len(stack)-1]
			if bad {
				top.key = doc[i+1 : rawJSONStringEnd(doc, i+1)]
				return JSONTextFault{Path: jsonPath(stack), NUL: nul}, true
			}
			if !ok {
				return JSONTextFault{}, false
			}
			top.key = doc[i+1 : end-1]
			i = skipJSONSpace(doc, end)
			if i >= len(doc) || doc[i] != ':' {
				return JSONTextFault{}, false
			}
			i++
			expectKey = false
		case c == '{' || c == '[':
			if len(stack) >= maxJSONTextDepth {
				return JSONTextFault{}, false
			}
			stack = append(stack, jsonFrame{object: c == '{'})
			expectKey = c == '{'
			i++
		case c == ',' && len(stack) > 0:
			top := &stack[len(stack)-1]
			if top.object {
				expectKey = true
			} else {
				top.index++
			}
			i++
		case (c == ']' || c == '}') && len(stack) > 0:
			stack = stack[:len(stack)-1]
			i++
		case c == '"':
			end, nul, ok, bad := scanJSONString(doc, i+1)
			if bad {
				return JSONTextFault{Path: jsonPath(stack), NUL: nul}, true
			}
			if !ok {
				return JSONTextFault{}, false
			}
			i = end
		default:
			// A number or a literal: skip to the next delimiter.
			j := i
			for j < len(doc) && !isJSONDelim(doc[j]) {
				j++
			}
			if j == i {
				return JSONTextFault{}, false // a stray delimiter: a syntax error
			}
			if c == '-' || (c >= '0' && c <= '9') {
				// Too big for a float64 is a fault; too small merely rounds to zero, as
				// the decoder rounds it.
				if f, err := strconv.ParseFloat(string(doc[i:j]), 64); err != nil && math.IsInf(f, 0) {
					return JSONTextFault{Path: jsonPath(stack), Overflow: true}, true
				}
			}
			i = j
		}
	}
}

func skipJSONSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

func isJSONDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ':', '"', '{', '[', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// scanJSONString reads a string whose opening quote is just before i. It returns the
// index after the closing quote and ok, or bad (with nul) at the first character that is
// not text, or neither at a syntax error (no closing quote, a malformed escape).
func scanJSONString(doc []byte, i int) (end int, nul, ok, bad bool) {
	for i < len(doc) {
		c := doc[i]
		switch {
		case c == '"':
			return i + 1, false, true, false
		case c == 0:
			return i, true, false, true
		case c == '\\':
			if i+1 >= len(doc) {
				return i, false, false, false
			}
			if doc[i+1] != 'u' {
				i += 2
				continue
			}
			r, ok := hex4(doc, i+2)
			if !ok {
				return i, false, false, false
			}
			i += 6
			switch {
			case r == 0:
				return i, true, false, true
			case r >= 0xdc00 && r < 0xe000:
				return i, false, false, true // a low surrogate with no high one before it
			case r >= 0xd800 && r < 0xdc00:
				if i+1 < len(doc) && doc[i] == '\\' && doc[i+1] == 'u' {
					if lo, ok := hex4(doc, i+2); ok && lo >= 0xdc00 && lo < 0xe000 {
						i += 6
						continue
					}
				}
				return i, false, false, true // a high surrogate without its low one
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(doc[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, false, false, true
			}
			i += size
		}
	}
	return i, false, false, false
}

// rawJSONStringEnd is the index of the quote closing the string that starts at i, or
// len(doc).
func rawJSONStringEnd(doc []byte, i int) int {
	for i < len(doc) && doc[i] != '"' {
		if doc[i] == '\\' {
			i++
		}
		i++
	}
	return min(i, len(doc))
}

// hex4 decodes the four hex digits at doc[i:].
func hex4(doc []byte, i int) (rune, bool) {
	if i+4 > len(doc) {
		return 0, false
	}
	var r rune
	for _, c := range doc[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// CheckValueText is CheckJSONText for a Go value about to be sent as JSON: json.Marshal
// would silently write each invalid UTF-8 byte as U+FFFD, so the value is refused before
// it is encoded, naming the first bad string (value or map key) by the JSON path it
// would have. Raw JSON and byte slices inside v are left to the receiver's
// CheckJSONText.
func CheckValueText(v any) error {
	var w valueWalk
	if w.walk(reflect.ValueOf(v), 0) {
		return w.fault.Refusal(w.fault.Path)
	}
	return nil
}

// valueWalk finds the first bad string in a Go value; path holds the frames above it.
type valueWalk struct {
	path  []jsonFrame
	fault JSONTextFault
}

func (w *valueWalk) bad(s string) bool {
	nul := strings.IndexByte(s, 0)
	switch {
	case nul < 0 && utf8.ValidString(s):
		return false
	case nul >= 0 && utf8.ValidString(s[:nul]):
		w.fault = JSONTextFault{Path: jsonPath(w.path), NUL: true}
	default:
		w.fault = JSONTextFault{Path: jsonPath(w.path)}
	}
	return true
}

func (w *valueWalk) walk(v reflect.Value, depth int) bool {
	if !v.IsValid() || depth > maxJSONTextDepth {
		return false
	}
	switch v.Kind() {
	case reflect.String:
		return w.bad(v.String())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && w.walk(v.Elem(), depth+1)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // base64, or raw JSON
		}
		w.path = append(w.path, jsonFrame{})
		for i := range v.Len() {
			w.path[len(w.path)-1].index = i
			if w.walk(v.Index(i), depth+1) {
				return true
			}
		}
		w.path = w.path[:len(w.path)-1]
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		w.path = append(w.path, jsonFrame{object: true})
		for _, k := range keys {
			w.path[len(w.path)-1].key = []byte(k.String())
			if w.bad(k.String()) || w.walk(v.MapIndex(k), depth+1) {
				return true
			}
		}
		w.path = w.path[:len(w.path)-1]
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			if !f.IsExported() && !f.Anonymous || tag == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				if w.walk(v.Field(i), depth+1) { // embedded: its fields are ours
					return true
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			w.path = append(w.path, jsonFrame{object: true, key: []byte(name)})
			if w.walk(v.Field(i), depth+1) {
				return true
			}
			w.path = w.path[:len(w.path)-1]
		}
	}
	return false
}

// jsonPath names the value the stack points at: members by key (".key", or `["key"]`
// for a key that is not a plain word), elements by index.
func jsonPath(stack []jsonFrame) string {
	var sb strings.Builder
	for _, f := range stack {
		if !f.object {
			sb.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if plainJSONKey(f.key) {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.Write(f.key)
			continue
		}
		sb.WriteString(`["`)
		// The key as it was written, with bytes that are not UTF-8 shown as \xNN, so the
		// path itself is always valid text.
		for k := f.key; len(k) > 0; {
			r, size := utf8.DecodeRune(k)
			if r == utf8.RuneError && size <= 1 || r < 0x20 {
				sb.WriteString(`\x` + strconv.FormatUint(uint64(k[0])|0x100, 16)[1:])
			} else {
				sb.Write(k[:size])
			}
			k = k[size:]
		}
		sb.WriteString(`"]`)
	}
	return sb.String()
}

func plainJSONKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
