package sources

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/sources/fixture"
)

func TestParseUSBIDs(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/usbids/usb.ids")
	if err != nil {
		t.Fatal(err)
	}
	all := parseUSBIDs(data, nil)
	names := map[string]string{}
	for vid, v := range all {
		names[vid] = v.name
		for pid, p := range v.products {
			names[vid+":"+pid] = p
		}
	}
	want := map[string]string{
		"0403": "Future Technology Devices International, Ltd", "0403:6001": "FT232 Serial (UART) IC", "0403:6010": "FT2232C/D/H Dual UART/FIFO IC",
		"04d9": "Holtek Semiconductor, Inc.", "04d9:1702": "Keyboard LKS02",
		"05e3": "Genesys Logic, Inc.", "05e3:0610": "Hub",
		"0944": "KORG, Inc.", "0944:0117": "nanoKONTROL2 MIDI Controller", "0944:0118": "nanoKEY2",
		"1a40": "Terminus Technology Inc.", "1a40:0101": "Hub",
		"1c75": "Arturia", "1c75:0288": "KeyStep",
		"2001": `D-Link \xff\xfe Corp.`, "2001:0001": `Bad \xc3 byte`,
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("parsed:\n%q\nwant:\n%q", names, want)
	}

	t.Run("OnlyTheVendorsAsked", func(t *testing.T) {
		got := parseUSBIDs(data, map[string]bool{"04d9": true, "0944": true, "ffff": true})
		if len(got) != 2 || got["04d9"] == nil || got["0944"] == nil || got["0944"].products["0118"] != "nanoKEY2" {
			t.Fatalf("asked for 04d9, 0944 and ffff, got %v", got)
		}
		if _, ok := got["0944"].products["0119"]; ok {
			t.Errorf("the second listing of 0944 leaked into the first: %v", got["0944"].products)
		}
	})
}

