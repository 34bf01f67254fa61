package migrations

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// FuzzDecodeEvent feeds arbitrary bytes to the decoders of a stored changelog event (the
// version-2 record, and version 1's JSON that migrations read). A record either fails
// with an error or decodes to an event that encodes and decodes back to itself: the
// same fields, the same canonical bytes and so the same chain hash, and, from the second
// encoding on, the same record bytes. The header decoder agrees with the whole decoder.
// The seed corpus is testdata/fuzz/FuzzDecodeEvent.
func FuzzDecodeEvent(f *testing.F) {
	f.Fuzz(func(t *testing.T, seq uint64, b []byte) {
		h, herr := DecodeEventHeader(seq, b)
		e, err := DecodeEvent(seq, b)
		if herr != nil && err == nil {
			t.Fatalf("the header does not decode (%v) but the record does", herr)
		}
		if err == nil {
			if e.Seq != seq {
				t.Fatalf("seq %d, want %d", e.Seq, seq)
			}
			if hb := h.Event; hb.ID != e.ID || hb.Actor != e.Actor || hb.Action != e.Action || hb.Target != e.Target ||
				hb.Message != e.Message || hb.RequestID != e.RequestID || hb.Hash != e.Hash || hb.PrevHash != e.PrevHash || !hb.Time.Equal(e.Time) {
				t.Fatalf("header %+v, record %+v", hb, e)
			}
			roundTrip(t, e)
		}

		// Version 1: JSON, as json.Marshal wrote it. Its encoding is stable from the first
		// re-encoding on, with the same canonical bytes.
		e1, err := DecodeEventV1(b)
		if err != nil {
			return
		}
		v1, err := EncodeEventV1(e1)
		if err != nil {
			t.Fatalf("a decoded version-1 event does not encode: %v", err)
		}
		e2, err := DecodeEventV1(v1)
		if err != nil {
			t.Fatalf("re-encoded version-1 event %s does not decode: %v", v1, err)
		}
		if v1b, _ := EncodeEventV1(e2); !bytes.Equal(v1, v1b) {
			t.Fatalf("version 1: the encoding is not stable:\n%s\n%s", v1, v1b)
		}
		if e2b, _ := DecodeEventV1(v1); !bytes.Equal(graph.CanonicalEvent(e2), graph.CanonicalEvent(e2b)) {
			t.Fatal("version 1: canonical bytes differ between two decodings")
		}
		// A version-1 event with a well-formed chain position migrates to version 2 (as
		// the migration does: decode, encode) keeping its canonical bytes and hash.
		if len(e1.Hash) == 64 && len(e1.PrevHash) == 64 {
			if _, err := EncodeEvent(e1); err == nil {
				roundTrip(t, e1)
			}
		}
	})
}

// roundTrip checks that e survives encoding and decoding as a version-2 record.
func roundTrip(t *testing.T, e *graph.Event) {
	t.Helper()
	b1, err := EncodeEvent(e)
	if err != nil {
		t.Fatalf("a decoded event does not encode: %v", err)
	}
	e1, err := DecodeEvent(e.Seq, b1)
	if err != nil {
		t.Fatalf("a re-encoded event does not decode: %v", err)
	}
	if !bytes.Equal(graph.CanonicalEvent(e), graph.CanonicalEvent(e1)) {
		t.Fatalf("canonical bytes changed by a round trip:\n%q\n%q", graph.CanonicalEvent(e), graph.CanonicalEvent(e1))
	}
	// (hex case aside: version 1's JSON may spell it in capitals, a record stores bytes)
	if !strings.EqualFold(e.Hash, e1.Hash) || !strings.EqualFold(e.PrevHash, e1.PrevHash) {
		t.Fatalf("chain position changed: %s/%s → %s/%s", e.PrevHash, e.Hash, e1.PrevHash, e1.Hash)
	}
	var prev [32]byte
	if graph.ChainHash(prev, e) != graph.ChainHash(prev, e1) {
		t.Fatal("the chain hash changed by a round trip")
	}
	// The record keeps Unix nanoseconds, as the canonical bytes do (a time outside
	// 1678-2262, which no event is stamped with, comes back as another time with the same
	// nanosecond count).
	if e.Time.UnixNano() != e1.Time.UnixNano() {
		t.Fatalf("time %v → %v", e.Time, e1.Time)
	}
	// Before and after survive byte for byte (nil and empty alike: absent).
	if !bytes.Equal(e.Before, e1.Before) || !bytes.Equal(e.After, e1.After) {
		t.Fatalf("body changed:\n%q %q\n%q %q", e.Before, e.After, e1.Before, e1.After)
	}
	b2, err := EncodeEvent(e1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("the encoding is not stable:\n%x\n%x", b1, b2)
	}
	e2, err := DecodeEvent(e.Seq, b2)
	if err != nil || !reflect.DeepEqual(e1, e2) {
		j1, _ := json.Marshal(e1)
		j2, _ := json.Marshal(e2)
		t.Fatalf("decode(encode(e)) differs:\n%s\n%s\n%v", j1, j2, err)
	}
}
