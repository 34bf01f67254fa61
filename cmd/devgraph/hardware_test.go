package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// The source flags reach the sources: usb.ids names the keyboard as lsusb does, and the
// robot base's serial adapter shows its /dev node and by-id link in show and --json.
func TestCLI_NamesAndNodes(t *testing.T) {
	c := newCLI(t)
	rig := newTestRig(t)
	db := filepath.Join(c.home, "hw.db")
	with := func(args ...string) []string { return append(append([]string{"--db", db}, args...), rig.flags()...) }

	out := c.ok(with("show", "usb:3-7")...)
	for _, want := range []string{
		"/dev/ttyUSB0  tty   /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0\n",
		"/dev/ttyUSB0  tty   /dev/serial/by-path/pci-0000:00:14.0-usb-0:7:1.0-port0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show usb:3-7 lacks %q:\n%s", want, out)
		}
	}
	var dv graph.DeviceView
	c.jsonOf(&dv, with("show", "usb:3-7", "--json")...)
	if len(dv.Nodes) != 1 || dv.Nodes[0].Path != "/dev/ttyUSB0" || dv.Nodes[0].Kind != "tty" || len(dv.Nodes[0].Links) != 2 {
		t.Errorf("show --json nodes = %+v", dv.Nodes)
	}
	var l deviceList
	c.jsonOf(&l, with("devices", "--json")...)
	if d := l.find("usb:3-6"); d == nil || d.Name != "Holtek Semiconductor, Inc. Keyboard LKS02" || d.Attrs["usb_ids_product"] != "Keyboard LKS02" {
		t.Errorf("keyboard in devices --json: %+v", d)
	}

	t.Run("BadUSBIDs", func(t *testing.T) {
		dir := t.TempDir()
		c.fail(1, "--usb-ids: usb.ids "+dir+": is a directory", "--db", db, "devices", "--usb-ids", dir)
		c.fail(1, "no such file or directory", "--db", db, "devices", "--usb-ids", filepath.Join(dir, "missing.ids"))
	})
}

// A source that cannot be read is named on stderr by devices and unbound, one line each,
// with why and where to look further; the listing itself still prints.
func TestCLI_UnreadableSourcesSaySo(t *testing.T) {
	c := newCLI(t)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "pw.json"), []byte("[{"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--db", filepath.Join(c.home, "none.db"), "--sys-root", empty, "--proc-root", empty, "--pw-dump-file", filepath.Join(empty, "pw.json")}
	for _, verb := range []string{"devices", "unbound"} {
		out, errs, code := c.run(append([]string{verb}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "REF") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", verb, code, out, errs)
		}
		lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: stderr has %d lines, want one per source (3):\n%s", verb, len(lines), errs)
		}
		for i, src := range []string{"usb", "alsa", "pipewire"} {
			if l := lines[i]; !strings.HasPrefix(l, "devgraph: source "+src+" unavailable: ") || !strings.HasSuffix(l, "; run devgraph doctor for more") {
				t.Errorf("%s: stderr line %q does not name source %s and doctor", verb, l, src)
			}
		}
		if !strings.Contains(lines[0], filepath.Join(empty, "bus", "usb", "devices")+": no such file or directory") {
			t.Errorf("%s: usb line %q does not say why", verb, lines[0])
		}
	}
	// A listing with every source answering says nothing on stderr.
	rig := newTestRig(t)
	if _, errs, code := c.run(append([]string{"--db", filepath.Join(c.home, "rig.db"), "devices"}, rig.flags()...)...); code != 0 || errs != "" {
		t.Errorf("devices on the rig: exit %d, stderr %q", code, errs)
	}
}
