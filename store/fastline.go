package store

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// lineDecoder decodes the lines of an import; BenchmarkImport_Decoder swaps in plain
// encoding/json to measure what decodeLine saves.
var lineDecoder = decodeLine

// decodeLine decodes one export line into l: event, identity, note and relation lines in the shape
// Export writes go through fastLine (a hand-written reader); anything else, or anything
// the fast reader is unsure of, through json.Unmarshal, so the result is always what
// json.Unmarshal gives (TestFastLine, FuzzFastLine).
//
// Why this bespoke reader stays: without it the import misses its target (100,000
// identities in at most 10 s on the 2-core machine). BenchmarkImport_Decoder imports
// 100,000 identities (3 hints, 3 tags, a note and 8 events each; 1,000,000 lines) with
// each decoder, both in the same parallel chunks. On 2026-11-24, -count=3 twice, the
// machine shared with other builds (load average 6-9 on 2 cores), per 100,000 identities:
//
//	               wall time         CPU time
//	fastline       7.0-16.9 s        8.6-9.3 s
//	encoding/json  15.4-33.8 s       14.4-15.2 s
//
// encoding/json never came under 10 s; its CPU time alone would need the import to keep
// 1.5 cores busy throughout to do so even on an idle machine, more than the pipeline
// achieved here (fastline's best run: 9.0 s of CPU in 7.0 s). Decoding is most of an
// import's CPU, since every line is decoded twice (the check pass, then the write pass).
func decodeLine(b []byte, l *exportLine) error {
	if fastLine(b, l) {
		return nil
	}
	*l = exportLine{}
	return json.Unmarshal(b, l)
}

// lineReader reads the restricted JSON of an export event line. Any surprise (escapes,
// null, unknown or repeated keys, odd numbers) makes it give up: the caller falls back.
type lineReader struct {
	b  []byte
	i  int
	ok bool
}

func (r *lineReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *lineReader) byte(c byte) bool {
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid UTF-8.
func (r *lineReader) str() []byte {
	r.ws()
	if !r.ok || r.i >= len(r.b) || r.b[r.i] != '"' {
		r.ok = false
		return nil
	}
	start := r.i + 1
	ascii := true
	for j := start; j < len(r.b); j++ {
		c := r.b[j]
		switch {
		case c == '"':
			s := r.b[start:j]
			if !ascii && !utf8.Valid(s) {
				r.ok = false
				return nil
			}
			r.i = j + 1
			return s
		case c == '\\' || c < 0x20:
			r.ok = false
			return nil
		case c >= 0x80:
			ascii = false
		}
	}
	r.ok = false
	return nil
}

// raw reads any JSON value (object, array, string, number, literal) and returns its bytes,
// checked with json.Valid.
func (r *lineReader) raw() []byte {
	r.ws()
	if !r.ok || r.i >= len(r.b) {
		r.ok = false
		return nil
	}
	start := r.i
	depth := 0
	inStr := false
	j := r.i
	for ; j < len(r.b); j++ {
		c := r.b[j]
		if inStr {
			if c == '\\' {
				j++
			} else if c == '"' {
				inStr = false
				if depth == 0 {
					j++
					break
				}
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				r.ok = false
				return nil
			}
		case ',':
			if depth == 0 {
				goto end
			}
		}
		if depth == 0 && (c == '}' || c == ']') {
			j++
			break
		}
	}
end:
	v := r.b[start:j]
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t' || v[len(v)-1] == '\n' || v[len(v)-1] == '\r') {
		v = v[:len(v)-1]
	}
	if len(v) == 0 || v[0] == 'n' || !json.Valid(v) { // null leaves a RawMessage as "null": let json do it
		r.ok = false
		return nil
	}
	r.i = j
	return append([]byte(nil), v...)
}

func (r *lineReader) uint() uint64 {
	r.ws()
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	d := r.b[start:r.i]
	if len(d) == 0 || (len(d) > 1 && d[0] == '0') {
		r.ok = false
		return 0
	}
	if r.i < len(r.b) && (r.b[r.i] == '.' || r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.ok = false
		return 0
	}
	n, err := strconv.ParseUint(string(d), 10, 64)
	if err != nil {
		r.ok = false
	}
	return n
}

// object reads {"key":value,...}, calling field for each key; field reads the value.
func (r *lineReader) object(field func(key string) bool) {
	if !r.ok || !r.byte('{') {
		r.ok = false
		return
	}
	if r.byte('}') {
		return
	}
	var seenArr [16][]byte
	seen := seenArr[:0]
	for r.ok {
		kb := r.str()
		if !r.ok || len(seen) == len(seenArr) || !r.byte(':') {
			r.ok = false
			return
		}
		for _, s := range seen {
			if string(s) == string(kb) {
				r.ok = false // a repeated key: json keeps the last; let it
				return
			}
		}
		seen = append(seen, kb)
		if !field(string(kb)) {
			r.ok = false
			return
		}
		if r.byte(',') {
			continue
		}
		if !r.byte('}') {
			r.ok = false
		}
		return
	}
}

// time reads a quoted time as encoding/json does.
func (r *lineReader) time(t *time.Time) {
	r.ws()
	start := r.i
	r.str()
	if r.ok && t.UnmarshalJSON(r.b[start:r.i]) != nil {
		r.ok = false
	}
}

