package migrations

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"

	"github.com/google/uuid"
)

// CurrentVersion is the schema version this build writes.
const CurrentVersion = 4

// FormatName marks a bbolt file as a devgraph database (meta "format").
const FormatName = "devgraph"

// Buckets, all top level.
var (
	BucketMeta       = []byte("meta")       // format, version, head, checkpoint, counters
	BucketIdentities = []byte("identities") // slug → identity record (JSON)
	BucketNames      = []byte("names")      // lower(name) 0x00 slug → nil
	BucketHints      = []byte("hints")      // kind 0x00 value 0x00 identity id → nil
	BucketTags       = []byte("tags")       // tag 0x00 node id → nil
	BucketTagCounts  = []byte("tagcounts")  // tag → uint64 count of nodes
	BucketNotes      = []byte("notes")      // note uuid → note record (JSON)
	BucketNotesBy    = []byte("notesby")    // target 0x00 note uuid → nil
	BucketDevices    = []byte("devices")    // key → device record (JSON)
	BucketRefs       = []byte("refs")       // ref → key (current ref and aliases)
	BucketPresent    = []byte("present")    // key → nil for present devices
	BucketBindings   = []byte("bindings")   // identity id 0x00 device key → nil
	BucketRobots     = []byte("robots")     // ref → robot record (JSON)
	BucketEvents     = []byte("events")     // seq (8 bytes big-endian) → event record
	BucketEvTarget   = []byte("evtarget")   // target 0x00 seq → nil

	// version 3: declared relations
	BucketRelations = []byte("relations") // relation uuid → relation record (JSON)
	// Each node's relations sit together, so a write touches few pages:
	//   node 0x00 "n"                          → uint64 relations touching the node
	//   node 0x00 "o" 0x00 uuid                → nil (the node is the relation's from)
	//   node 0x00 "i" 0x00 uuid                → nil (the node is the relation's to)
	//   from 0x00 "t" 0x00 lower(from_port) 0x00 type 0x00 to 0x00 lower(to_port) → uuid
	BucketRelAdj    = []byte("reladj")
	BucketRelTypes  = []byte("reltypes")  // type 0x00 relation uuid → nil
	BucketRelCounts = []byte("relcounts") // type → uint64 relations of the type
)

// AllBuckets lists every bucket a current file has.
var AllBuckets = [][]byte{
	BucketMeta, BucketIdentities, BucketNames, BucketHints, BucketTags, BucketTagCounts,
	BucketNotes, BucketNotesBy, BucketDevices, BucketRefs, BucketPresent, BucketBindings,
	BucketRobots, BucketEvents, BucketEvTarget,
	BucketRelations, BucketRelAdj, BucketRelTypes, BucketRelCounts,
}

// BucketSince names the buckets a later version added, with that version; every other
// bucket of AllBuckets is in every version.
var BucketSince = map[string]int{
	"relations": 3, "reladj": 3, "reltypes": 3, "relcounts": 3,
}

// Meta keys.
var (
	KeyFormat     = []byte("format")
	KeyVersion    = []byte("version")
	KeyHead       = []byte("head")       // seq (8) ‖ hash (32) of the newest event
	KeyCheckpoint = []byte("checkpoint") // seq (8) ‖ hash (32) of the last pruned event
	KeyCreated    = []byte("created")    // RFC 3339 time the file was made
	KeyHost       = []byte("host")       // the host name the file belongs to (version 4)
)

// Counter keys in the meta bucket (uint64 big-endian).
var (
	CountIdentities = []byte("count:identities")
	CountDevices    = []byte("count:devices")
	CountPresent    = []byte("count:present")
	CountNotes      = []byte("count:notes")
	CountEvents     = []byte("count:events")
	CountRelations  = []byte("count:relations")
)

// U64 encodes v big-endian.
func U64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

// ReadU64 decodes a big-endian uint64, 0 when b is short.
func ReadU64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Head is a position in the hash chain.
type Head struct {
	Seq  uint64
	Hash [32]byte
}

// EncodeHead encodes h as seq ‖ hash.
func EncodeHead(h Head) []byte {
	b := make([]byte, 40)
	binary.BigEndian.PutUint64(b, h.Seq)
	copy(b[8:], h.Hash[:])
	return b
}

// DecodeHead decodes EncodeHead's bytes; ok is false when b is absent or malformed.
func DecodeHead(b []byte) (h Head, ok bool) {
	if len(b) != 40 {
		return h, false
	}
	h.Seq = binary.BigEndian.Uint64(b)
	copy(h.Hash[:], b[8:])
	return h, true
}

// ---- version 1: events as JSON --------------------------------------------------------

