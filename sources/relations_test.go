package sources

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

// relLines renders a snapshot's relations in the rig's terms: devices by ref, clients
// by id, one line per relation ("via usb:3-3.2 → usb:3-3 [port 2]").
func relLines(t testing.TB, snap *graph.Snapshot) []string {
	t.Helper()
	refOf := map[string]string{}
	for _, d := range snap.Devices {
		refOf[graph.DeviceID(d.Key)] = d.Ref
	}
	name := func(id string) string {
		if ref, ok := refOf[id]; ok {
			return ref
		}
		return id
	}
	var out []string
	for _, r := range snap.Relations {
		out = append(out, relLine(r.Type, name(r.From), r.FromPort, name(r.To), r.ToPort))
	}
	sort.Strings(out)
	return out
}

func relLine(typ, from, fromPort, to, toPort string) string {
	s := typ + " " + from
	if fromPort != "" {
		s += " [" + fromPort + "]"
	}
	s += " → " + to
	if toPort != "" {
		s += " [" + toPort + "]"
	}
	return s
}

// rigLines is what the rig's description says the sources should see.
func rigLines(r *fixture.Rig) []string {
	var out []string
	for _, x := range r.Relations() {
		out = append(out, relLine(x.Type, x.From, x.FromPort, x.To, x.ToPort))
	}
	sort.Strings(out)
	return out
}

func scanRig(t testing.TB, r *fixture.Rig) *graph.Snapshot {
	t.Helper()
	snap := scanDir(t, writeRig(t, r))
	checkInvariants(t, snap)
	return snap
}

