package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// A host's live state as it is published: ids carry the host, the same reading encodes
// the same bytes in whatever order the sources listed it (so an unchanged reading is
// never written again), and a reading too big for MaxHostLiveBytes is cut to fit and
// says so.
func TestEncodeHostLive(t *testing.T) {
	dev := &graph.ObservedDevice{Key: "path:0582:01a9:3-3.2", Ref: "usb:3-3.2", Source: "usb",
		Fingerprints: []graph.Fingerprint{{Kind: graph.FPUSBPath, Value: "3-3.2"}},
		Nodes:        []graph.DeviceNode{{Path: "/dev/snd/midiC1D0", Kind: graph.NodeSnd}}}
	rel := &graph.Relation{Type: "subscribed", From: "device:path:0582:01a9:3-3.2", FromPort: "JD-Xi MIDI 1", To: "client:alsa:Bitwig Studio", ToPort: "MIDI In 1", Observed: true, Source: "alsa"}
	rel.ID = graph.ObservedRelationID(rel.Type, rel.From, rel.FromPort, rel.To, rel.ToPort)
	via := &graph.Relation{Type: "via", From: "device:path:0582:01a9:3-3.2", To: "device:path:05e3:0610:3-3", Observed: true, Source: "usb"}
	via.ID = graph.ObservedRelationID(via.Type, via.From, "", via.To, "")
	client := &graph.Client{ID: "client:alsa:Bitwig Studio", Source: "alsa", Name: "Bitwig Studio"}
	snap := qualifySnapshot("studio-b", &graph.Snapshot{Devices: []*graph.ObservedDevice{dev}, Relations: []*graph.Relation{rel, via}, Clients: []*graph.Client{client}})

	enc := encodeHostLive("studio-b", "studio-b", snap)
	var st graph.HostLive
	if err := json.Unmarshal(enc, &st); err != nil {
		t.Fatal(err)
	}
	if st.Host != "studio-b" || len(st.Devices) != 1 || st.Devices[0].Key != "studio-b/path:0582:01a9:3-3.2" || st.Devices[0].Ref != "studio-b/usb:3-3.2" {
		t.Errorf("devices: %+v", st.Devices[0])
	}
	if st.Devices[0].Fingerprints[0].Value != "studio-b/3-3.2" || len(st.Devices[0].Nodes) != 1 {
		t.Errorf("device's usb_path and nodes: %+v", st.Devices[0])
	}
	var sub *graph.Relation
	for _, r := range st.Relations {
		if r.Type == "subscribed" {
			sub = r
		}
	}
	if sub == nil || sub.From != "device:studio-b/path:0582:01a9:3-3.2" || sub.To != "client:studio-b/alsa:Bitwig Studio" ||
		sub.ID != graph.ObservedRelationID(sub.Type, sub.From, sub.FromPort, sub.To, sub.ToPort) || sub.ID == rel.ID {
		t.Errorf("relation not qualified with a new id: %+v", sub)
	}
	if st.Clients[0].ID != "client:studio-b/alsa:Bitwig Studio" {
		t.Errorf("client: %+v", st.Clients[0])
	}
	// This host's own reading keeps its clients bare (a bare id is this host's).
	for _, r := range snap.Relations {
		if r.Type == "subscribed" && r.To != "client:alsa:Bitwig Studio" {
			t.Errorf("this host's own relation names its client %s", r.To)
		}
	}

	swapped := &graph.Snapshot{Devices: snap.Devices, Relations: []*graph.Relation{snap.Relations[1], snap.Relations[0]}, Clients: snap.Clients}
	if again := encodeHostLive("studio-b", "studio-b", swapped); !bytes.Equal(again, enc) {
		t.Errorf("the same reading listed in another order encodes differently:\n%s\n%s", enc, again)
	}

	big := &graph.Snapshot{}
	for i := range 5000 {
		d := *dev
		d.Key, d.Ref = fmt.Sprintf("path:0582:01a9:3-%d", i), fmt.Sprintf("usb:3-%d", i)
		d.Nodes = []graph.DeviceNode{{Path: "/dev/snd/midiC1D0", Kind: graph.NodeSnd, Links: []string{"/dev/snd/by-id/" + strings.Repeat("x", 100)}}}
		big.Devices = append(big.Devices, &d)
		r := *rel
		r.From = "device:" + d.Key
		r.ID = graph.ObservedRelationID(r.Type, r.From, r.FromPort, r.To, r.ToPort)
		big.Relations = append(big.Relations, &r)
	}
	enc = encodeHostLive("studio-b", "studio-b", big)
	if len(enc) > graph.MaxHostLiveBytes {
		t.Fatalf("published %d bytes, the bound is %d", len(enc), graph.MaxHostLiveBytes)
	}
	st = graph.HostLive{}
	if err := json.Unmarshal(enc, &st); err != nil {
		t.Fatal(err)
	}
	if !st.Truncated || len(st.Devices) == 0 || len(st.Relations) == 0 {
		t.Errorf("a reading too big to publish: truncated %v with %d devices and %d relations; want it cut, saying so, keeping some of each", st.Truncated, len(st.Devices), len(st.Relations))
	}
}
