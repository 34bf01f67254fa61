package migrations

import (
	"bytes"
	"errors"
)

// Event bodies are short JSON objects made of the same few keys. Version-2 records pack
// them with a static token table: each token below becomes one control byte (compact JSON
// never holds raw bytes below 0x20; any such byte in the input is kept as 0x00 followed by
// the byte), and the event's own time, which creates and notes repeat, becomes one byte
// too. Packing is lossless for any input, costs about a microsecond, and shrinks a typical
// body 3-5×; deflate only runs on top for large bodies, where it pays for its setup.
//
// The table is part of the on-disk format: never reorder or change it, only append (and
// only with a new schema version).
//
// Why this bespoke packer stays (reviewed in issue 9, which otherwise asks bespoke
// byte-level code to earn its place). It is frozen into schema version 2: every event
// record of every existing file is packed with it. Dropping it from the writer means a
// version 3, a migration that rewrites every event record (a backup copy of the file, then
// minutes per million events, in one transaction per step), files that older devgraphs
// refuse, and unpackBody kept anyway so version-2 files can still be read and migrated:
// the code would not get smaller. What it buys is modest but real: with the import
// fixture (an identity with 3 hints, 3 tags, a note and the 8 events that made them),
// compacted, 10,000 identities take 3,244 bytes each as they are, 3,607 with the same
// binary records but bodies left unpacked (deflate alone), and 5,667 with version 1's JSON
// events; the target is 4 KiB per identity (BenchmarkFile_SizePerIdentity). Revisit it
// when another change has to rewrite the events anyway.
var packTokens = []string{
	`","hints":[],"tags":[],"created_at":"`,
	`","updated_at":"`,
	`","created_at":"`,
	`{"id":"identity:`,
	`{"id":"note:`,
	`{"id":"device:`,
	`","target":"identity:`,
	`","target":"device:`,
	`","name":"`,
	`","kind":"`,
	`","body":"`,
	`","author":"`,
	`","time":"`,
	`{"kind":"`,
	`","value":"`,
	`{"tag":"`,
	`"}`,
	`","identity":"identity:`,
	`usb_serial`,
	`usb_id`,
	`usb_path`,
	`alsa_card_id`,
	`alsa_longname`,
	`midi_client`,
	`pipewire_device`,
	`","hints":[`,
	`","tags":[`,
}

// packCodes are the control bytes available as codes (not 0x00, the escape; not \t \n \r,
// which JSON may legitimately hold between tokens); the last one stands for the event time.
var packCodes = []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0b, 0x0c,
	0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}

const packEscape = 0x00

var (
	codeTime  = packCodes[len(packTokens)]
	byFirst   [256][]int  // token indexes by first byte, longest first
	codeToken [256][]byte // code → expansion (nil: not a code)
	isCode    [256]bool
)

func init() {
	if len(packTokens)+1 != len(packCodes) {
		panic("migrations: pack table and codes disagree")
	}
	for i, t := range packTokens {
		byFirst[t[0]] = append(byFirst[t[0]], i)
		codeToken[packCodes[i]] = []byte(t)
		isCode[packCodes[i]] = true
	}
	isCode[codeTime] = true
	for c := range byFirst {
		l := byFirst[c]
		for i := 1; i < len(l); i++ { // insertion sort, longest first
			for j := i; j > 0 && len(packTokens[l[j]]) > len(packTokens[l[j-1]]); j-- {
				l[j], l[j-1] = l[j-1], l[j]
			}
		}
	}
}

// packBody packs b; ts is the event time as JSON writes it (may be "").
func packBody(b []byte, ts string) []byte {
	out := make([]byte, 0, len(b)/2+8)
	for i := 0; i < len(b); {
		c := b[i]
		if ts != "" && c == ts[0] && bytes.HasPrefix(b[i:], []byte(ts)) {
			out = append(out, codeTime)
			i += len(ts)
			continue
		}
		matched := false
		for _, ti := range byFirst[c] {
			t := packTokens[ti]
			if len(b)-i >= len(t) && string(b[i:i+len(t)]) == t {
				out = append(out, packCodes[ti])
				i += len(t)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if c < 0x20 {
			out = append(out, packEscape)
		}
		out = append(out, c)
		i++
	}
	return out
}

var errPacked = errors.New("packed body is malformed")

// unpackBody reverses packBody.
func unpackBody(p []byte, ts string) ([]byte, error) {
	out := make([]byte, 0, len(p)*3)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == packEscape:
			i++
			if i == len(p) {
				return nil, errPacked
			}
			out = append(out, p[i])
		case c == codeTime:
			out = append(out, ts...)
		case codeToken[c] != nil:
			out = append(out, codeToken[c]...)
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			return nil, errPacked
		default:
			out = append(out, c)
		}
	}
	return out, nil
}
