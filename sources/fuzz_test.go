package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// The fuzzers' seed corpus lives in testdata/fuzz/<Fuzzer>/ (written from the scenario
// trees by TestFuzzCorpus -update, plus inputs fuzzing found interesting). Run one with
//
//	go test ./sources -run '^$' -fuzz FuzzParseCards -fuzztime 20s

// mergedOK merges the readings, reads the observed relations out of them, and checks
// the snapshot's invariants (checkInvariants: relations join devices and clients of the
// snapshot, ids, ports and attrs within bounds).
func mergedOK(t *testing.T, usb []*usbDevice, alsa *alsaReading, pw *pwReading) {
	t.Helper()
	devs, _, idx := mergeReadings(usb, usb != nil, alsa, pw, nil)
	rels, clients, _ := observe(usb, alsa, pw, idx)
	checkInvariants(t, &graph.Snapshot{Devices: devs, Relations: rels, Clients: clients})
}

func validText(t *testing.T, what string, ss ...string) {
	t.Helper()
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			t.Fatalf("%s: %q is not clean UTF-8", what, s)
		}
	}
}

func FuzzParseCards(f *testing.F) {
	f.Add([]byte(" 1 [JDXi           ]: USB-Audio - JD-Xi\n                      Roland JD-Xi at usb-0000:00:14.0-3.2, high speed\n"))
	f.Add([]byte("--- no soundcards ---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cards, _ := parseCards(data)
		for _, c := range cards {
			validText(t, "card", c.ID, c.Driver, c.ShortName, c.LongName, c.Controller, c.DevPath, c.SpeedWord)
			if c.Number < 0 || c.Number > 255 {
				t.Fatalf("card number %d", c.Number)
			}
			if c.DevPath != "" && !usbPathRe.MatchString("1-"+c.DevPath) {
				t.Fatalf("devpath %q", c.DevPath)
			}
			c.Bus, c.Devnum, c.VID, c.PID = 3, 7, "0582", "01a9" // as if usbbus and usbid said so
		}
		mergedOK(t, []*usbDevice{{Path: "3-3.2", Bus: 3, Devnum: 7, DevPath: "3.2", VID: "0582", PID: "01a9"}}, &alsaReading{Cards: cards}, nil)
	})
}

func FuzzParseSeqClients(f *testing.F) {
	f.Add([]byte("Client  20 : \"JD-Xi\" [Kernel Legacy]\n  Port   0 : \"JD-Xi JD-Xi MIDI 1\" (RWeX) [In/Out]\n"))
	f.Add([]byte("Client  24 : \"X\" [Kernel UMP MIDI2] card=2\n  UMP Endpoint: \"X\"\n"))
	f.Add([]byte("Client  20 : \"JD-Xi\" [Kernel Legacy]\n  Port   0 : \"JD-Xi JD-Xi MIDI 1\" (RWeX) [In/Out]\n    Connecting To: 130:0[r:0], 20:0, 131:1[t:2][ex]\n" +
		"Client 130 : \"Bitwig Studio\" [User Legacy]\n  Port   0 : \"MIDI In 1\" (-We-) [In]\n    Connected From: 0:1, 20:0[r:0]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		clients, _ := parseSeqClients(data)
		for _, c := range clients {
			validText(t, "client", c.Name)
			if c.Number < 0 || c.Number > 255 {
				t.Fatalf("client number %d", c.Number)
			}
			for _, p := range c.Ports {
				validText(t, "port", p.Name)
				for _, s := range append(append([]seqSub(nil), p.To...), p.From...) {
					if s.Client < 0 || s.Client > 255 || s.Port < 0 || s.Port > 255 {
						t.Fatalf("subscriber %+v", s)
					}
				}
			}
		}
		cards := []*alsaCard{{Number: 1, ID: "JDXi", ShortName: "JD-Xi", MIDI: []string{"JD-Xi"}}, {Number: 2, ID: "X", ShortName: "X"}}
		mergedOK(t, nil, &alsaReading{Cards: cards, Clients: clients}, nil)
	})
}

