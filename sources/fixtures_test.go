package sources

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/sources/fixture"
)

var update = flag.Bool("update", false, "rewrite testdata/demo and testdata/scenarios from the fixture generator")

// scenario is a fixture tree in testdata/scenarios/<name>: a rig, then a change a real
// machine can show (garbage, truncation, loops, files missing or half-removed…).
type scenario struct {
	name   string
	rig    func() *fixture.Rig
	mutate func(t testing.TB, dir string)
}

// smallRig is the demo studio cut down to a hub, the JD-Xi behind it, one
// nanoKONTROL2 and the keyboard: enough to show every source, small enough to copy.
func smallRig() *fixture.Rig {
	r := fixture.DemoRig()
	for _, p := range []string{"3-2", "3-4", "3-3.1", "3-7"} {
		if err := r.Remove(p); err != nil {
			panic(err)
		}
	}
	cards := r.Cards[:0]
	for _, c := range r.Cards {
		if c.USB != "" {
			cards = append(cards, c)
		}
	}
	r.Cards = cards
	return r
}

func dev(path string) string { return fixture.DevDir(path) }

var scenarios = []scenario{
	{name: "garbage", rig: smallRig, mutate: func(t testing.TB, dir string) {
		put(t, dir, dev("3-1")+"/idVendor", "zz\x00\xff\n")
		put(t, dir, dev("3-6")+"/busnum", "banana\n")
		appendTo(t, dir, "proc/asound/cards", "this is not a card line\n\xff\xfe\x00\n")
		put(t, dir, "proc/asound/card3/usbbus", "what/ever\n")
		replaceIn(t, dir, "proc/asound/seq/clients", "Client  20 :", "Client XX : \"broken\nClient  20 :")
	}},
	{name: "truncated-cards", rig: smallRig, mutate: func(t testing.TB, dir string) {
		b := get(t, dir, "proc/asound/cards")
		i := bytes.Index(b, []byte("at usb-"))
		put(t, dir, "proc/asound/cards", string(b[:i+9]))
	}},
	{name: "truncated-pwdump", rig: smallRig, mutate: func(t testing.TB, dir string) {
		b := get(t, dir, "pw-dump.json")
		put(t, dir, "pw-dump.json", string(b[:len(b)*6/10]))
	}},
	{name: "symlink-loop", rig: smallRig, mutate: func(t testing.TB, dir string) {
		link(t, dir, "sys/bus/usb/devices/3-9", "3-9")
		link(t, dir, "sys/devices/loop", "loop")
		link(t, dir, "sys/bus/usb/devices/3-8", "../../../devices/loop/3-8")
		link(t, dir, "sys/bus/usb/devices/3-5", "3-3")
	}},
	{name: "half-removed", rig: smallRig, mutate: func(t testing.TB, dir string) {
		rm(t, dir, dev("3-6"))
		for _, a := range []string{"idVendor", "idProduct", "manufacturer", "product", "busnum", "devnum", "devpath", "speed", "bDeviceClass"} {
			rm(t, dir, dev("3-1")+"/"+a)
		}
		rm(t, dir, "proc/asound/card3")
	}},
	// The Scarlett mid-unplug: the kernel has torn down its usb device, ALSA and PipeWire
	// still list its card for a moment.
	{name: "unplugging", rig: fixture.DemoRig, mutate: func(t testing.TB, dir string) {
		for _, e := range []string{"3-3.1", "3-3.1:1.0", "3-3.1:1.1", "3-3.1:1.2", "3-3.1:1.3"} {
			rm(t, dir, "sys/bus/usb/devices/"+e)
		}
		rm(t, dir, dev("3-3.1"))
	}},
	// The Scarlett mid-plug: sysfs has its usb device, ALSA has no card for it yet.
	{name: "arriving", rig: func() *fixture.Rig {
		r := fixture.DemoRig()
		cards := r.Cards[:0]
		for _, c := range r.Cards {
			if c.USB != "3-3.1" {
				cards = append(cards, c)
			}
		}
		r.Cards = cards
		return r
	}},
	{name: "missing-files", rig: smallRig, mutate: func(t testing.TB, dir string) {
		rm(t, dir, "proc/asound/seq")
		rm(t, dir, "proc/asound/card1/usbbus")
		rm(t, dir, "proc/asound/card1/usbid")
		for _, a := range []string{"devnum", "devpath", "busnum", "speed", "bDeviceClass"} {
			rm(t, dir, dev("3-3.2")+"/"+a)
		}
		rm(t, dir, "pw-dump.json")
	}},
	{name: "non-utf8", rig: smallRig, mutate: func(t testing.TB, dir string) {
		put(t, dir, dev("3-3.2")+"/product", "JD-Xi \xff\xfe\n")
		put(t, dir, dev("3-3.2")+"/manufacturer", "Rol\xe4nd\n")
		replaceIn(t, dir, "proc/asound/cards", "USB-Audio - JD-Xi", "USB-Audio - JD-Xi\xff")
		put(t, dir, "proc/asound/card1/id", "JD\xffXi\n")
		replaceIn(t, dir, "proc/asound/seq/clients", `"JD-Xi" [`, "\"JD-Xi\xc3\" [")
	}},
	{name: "old-kernel", rig: func() *fixture.Rig { r := smallRig(); r.OldKernel = true; return r }},
	{name: "newer-kernel", rig: smallRig, mutate: func(t testing.TB, dir string) {
		put(t, dir, "proc/asound/seq/clients", `Client info
  cur  clients : 5
  peak clients : 6
  max  clients : 192

Client   0 : "System" [Kernel Legacy]
  Port   0 : "Timer" (Rwe-) [In/Out]
  Port   1 : "Announce" (R-e-) [In/Out]
Client  14 : "Midi Through" [Kernel Legacy]
  Port   0 : "Midi Through Port-0" (RWe-) [In/Out]
Client  20 : "JD-Xi" [Kernel UMP MIDI1] card=1
  UMP Endpoint: "JD-Xi"
  UMP Block 0: "Group 1 (JD-Xi MIDI 1)" [Active]
    Groups: 1-1
    Is MIDI1: Yes
  Port   0 : "MIDI 2.0" (RWeX) [In/Out]
    Connecting To: 128:0
  Port   1 : "Group 1 (JD-Xi MIDI 1)" (RWeX) [In/Out]
Client  28 : "nanoKONTROL2" [Kernel Legacy, card=3]
  Port   0 : "nanoKONTROL2 nanoKONTROL2 _ CTRL" (RWeX) [In/Out]
Client 128 : "PipeWire-System" [User UMP MIDI2]
  Port   0 : "input" (-We-) [In]
    Connected From: 20:0
  Output pool :
    Pool size          : 500
    Cells in use       : 0
`)
	}},
	{name: "pw-coerce", rig: smallRig, mutate: func(t testing.TB, dir string) {
		var objs []map[string]any
		if err := json.Unmarshal(get(t, dir, "pw-dump.json"), &objs); err != nil {
			t.Fatal(err)
		}
		var out []any
		for _, o := range objs {
			info, _ := o["info"].(map[string]any)
			props, _ := info["props"].(map[string]any)
			switch o["type"] {
			case "PipeWire:Interface:Device":
				o["id"] = fmt.Sprint(o["id"]) // a string id
				props["api.alsa.card"] = fmt.Sprint(props["api.alsa.card"])
				props["device.vendor.id"] = 1410 // 0x0582 as a number
				props["device.product.id"] = "425"
				props["device.description"] = 12345
			case "PipeWire:Interface:Port":
				delete(props, "port.alias")
				props["port.id"] = "0"
			}
			out = append(out, o)
		}
		out = append(out, 42, "text", nil, []any{1, 2},
			map[string]any{"id": 999, "type": "PipeWire:Interface:Device", "info": nil},
			map[string]any{"id": 998, "type": []any{"x"}, "info": map[string]any{}},
			map[string]any{"id": 997, "type": "PipeWire:Interface:Device", "info": "oops"},
			map[string]any{"id": 996, "type": "PipeWire:Interface:Device", "info": map[string]any{"props": map[string]any{"device.api": "v4l2"}}},
			map[string]any{"id": 995, "type": "PipeWire:Interface:Node", "info": map[string]any{"props": map[string]any{"device.id": "bogus"}}})
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		put(t, dir, "pw-dump.json", string(b)+"\n")
	}},
	{name: "unreadable", rig: smallRig, mutate: func(t testing.TB, dir string) {
		// Directories where files belong; each holds a .keep file because git does not
		// keep empty directories, and a fresh clone must have the same tree.
		for _, p := range []string{dev("3-3.2") + "/idProduct", "proc/asound/cards", "pw-dump.json"} {
			rm(t, dir, p)
			mkdir(t, dir, p)
			put(t, dir, p+"/.keep", "")
		}
	}},
	{name: "empty", rig: nil},
	// Subscriptions as a studio running PipeWire and a DAW shows them: PipeWire's
	// RT-Event client reads every hardware MIDI port, Bitwig takes the JD-Xi
	// (time-stamped in real time) and, exclusively, the KeyStep (in ticks), and Midi
	// Through feeds Bitwig's first port too.
	{name: "seq-subscriptions", rig: func() *fixture.Rig {
		r := fixture.DemoRig()
		for _, c := range r.Cards {
			if len(c.MIDI) > 0 {
				r.Subscriptions = append(r.Subscriptions, fixture.Subscription{From: fixture.SeqPort{Client: c.ID}, To: fixture.SeqPort{Client: "PipeWire-RT-Event"}})
			}
		}
		r.Subscriptions = append(r.Subscriptions,
			fixture.Subscription{From: fixture.SeqPort{Client: "KeyStep32"}, To: fixture.SeqPort{Client: "Bitwig Studio", Port: 1}, Timestamp: "t", Exclusive: true},
			fixture.Subscription{From: fixture.SeqPort{Client: "Midi Through"}, To: fixture.SeqPort{Client: "Bitwig Studio"}})
		return r
	}},
	// Subscription lines gone wrong: a client the file no longer lists (it left while
	// the file was read), a port its client lacks, an unreadable address, a list before
	// any client.
	{name: "seq-garbage", rig: smallRig, mutate: func(t testing.TB, dir string) {
		replaceIn(t, dir, "proc/asound/seq/clients", "    Connecting To: 130:0[r:0]\n", "    Connecting To: 130:0[r:0], 131:0, 130:7, x:y\n")
		replaceIn(t, dir, "proc/asound/seq/clients", "Client   0 :", "    Connected From: 20:0\nClient   0 :")
	}},
	// PipeWire links beyond the demo's: Firefox plays through Easy Effects' virtual sink
	// (a node no device owns) whose monitor feeds the Scarlett; OBS records the JD-Xi's
	// audio (a paused link whose ends only its props give); Surge XT takes the JD-Xi's
	// MIDI through the Midi-Bridge; a failed link, and one naming a port the dump lacks.
	{name: "pw-links", rig: fixture.DemoRig, mutate: pwLinks},
}

