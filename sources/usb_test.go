package sources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/sources/fixture"
)

// TestReadUSB_Entries covers entry shapes the scenario trees do not: absolute links,
// plain directories, regular files, two links to one directory, oversize attributes,
// names that are no bus-port path, and a device removed while being read.
func TestReadUSB_Entries(t *testing.T) {
	t.Parallel()
	r := fixture.DemoRig()
	for _, p := range []string{"3-1", "3-2", "3-3", "3-4", "3-6", "3-7"} {
		if err := r.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeRig(t, r) // leaves nothing but the root hubs
	devs := filepath.Join(dir, "sys/bus/usb/devices")
	mkdev := func(name, vid string) string {
		d := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:14.0/usb3", name)
		put(t, d, "idVendor", vid+"\n")
		put(t, d, "idProduct", "0001\n")
		return d
	}
	// An absolute link works as a relative one does.
	link(t, dir, "sys/bus/usb/devices/3-1", mkdev("3-1", "1111"))
	// A plain directory (some test trees and containers flatten sysfs).
	put(t, devs, "3-2/idVendor", "2222\n")
	put(t, devs, "3-2/idProduct", "0002\n")
	// A regular file is no device.
	put(t, devs, "3-3", "not a directory\n")
	// Two entries for one directory: the second is skipped.
	mkdev("3-4", "4444")
	link(t, dir, "sys/bus/usb/devices/3-4", "../../../devices/pci0000:00/0000:00:14.0/usb3/3-4")
	link(t, dir, "sys/bus/usb/devices/3-5", "../../../devices/pci0000:00/0000:00:14.0/usb3/3-4")
	// An attribute larger than a page.
	d6 := mkdev("3-6", "6666")
	put(t, d6, "product", strings.Repeat("x", 5000))
	link(t, dir, "sys/bus/usb/devices/3-6", "../../../devices/pci0000:00/0000:00:14.0/usb3/3-6")
	// A name that is no bus-port path.
	link(t, dir, "sys/bus/usb/devices/weird\xff", "../../../devices/pci0000:00/0000:00:14.0/usb3/3-4")
	// A device whose directory emptied out while it was read.
	d7 := mkdev("3-7", "7777")
	link(t, dir, "sys/bus/usb/devices/3-7", "../../../devices/pci0000:00/0000:00:14.0/usb3/3-7")
	if err := os.Remove(filepath.Join(d7, "idVendor")); err != nil {
		t.Fatal(err)
	}

	got, notes, err := readUSB(filepath.Join(dir, "sys"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range got {
		paths = append(paths, d.Path+"="+d.VID)
	}
	// The root hubs come first.
	if g, w := strings.Join(paths, " "), "usb3=1d6b usb4=1d6b 3-1=1111 3-2=2222 3-4=4444"; g != w {
		t.Errorf("devices %s, want %s", g, w)
	}
	wantNotes := []string{
		"skipped 3-3: not a device directory",
		"skipped 3-5: points at the same directory as 3-4",
		"skipped 3-6: product: larger than 4096 bytes",
		"skipped 3-7: no idVendor attribute",
		`skipped "weird\xff": not a bus-port path`,
	}
	if g, w := strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"); g != w {
		t.Errorf("notes:\n%s\nwant:\n%s", g, w)
	}
	if got[0].Controller != "0000:00:14.0" || !got[0].Root || !got[0].Infra || got[0].Bus != 3 || got[2].Controller != "0000:00:14.0" || got[2].Root {
		t.Errorf("root hub %+v, device %+v", got[0], got[2])
	}
}
