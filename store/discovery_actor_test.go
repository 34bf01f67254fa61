package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// With no actor on the snapshot each appear/disappear names its own device's source
// (whatever the context's actor); a snapshot's actor is kept for every event.
func TestObserveDevices_ActorPerSource(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	srcs := []graph.SourceStatus{{Name: "usb", OK: true}, {Name: "alsa", OK: true}, {Name: "robot", OK: true}}
	usb := dev("path:0582:01a9:3-3.2", "usb:3-3.2")
	card := dev("alsa:card1", "alsa:card1")
	bot := dev("robot:SCOUT1", "robot:scout")
	ctx := graph.WithActor(context.Background(), "discovery")
	evs, err := db.ObserveDevices(ctx, &graph.Snapshot{Taken: time.Now(), Devices: []*graph.ObservedDevice{usb, card, bot}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{usb.Key: "discovery:usb", card.Key: "discovery:alsa", bot.Key: "discovery:robot"}
	if len(evs) != 3 {
		t.Fatalf("first sight wrote %d events", len(evs))
	}
	for _, e := range evs {
		if e.Action != graph.ActDeviceAppear || e.Actor != want[e.Target[len("device:"):]] {
			t.Errorf("%s %s by %q, want appear by %q", e.Action, e.Target, e.Actor, want[e.Target[len("device:"):]])
		}
	}
	evs, err = db.ObserveDevices(ctx, &graph.Snapshot{Taken: time.Now(), Devices: []*graph.ObservedDevice{usb, bot}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Action != graph.ActDeviceDisappear || evs[0].Actor != "discovery:alsa" {
		t.Fatalf("the card leaving: %+v", evs)
	}
	// a named actor stays as given
	evs, err = db.ObserveDevices(graph.WithActor(context.Background(), "cli:someone"), &graph.Snapshot{Taken: time.Now(), Actor: "discovery:usb", Devices: []*graph.ObservedDevice{usb, bot, card}, Sources: srcs})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Actor != "discovery:usb" {
		t.Fatalf("the card back under a named actor: %+v", evs)
	}
}