// pwLinks rewrites the demo's pw-dump for the pw-links scenario.
func pwLinks(t testing.TB, dir string) {
	var objs []map[string]any
	if err := json.Unmarshal(get(t, dir, "pw-dump.json"), &objs); err != nil {
		t.Fatal(err)
	}
	port := func(key, value string) (id, node float64) {
		for _, o := range objs {
			info, _ := o["info"].(map[string]any)
			props, _ := info["props"].(map[string]any)
			if o["type"] == "PipeWire:Interface:Port" && props[key] == value {
				return o["id"].(float64), props["node.id"].(float64)
			}
		}
		t.Fatalf("no port with %s=%s", key, value)
		return 0, 0
	}
	ffL, ff := port("port.alias", "Firefox:output_FL")
	ffR, _ := port("port.alias", "Firefox:output_FR")
	scL, sc := port("port.alias", "Scarlett 2i2 USB:playback_FL")
	scR, _ := port("port.alias", "Scarlett 2i2 USB:playback_FR")
	jdA, jd := port("port.alias", "JD-Xi:capture_AUX0")
	jdMIDI, bridge := port("object.path", "alsa:seq:default:client_20:capture_0")
	var out []any
	for _, o := range objs {
		if o["type"] != "PipeWire:Interface:Link" {
			out = append(out, o)
		}
	}
	node := func(id int, props map[string]any) map[string]any {
		props["object.id"] = id
		return map[string]any{"id": id, "type": "PipeWire:Interface:Node", "version": 3, "info": map[string]any{"state": "running", "props": props}}
	}
	pport := func(id, nodeID int, dir, name string) map[string]any {
		return map[string]any{"id": id, "type": "PipeWire:Interface:Port", "version": 3, "info": map[string]any{"direction": dir,
			"props": map[string]any{"port.name": name, "node.id": nodeID, "object.id": id}}}
	}
	link := func(id int, on, op, in, ip float64, state string) map[string]any {
		return map[string]any{"id": id, "type": "PipeWire:Interface:Link", "version": 3, "info": map[string]any{
			"output-node-id": on, "output-port-id": op, "input-node-id": in, "input-port-id": ip, "state": state, "error": nil,
			"props": map[string]any{"link.output.node": on, "link.output.port": op, "link.input.node": in, "link.input.port": ip, "object.id": id}}}
	}
	propsOnly := link(1024, jd, jdA, 1010, 1011, "paused")
	info := propsOnly["info"].(map[string]any)
	for _, k := range []string{"output-node-id", "output-port-id", "input-node-id", "input-port-id"} {
		delete(info, k)
	}
	out = append(out,
		node(1000, map[string]any{"node.name": "easyeffects_sink", "node.description": "Easy Effects Sink", "media.class": "Audio/Sink", "node.virtual": true}),
		pport(1001, 1000, "input", "playback_FL"), pport(1002, 1000, "input", "playback_FR"),
		pport(1003, 1000, "output", "monitor_FL"), pport(1004, 1000, "output", "monitor_FR"),
		node(1010, map[string]any{"node.name": "OBS", "application.name": "OBS Studio", "media.class": "Stream/Input/Audio"}),
		pport(1011, 1010, "input", "input_FL"),
		node(1015, map[string]any{"node.name": "Surge XT", "application.name": "Surge XT", "media.class": "Midi/Sink"}),
		pport(1016, 1015, "input", "midi_in"),
		link(1020, ff, ffL, 1000, 1001, "active"), link(1021, ff, ffR, 1000, 1002, "active"),
		link(1022, 1000, 1003, sc, scL, "active"), link(1023, 1000, 1004, sc, scR, "active"),
		propsOnly,
		link(1025, bridge, jdMIDI, 1015, 1016, "active"),
		link(1026, ff, ffR, 1010, 1011, "error"),
		link(1027, ff, 9999, sc, scL, "active"))
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	put(t, dir, "pw-dump.json", string(b)+"\n")
}

