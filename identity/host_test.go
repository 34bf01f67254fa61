package identity_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store"
)

// hostLive is one host's hardware as data: the devices set, each reading a second later.
type hostLive struct {
	mu    sync.Mutex
	clock time.Time
	devs  []*graph.ObservedDevice
}

func (l *hostLive) set(devs ...*graph.ObservedDevice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.devs = devs
}

func (l *hostLive) Snapshot(context.Context) (*graph.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clock = l.clock.Add(time.Second)
	return &graph.Snapshot{Taken: l.clock, Devices: append([]*graph.ObservedDevice(nil), l.devs...),
		Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}, nil
}

func usbDev(key, port, name string, fps ...graph.Fingerprint) *graph.ObservedDevice {
	fps = append(fps, graph.Fingerprint{Kind: graph.FPUSBPath, Value: port})
	return &graph.ObservedDevice{Key: key, Ref: "usb:" + port, Source: "usb", Sources: []string{"usb"}, Name: name, Fingerprints: fps}
}

// fleetService opens the fleet store at path as host (one host at a time: the file is the
// replica both hosts' writes would reach).
func fleetService(t *testing.T, path, host string, live graph.Live) (*identity.Service, func()) {
	t.Helper()
	st, err := store.Open(path, store.Options{Host: host, Fleet: true, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := identity.New(st, live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	return svc, func() { svc.Close(); st.Close() }
}

// On a fleet store each host records its devices under its own name (refs, keys and
// usb_path carry the host), a bare ref is the caller's own host's, a host's scan never
// marks another host's devices unplugged, and a unit moved to another host keeps its
// identity through matching — by its serial, or by model and names unique in the fleet —
// with the explanation saying it moved hosts.
func TestService_FleetHosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replica.db")
	ctx := graph.WithActor(context.Background(), "cli:alice")
	serialDev := usbDev("sn:1235:8210:Y8ABCDEF", "1-4", "Scarlett 2i2 USB",
		graph.Fingerprint{Kind: graph.FPUSBSerial, Value: "1235:8210:Y8ABCDEF"}, graph.Fingerprint{Kind: graph.FPUSBID, Value: "1235:8210"})
	keystep := usbDev("path:1c75:0263:1-2", "1-2", "Arturia KeyStep 32",
		graph.Fingerprint{Kind: graph.FPUSBID, Value: "1c75:0263"}, graph.Fingerprint{Kind: graph.FPMIDIClient, Value: "Arturia KeyStep 32"})
	stays := usbDev("path:0582:01a9:1-3", "1-3", "JD-Xi", graph.Fingerprint{Kind: graph.FPUSBID, Value: "0582:01a9"})

	// studio-a: three devices, two bound
	liveA := &hostLive{clock: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	liveA.set(serialDev, keystep, stays)
	a, closeA := fleetService(t, path, "studio-a", liveA)
	v := device(t, ctx, a, "usb:1-4") // bare: on studio-a
	if v.ID != "device:studio-a/sn:1235:8210:Y8ABCDEF" || v.Ref != "studio-a/usb:1-4" || v.Host != "studio-a" {
		t.Fatalf("studio-a's device: %s %s host %q", v.ID, v.Ref, v.Host)
	}
	if !graph.ContainsFingerprint(v.Fingerprints, graph.Fingerprint{Kind: graph.FPUSBPath, Value: "studio-a/1-4"}) {
		t.Fatalf("usb_path without its host: %v", v.Fingerprints)
	}
	mustBind(t, ctx, a, graph.BindInput{Ref: "usb:1-4", NewName: "Scarlett"})
	mustBind(t, ctx, a, graph.BindInput{Ref: "studio-a/usb:1-2", NewName: "KeyStep"})
	evs := events(t, ctx, a)
	if last := evs[len(evs)-1]; last.Actor != "cli:alice@studio-a" {
		t.Errorf("actor %q, want cli:alice@studio-a", last.Actor)
	}
	// the Scarlett and the KeyStep are unplugged from studio-a; the JD-Xi stays
	liveA.set(stays)
	if _, err := a.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	closeA()

	// studio-b: the two units plugged in at other ports
	liveB := &hostLive{clock: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	movedSerial := usbDev("sn:1235:8210:Y8ABCDEF", "3-1", "Scarlett 2i2 USB", serialDev.Fingerprints[:2]...)
	movedKeystep := usbDev("path:1c75:0263:3-2", "3-2", "Arturia KeyStep 32", keystep.Fingerprints[:2]...)
	liveB.set(movedSerial, movedKeystep)
	b, closeB := fleetService(t, path, "studio-b", liveB)
	defer closeB()
	for _, c := range []struct{ ref, identity, rule string }{
		{"usb:3-1", "identity:scarlett", "a unit fingerprint"},
		{"usb:3-2", "identity:keystep", "model and names agree"},
	} {
		v := device(t, ctx, b, c.ref)
		if v.Host != "studio-b" || !strings.HasPrefix(v.Ref, "studio-b/") {
			t.Errorf("%s: host %q ref %s", c.ref, v.Host, v.Ref)
		}
		if v.BoundTo != c.identity || v.BoundBy != "match" || v.Match.Confidence != graph.High || !strings.Contains(v.Match.Summary, c.rule) {
			t.Errorf("%s: bound to %q by %q\n%s", c.ref, v.BoundTo, v.BoundBy, why(v.Match))
		}
		if !strings.Contains(v.Match.Summary, "it moved from host studio-a") || !strings.Contains(why(v.Match), "moved from host studio-a to host studio-b") {
			t.Errorf("%s: the explanation does not say it moved hosts:\n%s", c.ref, why(v.Match))
		}
	}
	// studio-b's scans never mark studio-a's JD-Xi unplugged
	if _, err := b.Observe(ctx); err != nil {
		t.Fatal(err)
	}
	jdxi := device(t, ctx, b, "studio-a/usb:1-3")
	if !jdxi.Present || jdxi.Host != "studio-a" {
		t.Errorf("studio-a's JD-Xi after studio-b's scan: present %v host %q", jdxi.Present, jdxi.Host)
	}
	if _, err := b.Device(ctx, "usb:1-3"); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Errorf("a bare ref on studio-b found studio-a's device: %v", err)
	}
	for _, e := range events(t, ctx, b) {
		if e.Action == graph.ActDeviceDisappear && strings.HasPrefix(e.Target, "device:studio-a/") && strings.HasSuffix(e.Actor, "@studio-b") {
			t.Errorf("studio-b marked studio-a's %s gone", e.Target)
		}
	}
}
