package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// A fleet store records a host's devices under its name whoever hands them over, refuses
// another host's, marks gone only its own, and records actors with the host; a bare ref
// and a bare robot name resolve on the store's own host.
func TestFleet_ObserveOwnHost(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "replica.db")
	clock := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	open := func(host string) *store.DB {
		t.Helper()
		db, err := store.Open(path, store.Options{Host: host, Fleet: true, NoBackup: true, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	ctx := ctxActor("cli:alice")
	usb := []graph.SourceStatus{{Name: "usb", OK: true}}
	a := open("studio-a")
	_, err := a.ObserveDevices(ctx, &graph.Snapshot{Devices: []*graph.ObservedDevice{
		dev("path:0582:01a9:1-2", "usb:1-2", fp("usb_path", "1-2")),
		dev("robot:SC-1", "robot:scout"),
	}, Sources: append(usb, graph.SourceStatus{Name: "robot", OK: true})})
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.FindDeviceByID(ctx, "usb:1-2")
	if err != nil || d.ID != "device:studio-a/path:0582:01a9:1-2" || d.Host != "studio-a" || d.Fingerprints[0].Value != "studio-a/1-2" {
		t.Fatalf("%+v %v", d, err)
	}
	if full, err := a.ResolveID(ctx, "scout"); err != nil || full != "device:studio-a/robot:SC-1" {
		t.Fatalf("bare robot name: %q %v", full, err)
	}
	_, err = a.ObserveDevices(ctx, &graph.Snapshot{Devices: []*graph.ObservedDevice{dev("studio-b/path:1:2", "studio-b/usb:9-9")}, Sources: usb})
	if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "only its own devices") {
		t.Fatalf("another host's device: %v", err)
	}
	if _, err := a.UpdateTags(ctx, "usb:1-2", []string{"location:desk"}, nil); err != nil {
		t.Fatal(err)
	}
	evs := allEvents(t, a, graph.EventFilter{Actor: "cli:alice"})
	if len(evs) != 1 || evs[0].Actor != "cli:alice@studio-a" {
		t.Fatalf("events by cli:alice: %+v", evs)
	}
	if evs := allEvents(t, a, graph.EventFilter{Target: "device:path:0582:01a9:1-2"}); len(evs) < 2 {
		t.Fatalf("a bare device id's changelog: %d events", len(evs))
	}
	a.Close()

	b := open("studio-b")
	defer b.Close()
	before, err := b.FindDeviceByID(ctx, "studio-a/usb:1-2")
	if err != nil {
		t.Fatal(err)
	}
	// studio-b sees only its own device, an hour later, twice (the second a last-seen
	// refresh): studio-a's devices stay present and their last seen stays as it was
	later := clock.Add(time.Hour)
	for i := range 2 {
		_, err := b.ObserveDevices(ctx, &graph.Snapshot{Taken: later.Add(time.Duration(i) * 2 * time.Minute),
			Devices: []*graph.ObservedDevice{dev("path:1c75:0263:3-1", "usb:3-1")}, Sources: usb})
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err = b.FindDeviceByID(ctx, "studio-a/usb:1-2")
	if err != nil || !d.Present || !d.LastSeen.Equal(before.LastSeen) {
		t.Fatalf("studio-a's device after studio-b's scans: %+v (last seen before %v) %v", d, before.LastSeen, err)
	}
	if own, err := b.FindDeviceByID(ctx, "usb:3-1"); err != nil || own.Host != "studio-b" || !own.LastSeen.Equal(later.Add(2*time.Minute)) {
		t.Fatalf("studio-b's own device: %+v %v", own, err)
	}
	if _, err := b.FindDeviceByID(ctx, "usb:1-2"); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("a bare ref on studio-b: %v", err)
	}
}

// A fleet store records an actor that acted from another host (a robot command routed
// here) with that host, and every other actor with its own: an actor that only names
// another host is qualified like any other, so a caller cannot pass for one elsewhere.
func TestFleet_ActorOfAnotherHost(t *testing.T) {
	t.Parallel()
	db, err := store.Open(filepath.Join(t.TempDir(), "replica.db"), store.Options{Host: "studio-a", Fleet: true, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ObserveDevices(ctxActor("cli:alice"), &graph.Snapshot{Devices: []*graph.ObservedDevice{dev("path:0582:01a9:1-2", "usb:1-2")},
		Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}); err != nil {
		t.Fatal(err)
	}
	routed := graph.WithMessage(graph.WithActorOfHost(context.Background(), "mcp:agent", "studio-b"), "from b")
	spoof := graph.WithActor(graph.WithActorOfHost(context.Background(), "mcp:agent", "studio-b"), "mcp:mallory@studio-b")
	for _, c := range []struct {
		ctx  context.Context
		tag  string
		want string
	}{
		{routed, "role:a", "mcp:agent@studio-b"},
		{ctxActor("mcp:mallory@studio-b"), "role:b", "mcp:mallory@studio-b@studio-a"},
		{spoof, "role:c", "mcp:mallory@studio-b@studio-a"}, // replaced since: no longer the routed actor
	} {
		if _, err := db.UpdateTags(c.ctx, "usb:1-2", []string{c.tag}, nil); err != nil {
			t.Fatal(err)
		}
		evs := allEvents(t, db, graph.EventFilter{Action: graph.ActTagAdd})
		if got := evs[0].Actor; got != c.want {
			t.Fatalf("%s: actor %q, want %q", c.tag, got, c.want)
		}
	}
	if evs := allEvents(t, db, graph.EventFilter{Actor: "mcp:agent@studio-b"}); len(evs) != 1 || evs[0].Message != "from b" {
		t.Fatalf("the routed actor's events: %+v", evs)
	}
}
