package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

func dev(key, ref string, fps ...graph.Fingerprint) *graph.ObservedDevice {
	src := strings.SplitN(ref, ":", 2)[0]
	return &graph.ObservedDevice{Key: key, Ref: ref, Source: src, Sources: []string{src}, Name: key, Fingerprints: fps}
}

func observe(t *testing.T, db *store.DB, devs ...*graph.ObservedDevice) []*graph.Event {
	t.Helper()
	snap := &graph.Snapshot{Taken: time.Now(), Devices: devs, Sources: []graph.SourceStatus{{Name: "usb", OK: true}, {Name: "alsa", OK: true}, {Name: "robot", OK: true}}}
	evs, err := db.ObserveDevices(graph.WithActor(context.Background(), "discovery:usb"), snap)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestDevices_Observe(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := context.Background()
	synth := dev("path:0582:01a9:3-3.2", "usb:3-3.2", fp("usb_id", "0582:01a9"))
	kbd := dev("sn:046d:c31c:K1", "usb:1-2", fp("usb_serial", "046d:c31c:K1"))
	evs := observe(t, db, synth, kbd)
	if len(evs) != 2 || evs[0].Action != graph.ActDeviceAppear {
		t.Fatalf("first sight: %v", actions(evs))
	}
	if evs := observe(t, db, synth, kbd); len(evs) != 0 {
		t.Fatalf("seen again wrote %v", actions(evs))
	}
	// the keyboard moves to another port: still one device, old ref kept as an alias
	kbd2 := dev("sn:046d:c31c:K1", "usb:1-3", fp("usb_serial", "046d:c31c:K1"))
	observe(t, db, synth, kbd2)
	d, err := db.FindDeviceByID(ctx, "usb:1-3")
	if err != nil || d.Key != "sn:046d:c31c:K1" || strings.Join(d.Aliases, ",") != "usb:1-2" {
		t.Fatalf("moved device %+v %v", d, err)
	}
	if d2, _ := db.FindDeviceByID(ctx, "usb:1-2"); d2 == nil || d2.Key != d.Key {
		t.Fatal("old ref does not resolve")
	}
	// usb did not answer: nothing disappears
	evs, err = db.ObserveDevices(ctx, &graph.Snapshot{Taken: time.Now(), Sources: []graph.SourceStatus{{Name: "usb", OK: false, Error: "sysfs unreadable"}}})
	if err != nil || len(evs) != 0 {
		t.Fatalf("failed source marked devices gone: %v %v", actions(evs), err)
	}
	// usb answered without the keyboard: it disappears, once
	evs = observe(t, db, synth)
	if len(evs) != 1 || evs[0].Action != graph.ActDeviceDisappear || evs[0].Target != "device:sn:046d:c31c:K1" {
		t.Fatalf("unplug: %v", evs)
	}
	if evs := observe(t, db, synth); len(evs) != 0 {
		t.Fatal("disappear written twice")
	}
	list, total, _, _ := db.FindDevices(ctx, graph.DeviceFilter{})
	if total != 1 || len(list) != 1 {
		t.Fatalf("present total=%d", total)
	}
	list, total, _, _ = db.FindDevices(ctx, graph.DeviceFilter{All: true})
	if total != 2 || len(list) != 2 || list[1].Present {
		t.Fatalf("all total=%d %+v", total, list)
	}
	// plugged back in: appears again
	if evs := observe(t, db, synth, kbd2); len(evs) != 1 || evs[0].Action != graph.ActDeviceAppear {
		t.Fatalf("replug: %v", actions(evs))
	}
	_, err = db.FindDeviceByID(ctx, "usb:9-9")
	mustCode(t, err, graph.ENOTFOUND)
}

func TestDevices_Bind(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	serial := fp("usb_serial", "0582:01a9:SN1")
	observe(t, db, dev("sn:0582:01a9:SN1", "usb:3-3.2", serial, fp("usb_id", "0582:01a9"), fp("usb_path", "3-3.2")))

	t.Run("dry run commits nothing", func(t *testing.T) {
		before := len(allEvents(t, db, graph.EventFilter{}))
		res, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi"}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Created || len(res.HintsAdded) != 3 || res.Events != 5 || res.Identity.ID != "identity:roland-jd-xi" || !res.DryRun {
			t.Fatalf("dry result %+v", res)
		}
		if after := len(allEvents(t, db, graph.EventFilter{})); after != before {
			t.Fatalf("dry run wrote %d events", after-before)
		}
		_, err = db.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{})
		mustCode(t, err, graph.ENOTFOUND)
	})
	t.Run("bind new", func(t *testing.T) {
		res, err := db.BindDevice(graph.WithRequestID(ctx, "bind-1"), graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Device.IdentityID != "identity:roland-jd-xi" || len(res.Identity.Hints) != 3 {
			t.Fatalf("bind %+v", res)
		}
		evs := allEvents(t, db, graph.EventFilter{Target: "identity:roland-jd-xi"})
		if got := strings.Join(actions(evs), ","); got != "identity.create,hint.add,hint.add,hint.add,device.bind" {
			t.Fatalf("events %s", got)
		}
		for _, e := range evs {
			if e.RequestID != "bind-1" {
				t.Fatalf("request id %q", e.RequestID)
			}
		}
		id, _ := db.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{Devices: true})
		if len(id.Devices) != 1 || id.Devices[0].Ref != "usb:3-3.2" {
			t.Fatalf("identity devices %v", id.Devices)
		}
		list, total, _, _ := db.FindDevices(ctx, graph.DeviceFilter{IdentityID: "roland-jd-xi"})
		if total != 1 || len(list) != 1 {
			t.Fatal("device by identity")
		}
	})
	t.Run("dry run reports conflicts", func(t *testing.T) {
		res, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Other"}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Conflicts) != 1 || !strings.Contains(res.Conflicts[0], "identity:roland-jd-xi") {
			t.Fatalf("conflicts %v", res.Conflicts)
		}
		_, err = db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Other"}})
		mustCode(t, err, graph.ECONFLICT)
		_, err = db.FindIdentityByID(ctx, "other", graph.IdentityParts{})
		mustCode(t, err, graph.ENOTFOUND) // the failed bind created nothing
	})
	t.Run("unbind", func(t *testing.T) {
		d, err := db.UnbindDevice(ctx, "usb:3-3.2")
		if err != nil || d.IdentityID != "" {
			t.Fatalf("unbind %+v %v", d, err)
		}
		_, err = db.UnbindDevice(ctx, "usb:3-3.2")
		mustCode(t, err, graph.EINVALID)
		_, err = db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", IdentityID: "nope"})
		mustCode(t, err, graph.ENOTFOUND)
	})
	t.Run("robots", func(t *testing.T) {
		observe(t, db, dev("robot:SCOUT1", "robot:scout", fp("robot_serial", "SCOUT1")))
		rec := &graph.RobotRecord{Ref: "robot:scout", Serial: "SCOUT1", Name: "scout"}
		if err := db.SaveRobot(ctx, rec, graph.ActRobotArm, map[string]bool{"armed": false}, map[string]bool{"armed": true}); err != nil {
			t.Fatal(err)
		}
		recs, err := db.FindRobotRecords(ctx)
		if err != nil || len(recs) != 1 || recs[0].Serial != "SCOUT1" {
			t.Fatalf("robots %v %v", recs, err)
		}
		evs, _, _ := db.FindEvents(ctx, graph.EventFilter{Target: "robot:scout", Action: "robot.*"})
		if len(evs) != 1 || evs[0].Target != "device:robot:SCOUT1" {
			t.Fatalf("robot events %v", evs)
		}
	})
}