func FuzzParsePWDump(f *testing.F) {
	f.Add([]byte(`[{"id":48,"type":"PipeWire:Interface:Device","info":{"props":{"device.name":"alsa_card.usb-Roland_JD-Xi-00","api.alsa.card":1}}}]`))
	f.Add([]byte(`[{"id":60,"type":"PipeWire:Interface:Port","info":{"props":{"object.path":"alsa:seq:default:client_20:capture_0","port.alias":"JD-Xi:JD-Xi MIDI 1"}}}]`))
	f.Add([]byte(`[{"id":40,"type":"PipeWire:Interface:Node","info":{"props":{"node.name":"Firefox","media.class":"Stream/Output/Audio"}}},` +
		`{"id":41,"type":"PipeWire:Interface:Port","info":{"direction":"output","props":{"port.name":"output_FL","node.id":40}}},` +
		`{"id":50,"type":"PipeWire:Interface:Node","info":{"props":{"node.name":"alsa_output.x","device.id":48}}},` +
		`{"id":48,"type":"PipeWire:Interface:Device","info":{"props":{"device.name":"alsa_card.usb-Roland_JD-Xi-00","api.alsa.card":1}}},` +
		`{"id":42,"type":"PipeWire:Interface:Port","info":{"direction":"input","props":{"port.name":"playback_FL","node.id":50}}},` +
		`{"id":60,"type":"PipeWire:Interface:Link","info":{"output-node-id":40,"output-port-id":41,"input-node-id":50,"input-port-id":42,"state":"active"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := parsePWDump(data)
		if err != nil {
			if r != nil {
				t.Fatal("a reading with an error")
			}
			return
		}
		for _, d := range r.Devices {
			validText(t, "pw device", d.Name, d.Description, d.Nick, d.CardName, d.USBPath, d.BusPath, d.VID, d.PID, d.Serial)
			validText(t, "pw nodes", d.Nodes...)
		}
		for _, c := range r.MIDI {
			validText(t, "pw midi", c.Name)
			validText(t, "pw midi ports", c.Ports...)
		}
		for _, n := range r.Nodes {
			validText(t, "pw node", n.Name, n.Description, n.App, n.MediaClass)
		}
		for _, p := range r.Ports {
			validText(t, "pw port", p.Name, p.Alias, p.Direction)
		}
		mergedOK(t, nil, nil, r)
		cards := []*alsaCard{{Number: 1, ID: "JDXi", ShortName: "JD-Xi"}}
		mergedOK(t, []*usbDevice{{Path: "3-3.2", Bus: 3, Devnum: 7, DevPath: "3.2", VID: "0582", PID: "01a9"}},
			&alsaReading{Cards: cards, Clients: []*seqClient{{Number: 20, Name: "JD-Xi", Kernel: true, Card: -1}}}, r)
	})
}

// FuzzParseUSBAttrs fuzzes the sysfs attribute contents of one device entry.
func FuzzParseUSBAttrs(f *testing.F) {
	f.Add("3-3.2", []byte("0582\n"), []byte("01a9\n"), []byte(""), []byte("JD-Xi\n"), []byte("3\n"), []byte("7\n"), []byte("3.2\n"), []byte("ff\n"))
	f.Add("3-1", []byte("0944\n"), []byte("0117\n"), []byte("A50285BI\n"), []byte{}, []byte("3\n"), []byte("2\n"), []byte("1\n"), []byte("09\n"))
	f.Fuzz(func(t *testing.T, name string, vid, pid, serial, product, busnum, devnum, devpath, class []byte) {
		if !usbPathRe.MatchString(name) && !usbRootRe.MatchString(name) {
			return // readUSB skips such entries before reading attributes
		}
		attrs := map[string][]byte{"idVendor": vid, "idProduct": pid, "busnum": busnum, "devnum": devnum, "devpath": devpath, "bDeviceClass": class}
		if len(serial) > 0 {
			attrs["serial"] = serial
		}
		if len(product) > 0 {
			attrs["product"] = product
		}
		d, err := parseUSBAttrs(name, attrs)
		if err != nil {
			validText(t, "error", err.Error())
			return
		}
		validText(t, "usb", d.VID, d.PID, d.Serial, d.Product, d.Manufacturer, d.Speed, d.Class)
		if !hex4Re.MatchString(d.VID) || strings.ToLower(d.VID) != d.VID {
			t.Fatalf("vid %q", d.VID)
		}
		if d.Root != usbRootRe.MatchString(name) || (d.Root && !d.Infra) {
			t.Fatalf("root hub %s read as %+v", name, d)
		}
		// The device and a root hub it may hang off.
		mergedOK(t, []*usbDevice{{Path: "usb3", Bus: 3, Root: true, Infra: true, VID: "1d6b", PID: "0002", Controller: "0000:00:14.0"}, d}, nil, nil)
	})
}

// TestFuzzCorpus keeps the committed seed corpus: every cards file, clients file and
// pw-dump of the scenario trees is a seed. -update rewrites the seeds it owns (files
// named seed-*); inputs fuzzing added are left alone.
func TestFuzzCorpus(t *testing.T) {
	if !*update { // -update rewrites the testdata other tests read
		t.Parallel()
	}
	seeds := map[string]map[string][]byte{"FuzzParseCards": {}, "FuzzParseSeqClients": {}, "FuzzParsePWDump": {}}
	dirs, _ := filepath.Glob("testdata/scenarios/*")
	dirs = append(dirs, "testdata/demo")
	seen := map[string]bool{}
	for _, d := range dirs {
		name := filepath.Base(d)
		for fuzzer, rel := range map[string]string{"FuzzParseCards": "proc/asound/cards", "FuzzParseSeqClients": "proc/asound/seq/clients", "FuzzParsePWDump": "pw-dump.json"} {
			if b, err := os.ReadFile(filepath.Join(d, rel)); err == nil && !seen[fuzzer+string(b)] {
				seen[fuzzer+string(b)] = true
				seeds[fuzzer]["seed-"+name] = []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
			}
		}
	}
	// One device entry's attributes, from the scenarios where they are odd.
	seeds["FuzzParseUSBAttrs"] = map[string][]byte{}
	for _, sc := range [][2]string{{"demo", "3-3.2"}, {"demo", "3-6"}, {"demo", "3-4"}, {"demo", "usb3"}, {"scenarios/garbage", "3-1"}, {"scenarios/garbage", "3-6"}, {"scenarios/non-utf8", "3-3.2"}, {"scenarios/missing-files", "3-3.2"}} {
		dir := filepath.Join("testdata", sc[0], dev(sc[1]))
		entry := fmt.Sprintf("go test fuzz v1\nstring(%q)\n", sc[1])
		for _, a := range []string{"idVendor", "idProduct", "serial", "product", "busnum", "devnum", "devpath", "bDeviceClass"} {
			b, _ := os.ReadFile(filepath.Join(dir, a))
			entry += fmt.Sprintf("[]byte(%q)\n", b)
		}
		seeds["FuzzParseUSBAttrs"]["seed-"+filepath.Base(sc[0])+"-"+sc[1]] = []byte(entry)
	}
	for fuzzer, files := range seeds {
		for name, b := range files {
			p := filepath.Join("testdata", "fuzz", fuzzer, name)
			want := string(b)
			if *update {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != want {
				t.Errorf("%s is missing or stale; run: go test ./sources -run TestFuzzCorpus -update", p)
			}
		}
	}
}
