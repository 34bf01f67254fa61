package store_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store/storetest"
)

// Deleting an identity unbinds its devices; restoring it binds them again (device.bind
// under the restoring request) unless the device was bound elsewhere meanwhile.
func TestRestoreIdentity_RebindsDevices(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	ctx := ctxActor("cli:t")
	observe(t, db,
		dev("sn:0582:01a9:SN1", "usb:3-3.2", fp("usb_serial", "0582:01a9:SN1")),
		dev("path:0582:01a9:3-3.3", "usb:3-3.3", fp("usb_id", "0582:01a9")),
		dev("path:0582:01a9:3-3.4", "usb:3-3.4", fp("usb_id", "0582:01a9")))
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi"}}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"usb:3-3.3", "usb:3-3.4"} {
		if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: ref, IdentityID: "identity:roland-jd-xi"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteIdentity(ctx, "roland-jd-xi"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"usb:3-3.2", "usb:3-3.3", "usb:3-3.4"} {
		if d, _ := db.FindDeviceByID(ctx, ref); d == nil || d.IdentityID != "" {
			t.Fatalf("%s after delete: %+v", ref, d)
		}
	}
	// meanwhile 3-3.4 is bound to another identity
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.4", New: &graph.IdentityCreate{Name: "Other Synth"}}); err != nil {
		t.Fatal(err)
	}
	rctx := graph.WithRequestID(ctx, "restore-1")
	if _, err := db.RestoreIdentity(rctx, "roland-jd-xi"); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"usb:3-3.2": "identity:roland-jd-xi", "usb:3-3.3": "identity:roland-jd-xi", "usb:3-3.4": "identity:other-synth"} {
		d, err := db.FindDeviceByID(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if d.IdentityID != want {
			t.Errorf("%s after restore: bound to %q, want %q", ref, d.IdentityID, want)
		}
	}
	id, err := db.FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{Devices: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(id.Devices) != 2 {
		t.Errorf("restored identity lists %d devices, want 2", len(id.Devices))
	}
	evs, _, err := db.FindEvents(ctx, graph.EventFilter{Action: graph.ActDeviceBind, First: 50})
	if err != nil {
		t.Fatal(err)
	}
	rebound := map[string]bool{}
	for _, e := range evs {
		if e.RequestID == "restore-1" {
			rebound[e.Target] = true
		}
	}
	if len(rebound) != 2 || !rebound["device:sn:0582:01a9:SN1"] || !rebound["device:path:0582:01a9:3-3.3"] {
		t.Errorf("device.bind events under the restoring request: %v, want the two devices still free", rebound)
	}
}

// A retried restore or unbind is refused saying when and by whom it was done, with the
// node to look at as the next step.
func TestRetriedWrites_SayWhenAndWho(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	alice, bob := ctxActor("cli:alice"), ctxActor("mcp:bob")
	observe(t, db, dev("sn:0582:01a9:SN1", "usb:3-3.2", fp("usb_serial", "0582:01a9:SN1")))
	if _, err := db.BindDevice(alice, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UnbindDevice(alice, "usb:3-3.2"); err != nil {
		t.Fatal(err)
	}
	_, err := db.UnbindDevice(bob, "usb:3-3.2")
	mustCode(t, err, graph.EINVALID)
	if msg := graph.ErrorMessage(err); !strings.Contains(msg, "it was unbound at ") || !strings.Contains(msg, "by cli:alice") {
		t.Errorf("retried unbind: %q", msg)
	}
	if s := graph.ErrorSteps(err); len(s) != 1 || s[0].Do != graph.StepShow || s[0].ID != "device:sn:0582:01a9:SN1" {
		t.Errorf("retried unbind steps %+v", s)
	}

	if err := db.DeleteIdentity(alice, "roland-jd-xi"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RestoreIdentity(alice, "roland-jd-xi"); err != nil {
		t.Fatal(err)
	}
	_, err = db.RestoreIdentity(bob, "roland-jd-xi")
	mustCode(t, err, graph.ECONFLICT)
	if msg := graph.ErrorMessage(err); !strings.Contains(msg, "was restored already, at ") || !strings.Contains(msg, "by cli:alice") {
		t.Errorf("retried restore: %q", msg)
	}
	if s := graph.ErrorSteps(err); len(s) != 1 || s[0].Do != graph.StepShow || s[0].ID != "identity:roland-jd-xi" {
		t.Errorf("retried restore steps %+v", s)
	}
}
