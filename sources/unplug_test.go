package sources

import (
	"context"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

const scarlettKey = "sn:1235:8210:Y8KG3J11B6F7D0"

func keyed(snap *graph.Snapshot) map[string]*graph.ObservedDevice {
	out := map[string]*graph.ObservedDevice{}
	for _, d := range snap.Devices {
		out[d.Key] = d
	}
	return out
}

func sourceStatus(t *testing.T, snap *graph.Snapshot, name string) graph.SourceStatus {
	t.Helper()
	for _, st := range snap.Sources {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no %s source in %+v", name, snap.Sources)
	return graph.SourceStatus{}
}

// A Scarlett whose sysfs entry is gone while ALSA and PipeWire still list its card is left
// out of the snapshot with a note; it never shows under a second (path:) key, and every
// other device reads as in the full rig.
func TestUnpluggingLeftOut(t *testing.T) {
	t.Parallel()
	demo := scanDir(t, "testdata/demo")
	snap := scanDir(t, "testdata/scenarios/unplugging")
	checkInvariants(t, snap)
	if keyed(demo)[scarlettKey] == nil {
		t.Fatalf("the demo rig has no %s: %v", scarlettKey, summary(demo))
	}
	var want []string
	for _, line := range summary(demo)[3:] {
		if !strings.Contains(line, scarlettKey) {
			want = append(want, line)
		}
	}
	if g, w := strings.Join(summary(snap)[3:], "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("devices:\n%s\nwant the demo's without the Scarlett:\n%s", g, w)
	}
	for _, d := range snap.Devices {
		if strings.Contains(d.Key, "1235:8210") || strings.Contains(d.Name, "Scarlett") {
			t.Errorf("half-removed Scarlett still shows as %s %s %q", d.Ref, d.Key, d.Name)
		}
	}
	for _, name := range []string{SourceUSB, SourceALSA, SourcePipeWire} {
		if st := sourceStatus(t, snap, name); !st.OK || st.Devices != sourceStatus(t, demo, name).Devices-1 {
			t.Errorf("source %s: %+v, want OK with one device fewer than the demo's %d", name, st, sourceStatus(t, demo, name).Devices)
		}
	}
	alsa := sourceStatus(t, snap, SourceALSA)
	for _, want := range []string{"alsa warning: card 2 (USB)", "pipewire device", "usb 3-3.1, 1235:8210", "not in the usb scan", "left out until usb shows it"} {
		if !strings.Contains(alsa.Error, want) {
			t.Errorf("alsa note %q does not say %q", alsa.Error, want)
		}
	}
	if st := sourceStatus(t, snap, SourceUSB); st.Error != "" {
		t.Errorf("usb: unexpected error %q", st.Error)
	}
}

// The reverse race: sysfs shows the Scarlett before ALSA and PipeWire have its card. It
// is one device, under the key it has with every source.
func TestArrivingOneDevice(t *testing.T) {
	t.Parallel()
	snap := scanDir(t, "testdata/scenarios/arriving")
	checkInvariants(t, snap)
	n := 0
	for _, d := range snap.Devices {
		if strings.Contains(d.Name, "Scarlett") || strings.Contains(d.Key, "1235:8210") {
			n++
			if d.Key != scarlettKey || d.Ref != "usb:3-3.1" || strings.Join(d.Sources, ",") != "usb" {
				t.Errorf("arriving Scarlett is %s %s %v, want %s usb:3-3.1 [usb]", d.Ref, d.Key, d.Sources, scarlettKey)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d Scarlett devices, want 1: %v", n, summary(snap))
	}
	for _, st := range snap.Sources {
		if !st.OK || st.Error != "" {
			t.Errorf("source %s: %+v, want OK without notes", st.Name, st)
		}
	}
}

// When the usb source fails, ALSA and PipeWire still give the Scarlett. A Live that read
// usb before keys it by the serial it saw at that place; a Live that never did keys it by
// its USB place (path:), the documented fallback.
func TestUSBFailedKeepsSerialKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := Demo("testdata/demo")
	l.ShareWindow = -1
	first, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if keyed(first)[scarlettKey] == nil {
		t.Fatalf("no %s in %v", scarlettKey, summary(first))
	}
	l.SysRoot = t.TempDir() // no bus/usb/devices: the usb source fails
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, snap)
	if st := sourceStatus(t, snap, SourceUSB); st.OK {
		t.Fatalf("usb source answered over an empty sys root: %+v", st)
	}
	d := keyed(snap)[scarlettKey]
	if d == nil {
		t.Fatalf("without usb the Scarlett lost its key: %v", summary(snap))
	}
	if strings.Join(d.Sources, ",") != "alsa,pipewire" || d.Ref != "usb:3-3.1" || d.Attrs["serial"] != "Y8KG3J11B6F7D0" {
		t.Errorf("Scarlett without usb: %s %v serial %q", d.Ref, d.Sources, d.Attrs["serial"])
	}
	// The serial-less devices keep their path: keys without any memory.
	for _, k := range []string{"path:0582:01a9:3-3.2", "path:0944:0117:3-1"} {
		if keyed(snap)[k] == nil {
			t.Errorf("without usb %s is gone: %v", k, summary(snap))
		}
	}

	fresh := Demo("testdata/demo")
	fresh.SysRoot = t.TempDir()
	snap, err = fresh.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := keyed(snap)["path:1235:8210:3-3.1"]; d == nil || keyed(snap)[scarlettKey] != nil {
		t.Errorf("a Live that never read usb: want the Scarlett keyed by place, got %v", summary(snap))
	}
}
