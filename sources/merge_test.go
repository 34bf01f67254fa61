package sources

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

func writeRig(t testing.TB, r *fixture.Rig) string {
	t.Helper()
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func byRef(snap *graph.Snapshot) map[string]*graph.ObservedDevice {
	m := map[string]*graph.ObservedDevice{}
	for _, d := range snap.Devices {
		m[d.Ref] = d
	}
	return m
}

func byKey(snap *graph.Snapshot) map[string]*graph.ObservedDevice {
	m := map[string]*graph.ObservedDevice{}
	for _, d := range snap.Devices {
		m[d.Key] = d
	}
	return m
}

func fps(d *graph.ObservedDevice) []string {
	var out []string
	for _, f := range d.Fingerprints {
		out = append(out, f.String())
	}
	return out
}

func TestMerge_SynthIsOneDevice(t *testing.T) {
	t.Parallel()
	snap := scanDir(t, "testdata/demo")
	checkInvariants(t, snap)
	var synths []*graph.ObservedDevice
	for _, d := range snap.Devices {
		if strings.Contains(d.Name, "JD-Xi") || d.Attrs["alsa_id"] == "JDXi" || strings.Contains(d.Key, "JD-Xi") {
			synths = append(synths, d)
		}
	}
	if len(synths) != 1 {
		t.Fatalf("the JD-Xi shows as %d devices, want 1: %v", len(synths), summary(snap))
	}
	d := synths[0]
	if got, want := d.Key, "path:0582:01a9:3-3.2"; got != want {
		t.Errorf("key=%q, want %q", got, want)
	}
	if got, want := d.Ref, "usb:3-3.2"; got != want {
		t.Errorf("ref=%q, want %q", got, want)
	}
	if got, want := strings.Join(d.Sources, ","), "usb,alsa,pipewire"; got != want {
		t.Errorf("sources=%q, want %q", got, want)
	}
	want := []string{
		"usb_id=0582:01a9", "usb_path=3-3.2", "alsa_card_id=JDXi", "alsa_longname=Roland JD-Xi",
		"midi_client=JD-Xi", "pipewire_device=alsa_card.usb-Roland_JD-Xi-00",
	}
	if got := fps(d); !reflect.DeepEqual(got, want) {
		t.Errorf("fingerprints=%q, want %q", got, want)
	}
	// Evidence from all four readers: sysfs, the card, the sequencer, PipeWire (device and
	// Midi-Bridge ports); the per-boot numbers sit in Attrs.
	for k, v := range map[string]string{"product": "JD-Xi", "manufacturer": "Roland", "alsa_card": "1", "seq_client": "20",
		"seq_ports": "JD-Xi JD-Xi MIDI 1", "pipewire_midi": "Midi-Bridge", "devnum": "6", "busnum": "3", "speed": "480", "driver": "snd-usb-audio"} {
		if d.Attrs[k] != v {
			t.Errorf("attr %s=%q, want %q", k, d.Attrs[k], v)
		}
	}
	if d.Attrs["pipewire_id"] == "" || d.Attrs["pipewire_nodes"] == "" {
		t.Errorf("attrs %v: want pipewire_id and pipewire_nodes", d.Attrs)
	}
}

func TestMerge_DemoStudio(t *testing.T) {
	t.Parallel()
	devs := byRef(scanDir(t, "testdata/demo"))
	t.Run("SerialKeysTheInterface", func(t *testing.T) {
		d := devs["usb:3-3.1"]
		if d == nil || d.Key != "sn:1235:8210:Y8KG3J11B6F7D0" || !graph.ContainsFingerprint(d.Fingerprints, graph.Fingerprint{Kind: graph.FPUSBSerial, Value: "1235:8210:Y8KG3J11B6F7D0"}) {
			t.Fatalf("scarlett: %+v", d)
		}
	})
	t.Run("HubsAreInfraAndKeepTheirChildren", func(t *testing.T) {
		for _, p := range []string{"usb:3-3", "usb:3-4"} {
			if d := devs[p]; d == nil || !d.Infra {
				t.Errorf("%s: want an infra device, got %+v", p, d)
			}
		}
		if d := devs["usb:3-4.1"]; d == nil || d.Infra || d.Name != "Arturia BeatStep" || d.Attrs["alsa_id"] != "BeatStep" {
			t.Errorf("controller behind the hub: %+v", d)
		}
		for ref := range devs {
			if strings.Contains(ref, ":1.") {
				t.Errorf("interface listed as a device: %s", ref)
			}
		}
		// Root hubs are infrastructure devices of their own, keyed by the controller.
		for _, ref := range fixture.RootHubRefs() {
			d := devs[ref]
			if d == nil || !d.Infra || !strings.HasPrefix(d.Key, "usb-root:"+fixture.Controller+":") || d.Attrs["usb_controller"] != fixture.Controller {
				t.Errorf("root hub %s: %+v", ref, d)
			}
		}
	})
	t.Run("TwinsStayTwo", func(t *testing.T) {
		a, b := devs["usb:3-1"], devs["usb:3-2"]
		if a == nil || b == nil || a.Key == b.Key {
			t.Fatalf("twins: %+v %+v", a, b)
		}
		// Everything but the place is the same: only the port tells them apart.
		strip := func(d *graph.ObservedDevice) []string {
			var out []string
			for _, f := range fps(d) {
				if !strings.HasPrefix(f, "usb_path=") {
					out = append(out, f)
				}
			}
			return out
		}
		if !reflect.DeepEqual(strip(a), strip(b)) {
			t.Errorf("twins' non-place evidence differs: %q vs %q", fps(a), fps(b))
		}
		if a.Attrs["seq_client"] != "28" || b.Attrs["seq_client"] != "32" || a.Attrs["alsa_id"] != "nanoKONTROL2" || b.Attrs["alsa_id"] != "nanoKONTROL2_1" {
			t.Errorf("twins linked to the wrong card or client: %v / %v", a.Attrs, b.Attrs)
		}
	})
	t.Run("KeyboardWithoutStrings", func(t *testing.T) {
		// Named from usb.ids as lsusb names it; the raw ids and usb.ids' names stay in attrs.
		d := devs["usb:3-6"]
		if d == nil || d.Key != "path:04d9:1702:3-6" || d.Name != "Holtek Semiconductor, Inc. Keyboard LKS02" || d.Attrs["manufacturer"] != "" ||
			d.Attrs["vendor_id"] != "04d9" || d.Attrs["product_id"] != "1702" ||
			d.Attrs["usb_ids_vendor"] != "Holtek Semiconductor, Inc." || d.Attrs["usb_ids_product"] != "Keyboard LKS02" {
			t.Fatalf("keyboard: %+v", d)
		}
		if got, want := nodePaths(d), "/dev/input/event0 /dev/input/event1 /dev/hidraw0 /dev/hidraw1"; got != want {
			t.Errorf("keyboard nodes = %q, want %q", got, want)
		}
	})
	t.Run("RobotBase", func(t *testing.T) {
		d := devs["usb:3-7"]
		if d == nil || d.Key != "sn:0403:6001:A50285BI" || d.Attrs["driver"] != "ftdi_sio" || d.Name != "FT232R USB UART" {
			t.Fatalf("robot base: %+v", d)
		}
		want := []graph.DeviceNode{{Path: "/dev/ttyUSB0", Kind: graph.NodeTTY, Links: []string{
			"/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0",
			"/dev/serial/by-path/pci-0000:00:14.0-usb-0:7:1.0-port0",
		}}}
		if !reflect.DeepEqual(d.Nodes, want) {
			t.Fatalf("robot base nodes = %+v, want %+v", d.Nodes, want)
		}
	})
	t.Run("NonUSBCard", func(t *testing.T) {
		d := devs["alsa:card:PCH"]
		if d == nil || d.Key != "alsa:PCH" || strings.Join(d.Sources, ",") != "alsa,pipewire" ||
			!reflect.DeepEqual(fps(d), []string{"alsa_card_id=PCH", "alsa_longname=HDA Intel PCH", "pipewire_device=alsa_card.pci-0000_00_1f.3"}) {
			t.Fatalf("PCH: %+v", d)
		}
	})
}

// TestMerge_NoPerBootNumbers reboots the studio: every card, client and device number and
// every PipeWire id changes, and so does which twin got the "_1" card id. Keys and
// fingerprints must not change.
func TestMerge_NoPerBootNumbers(t *testing.T) {
	t.Parallel()
	before := scanDir(t, writeRig(t, fixture.DemoRig()))

	r := fixture.DemoRig()
	for _, c := range r.Cards {
		c.Number = 7 - c.Number
		switch c.ID {
		case "nanoKONTROL2":
			c.ID = "nanoKONTROL2_1"
		case "nanoKONTROL2_1":
			c.ID = "nanoKONTROL2"
		}
	}
	for _, d := range r.USB {
		d.Devnum += 40
	}
	after := scanDir(t, writeRig(t, r))

	b, a := byKey(before), byKey(after)
	if want := r.Counts().Devices; len(b) != len(a) || len(b) != want {
		t.Fatalf("devices before %d, after %d, want %d", len(b), len(a), want)
	}
	changed := 0
	for k, db := range b {
		da := a[k]
		if da == nil {
			t.Errorf("key %s lost after the reboot", k)
			continue
		}
		if !reflect.DeepEqual(fps(db), fps(da)) {
			t.Errorf("%s: fingerprints %q became %q", k, fps(db), fps(da))
		}
		if db.Ref != da.Ref {
			t.Errorf("%s: ref %s became %s", k, db.Ref, da.Ref)
		}
		for _, attr := range []string{"alsa_card", "seq_client", "devnum", "pipewire_id"} {
			if db.Attrs[attr] != da.Attrs[attr] {
				changed++
			}
		}
	}
	if changed < 10 {
		t.Fatalf("only %d per-boot numbers changed; the test did not reboot", changed)
	}
}

func TestMerge_Move(t *testing.T) {
	t.Parallel()
	r := fixture.DemoRig()
	before := byKey(scanDir(t, writeRig(t, r)))
	if err := r.Move("3-3.2", "3-5"); err != nil {
		t.Fatal(err)
	}
	if err := r.Move("3-3.1", "3-4.3"); err != nil {
		t.Fatal(err)
	}
	snap := scanDir(t, writeRig(t, r))
	after := byKey(snap)

	// The serial keys the interface wherever it is; only its place changed.
	sc := after["sn:1235:8210:Y8KG3J11B6F7D0"]
	if sc == nil || sc.Ref != "usb:3-4.3" {
		t.Fatalf("scarlett after the move: %+v", sc)
	}
	if _, ok := before["path:0582:01a9:3-3.2"]; !ok {
		t.Fatal("synth missing before the move")
	}
	if _, ok := after["path:0582:01a9:3-3.2"]; ok {
		t.Error("synth still at its old port")
	}
	jd := after["path:0582:01a9:3-5"]
	if jd == nil || jd.Ref != "usb:3-5" {
		t.Fatalf("synth after the move: %v", summary(snap))
	}
	want := []string{"usb_id=0582:01a9", "usb_path=3-5", "alsa_card_id=JDXi", "alsa_longname=Roland JD-Xi",
		"midi_client=JD-Xi", "pipewire_device=alsa_card.usb-Roland_JD-Xi-00"}
	if got := fps(jd); !reflect.DeepEqual(got, want) {
		t.Errorf("synth fingerprints after the move %q, want %q", got, want)
	}
	if jd.Attrs["alsa_longname"] != "Roland JD-Xi at usb-0000:00:14.0-5, high speed" {
		t.Errorf("long name %q", jd.Attrs["alsa_longname"])
	}
}

func TestMerge_UnplugTwin(t *testing.T) {
	t.Parallel()
	r := fixture.DemoRig()
	if err := r.Remove("3-2"); err != nil {
		t.Fatal(err)
	}
	devs := byRef(scanDir(t, writeRig(t, r)))
	if devs["usb:3-2"] != nil || devs["usb:3-1"] == nil || devs["usb:3-1"].Attrs["seq_client"] != "28" {
		t.Fatalf("after unplugging 3-2: %v", devs)
	}
	for _, d := range devs {
		if d.Attrs["alsa_id"] == "nanoKONTROL2_1" {
			t.Errorf("the unplugged twin's card is still there: %+v", d)
		}
	}
}

// TestMerge_SourceDown: a device keeps its key while any source that knows its USB place
// sees it, so a failing source does not make it look like a new device.
func TestMerge_SourceDown(t *testing.T) {
	t.Parallel()
	dir := writeRig(t, fixture.DemoRig())
	full := byKey(scanDir(t, dir))
	ctx := context.Background()

	noUSB := Demo(dir)
	noUSB.SysRoot = dir + "/nope"
	snap, _ := noUSB.Snapshot(ctx)
	if snap.SourceOK("usb") || !snap.SourceOK("alsa") || !snap.SourceOK("pipewire") {
		t.Fatalf("statuses: %+v", snap.Sources)
	}
	checkInvariants(t, snap)
	for _, key := range []string{"path:0582:01a9:3-3.2", "path:0944:0117:3-1", "path:0944:0117:3-2", "path:1c75:0206:3-4.1"} {
		d := byKey(snap)[key]
		if d == nil || d.Ref != full[key].Ref || d.Source != "alsa" {
			t.Errorf("without usb, %s: %+v", key, d)
		}
	}

	pwOnly := Demo(dir)
	pwOnly.SysRoot, pwOnly.ProcRoot = dir+"/nope", dir+"/nope"
	snap, _ = pwOnly.Snapshot(ctx)
	checkInvariants(t, snap)
	if d := byKey(snap)["path:0582:01a9:3-3.2"]; d == nil || d.Ref != "usb:3-3.2" || !graph.ContainsFingerprint(d.Fingerprints, graph.Fingerprint{Kind: graph.FPMIDIClient, Value: "JD-Xi"}) {
		t.Errorf("pipewire alone, synth: %v", summary(snap))
	}
	if d := byKey(snap)["pw:alsa_card.pci-0000_00_1f.3"]; d == nil || d.Ref != "pipewire:alsa_card.pci-0000_00_1f.3" {
		t.Errorf("pipewire alone, PCH: %v", summary(snap))
	}
}

// nodePaths lists a device's /dev node paths, space-separated.
func nodePaths(d *graph.ObservedDevice) string {
	var out []string
	for _, n := range d.Nodes {
		out = append(out, n.Path)
	}
	return strings.Join(out, " ")
}