func writeScenario(t testing.TB, s scenario, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if s.rig != nil {
		if err := s.rig().Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	if s.mutate != nil {
		s.mutate(t, dir)
	}
	put(t, dir, "README", "Generated by TestFixtures in sources/fixtures_test.go (scenario "+s.name+"); regenerate with\n  go test ./sources -run TestFixtures -update\n")
}

// TestFixtures keeps testdata/demo and testdata/scenarios/* equal to what the generator
// writes; -update rewrites them.
func TestFixtures(t *testing.T) {
	if !*update { // -update rewrites the testdata other tests read
		t.Parallel()
	}
	all := append([]scenario{{name: "demo", rig: fixture.DemoRig}}, scenarios...)
	for _, s := range all {
		t.Run(s.name, func(t *testing.T) {
			if !*update {
				t.Parallel()
			}
			committed := filepath.Join("testdata", "scenarios", s.name)
			if s.name == "demo" {
				committed = filepath.Join("testdata", "demo")
			}
			if *update {
				if err := os.RemoveAll(committed); err != nil {
					t.Fatal(err)
				}
				writeScenario(t, s, committed)
				return
			}
			fresh := t.TempDir()
			writeScenario(t, s, fresh)
			got, want := treeOf(t, committed), treeOf(t, fresh)
			if diff := diffTrees(got, want); diff != "" {
				t.Fatalf("%s differs from the generator (%s); run: go test ./sources -run TestFixtures -update", committed, diff)
			}
		})
	}
}

func treeOf(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			out[rel] = "link:" + l
			return err
		case d.IsDir():
			// Directories are implied by what they hold: git keeps no empty ones, so a
			// fresh clone lacks the generator's empty driver directories.
		default:
			b, err := os.ReadFile(p)
			out[rel] = "file:" + string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}

func diffTrees(got, want map[string]string) string {
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok1 := got[k]
		w, ok2 := want[k]
		switch {
		case !ok1:
			return "missing " + k
		case !ok2:
			return "extra " + k
		case g != w:
			return fmt.Sprintf("%s: %.60q, want %.60q", k, g, w)
		}
	}
	return ""
}

func put(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendTo(t testing.TB, dir, rel, content string) {
	t.Helper()
	put(t, dir, rel, string(get(t, dir, rel))+content)
}

func replaceIn(t testing.TB, dir, rel, old, new string) {
	t.Helper()
	b := string(get(t, dir, rel))
	if !strings.Contains(b, old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	put(t, dir, rel, strings.Replace(b, old, new, 1))
}

func rm(t testing.TB, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, dir, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

func link(t testing.TB, dir, rel, target string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
