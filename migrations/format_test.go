package migrations

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

func sampleEvent() *graph.Event {
	return &graph.Event{
		Seq: 42, ID: graph.NewUUIDv7(), Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Actor: "cli:alice",
		Action: "identity.create", Target: "identity:roland-jd-xi",
		After:     json.RawMessage(`{"id":"identity:roland-jd-xi","name":"Roland JD-Xi","hints":[],"tags":[],"created_at":"2026-01-02T03:04:05.000000006Z","updated_at":"2026-01-02T03:04:05.000000006Z"}`),
		RequestID: graph.NewRequestID(), PrevHash: strings.Repeat("ab", 32), Hash: strings.Repeat("cd", 32),
	}
}

func TestEventCodec_RoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range []*graph.Event{
		sampleEvent(),
		{Seq: 1, ID: "not-a-uuid", Time: time.Unix(0, -5).UTC(), Action: "tag.add", Target: "device:x", Before: json.RawMessage(`{"tag":"a:b"}`), RequestID: "req 1", Message: "why", PrevHash: strings.Repeat("00", 32), Hash: strings.Repeat("ff", 32)},
	} {
		b, err := EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEvent(e.Seq, b)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(e)
		if string(g) != string(w) {
			t.Fatalf("round trip\n got %s\nwant %s", g, w)
		}
		if string(graph.CanonicalEvent(got)) != string(graph.CanonicalEvent(e)) {
			t.Fatal("canonical bytes differ after a round trip")
		}
		v1, _ := EncodeEventV1(e)
		t.Logf("v1 %d bytes, v2 %d bytes", len(v1), len(b))
		for i := 0; i < len(b)-1; i++ { // every truncation is an error, never a panic
			if _, err := DecodeEvent(e.Seq, b[:i]); err == nil && i < len(b)-len(e.After)-len(e.Before) {
				t.Fatalf("truncated at %d decoded", i)
			}
		}
	}
}

func BenchmarkEncodeEvent(b *testing.B) {
	e := sampleEvent()
	for b.Loop() {
		EncodeEvent(e)
	}
}

func BenchmarkDecodeEvent(b *testing.B) {
	e := sampleEvent()
	v, _ := EncodeEvent(e)
	for b.Loop() {
		DecodeEvent(1, v)
	}
}

func TestPack_Lossless(t *testing.T) {
	t.Parallel()
	ts := "2026-01-02T03:04:05.000000006Z"
	for _, in := range []string{
		"", "x", "\x00\x01\x1f\t\n\r", `{"kind":"usb_serial","value":"a\u0000b"}`, ts + ts, `"}"}"`,
		`{"id":"identity:x","name":"y","hints":[],"tags":[],"created_at":"` + ts + `","updated_at":"` + ts + `"}`,
		string([]byte{0xff, 0xfe, 0x80}), `","hints":[],"tags":[],"created_at":`,
	} {
		p := packBody([]byte(in), ts)
		out, err := unpackBody(p, ts)
		if err != nil || string(out) != in {
			t.Fatalf("%q → %q → %q, %v", in, p, out, err)
		}
	}
	if _, err := unpackBody([]byte{packEscape}, ts); err == nil {
		t.Fatal("dangling escape accepted")
	}
}

func FuzzPack(f *testing.F) {
	f.Add([]byte(`{"kind":"usb_id","value":"0582:01a9"}`), "2026-01-02T03:04:05Z")
	f.Fuzz(func(t *testing.T, in []byte, ts string) {
		out, err := unpackBody(packBody(in, ts), ts)
		if err != nil || string(out) != string(in) {
			t.Fatalf("%q → %q, %v", in, out, err)
		}
	})
}
