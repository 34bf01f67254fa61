package store

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

var eventLineSeeds = []string{
	`{"type":"event","event":{"seq":1,"id":"019a0000-0000-7000-8000-000000000001","time":"2026-01-01T00:00:00Z","actor":"cli:bench","action":"identity.create","target":"identity:synth-000000","after":{"id":"identity:synth-000000","name":"Synth 000000","hints":[],"tags":[]},"request_id":"r1","prev_hash":"00","hash":"ab"}}`,
	`{"type":"event","event":{"seq":7,"id":"e7","time":"2026-01-01T00:00:00.123456789+02:00","actor":"mcp:x","action":"note.add","target":"note:1","before":{"a":"b\"}","c":[1,2,{"d":null}]},"after":"plain","message":"wärme","request_id":"r","prev_hash":"p","hash":"h"},"also":["identity:a","identity:b"]}`,
	`{"type":"event","event":{"seq":2,"id":"x","time":"2026-01-01T00:00:00Z","actor":"a","action":"b","target":"c","after":12.5e3,"request_id":"r","prev_hash":"p","hash":"h"},"also":[]}`,
	`{ "type" : "event" , "event" : { "seq" : 3 , "after" : true , "hash" : "h" } }`,
	`{"type":"event","event":{"seq":1,"before":null,"hash":"h"}}`,
	`{"type":"event","event":{"seq":1,"message":"a\nb","hash":"h"}}`,
	`{"type":"event","event":{"seq":01,"hash":"h"}}`,
	`{"type":"event","event":{"seq":1,"seq":2}}`,
	`{"Type":"event","event":{"seq":1}}`,
	`{"type":"event","event":{"seq":1,"after":{"a":1]}}}`,
	`{"type":"event","event":{"seq":1,"after":{"a":1}}`,
	`{"type":"identity","identity":{"id":"identity:x","name":"X"}}`,
	`{"type":"identity","identity":{"id":"identity:synth-000001","name":"Synth 000001","data":{"rack":3},"hints":[{"kind":"usb_serial","value":"0582:01a9:SN000001"},{"kind":"usb_id","value":"0582:01a9"}],"tags":["location:rack-1","role:synth"],"created_at":"2026-01-01T00:00:01Z","updated_at":"2026-01-01T00:00:01Z"}}`,
	`{"type":"identity","identity":{"id":"identity:y","name":"Y","hints":[],"tags":[],"created_at":"2026-01-01T00:00:01Z","updated_at":"2026-01-01T00:00:01Z"}}`,
	`{"type":"identity","identity":{"id":"identity:y","hints":[{"kind":"a","value":"b","x":1}]}}`,
	`{"type":"identity","identity":{"id":"identity:y","hints":"abc"}}`,
	`{"type":"identity","identity":{"id":"identity:y","tags":[1]}}`,
	`{"type":"note","note":{"id":"note:019a","target":"identity:x","kind":"info","body":"Firmware 1.02 installed; MIDI thru works.","author":"cli:bench","time":"2026-01-01T00:00:01Z"}}`,
	`{"type":"note","note":{"id":"note:019a","body":"two\nlines"}}`,
	`{"type":"note","event":{"seq":1},"note":{"id":"note:1"}}`,
	`{"type":"device","device":{"key":"k"}}`,
	`{"type":"event","event":{"seq":1,"after":{"a":"\u00e9"}},"also":["x"]}`,
	`{"type":"event","event":{"seq":1,"time":"not a time"}}`,
	"{\"type\":\"event\",\"event\":{\"seq\":1,\"actor\":\"\xff\"}}",
	`{"type":"relation","relation":{"id":"rel:019a0000-0000-7000-8000-000000000001","type":"cable","from":"identity:keystep","from_port":"MIDI OUT","to":"identity:jdxi","to_port":"MIDI IN","attrs":{"kind":"midi-din","length":"2m"},"author":"cli:bench","created_at":"2026-01-01T00:00:01Z"}}`,
	`{"type":"relation","relation":{"id":"rel:1","type":"controls","from":"identity:a","to":"device:k","attrs":{},"created_at":"2026-01-01T00:00:01Z"}}`,
	`{"type":"relation","relation":{"id":"rel:1","attrs":{"a":"1","a":"2"}}}`,
	`{"type":"relation","relation":{"id":"rel:1","attrs":{"a":1}}}`,
	`{"type":"relation","relation":{"id":"rel:1","observed":true}}`,
	`{"type":"relation","relation":{"id":"rel:1"},"note":{"id":"note:1"}}`,
}

// The fast reader agrees with json.Unmarshal whenever it accepts a line.
func checkFastLine(t *testing.T, line []byte) {
	var fast exportLine
	if !fastLine(line, &fast) {
		return
	}
	var slow exportLine
	if err := json.Unmarshal(line, &slow); err != nil {
		t.Fatalf("fast reader accepted %q, which json rejects: %v", line, err)
	}
	if slow.Event != nil && fast.Event != nil && !slow.Event.Time.Equal(fast.Event.Time) {
		t.Fatalf("%q: time %v, json says %v", line, fast.Event.Time, slow.Event.Time)
	}
	if slow.Event != nil && fast.Event != nil {
		fast.Event.Time = slow.Event.Time
	}
	if !reflect.DeepEqual(fast, slow) {
		fj, _ := json.Marshal(fast)
		sj, _ := json.Marshal(slow)
		t.Fatalf("%q:\nfast %s\njson %s", line, fj, sj)
	}
}

func TestFastLine(t *testing.T) {
	t.Parallel()
	accepted := 0
	for _, s := range eventLineSeeds {
		checkFastLine(t, []byte(s))
		var l exportLine
		if fastLine([]byte(s), &l) {
			accepted++
		}
		// decodeLine gives json's answer either way
		var got, want exportLine
		gerr, werr := decodeLine([]byte(s), &got), json.Unmarshal([]byte(s), &want)
		if (gerr == nil) != (werr == nil) {
			t.Errorf("%q: decodeLine err %v, json err %v", s, gerr, werr)
		}
	}
	if accepted < 7 {
		t.Errorf("the fast reader accepted only %d of the plain lines", accepted)
	}
	// every event line a real export writes takes the fast path
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	var e exportLine
	if err := json.Unmarshal([]byte(eventLineSeeds[1]), &e); err != nil {
		t.Fatal(err)
	}
	enc.Encode(e)
	line := bytes.TrimSpace(buf.Bytes())
	var l exportLine
	if !fastLine(line, &l) {
		t.Fatalf("the fast reader refused an encoder-written line %s", line)
	}
	checkFastLine(t, line)
}

// decodeRelation agrees with json.Unmarshal on every relation record.
func TestDecodeRelation(t *testing.T) {
	t.Parallel()
	for _, s := range eventLineSeeds {
		var l exportLine
		if json.Unmarshal([]byte(s), &l) != nil || l.Relation == nil {
			continue
		}
		rec, _ := json.Marshal(l.Relation)
		for _, b := range [][]byte{rec, []byte(s[len(`{"type":"relation","relation":`) : len(s)-1])} {
			got, gerr := decodeRelation(b)
			var want graph.Relation
			werr := json.Unmarshal(b, &want)
			if (gerr == nil) != (werr == nil) || (gerr == nil && !reflect.DeepEqual(*got, want)) {
				t.Errorf("%s: %+v %v, json %+v %v", b, got, gerr, want, werr)
			}
		}
	}
}

func FuzzFastLine(f *testing.F) {
	for _, s := range eventLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkFastLine(t, line) })
}