// TestObserved_DemoRig: the demo rig's observed relations and clients are what its
// description says — every USB device via its hub, the JD-Xi subscribed to Bitwig,
// Firefox linked to the Scarlett — with the ids, sources and counts that follow.
func TestObserved_DemoRig(t *testing.T) {
	t.Parallel()
	rig := fixture.DemoRig()
	snap := scanDir(t, "testdata/demo")
	checkInvariants(t, snap)
	if got, want := relLines(t, snap), rigLines(rig); !reflect.DeepEqual(got, want) {
		t.Fatalf("relations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c := rig.Counts()
	count := map[string]int{}
	for _, r := range snap.Relations {
		count[r.Type]++
	}
	if count[graph.RelVia] != c.Via || count[graph.RelSubscribed] != c.Subscribed || count[graph.RelLinked] != c.Linked || c.Subscribed == 0 || c.Linked == 0 {
		t.Errorf("relations by type %v, want via %d subscribed %d linked %d", count, c.Via, c.Subscribed, c.Linked)
	}
	if len(snap.Devices) != c.Devices || len(snap.Clients) != c.Clients {
		t.Errorf("devices %d clients %d, want %d and %d", len(snap.Devices), len(snap.Clients), c.Devices, c.Clients)
	}
	infra := 0
	for _, d := range snap.Devices {
		if d.Infra {
			infra++
		}
	}
	if infra != c.Infra {
		t.Errorf("infra devices %d, want %d", infra, c.Infra)
	}
	var ids []string
	for _, cl := range snap.Clients {
		ids = append(ids, cl.ID)
	}
	var want []string
	for _, u := range rig.UserClients {
		want = append(want, graph.ClientID(SourceALSA, u.Name, 1))
	}
	for _, s := range rig.Streams {
		want = append(want, graph.ClientID(SourcePipeWire, s.App, 1))
	}
	sort.Strings(want)
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("clients %q, want %q", ids, want)
	}
	// The subscription keeps the kernel's flags; the link names its nodes and state.
	for _, r := range snap.Relations {
		switch r.Type {
		case graph.RelSubscribed:
			if r.Attrs["timestamp"] != "real" || r.Attrs["queue"] != "0" {
				t.Errorf("subscription attrs %v", r.Attrs)
			}
		case graph.RelLinked:
			if r.Attrs["from_node"] != "Firefox" || !strings.HasPrefix(r.Attrs["to_node"], "alsa_output.usb-Focusrite") || r.Attrs["state"] != "active" {
				t.Errorf("link attrs %v", r.Attrs)
			}
		}
	}
}

// viaChain follows via from a device's ref to where it ends.
func viaChain(t testing.TB, snap *graph.Snapshot, ref string) []string {
	t.Helper()
	byID := map[string]*graph.ObservedDevice{}
	var cur string
	for _, d := range snap.Devices {
		byID[graph.DeviceID(d.Key)] = d
		if d.Ref == ref {
			cur = graph.DeviceID(d.Key)
		}
	}
	if cur == "" {
		t.Fatalf("no device %s", ref)
	}
	chain := []string{ref}
	for hops := 0; hops < 10; hops++ {
		next := ""
		for _, r := range snap.Relations {
			if r.Type == graph.RelVia && r.From == cur {
				if next != "" {
					t.Fatalf("%s hangs off two hubs", cur)
				}
				next = r.To
			}
		}
		if next == "" {
			return chain
		}
		cur = next
		chain = append(chain, byID[cur].Ref)
	}
	t.Fatalf("via chain from %s does not end: %v", ref, chain)
	return nil
}

// TestObserved_ViaChainToController: the KeyStep hangs off a hub chained on a hub; its
// via chain names both hubs and ends at the root hub, an infrastructure device keyed by
// its controller. Every USB device's chain ends at a root hub.
func TestObserved_ViaChainToController(t *testing.T) {
	t.Parallel()
	snap := scanDir(t, "testdata/demo")
	if got, want := viaChain(t, snap, "usb:3-4.4.1"), []string{"usb:3-4.4.1", "usb:3-4.4", "usb:3-4", "usb:usb3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("via chain %v, want %v", got, want)
	}
	refs := byRef(snap)
	root := refs["usb:usb3"]
	if root == nil || !root.Infra || root.Key != "usb-root:"+fixture.Controller+":3" {
		t.Fatalf("root hub %+v", root)
	}
	for _, ref := range []string{"usb:3-4.4", "usb:3-4"} {
		if !refs[ref].Infra {
			t.Errorf("hub %s is not infrastructure", ref)
		}
	}
	for _, d := range snap.Devices {
		if !strings.HasPrefix(d.Ref, "usb:") {
			continue
		}
		chain := viaChain(t, snap, d.Ref)
		if end := refs[chain[len(chain)-1]]; !strings.HasPrefix(end.Key, "usb-root:") {
			t.Errorf("%s: via chain %v ends short of a controller", d.Ref, chain)
		}
	}
	// A relation's id is stable while it stays: a second reading gives the same ids.
	again := scanDir(t, "testdata/demo")
	if !reflect.DeepEqual(relIDs(snap), relIDs(again)) {
		t.Errorf("ids changed between readings: %v / %v", relIDs(snap), relIDs(again))
	}
}

func relIDs(s *graph.Snapshot) []string {
	var out []string
	for _, r := range s.Relations {
		out = append(out, r.ID)
	}
	return out
}

// TestObserved_SecondClientOfAName: a second Bitwig (another sequencer client) and a
// second Firefox stream get #2; the lower per-boot number keeps the bare name.
func TestObserved_SecondClientOfAName(t *testing.T) {
	t.Parallel()
	rig := fixture.DemoRig()
	rig.UserClients = append(rig.UserClients, fixture.SeqClient{Number: 131, Name: "Bitwig Studio", Ports: []string{"MIDI In 1"}})
	rig.Subscriptions = append(rig.Subscriptions, fixture.Subscription{From: fixture.SeqPort{Client: "KeyStep32"}, To: fixture.SeqPort{Client: "Bitwig Studio"}})
	rig.Streams = append(rig.Streams, fixture.PWStream{App: "Firefox", Binary: "firefox", MediaClass: "Stream/Output/Audio", Ports: []string{"output_FL", "output_FR"}})
	snap := scanRig(t, rig)
	clients := map[string]*graph.Client{}
	for _, c := range snap.Clients {
		clients[c.ID] = c
	}
	if c := clients["client:alsa:Bitwig Studio"]; c == nil || c.Attrs["seq_client"] != "130" {
		t.Errorf("first Bitwig: %+v", c)
	}
	if c := clients["client:alsa:Bitwig Studio#2"]; c == nil || c.Attrs["seq_client"] != "131" || c.Name != "Bitwig Studio" {
		t.Errorf("second Bitwig: %+v", c)
	}
	if clients["client:pipewire:Firefox"] == nil || clients["client:pipewire:Firefox#2"] == nil {
		t.Errorf("two Firefox streams: %v", clients)
	}
	// Both subscriptions name client 130 (the fixture resolves a name to its first
	// client); the second Bitwig, unsubscribed, is still listed.
	lines := relLines(t, snap)
	for _, want := range []string{
		"subscribed usb:3-3.2 [JD-Xi JD-Xi MIDI 1] → client:alsa:Bitwig Studio [MIDI In 1]",
		"subscribed usb:3-4.4.1 [Arturia KeyStep 32 MIDI 1] → client:alsa:Bitwig Studio [MIDI In 1]",
	} {
		if !containsString(lines, want) {
			t.Errorf("missing %q in\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if got, want := relLines(t, snap), rigLines(rig); !reflect.DeepEqual(got, want) {
		t.Errorf("relations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestObserved_HotPlug: relations follow the hardware. Moving the KeyStep's hub to the
// other hub changes its chain; unplugging the Scarlett ends Firefox's links (Firefox
// stays a client); unplugging the JD-Xi ends its subscription (Bitwig stays).
func TestObserved_HotPlug(t *testing.T) {
	t.Parallel()
	rig := fixture.DemoRig()
	before := scanRig(t, rig)

	if err := rig.Move("3-4.4", "3-3.4"); err != nil {
		t.Fatal(err)
	}
	moved := scanRig(t, rig)
	if got, want := viaChain(t, moved, "usb:3-3.4.1"), []string{"usb:3-3.4.1", "usb:3-3.4", "usb:3-3", "usb:usb3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after the move: %v, want %v", got, want)
	}
	if got, want := relLines(t, moved), rigLines(rig); !reflect.DeepEqual(got, want) {
		t.Errorf("after the move:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if reflect.DeepEqual(relIDs(before), relIDs(moved)) {
		t.Error("moving a hub changed no relation id")
	}

	for _, p := range []string{"3-3.1", "3-3.2"} {
		if err := rig.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	gone := scanRig(t, rig)
	for _, r := range gone.Relations {
		if r.Type == graph.RelLinked || r.Type == graph.RelSubscribed {
			t.Errorf("%s outlived its device: %+v", r.Type, r)
		}
	}
	ids := map[string]bool{}
	for _, c := range gone.Clients {
		ids[c.ID] = true
	}
	if !ids["client:pipewire:Firefox"] || !ids["client:alsa:Bitwig Studio"] {
		t.Errorf("clients without relations must stay listed: %v", ids)
	}
	if got, want := relLines(t, gone), rigLines(rig); !reflect.DeepEqual(got, want) {
		t.Errorf("after the unplug:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestObserved_SourceDown: a source that fails takes its relations with it, never the
// others'; with usb down there is no via (no chain is guessed), with pipewire down no
// link, and Firefox is no longer a client.
func TestObserved_SourceDown(t *testing.T) {
	t.Parallel()
	for _, down := range []string{SourceUSB, SourceALSA, SourcePipeWire} {
		l := Demo("testdata/demo")
		l.Disable = []string{down}
		snap, err := l.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, snap)
		count := map[string]int{}
		for _, r := range snap.Relations {
			count[r.Source]++
		}
		if count[down] != 0 {
			t.Errorf("%s down: %d of its relations remain", down, count[down])
		}
		for _, other := range []string{SourceUSB, SourceALSA, SourcePipeWire} {
			if other != down && count[other] == 0 {
				t.Errorf("%s down: no %s relations either", down, other)
			}
		}
	}
}

// TestObserved_Unplugging: while the Scarlett is half torn down (ALSA and PipeWire still
// list it, sysfs does not) it is left out, and so are Firefox's links to it; Firefox
// stays a client and the rest of the studio keeps its relations.
func TestObserved_Unplugging(t *testing.T) {
	t.Parallel()
	snap := scanDir(t, "testdata/scenarios/unplugging")
	checkInvariants(t, snap)
	rig := fixture.DemoRig()
	if err := rig.Remove("3-3.1"); err != nil {
		t.Fatal(err)
	}
	if got, want := relLines(t, snap), rigLines(rig); !reflect.DeepEqual(got, want) {
		t.Errorf("relations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	found := false
	for _, c := range snap.Clients {
		found = found || c.ID == "client:pipewire:Firefox"
	}
	if !found {
		t.Error("Firefox is no longer a client")
	}
}

// TestObserved_ClientNamedLikeASecond: an application may call itself "Bitwig Studio#2";
// with two real Bitwigs beside it every client still gets an id of its own.
func TestObserved_ClientNamedLikeASecond(t *testing.T) {
	t.Parallel()
	rig := fixture.DemoRig()
	rig.UserClients = append(rig.UserClients,
		fixture.SeqClient{Number: 131, Name: "Bitwig Studio#2", Ports: []string{"in"}},
		fixture.SeqClient{Number: 132, Name: "Bitwig Studio", Ports: []string{"MIDI In 1"}})
	snap := scanRig(t, rig)
	seen := map[string]string{}
	bitwigs := 0
	for _, c := range snap.Clients {
		if other, dup := seen[c.ID]; dup {
			t.Errorf("clients %s and %s share id %s", other, c.Attrs["seq_client"], c.ID)
		}
		seen[c.ID] = c.Attrs["seq_client"]
		if strings.HasPrefix(c.Name, "Bitwig Studio") {
			bitwigs++
		}
	}
	if bitwigs != 3 {
		t.Errorf("%d Bitwig clients listed, want 3: %v", bitwigs, seen)
	}
}
