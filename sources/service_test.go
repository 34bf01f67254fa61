package sources_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/fixture"
	"github.com/devgraph/devgraph/store/storetest"
)

// A bound Scarlett whose sysfs entry goes away while ALSA and PipeWire still list it (a
// mid-read unplug), then comes back: the store keeps one record for it, still bound, and
// records one disappear and one appear of that same device — no second, path-keyed record.
func TestHalfRemovedKeepsOneBoundRecord(t *testing.T) {
	t.Parallel()
	const key = "sn:1235:8210:Y8KG3J11B6F7D0"
	root := t.TempDir()
	if err := fixture.DemoRig().Write(root); err != nil {
		t.Fatal(err)
	}
	live := sources.Demo(root)
	live.ShareWindow = -1
	svc := identity.New(storetest.MustOpen(t), live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := graph.WithActor(context.Background(), "cli:tester")

	observe := func(what string) *graph.Snapshot {
		t.Helper()
		snap, err := svc.Observe(ctx)
		if err != nil {
			t.Fatalf("observe %s: %v", what, err)
		}
		return snap
	}
	observe("the full rig")
	res, err := svc.Bind(ctx, graph.BindInput{Ref: "usb:3-3.1", NewName: "Studio Scarlett"})
	if err != nil {
		t.Fatalf("bind usb:3-3.1: %v", err)
	}
	if res.Device == nil || res.Device.Key != key {
		t.Fatalf("bound %+v, want the device keyed %s", res.Device, key)
	}
	id := res.Device.ID
	identityID := res.Device.IdentityID
	if identityID == "" {
		t.Fatalf("bind left device %s unbound: %+v", id, res)
	}
	since := lastSeq(t, ctx, svc)

	// Half-remove: the usb device and its interfaces leave sysfs, ALSA and PipeWire keep it.
	hidden := filepath.Join(root, "hidden")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	var moved [][2]string
	for _, e := range []string{"3-3.1", "3-3.1:1.0", "3-3.1:1.1", "3-3.1:1.2", "3-3.1:1.3"} {
		moved = append(moved, [2]string{filepath.Join(root, "sys/bus/usb/devices", e), filepath.Join(hidden, e)})
	}
	moved = append(moved, [2]string{filepath.Join(root, fixture.DevDir("3-3.1")), filepath.Join(hidden, "dev")})
	for _, m := range moved {
		if err := os.Rename(m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	snap := observe("half-removed")
	for _, d := range snap.Devices {
		if strings.Contains(d.Key, "1235:8210") {
			t.Errorf("half-removed snapshot still has the Scarlett as %s %s", d.Ref, d.Key)
		}
	}
	if v, err := svc.Device(ctx, id); err != nil || v.Present || v.IdentityID != identityID {
		t.Fatalf("half-removed: device %s = %+v, %v; want it not present and still bound to %s", id, v, err, identityID)
	}

	for i := len(moved) - 1; i >= 0; i-- {
		if err := os.Rename(moved[i][1], moved[i][0]); err != nil {
			t.Fatal(err)
		}
	}
	observe("restored")

	all, _, _, err := svc.Devices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var scarletts []*graph.DeviceView
	for _, v := range all {
		if strings.Contains(v.Name, "Scarlett") || strings.Contains(v.Key, "1235:8210") {
			scarletts = append(scarletts, v)
		}
	}
	if len(scarletts) != 1 {
		for _, v := range scarletts {
			t.Logf("  %s %s present=%v bound=%s", v.ID, v.Ref, v.Present, v.IdentityID)
		}
		t.Fatalf("%d Scarlett records after half-remove and restore, want 1", len(scarletts))
	}
	if v := scarletts[0]; v.ID != id || !v.Present || v.IdentityID != identityID || v.Ref != "usb:3-3.1" {
		t.Errorf("Scarlett after restore: %s %s present=%v bound=%q; want %s at usb:3-3.1, present, bound to %s", v.ID, v.Ref, v.Present, v.IdentityID, id, identityID)
	}

	var got []string
	for _, e := range eventsAfter(t, ctx, svc, since) {
		if strings.HasPrefix(e.Action, "device.") {
			got = append(got, e.Action+" "+e.Target)
		}
	}
	want := []string{"device.disappear " + id, "device.appear " + id}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("device events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func allEvents(t *testing.T, ctx context.Context, svc *identity.Service) []*graph.Event {
	t.Helper()
	var all []*graph.Event
	f := graph.EventFilter{First: graph.MaxPageSize}
	for {
		evs, next, err := svc.FindEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		if next == "" {
			return all
		}
		f.After = next
	}
}

// lastSeq is the newest event's sequence number.
func lastSeq(t *testing.T, ctx context.Context, svc *identity.Service) uint64 {
	var last uint64
	for _, e := range allEvents(t, ctx, svc) {
		last = max(last, e.Seq)
	}
	return last
}

// eventsAfter returns the events after seq, oldest first.
func eventsAfter(t *testing.T, ctx context.Context, svc *identity.Service, seq uint64) []*graph.Event {
	var out []*graph.Event
	for _, e := range allEvents(t, ctx, svc) {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// The demo rig recorded by a fresh store: every device the rig's description counts is
// listed and present, root hubs and hubs as infrastructure that cannot be bound, each
// device's first discovery one device.appear event, and the unbound list the devices that
// are no infrastructure.
func TestDemoRigRecorded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rig := fixture.DemoRig()
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	live := sources.Demo(root)
	live.ShareWindow = -1
	svc := identity.New(storetest.MustOpen(t), live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := graph.WithActor(context.Background(), "cli:tester")
	if _, err := svc.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	c := rig.Counts()
	all, total, _, err := svc.Devices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	infra := 0
	for _, v := range all {
		if !v.Present {
			t.Errorf("%s not present", v.Ref)
		}
		if v.Infra {
			infra++
		}
	}
	if total != c.Devices || len(all) != c.Devices || infra != c.Infra {
		t.Errorf("devices %d (total %d), infra %d; the rig says %d and %d", len(all), total, infra, c.Devices, c.Infra)
	}
	unbound, err := svc.Unbound(ctx)
	if err != nil || len(unbound) != c.Bindable {
		t.Errorf("unbound %d (%v), the rig says %d", len(unbound), err, c.Bindable)
	}
	appeared := 0
	for _, e := range allEvents(t, ctx, svc) {
		if e.Action == "device.appear" {
			appeared++
		}
	}
	if appeared != c.Devices {
		t.Errorf("%d device.appear events on first discovery, want one per device (%d)", appeared, c.Devices)
	}
	for _, ref := range fixture.RootHubRefs() {
		v, err := svc.Device(ctx, ref)
		if err != nil || !v.Infra || !strings.HasPrefix(v.Key, "usb-root:"+fixture.Controller+":") {
			t.Errorf("root hub %s: %+v, %v", ref, v, err)
			continue
		}
		if _, err := svc.Bind(ctx, graph.BindInput{Ref: ref, NewName: "Controller"}); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("binding root hub %s: %v, want EINVALID", ref, err)
		}
	}
}

// A device renamed only because usb.ids changed (a newer hwdata) is renamed in the store
// without a changelog event: discovery records appear and disappear, not what a lookup
// table calls a device. Its /dev nodes are live: shown on the present device, never in
// the stored record or an event, and gone when it is unplugged.
func TestUSBIDsRenameAndNodes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rig := fixture.DemoRig()
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	live := sources.Demo(root)
	live.ShareWindow = -1
	st := storetest.MustOpen(t)
	svc := identity.New(st, live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ctx := graph.WithActor(context.Background(), "cli:tester")
	if _, err := svc.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := svc.Device(ctx, "usb:3-6")
	if err != nil || v.Name != "Holtek Semiconductor, Inc. Keyboard LKS02" {
		t.Fatalf("keyboard = %+v, %v", v, err)
	}
	since := lastSeq(t, ctx, svc)

	ids := filepath.Join(root, "usb.ids")
	text := strings.Replace(fixture.USBIDs, "Keyboard LKS02", "LKS02 Keyboard", 1)
	if err := os.WriteFile(ids, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(ids, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	v, err = svc.Device(ctx, "usb:3-6")
	if err != nil || v.Name != "Holtek Semiconductor, Inc. LKS02 Keyboard" || v.Attrs["usb_ids_product"] != "LKS02 Keyboard" {
		t.Fatalf("after the usb.ids update: %+v, %v", v, err)
	}
	if evs := eventsAfter(t, ctx, svc, since); len(evs) != 0 {
		t.Errorf("a usb.ids rename wrote %d events, want none: %s %s", len(evs), evs[0].Action, evs[0].Target)
	}

	// Nodes: on the view of a present device, never in the record or an event.
	base, err := svc.Device(ctx, "usb:3-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Nodes) != 1 || base.Nodes[0].Path != "/dev/ttyUSB0" || len(base.Nodes[0].Links) != 2 {
		t.Fatalf("robot base view nodes = %+v", base.Nodes)
	}
	rec, err := st.FindDeviceByID(ctx, base.ID)
	if err != nil || rec.Nodes != nil {
		t.Fatalf("stored record = %+v, %v; want no nodes", rec, err)
	}
	for _, e := range allEvents(t, ctx, svc) {
		if strings.Contains(string(e.After), `"nodes"`) || strings.Contains(string(e.Before), `"nodes"`) {
			t.Fatalf("event %d %s carries nodes: %s", e.Seq, e.Action, e.After)
		}
	}
	if err := rig.Remove("3-7"); err != nil {
		t.Fatal(err)
	}
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	if gone, err := svc.Device(ctx, base.ID); err != nil || gone.Present || gone.Nodes != nil {
		t.Fatalf("unplugged robot base = %+v, %v; want not present, no nodes", gone, err)
	}
}
