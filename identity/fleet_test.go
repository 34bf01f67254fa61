package identity_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// fakeFleet is the rest of a fleet as a test sets it: which hosts are live and what the
// other hosts published.
type fakeFleet struct {
	mu     sync.Mutex
	online map[string]bool
	others []*graph.HostLive
}

func (f *fakeFleet) HostOnline(h string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return h == "" || f.online[h]
}

func (f *fakeFleet) HostsOnline() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for h, ok := range f.online {
		if ok {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

func (f *fakeFleet) Elsewhere() []*graph.HostLive {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.others
}

func (f *fakeFleet) set(h string, on bool) {
	f.mu.Lock()
	f.online[h] = on
	f.mu.Unlock()
}

// A device whose host is not live reads as host offline: remembered as its host last
// recorded it (present, not unplugged), without nodes, and nothing is written for it;
// when the host is live again it reads as before.
func TestFleet_OfflineHostKeepsItsDevices(t *testing.T) {
	r := newRig(t)
	st := storetest.MustOpen(t, store.Options{Host: "studio-b"})
	svc := identity.New(st, r.live, nil)
	fleet := &fakeFleet{online: map[string]bool{"studio-b": true}}
	svc.Hosts = fleet
	ctx := graph.WithActor(context.Background(), "cli:tester")
	dv, err := svc.Device(ctx, "usb:3-7")
	if err != nil {
		t.Fatal(err)
	}
	if dv.HostOffline || !dv.Present || len(dv.Nodes) == 0 {
		t.Fatalf("live host: offline=%v present=%v nodes=%v, want online, present, /dev/ttyUSB0", dv.HostOffline, dv.Present, dv.Nodes)
	}
	before, err := st.VerifyChangelog(ctx)
	if err != nil {
		t.Fatal(err)
	}

	fleet.set("studio-b", false)
	dv, err = svc.Device(ctx, "usb:3-7")
	if err != nil {
		t.Fatal(err)
	}
	if !dv.HostOffline || !dv.Present || len(dv.Nodes) != 0 {
		t.Fatalf("offline host: offline=%v present=%v nodes=%v, want host offline, still present, no nodes", dv.HostOffline, dv.Present, dv.Nodes)
	}
	devs, _, _, err := svc.Devices(ctx, graph.DeviceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if !d.HostOffline {
			t.Errorf("%s lists as online while its host is offline", d.Ref)
		}
	}
	if len(devs) == 0 {
		t.Fatal("an offline host's present devices are not listed")
	}

	fleet.set("studio-b", true)
	dv, err = svc.Device(ctx, "usb:3-7")
	if err != nil {
		t.Fatal(err)
	}
	if dv.HostOffline || len(dv.Nodes) == 0 {
		t.Fatalf("host back: offline=%v nodes=%v", dv.HostOffline, dv.Nodes)
	}
	after, err := st.VerifyChangelog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.HeadSeq != before.HeadSeq {
		t.Errorf("the changelog moved from seq %d to %d while the host went offline and came back; nothing is written for that", before.HeadSeq, after.HeadSeq)
	}
}

// Another host's published relations and clients are part of this host's live view: a
// trace follows them, relation lists show them, the client resolves; discovery never
// records them.
func TestFleet_OtherHostsLiveStateIsMerged(t *testing.T) {
	r := newRig(t)
	st := storetest.MustOpen(t, store.Options{Host: "studio-a"})
	svc := identity.New(st, r.live, nil)
	ctx := graph.WithActor(context.Background(), "cli:tester")
	jdxi, err := svc.Device(ctx, "usb:3-3.2")
	if err != nil {
		t.Fatal(err)
	}
	const remote = "client:studio-b/alsa:Ableton Live"
	rel := &graph.Relation{Type: "subscribed", From: jdxi.ID, FromPort: "JD-Xi JD-Xi MIDI 1", To: remote, ToPort: "in", Observed: true, Source: "alsa"}
	rel.ID = graph.ObservedRelationID(rel.Type, rel.From, rel.FromPort, rel.To, rel.ToPort)
	svc.Hosts = &fakeFleet{online: map[string]bool{"studio-a": true, "studio-b": true}, others: []*graph.HostLive{{
		Host:      "studio-b",
		Relations: []*graph.Relation{rel},
		Clients:   []*graph.Client{{ID: remote, Source: "alsa", Name: "Ableton Live"}},
	}}}
	tr, err := svc.Trace(ctx, "usb:3-3.2", graph.TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tr.Ends, remote) {
		t.Errorf("trace from usb:3-3.2 ends at %v, want the other host's %s among them", tr.Ends, remote)
	}
	if !slices.Contains(tr.Ends, "client:alsa:Bitwig Studio") {
		t.Errorf("trace from usb:3-3.2 ends at %v, want this host's own Bitwig Studio too", tr.Ends)
	}
	c, err := svc.Client(ctx, remote)
	if err != nil || c.Name != "Ableton Live" {
		t.Errorf("Client(%s) = %v, %v", remote, c, err)
	}
	got, err := svc.FindRelationByID(ctx, rel.ID)
	if err != nil || got.To != remote {
		t.Errorf("FindRelationByID(%s) = %v, %v", rel.ID, got, err)
	}
	evs, _, err := st.FindEvents(ctx, graph.EventFilter{Actor: "discovery:*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Target == remote || e.Target == rel.ID {
			t.Errorf("another host's live state was recorded: %s %s", e.Action, e.Target)
		}
	}
}