// strs reads an array of plain strings (never nil once read).
func (r *lineReader) strs() []string {
	if !r.ok || !r.byte('[') {
		r.ok = false
		return nil
	}
	out := []string{}
	if r.byte(']') {
		return out
	}
	for r.ok {
		out = append(out, string(r.str()))
		if r.byte(',') {
			continue
		}
		if !r.byte(']') {
			r.ok = false
		}
		break
	}
	return out
}

// fastLine decodes an event, identity or note line as Export writes it
// ({"type":"event","event":{...},"also":[...]}, {"type":"identity","identity":{...}},
// {"type":"note","note":{...}}) into l, reporting false (l then undefined) when the line
// is anything else or not plainly written.
func fastLine(b []byte, l *exportLine) bool {
	r := &lineReader{b: b, ok: true}
	*l = exportLine{}
	r.object(func(key string) bool {
		switch key {
		case "type":
			l.Type = string(r.str())
		case "identity":
			id := &graph.Identity{}
			l.Identity = id
			r.object(func(key string) bool {
				switch key {
				case "id":
					id.ID = string(r.str())
				case "name":
					id.Name = string(r.str())
				case "data":
					id.Data = r.raw()
				case "hints":
					if !r.byte('[') {
						return false
					}
					id.Hints = []graph.Fingerprint{}
					if r.byte(']') {
						return true
					}
					for r.ok {
						var f graph.Fingerprint
						r.object(func(key string) bool {
							switch key {
							case "kind":
								f.Kind = graph.FingerprintKind(r.str())
							case "value":
								f.Value = string(r.str())
							default:
								return false
							}
							return r.ok
						})
						id.Hints = append(id.Hints, f)
						if r.byte(',') {
							continue
						}
						if !r.byte(']') {
							return false
						}
						break
					}
				case "tags":
					id.Tags = r.strs()
				case "created_at":
					r.time(&id.CreatedAt)
				case "updated_at":
					r.time(&id.UpdatedAt)
				default:
					return false
				}
				return r.ok
			})
		case "note":
			n := &graph.Note{}
			l.Note = n
			r.object(func(key string) bool {
				switch key {
				case "id":
					n.ID = string(r.str())
				case "target":
					n.Target = string(r.str())
				case "kind":
					n.Kind = string(r.str())
				case "body":
					n.Body = string(r.str())
				case "author":
					n.Author = string(r.str())
				case "time":
					r.time(&n.Time)
				default:
					return false
				}
				return r.ok
			})
		case "event":
			e := &graph.Event{}
			l.Event = e
			r.object(func(key string) bool {
				switch key {
				case "seq":
					e.Seq = r.uint()
				case "id":
					e.ID = string(r.str())
				case "time":
					r.time(&e.Time)
				case "actor":
					e.Actor = string(r.str())
				case "action":
					e.Action = string(r.str())
				case "target":
					e.Target = string(r.str())
				case "before":
					e.Before = r.raw()
				case "after":
					e.After = r.raw()
				case "message":
					e.Message = string(r.str())
				case "request_id":
					e.RequestID = string(r.str())
				case "prev_hash":
					e.PrevHash = string(r.str())
				case "hash":
					e.Hash = string(r.str())
				default:
					return false
				}
				return r.ok
			})
		case "relation":
			l.Relation = &graph.Relation{}
			r.relation(l.Relation)
		case "also":
			l.Also = r.strs()
		default:
			return false
		}
		return r.ok
	})
	r.ws()
	if !r.ok || r.i != len(r.b) {
		return false
	}
	switch l.Type {
	case "event":
		return l.Event != nil && l.Identity == nil && l.Note == nil && l.Relation == nil
	case "identity":
		return l.Identity != nil && l.Event == nil && l.Note == nil && l.Also == nil && l.Relation == nil
	case "note":
		return l.Note != nil && l.Event == nil && l.Identity == nil && l.Also == nil && l.Relation == nil
	case "relation":
		return l.Relation != nil && l.Event == nil && l.Identity == nil && l.Note == nil && l.Also == nil
	}
	return false
}

// relation reads a relation record as json.Marshal writes it; observed and source (never
// stored) make it give up.
func (r *lineReader) relation(x *graph.Relation) {
	r.object(func(key string) bool {
		switch key {
		case "id":
			x.ID = string(r.str())
		case "type":
			x.Type = string(r.str())
		case "from":
			x.From = string(r.str())
		case "from_port":
			x.FromPort = string(r.str())
		case "to":
			x.To = string(r.str())
		case "to_port":
			x.ToPort = string(r.str())
		case "attrs":
			x.Attrs = map[string]string{}
			r.object(func(key string) bool {
				x.Attrs[key] = string(r.str())
				return r.ok
			})
		case "author":
			x.Author = string(r.str())
		case "created_at":
			r.time(&x.Created)
		case "updated_at":
			r.time(&x.Updated)
		default:
			return false
		}
		return r.ok
	})
}

// encodeRelation is a relation's stored record: its JSON.
func encodeRelation(x *graph.Relation) []byte {
	b, _ := json.Marshal(x) // a Relation always marshals
	return b
}

// decodeRelation decodes a stored relation record: with the fast reader, else (anything
// it is unsure of) with json.Unmarshal, so the result is always json's.
func decodeRelation(b []byte) (*graph.Relation, error) {
	x := &graph.Relation{}
	r := &lineReader{b: b, ok: true}
	r.relation(x)
	r.ws()
	if r.ok && r.i == len(b) {
		return x, nil
	}
	*x = graph.Relation{}
	if err := json.Unmarshal(b, x); err != nil {
		return nil, err
	}
	return x, nil
}
