package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// FuzzImportLine feeds arbitrary lines to decodeLine, the decoder of an import's lines
// (import.go's lineDecoder). It never panics and always gives json.Unmarshal's answer;
// a decoded line, written out again as Export writes it, decodes to the same line (the
// encoding is a fixed point from then on); and an event as devgraph writes it (valid
// UTF-8, before/after in the encoder's form) keeps its canonical bytes, hence its hash,
// through that export and import. The seed corpus is testdata/fuzz/FuzzImportLine.
func FuzzImportLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		var got, want exportLine
		err, werr := decodeLine(line, &got), json.Unmarshal(line, &want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: decodeLine says %v, json says %v", line, err, werr)
		}
		if err != nil {
			return
		}
		g, gerr := json.Marshal(got)
		w, wmerr := json.Marshal(want)
		if (gerr == nil) != (wmerr == nil) || !bytes.Equal(g, w) {
			t.Fatalf("%q:\ndecodeLine %s %v\njson       %s %v", line, g, gerr, w, wmerr)
		}
		if gerr != nil {
			return // a time json cannot write (year past 9999): Export never meets one
		}
		var again exportLine
		if err := decodeLine(g, &again); err != nil {
			t.Fatalf("%q re-encoded as %s does not decode: %v", line, g, err)
		}
		g2, err := json.Marshal(again)
		if err != nil || !bytes.Equal(g, g2) {
			t.Fatalf("the export encoding is not a fixed point:\n%s\n%s %v", g, g2, err)
		}
		if e := got.Event; e != nil && writtenByDevgraph(e) {
			if !bytes.Equal(graph.CanonicalEvent(e), graph.CanonicalEvent(again.Event)) {
				t.Fatalf("event %d: canonical bytes changed through export and import:\n%q\n%q", e.Seq, graph.CanonicalEvent(e), graph.CanonicalEvent(again.Event))
			}
		}
	})
}

// writtenByDevgraph reports whether e looks as devgraph stores events: valid UTF-8 text,
// before and after as json.Marshal writes them.
func writtenByDevgraph(e *graph.Event) bool {
	for _, s := range []string{e.ID, e.Actor, e.Action, e.Target, e.Message, e.RequestID, e.PrevHash, e.Hash} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, raw := range []json.RawMessage{e.Before, e.After} {
		if len(raw) == 0 {
			continue
		}
		b, err := json.Marshal(raw)
		if err != nil || !bytes.Equal(b, raw) || !utf8.Valid(raw) {
			return false
		}
	}
	return true
}
