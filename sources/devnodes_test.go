package sources

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

// The walk for a device's nodes stays inside its own interfaces: a symlink is never
// entered (even one pointing at a directory full of nodes), a device behind a hub is its
// own, and a DEVNAME that would leave /dev is refused.
func TestReadNodes_StaysInside(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := fixture.DemoRig().Write(root); err != nil {
		t.Fatal(err)
	}
	nodesOf := func(path string) ([]string, []string) {
		t.Helper()
		dir := filepath.Join(root, fixture.DevDir(path))
		d, err := readUSBDevice(path, dir)
		if err != nil {
			t.Fatal(err)
		}
		return readNodes(dir, d.ifDirs)
	}
	kbd := fixture.DevDir("3-6") + "/3-6:1.0"
	outside := t.TempDir()
	put(t, outside, "tty/ttyEVIL0/uevent", "DEVNAME=ttyEVIL0\n")
	link(t, root, kbd+"/elsewhere", outside)
	put(t, root, kbd+"/ttyBAD0/uevent", "DEVNAME=../../etc/passwd\n")
	put(t, root, kbd+"/hidraw9/uevent", "DEVNAME=/etc/passwd\n")
	put(t, root, kbd+"/event9/uevent", "DEVNAME=bus/usb/003/004\n") // not a kind devgraph lists

	nodes, notes := nodesOf("3-6")
	if want := []string{"input/event0", "input/event1", "hidraw0", "hidraw1"}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("keyboard nodes = %q, want %q (nothing through the symlink, nothing outside /dev)", nodes, want)
	}
	if len(notes) != 2 || !strings.Contains(strings.Join(notes, "\n"), `"../../etc/passwd"`) {
		t.Errorf("notes = %q, want the two DEVNAMEs outside /dev named", notes)
	}
	if nodes, _ := nodesOf("3-4"); len(nodes) != 0 {
		t.Errorf("hub 3-4 lists %q: nodes of the devices behind it", nodes)
	}
	if nodes, _ := nodesOf("3-4.1"); !reflect.DeepEqual(nodes, []string{"snd/controlC5", "snd/midiC5D0"}) {
		t.Errorf("BeatStep behind the hub: %q", nodes)
	}
}

func TestReadDevLinks(t *testing.T) {
	t.Parallel()
	dev := t.TempDir()
	put(t, dev, "ttyACM0", "")
	link(t, dev, "serial/by-id/usb-Arduino_Uno_123-if00", "../../ttyACM0")
	// Absolute into /dev: read as the same node under the dev root.
	if err := os.Symlink("/dev/ttyACM0", filepath.Join(dev, "serial/by-id/usb-absolute")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../etc/passwd", filepath.Join(dev, "serial/by-id/usb-escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dev, "serial/by-id/usb-elsewhere")); err != nil {
		t.Fatal(err)
	}
	put(t, dev, "serial/by-id/not-a-link", "")
	put(t, dev, "snd/by-id", "a file where a directory belongs")

	links, notes := readDevLinks(dev)
	want := map[string][]string{"ttyACM0": {"/dev/serial/by-id/usb-Arduino_Uno_123-if00", "/dev/serial/by-id/usb-absolute"}}
	if !reflect.DeepEqual(links, want) {
		t.Errorf("links = %q, want %q", links, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "snd/by-id") {
		t.Errorf("notes = %q, want one naming snd/by-id", notes)
	}
	if links, notes := readDevLinks(filepath.Join(dev, "missing")); len(links) != 0 || len(notes) != 0 {
		t.Errorf("a missing dev root: %v %q", links, notes)
	}
}

// /dev nodes are live: a snapshot shows what the tree shows now, and a device unplugged
// takes its nodes (and its by-id link's meaning) with it.
func TestLive_NodesFollowThePlug(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rig := fixture.DemoRig()
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	l := Demo(root)
	devs := byRef(l.Scan(context.Background()))
	if got := devs["alsa:card:PCH"]; got == nil || len(got.Nodes) != 3 || got.Nodes[0].Path != "/dev/snd/controlC0" ||
		!reflect.DeepEqual(got.Nodes[0].Links, []string{"/dev/snd/by-path/pci-0000:00:1f.3"}) {
		t.Errorf("built-in card's nodes: %+v", got)
	}
	// Twins without a serial share udev's by-id name: the link names only one of them.
	a, b := devs["usb:3-1"], devs["usb:3-2"]
	if a == nil || b == nil || len(a.Nodes[0].Links) != 1 || len(b.Nodes[0].Links) != 2 {
		t.Errorf("twins' control links: %+v / %+v", a, b)
	}

	if err := rig.Move("3-7", "3-5"); err != nil {
		t.Fatal(err)
	}
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	devs = byRef(l.Scan(context.Background()))
	d := devs["usb:3-5"]
	want := []graph.DeviceNode{{Path: "/dev/ttyUSB0", Kind: graph.NodeTTY, Links: []string{
		"/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0", "/dev/serial/by-path/pci-0000:00:14.0-usb-0:5:1.0-port0"}}}
	if d == nil || !reflect.DeepEqual(d.Nodes, want) {
		t.Errorf("robot base moved to 3-5: %+v, want nodes %+v", d, want)
	}
}