// EncodeEventV1 is the version-1 event encoding: graph.Event as JSON.
func EncodeEventV1(e *graph.Event) ([]byte, error) { return json.Marshal(e) }

// DecodeEventV1 decodes EncodeEventV1's bytes.
func DecodeEventV1(b []byte) (*graph.Event, error) {
	var e graph.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// ---- version 2: compact binary events --------------------------------------------------

// Version-2 event record layout:
//
//	0x02                      record version
//	flags                     1 byte: 1 = id stored as 16 raw uuid bytes, 2 = body deflated,
//	                          4 = request id stored as 16 raw uuid bytes
//	time                      varint Unix nanoseconds
//	id                        16 bytes, or uvarint length + bytes
//	prev_hash, hash           32 raw bytes each
//	actor, action, target,
//	message                   uvarint length + bytes each
//	request_id                16 bytes, or uvarint length + bytes
//	body                      rest of the record: uvarint len(before) ‖ before ‖ after,
//	                          packed with the token table (flag 8, see pack.go), then
//	                          deflated with a preset dictionary when large (flag 2)
//
// The seq is the record's key.
const (
	flagRawID    = 1
	flagDeflated = 2
	flagRawReqID = 4
	flagPacked   = 8
	recV2        = 2
	// packed bodies shorter than this skip deflate, whose setup costs more than it saves
	deflateMin = 512
)

// bodyDict primes deflate with the JSON that event bodies are made of, so even short
// bodies compress.
var bodyDict = []byte(`{"id":"identity:","name":"","data":{},"hints":[{"kind":"usb_serial","value":""},{"kind":"usb_id","value":""},{"kind":"usb_path","value":""},{"kind":"alsa_card_id","value":""},{"kind":"alsa_longname","value":""},{"kind":"midi_client","value":""},{"kind":"pipewire_device","value":""},{"kind":"mac","value":""},{"kind":"robot_serial","value":""}],"tags":["role:","capability:","manufacturer:","location:","status:","project:"],"created_at":"2026-01-01T00:00:00.000000000Z","updated_at":"2026-01-01T00:00:00.000000000Z"}{"id":"note:","target":"identity:","kind":"info","body":"","author":"cli:","time":"2026-01-01T00:00:00.000000000Z"}{"id":"device:","key":"sn:","ref":"usb:","aliases":[],"source":"usb","sources":["usb","alsa","pipewire"],"fingerprints":[],"attrs":{"manufacturer":"","product":""},"first_seen":"","last_seen":"","present":true,"identity_id":"identity:"}{"tag":"`)

var (
	writerPool = sync.Pool{New: func() any {
		w, _ := flate.NewWriterDict(nil, flate.DefaultCompression, bodyDict)
		return w
	}}
	readerPool = sync.Pool{New: func() any { return flate.NewReaderDict(nil, bodyDict) }}
)

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendUUIDOrStr(b []byte, s string, flag byte, flags *byte) []byte {
	if len(s) == 36 {
		if u, err := uuid.Parse(s); err == nil && u.String() == s {
			*flags |= flag
			return append(b, u[:]...)
		}
	}
	return appendStr(b, s)
}

// EncodeEvent is the current (version 2) event encoding.
func EncodeEvent(e *graph.Event) ([]byte, error) {
	var prev, hash []byte
	var err error
	if prev, err = hex.DecodeString(e.PrevHash); err != nil || len(prev) != 32 {
		return nil, fmt.Errorf("event %d: prev_hash %q is not 32 hex bytes", e.Seq, e.PrevHash)
	}
	if hash, err = hex.DecodeString(e.Hash); err != nil || len(hash) != 32 {
		return nil, fmt.Errorf("event %d: hash %q is not 32 hex bytes", e.Seq, e.Hash)
	}
	b := make([]byte, 2, 160+len(e.Before)+len(e.After))
	b[0] = recV2
	var flags byte
	b = binary.AppendVarint(b, e.Time.UnixNano())
	b = appendUUIDOrStr(b, e.ID, flagRawID, &flags)
	b = append(b, prev...)
	b = append(b, hash...)
	b = appendStr(b, e.Actor)
	b = appendStr(b, e.Action)
	b = appendStr(b, e.Target)
	b = appendStr(b, e.Message)
	b = appendUUIDOrStr(b, e.RequestID, flagRawReqID, &flags)
	body := binary.AppendUvarint(nil, uint64(len(e.Before)))
	body = append(body, e.Before...)
	body = append(body, e.After...)
	if len(body) > 1 {
		body = packBody(body, e.Time.Format(time.RFC3339Nano))
		flags |= flagPacked
	}
	if len(body) >= deflateMin {
		var buf bytes.Buffer
		w := writerPool.Get().(*flate.Writer)
		w.Reset(&buf)
		w.Write(body)
		w.Close()
		writerPool.Put(w)
		if buf.Len() < len(body) {
			flags |= flagDeflated
			body = buf.Bytes()
		}
	}
	b = append(b, body...)
	b[1] = flags
	return b, nil
}

var errShort = errors.New("event record is truncated")

type reader struct {
	b   []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errShort
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *reader) uuidOrStr(raw bool) string {
	if raw {
		var u uuid.UUID
		copy(u[:], r.bytes(16))
		if r.err != nil {
			return ""
		}
		return u.String()
	}
	return r.str()
}

// EventHeader is an event without its before/after, decoded cheaply for filtering.
type EventHeader struct {
	graph.Event
	flags byte
	body  []byte // still encoded; aliases the input
}

// DecodeEventHeader decodes everything but the body of a version-2 record. seq is the
// record's key. The header's body aliases b: call Body before b goes away.
func DecodeEventHeader(seq uint64, b []byte) (*EventHeader, error) {
	if len(b) < 2 || b[0] != recV2 {
		return nil, fmt.Errorf("event %d: not a version-2 record", seq)
	}
	h := &EventHeader{flags: b[1]}
	r := &reader{b: b[2:]}
	t, k := binary.Varint(r.b)
	if k <= 0 {
		return nil, fmt.Errorf("event %d: %w", seq, errShort)
	}
	r.b = r.b[k:]
	h.Seq = seq
	h.Time = time.Unix(0, t).UTC()
	h.ID = r.uuidOrStr(h.flags&flagRawID != 0)
	prev := r.bytes(32)
	hash := r.bytes(32)
	h.Actor = r.str()
	h.Action = r.str()
	h.Target = r.str()
	h.Message = r.str()
	h.RequestID = r.uuidOrStr(h.flags&flagRawReqID != 0)
	if r.err != nil {
		return nil, fmt.Errorf("event %d: %w", seq, r.err)
	}
	h.PrevHash = hex.EncodeToString(prev)
	h.Hash = hex.EncodeToString(hash)
	h.body = r.b
	return h, nil
}

// Body decodes the header's before/after into its Event and returns the event.
func (h *EventHeader) Body() (*graph.Event, error) {
	body := h.body
	if h.flags&flagDeflated != 0 {
		fr := readerPool.Get().(io.ReadCloser)
		fr.(flate.Resetter).Reset(bytes.NewReader(body), bodyDict)
		var err error
		body, err = io.ReadAll(fr)
		readerPool.Put(fr)
		if err != nil {
			return nil, fmt.Errorf("event %d: inflate body: %w", h.Seq, err)
		}
	}
	if h.flags&flagPacked != 0 {
		var err error
		if body, err = unpackBody(body, h.Time.Format(time.RFC3339Nano)); err != nil {
			return nil, fmt.Errorf("event %d: %w", h.Seq, err)
		}
	}
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) {
		return nil, fmt.Errorf("event %d: body %w", h.Seq, errShort)
	}
	e := h.Event
	if n > 0 {
		e.Before = append(json.RawMessage(nil), body[k:k+int(n)]...)
	}
	if rest := body[k+int(n):]; len(rest) > 0 {
		e.After = append(json.RawMessage(nil), rest...)
	}
	return &e, nil
}

