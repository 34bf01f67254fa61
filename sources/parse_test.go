package sources

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestParseCards(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		want  []alsaCard
		notes int
	}{
		{name: "USB", in: " 1 [JDXi           ]: USB-Audio - JD-Xi\n                      Roland JD-Xi at usb-0000:00:14.0-3.2, high speed\n",
			want: []alsaCard{{Number: 1, ID: "JDXi", Driver: "USB-Audio", ShortName: "JD-Xi", LongName: "Roland JD-Xi at usb-0000:00:14.0-3.2, high speed",
				Controller: "0000:00:14.0", DevPath: "3.2", SpeedWord: "high"}}},
		{name: "PCIAndTwoDigitNumber", in: " 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xf7f10000 irq 32\n10 [nanoKONTROL2_1 ]: USB-Audio - nanoKONTROL2\n                      KORG INC. nanoKONTROL2 at usb-0000:00:14.0-2, full speed\n",
			want: []alsaCard{
				{Number: 0, ID: "PCH", Driver: "HDA-Intel", ShortName: "HDA Intel PCH", LongName: "HDA Intel PCH at 0xf7f10000 irq 32"},
				{Number: 10, ID: "nanoKONTROL2_1", Driver: "USB-Audio", ShortName: "nanoKONTROL2", LongName: "KORG INC. nanoKONTROL2 at usb-0000:00:14.0-2, full speed",
					Controller: "0000:00:14.0", DevPath: "2", SpeedWord: "full"}}},
		{name: "ARMBusNameWithDashes", in: " 2 [Device         ]: USB-Audio - USB Audio Device\n                      C-Media Electronics Inc. USB Audio Device at usb-xhci-hcd.0.auto-1.2, full speed\n",
			want: []alsaCard{{Number: 2, ID: "Device", Driver: "USB-Audio", ShortName: "USB Audio Device",
				LongName: "C-Media Electronics Inc. USB Audio Device at usb-xhci-hcd.0.auto-1.2, full speed", Controller: "xhci-hcd.0.auto", DevPath: "1.2", SpeedWord: "full"}}},
		{name: "CRLFAndTabs", in: " 3 [X              ]: USB-Audio - X\r\n\t\t      Acme X at usb-0000:00:14.0-4, high speed\r\n",
			want: []alsaCard{{Number: 3, ID: "X", Driver: "USB-Audio", ShortName: "X", LongName: "Acme X at usb-0000:00:14.0-4, high speed", Controller: "0000:00:14.0", DevPath: "4", SpeedWord: "high"}}},
		{name: "NoCards", in: "--- no soundcards ---\n"},
		{name: "Empty", in: ""},
		{name: "TruncatedAfterHeader", in: " 1 [JDXi           ]: USB-Audio - JD-Xi\n",
			want: []alsaCard{{Number: 1, ID: "JDXi", Driver: "USB-Audio", ShortName: "JD-Xi"}}},
		{name: "TruncatedMidLongName", in: " 1 [JDXi           ]: USB-Audio - JD-Xi\n                      Roland JD-Xi at usb-00",
			want: []alsaCard{{Number: 1, ID: "JDXi", Driver: "USB-Audio", ShortName: "JD-Xi", LongName: "Roland JD-Xi at usb-00"}}},
		{name: "Garbage", in: "hello\n 1 [JDXi  ]: no dash here\n\x00\xff\n999 [Big]: A - B\n",
			want: []alsaCard{{Number: 1, ID: "JDXi", ShortName: "no dash here"}}, notes: 3},
		{name: "NonUTF8", in: " 1 [J\xffXi          ]: USB-Audio - JD-Xi\xfe\n",
			want: []alsaCard{{Number: 1, ID: `J\xffXi`, Driver: "USB-Audio", ShortName: `JD-Xi\xfe`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cards, notes := parseCards([]byte(tt.in))
			var got []alsaCard
			for _, c := range cards {
				got = append(got, *c)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cards:\n%+v\nwant\n%+v", got, tt.want)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes=%q, want %d", notes, tt.notes)
			}
		})
	}
}

func TestStableNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Roland JD-Xi at usb-0000:00:14.0-3.2, high speed":                "Roland JD-Xi",
		"HDA Intel PCH at 0xf7f10000 irq 32":                              "HDA Intel PCH",
		"C-Media USB Audio Device at usb-xhci-hcd.0.auto-1.2, full speed": "C-Media USB Audio Device",
		"Loopback 1": "Loopback 1",
		"Focusrite Scarlett 2i2 USB at usb-0000:00:14.0-3.1, high speed": "Focusrite Scarlett 2i2 USB",
		"Acme Thing at Home at usb-0000:00:14.0-1, full speed":           "Acme Thing at Home",
		"Virtual MIDI Card 1": "Virtual MIDI Card 1",
		"ThinkPad Dock USB Audio at usb-0000:3a:00.0-1.4.3, high speed":           "ThinkPad Dock USB Audio",
		"Generic USB Audio at usb-0000:00:14.0-10.4, super speed":                 "Generic USB Audio",
		"SB Live! 5.1 at 0xe000, irq 11":                                          "SB Live! 5.1",
		"bcm2835 Headphones at irq 22":                                            "bcm2835 Headphones",
		"Intel HDMI/DP LPE Audio at 0x1000, irq 5":                                "Intel HDMI/DP LPE Audio",
		"Arturia Arturia BeatStep at usb-0000:00:14.0-4.1, full speed":            "Arturia Arturia BeatStep",
		"KORG INC. nanoKONTROL2 at usb-0000:00:14.0-2, full speed":                "KORG INC. nanoKONTROL2",
		"M-Audio Oxygen 49 at usb-0000:00:14.0-2, full speed":                     "M-Audio Oxygen 49",
		"Native Instruments Komplete Audio 6 at usb-0000:00:14.0-1.1, high speed": "Native Instruments Komplete Audio 6",
		"Behringer UMC204HD 192k at usb-0000:00:14.0-3, high speed":               "Behringer UMC204HD 192k",
		"Generic 0x12 at 0x1":                                                     "Generic 0x12",
		"":                                                                        "",
	} {
		if got := stableLongName(in); got != want {
			t.Errorf("stableLongName(%q)=%q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"nanoKONTROL2_1": "nanoKONTROL2", "nanoKONTROL2": "nanoKONTROL2", "USB_2": "USB", "A_B": "A_B", "_1": "_1", "X_": "X_"} {
		if got := stableCardID(in); got != want {
			t.Errorf("stableCardID(%q)=%q, want %q", in, got, want)
		}
	}
}

func TestParseSeqClients(t *testing.T) {
	t.Parallel()
	type client struct {
		Number int
		Name   string
		Kernel bool
		Card   int
		Ports  []string
	}
	tests := []struct {
		name  string
		in    string
		want  []client
		notes int
	}{
		{name: "OldKernel", in: "Client info\n  cur  clients : 3\n  peak clients : 3\n  max  clients : 192\n\nClient   0 : \"System\" [Kernel]\n  Port   0 : \"Timer\" (Rwe-)\n  Port   1 : \"Announce\" (R-e-)\nClient  20 : \"JD-Xi\" [Kernel]\n  Port   0 : \"JD-Xi JD-Xi MIDI 1\" (RWeX)\nClient 128 : \"TiMidity\" [User]\n  Port   0 : \"TiMidity port 0\" (-We-)\n  Output pool :\n    Pool size          : 500\n",
			want: []client{{0, "System", true, -1, []string{"Timer", "Announce"}}, {20, "JD-Xi", true, -1, []string{"JD-Xi JD-Xi MIDI 1"}}, {128, "TiMidity", false, -1, []string{"TiMidity port 0"}}}},
		{name: "Legacy", in: "Client  20 : \"JD-Xi\" [Kernel Legacy]\n  Port   0 : \"JD-Xi JD-Xi MIDI 1\" (RWeX) [In/Out]\n    Connecting To: 128:0\n",
			want: []client{{20, "JD-Xi", true, -1, []string{"JD-Xi JD-Xi MIDI 1"}}}},
		{name: "UMPAndCard", in: "Client  24 : \"MIDI2 Device\" [Kernel UMP MIDI2] card=2\n  UMP Endpoint: \"MIDI2 Device\"\n  UMP Block 0: \"Main\" [Active]\n    Groups: 1-1\n  Port   0 : \"MIDI 2.0\" (RWeX) [In/Out]\n  Port   1 : \"Group 1 (Main)\" (RWeX) [In/Out]\nClient 130 : \"Soft\" [User UMP MIDI1]\n",
			want: []client{{24, "MIDI2 Device", true, 2, []string{"MIDI 2.0", "Group 1 (Main)"}}, {130, "Soft", false, -1, nil}}},
		{name: "AconnectStyle", in: "Client  28 : \"nanoKONTROL2\" [type=kernel,card=3]\n  Port   0 : \"nanoKONTROL2 nanoKONTROL2 _ CTRL\" (RWeX)\n",
			want: []client{{28, "nanoKONTROL2", true, 3, []string{"nanoKONTROL2 nanoKONTROL2 _ CTRL"}}}},
		{name: "QuoteInName", in: "Client  20 : \"The \"Box\"\" [Kernel]\n",
			want: []client{{20, `The "Box"`, true, -1, nil}}},
		{name: "Garbage", in: "Client XX : broken\nClient 999 : \"x\" [Kernel]\n  Port   0 : \"orphan\" (RWeX)\n\xff\xfe\n",
			notes: 2},
		{name: "NonUTF8", in: "Client  20 : \"JD-Xi\xc3\" [Kernel]\n",
			want: []client{{20, `JD-Xi\xc3`, true, -1, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs, notes := parseSeqClients([]byte(tt.in))
			var got []client
			for _, c := range cs {
				var ports []string
				for _, p := range c.Ports {
					ports = append(ports, p.Name)
				}
				got = append(got, client{c.Number, c.Name, c.Kernel, c.Card, ports})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("clients:\n%+v\nwant\n%+v", got, tt.want)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes=%q, want %d", notes, tt.notes)
			}
		})
	}
}

func TestParsePWDump(t *testing.T) {
	t.Parallel()
	t.Run("Devices", func(t *testing.T) {
		in := `[
		  {"id": 0, "type": "PipeWire:Interface:Core", "info": {"props": {}}},
		  {"id": "48", "type": "PipeWire:Interface:Device", "info": {"props": {
		    "device.name": "alsa_card.usb-Roland_JD-Xi-00", "device.api": "alsa", "alsa.card": "1",
		    "device.bus-path": "pci-0000:00:14.0-usb-0:3.2:1.0", "device.vendor.id": 1410, "device.product.id": "0x01a9",
		    "sysfs.path": "/devices/pci0000:00/0000:00:14.0/usb3/3-3/3-3.2/3-3.2:1.0/sound/card1", "device.description": 7}}},
		  {"id": 49, "type": "PipeWire:Interface:Device", "info": {"props": {"device.name": "v4l2_device.x", "api.alsa.path": "hw:4,0"}}},
		  {"id": 50, "type": "PipeWire:Interface:Node", "info": {"props": {"device.id": "48", "node.name": "alsa_output.x"}}},
		  {"id": 51, "type": "PipeWire:Interface:Device", "info": null},
		  {"id": 52, "type": "PipeWire:Interface:Device", "info": {"props": {"device.api": "alsa"}}}
		]`
		r, notes, err := parsePWDump([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Devices) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "no device.name") {
			t.Fatalf("devices=%d notes=%q", len(r.Devices), notes)
		}
		d := *r.Devices[0]
		want := pwDevice{ID: 48, Name: "alsa_card.usb-Roland_JD-Xi-00", Description: "7", API: "alsa", Card: 1, USBPath: "3-3.2",
			BusPath: "pci-0000:00:14.0-usb-0:3.2:1.0", Controller: "0000:00:14.0", DevPath: "3.2", VID: "0582", PID: "01a9", Nodes: []string{"alsa_output.x"}}
		if !reflect.DeepEqual(d, want) {
			t.Errorf("device:\n%+v\nwant\n%+v", d, want)
		}
		if r.Devices[1].Card != 4 {
			t.Errorf("card from api.alsa.path hw:4,0 = %d", r.Devices[1].Card)
		}
	})
	t.Run("MidiBridgePorts", func(t *testing.T) {
		in := `[
		  {"id": 60, "type": "PipeWire:Interface:Port", "info": {"direction": "output", "props": {"object.path": "alsa:seq:default:client_20:capture_0", "port.name": "JD-Xi:(capture_0) JD-Xi JD-Xi MIDI 1", "port.alias": "JD-Xi:JD-Xi JD-Xi MIDI 1"}}},
		  {"id": 61, "type": "PipeWire:Interface:Port", "info": {"direction": "input", "props": {"object.path": "alsa:seq:default:client_20:playback_0", "port.name": "JD-Xi:(playback_0) JD-Xi JD-Xi MIDI 1"}}},
		  {"id": 62, "type": "PipeWire:Interface:Port", "info": {"props": {"object.path": "alsa:seq:default:client_28:capture_0", "port.name": "nanoKONTROL2:(capture_0) CTRL", "alsa.card": 3}}},
		  {"id": 63, "type": "PipeWire:Interface:Port", "info": {"props": {"object.path": "alsa:pcm:1:hw:1:playback", "port.name": "playback_FL"}}}
		]`
		r, _, err := parsePWDump([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var got []pwMIDIClient
		for _, c := range r.MIDI {
			got = append(got, *c)
		}
		want := []pwMIDIClient{{Client: 20, Name: "JD-Xi", Ports: []string{"JD-Xi JD-Xi MIDI 1"}, Card: -1}, {Client: 28, Name: "nanoKONTROL2", Ports: []string{"CTRL"}, Card: 3}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("midi:\n%+v\nwant\n%+v", got, want)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		for in, want := range map[string]string{
			"":                       "pw-dump output is empty",
			`[{"id": 1, "type": "Pi`: "is it truncated?",
			`{"id": 1}`:              "not a JSON array of objects",
			`not json`:               "not valid JSON at byte 2",
		} {
			if _, _, err := parsePWDump([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("parsePWDump(%q) error %v, want %q", in, err, want)
			}
		}
	})
	t.Run("Coerce", func(t *testing.T) {
		for in, want := range map[string]string{`"a"`: "a", `12`: "12", `1.5`: "1.5", `true`: "true", `null`: "", `{}`: "", `[1]`: "", `"\u0000x"`: `\x00x`, ``: "",
			// Bytes that are not UTF-8 (an application's name as PipeWire passed it on) are
			// escaped, not replaced; escapes and valid text are read as JSON reads them.
			"\"Fire\xfffox\"": `Fire\xfffox`, `"a\"b\\c\/d"`: `a"b\c/d`, `"\u00e9t\u00e9 \ud83c\udfb9"`: "été 🎹", "\"\xc3\"": `\xc3`} {
			if got := coerceString(json.RawMessage(in)); got != want {
				t.Errorf("coerceString(%s)=%q, want %q", in, got, want)
			}
		}
		for in, want := range map[string]int{`1`: 1, `"2"`: 2, `" 3 "`: 3, `4.0`: 4} {
			if got, ok := coerceInt(json.RawMessage(in)); !ok || got != want {
				t.Errorf("coerceInt(%s)=%d,%v, want %d", in, got, ok, want)
			}
		}
		for _, in := range []string{`"x"`, `4.5`, `null`, `{}`, `1e30`, ``} {
			if _, ok := coerceInt(json.RawMessage(in)); ok {
				t.Errorf("coerceInt(%s) ok", in)
			}
		}
		for in, want := range map[string]string{"0x0582": "0582", "0582": "0582", "1410": "1410", "5": "0005", "0X01A9": "01a9", "0x10000": "", "": "", "zz": "", "x": ""} {
			if got := hexID(in); got != want {
				t.Errorf("hexID(%q)=%q, want %q", in, got, want)
			}
		}
	})
}

func TestParseUSBAttrs(t *testing.T) {
	t.Parallel()
	base := func() map[string][]byte {
		return map[string][]byte{"idVendor": []byte("0582\n"), "idProduct": []byte("01A9\n"), "busnum": []byte("3\n"), "devnum": []byte("7\n"),
			"devpath": []byte("3.2\n"), "speed": []byte("480\n"), "bDeviceClass": []byte("ff\n"), "product": []byte("JD-Xi\n"), "manufacturer": []byte("Roland\n")}
	}
	with := func(k, v string) map[string][]byte {
		m := base()
		if v == "-" {
			delete(m, k)
		} else {
			m[k] = []byte(v)
		}
		return m
	}
	t.Run("OK", func(t *testing.T) {
		d, err := parseUSBAttrs("3-3.2", base())
		if err != nil {
			t.Fatal(err)
		}
		want := usbDevice{Path: "3-3.2", Bus: 3, Devnum: 7, DevPath: "3.2", VID: "0582", PID: "01a9", Manufacturer: "Roland", Product: "JD-Xi", Speed: "480", Class: "ff"}
		if !reflect.DeepEqual(*d, want) {
			t.Errorf("got %+v\nwant %+v", *d, want)
		}
	})
	t.Run("Optional", func(t *testing.T) {
		m := base()
		for _, k := range []string{"product", "manufacturer", "busnum", "devnum", "devpath", "speed", "bDeviceClass"} {
			delete(m, k)
		}
		d, err := parseUSBAttrs("3-3.2", m)
		if err != nil || d.Product != "" || d.Bus != 3 || d.DevPath != "3.2" {
			t.Fatalf("got %+v, %v", d, err)
		}
	})
	t.Run("Text", func(t *testing.T) {
		d, err := parseUSBAttrs("3-3.2", with("product", "  Pad\xff ded  \nsecond line"))
		if err != nil || d.Product != `Pad\xff ded` {
			t.Fatalf("product %q, %v", d.Product, err)
		}
		d, err = parseUSBAttrs("3-3.2", with("bDeviceClass", "09\n"))
		if err != nil || !d.Infra {
			t.Fatalf("hub: %+v, %v", d, err)
		}
	})
	for _, tt := range []struct {
		name, path, key, value, want string
	}{
		{"NoVendor", "3-3.2", "idVendor", "-", "no idVendor attribute"},
		{"NoProduct", "3-3.2", "idProduct", "-", "no idProduct attribute"},
		{"BadVendor", "3-3.2", "idVendor", "05820\n", `idVendor "05820" is not 4 hex digits`},
		{"EmptyVendor", "3-3.2", "idVendor", "", `idVendor "" is not 4 hex digits`},
		{"BadBus", "3-3.2", "busnum", "x\n", `busnum "x" is not a bus number`},
		{"OtherBus", "3-3.2", "busnum", "4\n", "busnum 4 disagrees with the entry name 3-3.2"},
		{"BadDevnum", "3-3.2", "devnum", "0\n", `devnum "0" is not a device number`},
		{"OtherDevpath", "3-3.2", "devpath", "3.3\n", `devpath "3.3" disagrees with the entry name 3-3.2`},
		{"BadClass", "3-3.2", "bDeviceClass", "hub\n", `bDeviceClass "hub" is not a hex byte`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseUSBAttrs(tt.path, with(tt.key, tt.value))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err=%v, want %q", err, tt.want)
			}
		})
	}
}

func TestRefLess(t *testing.T) {
	t.Parallel()
	refs := []string{"usb:3-10", "alsa:card:PCH", "usb:3-2", "usb:3-2.1", "robot:scout", "usb:10-1", "pipewire:x"}
	sort.SliceStable(refs, func(i, j int) bool { return refLess(refs[i], refs[j]) })
	want := []string{"alsa:card:PCH", "pipewire:x", "robot:scout", "usb:3-2", "usb:3-2.1", "usb:3-10", "usb:10-1"}
	if !reflect.DeepEqual(refs, want) {
		t.Fatalf("order %q, want %q", refs, want)
	}
}

// TestParseSeqSubscriptions reads the subscription lines under each port the way
// sound/core/seq/seq_clientmgr.c prints them: "Connecting To:" (this port → there) and
// "Connected From:" (there → this port), a ", "-separated list of client:port, each
// with "[r:Q]" / "[t:Q]" when time-stamped on queue Q and "[ex]" when exclusive.
func TestParseSeqSubscriptions(t *testing.T) {
	t.Parallel()
	in := "Client  20 : \"JD-Xi\" [Kernel Legacy]\n" +
		"  Port   0 : \"JD-Xi JD-Xi MIDI 1\" (RWeX) [In/Out]\n" +
		"    Connecting To: 128:0, 130:0[r:0], 131:1[t:2][ex]\n" +
		"    Connected From: 14:0\n" +
		"Client 130 : \"Bitwig Studio\" [User Legacy]\n" +
		"  Port   0 : \"MIDI In 1\" (-We-) [In]\n" +
		"    Connected From: 0:1, 20:0[real:0]\n" +
		"    Connecting To: banana, 999:0, 20:0\n" +
		"    Connected From: \n" +
		"  Output pool :\n    Pool size          : 500\n"
	cs, notes := parseSeqClients([]byte(in))
	if len(cs) != 2 {
		t.Fatalf("clients %+v", cs)
	}
	p := cs[0].Ports[0]
	wantTo := []seqSub{{Client: 128}, {Client: 130, Timestamp: "real"}, {Client: 131, Port: 1, Timestamp: "tick", Queue: 2, Exclusive: true}}
	if !reflect.DeepEqual(p.To, wantTo) || !reflect.DeepEqual(p.From, []seqSub{{Client: 14}}) {
		t.Errorf("JD-Xi port: to %+v from %+v", p.To, p.From)
	}
	b := cs[1].Ports[0]
	if !reflect.DeepEqual(b.From, []seqSub{{Client: 0, Port: 1}, {Client: 20, Timestamp: "real"}}) || !reflect.DeepEqual(b.To, []seqSub{{Client: 20}}) {
		t.Errorf("Bitwig port: to %+v from %+v", b.To, b.From)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `unreadable subscriber "banana"`) {
		t.Errorf("notes %q", notes)
	}
	// A subscription line before any port is noted, not pinned on a stranger.
	_, notes = parseSeqClients([]byte("Client  20 : \"JD-Xi\" [Kernel]\n    Connecting To: 128:0\n"))
	if len(notes) != 1 || !strings.Contains(notes[0], "Connecting To outside a port") {
		t.Errorf("orphan line notes %q", notes)
	}
}

// TestParsePWLinks reads Link objects: the ends from info (output-node-id,
// output-port-id, input-node-id, input-port-id) or, where a dump lacks them, from props
// (link.output.node …), numbers printed as strings coerced; a link without its ends is
// noted and skipped. Every Port and Node is kept for the links to name.
func TestParsePWLinks(t *testing.T) {
	t.Parallel()
	in := `[
	  {"id": 40, "type": "PipeWire:Interface:Node", "info": {"props": {"node.name": "Firefox", "application.name": "Firefox", "media.class": "Stream/Output/Audio"}}},
	  {"id": 41, "type": "PipeWire:Interface:Port", "info": {"direction": "output", "props": {"port.name": "output_FL", "node.id": 40}}},
	  {"id": 42, "type": "PipeWire:Interface:Port", "info": {"props": {"port.name": "playback_FL", "node.id": "50", "port.direction": "in"}}},
	  {"id": 50, "type": "PipeWire:Interface:Node", "info": {"props": {"node.name": "alsa_output.x", "device.id": 48, "media.class": "Audio/Sink"}}},
	  {"id": 60, "type": "PipeWire:Interface:Link", "info": {"output-node-id": 40, "output-port-id": 41, "input-node-id": 50, "input-port-id": 42, "state": "active"}},
	  {"id": 61, "type": "PipeWire:Interface:Link", "info": {"state": "paused", "props": {"link.output.node": "40", "link.output.port": 41, "link.input.node": 50, "link.input.port": 42}}},
	  {"id": 62, "type": "PipeWire:Interface:Link", "info": {"output-node-id": 40, "state": "init"}}
	]`
	r, notes, err := parsePWDump([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []pwLink{{ID: 60, OutNode: 40, OutPort: 41, InNode: 50, InPort: 42, State: "active"}, {ID: 61, OutNode: 40, OutPort: 41, InNode: 50, InPort: 42, State: "paused"}}
	var got []pwLink
	for _, l := range r.Links {
		got = append(got, *l)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links %+v, want %+v", got, want)
	}
	if len(notes) != 1 || notes[0] != "pw-dump link 62: no output-port-id; skipped" {
		t.Errorf("notes %q", notes)
	}
	if p := r.Ports[42]; p == nil || p.Node != 50 || p.Direction != "input" || p.Name != "playback_FL" || p.SeqClient != -1 {
		t.Errorf("port 42: %+v", p)
	}
	if n := r.Nodes[40]; n == nil || n.Device != -1 || n.App != "Firefox" || n.MediaClass != "Stream/Output/Audio" {
		t.Errorf("node 40: %+v", n)
	}
	if n := r.Nodes[50]; n == nil || n.Device != 48 {
		t.Errorf("node 50: %+v", n)
	}
}
