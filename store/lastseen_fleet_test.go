package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// recordingCommitter accepts every write set, as a shared store with no other writer
// would, and keeps them.
type recordingCommitter struct {
	mu   sync.Mutex
	rev  int64
	sets [][]store.Change
}

func (c *recordingCommitter) Commit(_ context.Context, _ int64, changes []store.Change) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev++
	c.sets = append(c.sets, changes)
	return c.rev, nil
}

func (c *recordingCommitter) commits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sets)
}

// On a fleet's store (a replica) a device seen again unchanged is never rewritten to move
// its last seen, however long it has been: every host doing that each minute would be
// write traffic to the whole fleet, and the host's lease says it is live. A file still
// refreshes it every minute. A device that goes is recorded with the time its absence
// was noticed.
func TestDevices_FleetStoreDoesNotRefreshLastSeen(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := &recordingCommitter{}
	replica := storetest.MustOpen(t, store.Options{ReplicaOf: "etcd:test/devgraph", Committer: c, Now: clock, Host: "studio-a"})
	file := storetest.MustOpen(t, store.Options{Now: clock, Host: "studio-a"})
	ctx := context.Background()
	synth := dev("path:0582:01a9:3-3.2", "usb:3-3.2", fp("usb_id", "0582:01a9"))
	kbd := dev("sn:046d:c31c:K1", "usb:1-2", fp("usb_serial", "046d:c31c:K1"))
	snapAt := func(devs ...*graph.ObservedDevice) *graph.Snapshot {
		return &graph.Snapshot{Taken: clock(), Devices: devs, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	}
	for _, db := range []*store.DB{replica, file} {
		if _, err := db.ObserveDevices(ctx, snapAt(synth, kbd)); err != nil {
			t.Fatal(err)
		}
	}
	first := c.commits()
	seenAt := clock()
	advance(5 * time.Minute)
	for _, db := range []*store.DB{replica, file} {
		if evs, err := db.ObserveDevices(ctx, snapAt(synth, kbd)); err != nil || len(evs) != 0 {
			t.Fatalf("seen again: %v, %v", evs, err)
		}
	}
	if n := c.commits(); n != first {
		t.Errorf("the fleet's store shipped %d commit(s) for devices seen again unchanged after 5 minutes; want none", n-first)
	}
	got, err := replica.FindDeviceByID(ctx, "usb:3-3.2")
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastSeen.Equal(seenAt) {
		t.Errorf("fleet store: last seen %s, want it left at %s", got.LastSeen, seenAt)
	}
	got, err = file.FindDeviceByID(ctx, "usb:3-3.2")
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastSeen.Equal(clock()) {
		t.Errorf("file: last seen %s, want it refreshed to %s", got.LastSeen, clock())
	}

	// A change to one device ships that device, not every device seen again.
	advance(time.Minute)
	synth2 := *synth
	synth2.Name = "JD-Xi (renamed by firmware)"
	if _, err := replica.ObserveDevices(ctx, snapAt(&synth2, kbd)); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	last := c.sets[len(c.sets)-1]
	c.mu.Unlock()
	for _, ch := range last {
		if string(ch.Bucket) == "devices" && string(ch.Key) == kbd.Key {
			t.Errorf("the unchanged keyboard was shipped with the synth's change")
		}
	}

	// Gone: recorded with when its absence was noticed.
	advance(time.Minute)
	if evs, err := replica.ObserveDevices(ctx, snapAt(&synth2)); err != nil || len(evs) != 1 || evs[0].Action != graph.ActDeviceDisappear {
		t.Fatalf("gone: %v, %v", evs, err)
	}
	got, err = replica.FindDeviceByID(ctx, "usb:1-2")
	if err != nil {
		t.Fatal(err)
	}
	if got.Present || !got.LastSeen.Equal(clock()) {
		t.Errorf("gone keyboard: present %v, last seen %s; want not present, last seen %s", got.Present, got.LastSeen, clock())
	}
}