func TestGenericProduct(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "USB2.0 Hub", "USB 2.0 Hub [MTT]", "USB 3.0 Hub", "Hub", "USB Audio", "USB-Audio", "Keyboard",
		"USB Keyboard", "xHCI Host Controller", "EHCI Host Controller", "USB Receiver", "USB Optical Mouse", "Generic USB Hub",
		"USB Composite Device", "USB Serial", "  keyboard  ", "2.0", "USB Device", "Gaming Mouse"} {
		if !GenericProduct(s) {
			t.Errorf("GenericProduct(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"JD-Xi", "nanoKONTROL2", "Scarlett 2i2 USB", "FT232R USB UART", "Arturia BeatStep", "Keyboard LKS02",
		"キーボード", "键盘", "Клавиатура", "لوحة المفاتيح", "Ελληνικό πληκτρολόγιο", "MIDI 4x4", "Launchpad Mini MK3", "USB Hub 7-Port Powered"} {
		if GenericProduct(s) {
			t.Errorf("GenericProduct(%q) = true, want false: a real name", s)
		}
	}
}

func TestUSBName(t *testing.T) {
	t.Parallel()
	ids := usbIDsName{Vendor: "Genesys Logic, Inc.", Product: "Hub"}
	for _, c := range []struct {
		name string
		dev  usbDevice
		ids  usbIDsName
		want string
	}{
		{"OwnStringFirst", usbDevice{Product: "JD-Xi", Manufacturer: "Roland"}, usbIDsName{"Roland Corp.", "JD-Xi synth"}, "JD-Xi"},
		{"GenericFromUSBIDs", usbDevice{Product: "USB2.0 Hub", Manufacturer: "GenesysLogic"}, ids, "Genesys Logic, Inc. Hub"},
		{"MissingFromUSBIDs", usbDevice{VID: "04d9", PID: "1702", IfClasses: []string{"03"}}, usbIDsName{"Holtek Semiconductor, Inc.", "Keyboard LKS02"}, "Holtek Semiconductor, Inc. Keyboard LKS02"},
		{"GenericWithoutUSBIDs", usbDevice{Product: "USB2.0 Hub", Manufacturer: "GenesysLogic"}, usbIDsName{}, "GenesysLogic USB2.0 Hub"},
		{"GenericNamingItsMaker", usbDevice{Product: "Foo Keyboard", Manufacturer: "Foo"}, usbIDsName{}, "Foo Keyboard"},
		{"VendorOnly", usbDevice{VID: "04d9", PID: "9999", IfClasses: []string{"03"}}, usbIDsName{Vendor: "Holtek Semiconductor, Inc."}, "Holtek Semiconductor, Inc. input device 04d9:9999"},
		{"Nothing", usbDevice{VID: "04d9", PID: "1702", IfClasses: []string{"03"}}, usbIDsName{}, "USB input device 04d9:1702"},
		{"RootHub", usbDevice{Path: "usb3", Root: true, Product: "xHCI Host Controller"}, usbIDsName{"Linux Foundation", "2.0 root hub"}, "Linux Foundation 2.0 root hub"},
		{"RootHubWithoutUSBIDs", usbDevice{Path: "usb3", Root: true, Product: "xHCI Host Controller", Manufacturer: "Linux 6.8.0 xhci-hcd"}, usbIDsName{}, "xHCI Host Controller"},
		{"NonLatinName", usbDevice{Product: "键盘", Manufacturer: "Foo"}, usbIDsName{"Foo Corp.", "Keyboard"}, "键盘"},
	} {
		if got := usbName(&c.dev, c.ids); got != c.want {
			t.Errorf("%s: usbName = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestUSBIDs_Lookup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "usb.ids")
	write := func(text string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2025, 7, 26, 20, 34, 1, 0, time.UTC)
	write(fixture.USBIDs, base)
	var c usbIDs
	got, err := c.lookup(path, []string{"04d9:1702", "0403:6001", "dead:beef"})
	if err != nil {
		t.Fatal(err)
	}
	if got["04d9:1702"] != (usbIDsName{"Holtek Semiconductor, Inc.", "Keyboard LKS02"}) || got["0403:6001"].Product != "FT232 Serial (UART) IC" {
		t.Errorf("lookup = %v", got)
	}
	if _, ok := got["dead:beef"]; ok {
		t.Errorf("an unknown vendor was named: %v", got["dead:beef"])
	}
	// Only the vendors asked for are held, and an unknown one is remembered as unknown.
	if len(c.vendors) != 3 || c.vendors["dead"] != nil || c.vendors["05e3"] != nil {
		t.Errorf("cache holds %d vendors, want the 3 asked for", len(c.vendors))
	}

	t.Run("ChangedFileIsReadAgain", func(t *testing.T) {
		write(strings.Replace(fixture.USBIDs, "Keyboard LKS02", "Keyboard LKS02 (rev 2)", 1), base.Add(time.Hour))
		got, err := c.lookup(path, []string{"04d9:1702"})
		if err != nil {
			t.Fatal(err)
		}
		if got["04d9:1702"].Product != "Keyboard LKS02 (rev 2)" {
			t.Errorf("after the file changed: %v", got)
		}
	})
	t.Run("Refused", func(t *testing.T) {
		big := filepath.Join(dir, "big.ids")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(MaxUSBIDsSize + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for file, want := range map[string]string{
			dir:                           "is a directory",
			big:                           "over the 16 MiB limit",
			filepath.Join(dir, "missing"): "no such file or directory",
		} {
			err := CheckUSBIDs(file)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
				t.Errorf("CheckUSBIDs(%s) = %v, want an error naming it and saying %q", file, err, want)
			}
			var c usbIDs
			if _, err := c.lookup(file, []string{"04d9:1702"}); err == nil {
				t.Errorf("lookup(%s) read it", file)
			}
		}
	})
}

// A usb.ids that cannot be read leaves the usb source working: a warning says why, and
// devices are named from their own strings.
func TestLive_USBIDsUnreadable(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := fixture.DemoRig().Write(root); err != nil {
		t.Fatal(err)
	}
	l := Demo(root)
	l.USBIDs = t.TempDir() // a directory
	snap := l.Scan(context.Background())
	var usb string
	for _, s := range snap.Sources {
		if s.Name == SourceUSB {
			if !s.OK {
				t.Fatalf("usb failed: %s", s.Error)
			}
			usb = s.Error
		}
	}
	if !strings.Contains(usb, "is a directory") || !strings.Contains(usb, "named from their own strings") {
		t.Errorf("usb warning = %q, want it to name the bad usb.ids", usb)
	}
	devs := byRef(snap)
	if d := devs["usb:3-6"]; d == nil || d.Name != "USB input device 04d9:1702" || d.Attrs["usb_ids_vendor"] != "" {
		t.Errorf("keyboard without usb.ids: %+v", d)
	}
	if d := devs["usb:3-3"]; d == nil || d.Name != "GenesysLogic USB2.0 Hub" {
		t.Errorf("hub without usb.ids: %+v", d)
	}
}

// The real usb.ids (Debian's hwdata) names the demo rig exactly as the rig's own excerpt
// does, so the demo shows what lsusb shows: the held keyboard 04d9:1702 is "Holtek
// Semiconductor, Inc. Keyboard LKS02" (the issue quoted "… Keyboard"; the file says more).
func TestRealUSBIDs(t *testing.T) {
	t.Parallel()
	const real = "/usr/share/hwdata/usb.ids"
	if err := CheckUSBIDs(real); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; install hwdata", err)
		}
		t.Skipf("%v (install hwdata to run this)", err)
	}
	want := byRef(scanDir(t, "testdata/demo"))
	l := Demo("testdata/demo")
	l.USBIDs = real
	got := byRef(l.Scan(context.Background()))
	if len(got) != len(want) {
		t.Fatalf("%d devices with the real usb.ids, %d with the rig's", len(got), len(want))
	}
	for ref, w := range want {
		if g := got[ref]; g == nil || g.Name != w.Name || g.Attrs["usb_ids_vendor"] != w.Attrs["usb_ids_vendor"] || g.Attrs["usb_ids_product"] != w.Attrs["usb_ids_product"] {
			t.Errorf("%s: real usb.ids names it %q (%q, %q), the rig's excerpt %q", ref, g.Name, g.Attrs["usb_ids_vendor"], g.Attrs["usb_ids_product"], w.Name)
		}
	}
	if g := got["usb:3-6"]; g == nil || g.Name != "Holtek Semiconductor, Inc. Keyboard LKS02" {
		t.Errorf("held keyboard = %+v, want lsusb's name", g)
	}
}

// BenchmarkUSBIDs compares naming the demo rig's vendors from the real usb.ids, reading
// only their lines, with building the whole table.
func BenchmarkUSBIDs(b *testing.B) {
	data, err := os.ReadFile("/usr/share/hwdata/usb.ids")
	if err != nil {
		b.Skip(err)
	}
	want := map[string]bool{"0403": true, "0424": true, "04d9": true, "0582": true, "05e3": true, "0944": true, "1235": true, "1a40": true, "1c75": true, "1d6b": true}
	b.Run("Needed", func(b *testing.B) {
		for b.Loop() {
			if len(parseUSBIDs(data, want)) != len(want) {
				b.Fatal("a vendor is missing")
			}
		}
	})
	b.Run("Whole", func(b *testing.B) {
		for b.Loop() {
			parseUSBIDs(data, nil)
		}
	})
}

// FuzzParseUSBIDs: any file parses without a panic into lowercase four-hex ids and clean,
// non-empty names of at most 256 bytes, and reading only some vendors gives exactly what
// the whole table says about them.
func FuzzParseUSBIDs(f *testing.F) {
	f.Add([]byte(fixture.USBIDs))
	if b, err := os.ReadFile("testdata/usbids/usb.ids"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("04d9  Holtek\n\t1702  Keyboard\n\t\t00  if\nC 03  HID\n\t0101  x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		all := parseUSBIDs(data, nil)
		for vid, v := range all {
			if len(vid) != 4 || strings.ToLower(vid) != vid || v.name == "" || len(v.name) > 256 {
				t.Fatalf("vendor %q %q", vid, v.name)
			}
			validText(t, "vendor name", v.name)
			for pid, p := range v.products {
				if len(pid) != 4 || strings.ToLower(pid) != pid || p == "" || len(p) > 256 {
					t.Fatalf("product %s:%q %q", vid, pid, p)
				}
				validText(t, "product name", p)
			}
			some := parseUSBIDs(data, map[string]bool{vid: true})
			if len(some) != 1 || !reflect.DeepEqual(some[vid], v) {
				t.Fatalf("vendor %s alone = %+v, in the whole table %+v", vid, some[vid], v)
			}
		}
	})
}
