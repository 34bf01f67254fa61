package graph_test

import (
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// goldenEvents pin the hash chain's canonical encoding byte for byte: a change to it breaks
// every stored chain, so these bytes and hashes must never change.
var goldenEvents = []struct {
	name      string
	prev      string // hex
	event     graph.Event
	canonical string // hex
	hash      string // hex
}{
	{
		name: "every field",
		prev: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		event: graph.Event{
			Seq: 42, ID: "019a0000-0000-7000-8000-000000000001",
			Time:  time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
			Actor: "cli:alice", Action: "identity.rename", Target: "identity:roland-jd-xi",
			Before:  json.RawMessage(`{"id":"identity:roland-jd-xi","name":"JD-Xi"}`),
			After:   json.RawMessage(`{"id":"identity:roland-jd-xi","name":"Roland JD-Xi"}`),
			Message: "wärme", RequestID: "019a0000-0000-7000-8000-000000000002",
			PrevHash: "ignored", Hash: "ignored",
		},
		canonical: "64657667726170682e6576656e742e7631" + // "devgraph.event.v1"
			"000000000000002a" + // seq 42
			"1886caf21c963206" + // time, Unix ns
			"00000024" + "30313961303030302d303030302d373030302d383030302d303030303030303030303031" + // id
			"00000009" + "636c693a616c696365" + // actor
			"0000000f" + "6964656e746974792e72656e616d65" + // action
			"00000015" + "6964656e746974793a726f6c616e642d6a642d7869" + // target
			"0000002d" + "7b226964223a226964656e746974793a726f6c616e642d6a642d7869222c226e616d65223a224a442d5869227d" + // before
			"00000034" + "7b226964223a226964656e746974793a726f6c616e642d6a642d7869222c226e616d65223a22526f6c616e64204a442d5869227d" + // after
			"00000006" + "77c3a4726d65" + // message
			"00000024" + "30313961303030302d303030302d373030302d383030302d303030303030303030303032", // request_id
		hash: "3811bb844f59dc8f66b614e21c98d0f7f4f6efdf4df9bea82e7136b1ef6ac2c7",
	},
	{
		name:  "empty fields, time before 1970",
		prev:  "0000000000000000000000000000000000000000000000000000000000000000",
		event: graph.Event{Seq: 1, Time: time.Unix(0, -5).UTC(), Action: "tag.add", Target: "device:x"},
		canonical: "64657667726170682e6576656e742e7631" + // "devgraph.event.v1"
			"0000000000000001" + // seq 1
			"fffffffffffffffb" + // time -5 ns, two's complement
			"00000000" + "00000000" + // id, actor
			"00000007" + "7461672e616464" + // action
			"00000008" + "6465766963653a78" + // target
			"00000000" + "00000000" + "00000000" + "00000000", // before, after, message, request_id
		hash: "5f34538d7d3ea7fba5480942528561b6fa7c2b600bded22f09bc648e943bf0be",
	},
}

func TestCanonicalEvent_Golden(t *testing.T) {
	t.Parallel()
	for _, g := range goldenEvents {
		t.Run(g.name, func(t *testing.T) {
			e := g.event
			b := graph.CanonicalEvent(&e)
			var prev [32]byte
			hex.Decode(prev[:], []byte(g.prev))
			sum := graph.ChainHash(prev, &e)
			if got := hex.EncodeToString(b); got != g.canonical {
				t.Fatalf("canonical bytes\n got %s\nwant %s", got, g.canonical)
			}
			if got := hex.EncodeToString(sum[:]); got != g.hash {
				t.Fatalf("hash=%s, want %s", got, g.hash)
			}
		})
	}
}