// DecodeEvent decodes a whole version-2 record.
func DecodeEvent(seq uint64, b []byte) (*graph.Event, error) {
	h, err := DecodeEventHeader(seq, b)
	if err != nil {
		return nil, err
	}
	return h.Body()
}

// EventActionTarget returns a version-2 record's action and target without decoding the
// rest (what a name index follows the changelog by); both alias b.
func EventActionTarget(b []byte) (action, target []byte, err error) {
	if len(b) < 2 || b[0] != recV2 {
		return nil, nil, errors.New("not a version-2 record")
	}
	flags := b[1]
	r := &reader{b: b[2:]}
	_, k := binary.Varint(r.b)
	if k <= 0 {
		return nil, nil, errShort
	}
	r.b = r.b[k:]
	if flags&flagRawID != 0 {
		r.bytes(16)
	} else {
		r.rawStr()
	}
	r.bytes(64) // prev_hash, hash
	r.rawStr()  // actor
	action = r.rawStr()
	target = r.rawStr()
	if r.err != nil {
		return nil, nil, r.err
	}
	return action, target, nil
}

// rawStr is str without the copy: the bytes alias the record.
func (r *reader) rawStr() []byte {
	if r.err != nil {
		return nil
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errShort
		return nil
	}
	s := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	return s
}