func TestDevices_QuietPollsDoNotWrite(t *testing.T) {
	t.Parallel()
	clock := &storetest.Clock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	ctx := context.Background()
	d := dev("sn:1", "usb:1-1", fp("usb_serial", "0582:01a9:S1"))
	snap := func(at time.Time) *graph.Snapshot {
		return &graph.Snapshot{Taken: at, Devices: []*graph.ObservedDevice{d}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	}
	t0 := clock.T
	if _, err := db.ObserveDevices(ctx, snap(t0)); err != nil {
		t.Fatal(err)
	}
	lastSeen := func() time.Time {
		got, err := db.FindDeviceByID(ctx, "usb:1-1")
		if err != nil {
			t.Fatal(err)
		}
		return got.LastSeen
	}
	db.ObserveDevices(ctx, snap(t0.Add(10*time.Second)))
	if !lastSeen().Equal(t0) {
		t.Fatalf("a quiet poll 10s later wrote last seen %s", lastSeen())
	}
	db.ObserveDevices(ctx, snap(t0.Add(2*time.Minute)))
	if !lastSeen().Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("last seen %s not refreshed after two minutes", lastSeen())
	}
	// a changed attribute is written at once, still without an event
	d.Attrs = map[string]string{"product": "JD-Xi"}
	evs, _ := db.ObserveDevices(ctx, snap(t0.Add(2*time.Minute+time.Second)))
	got, _ := db.FindDeviceByID(ctx, "usb:1-1")
	if len(evs) != 0 || got.Attrs["product"] != "JD-Xi" {
		t.Fatalf("attrs %v events %v", got.Attrs, evs)
	}
}
