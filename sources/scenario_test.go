package sources

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// summary renders a snapshot as one line per source and per device.
func summary(s *graph.Snapshot) []string {
	var out []string
	for _, st := range s.Sources {
		ok := "ok"
		if !st.OK {
			ok = "FAIL"
		}
		out = append(out, fmt.Sprintf("source %s %s %d", st.Name, ok, st.Devices))
	}
	for _, d := range s.Devices {
		infra := ""
		if d.Infra {
			infra = " infra"
		}
		out = append(out, fmt.Sprintf("%s %s [%s] %q%s", d.Ref, d.Key, strings.Join(d.Sources, ","), d.Name, infra))
	}
	return out
}

func scanDir(t testing.TB, dir string) *graph.Snapshot {
	t.Helper()
	snap, err := Demo(dir).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkInvariants holds for every snapshot, however broken the input: hardware text is
// valid UTF-8, every fingerprint is in canonical form, keys are unique, and no
// fingerprint carries a per-boot number; every observed relation joins a device or
// client of the snapshot, is observed, has its tuple's id and ports within the limit;
// client ids are unique and well formed.
func checkInvariants(t testing.TB, snap *graph.Snapshot) {
	t.Helper()
	defer checkRelations(t, snap)
	keys := map[string]bool{}
	for _, d := range snap.Devices {
		if keys[d.Key] {
			t.Errorf("key %q used twice", d.Key)
		}
		keys[d.Key] = true
		if d.Key == "" || d.Ref == "" || d.Source == "" || len(d.Sources) == 0 || d.Sources[0] != d.Source {
			t.Errorf("device %+v: key, ref, source and sources must be set, source first", d)
		}
		if !graph.IsRef(d.Ref) {
			t.Errorf("ref %q is not a device ref", d.Ref)
		}
		for _, s := range append([]string{d.Name, d.Key, d.Ref}, attrValues(d)...) {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Errorf("device %s: text %q is not clean UTF-8", d.Ref, s)
			}
		}
		for _, f := range d.Fingerprints {
			n, err := graph.NormalizeFingerprint(f.Kind, f.Value)
			if err != nil || n != f {
				t.Errorf("device %s: fingerprint %s is not canonical (%v)", d.Ref, f, err)
			}
		}
	}
}

func checkRelations(t testing.TB, snap *graph.Snapshot) {
	t.Helper()
	nodes := map[string]bool{}
	for _, d := range snap.Devices {
		nodes[graph.DeviceID(d.Key)] = true
	}
	for _, c := range snap.Clients {
		if nodes[c.ID] {
			t.Errorf("client id %q used twice", c.ID)
		}
		nodes[c.ID] = true
		want := graph.ClientID(c.Source, c.Name, 1)
		if c.ID != want && !strings.HasPrefix(c.ID, want+"#") || (c.Source != SourceALSA && c.Source != SourcePipeWire) {
			t.Errorf("client %+v: id is not client:<source>:<name>[#n]", c)
		}
		for _, s := range append([]string{c.Name}, attrValues(&graph.ObservedDevice{Attrs: c.Attrs})...) {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Errorf("client %s: text %q is not clean UTF-8", c.ID, s)
			}
		}
	}
	ids := map[string]bool{}
	for _, r := range snap.Relations {
		if !nodes[r.From] || !nodes[r.To] || r.From == r.To {
			t.Errorf("relation %s %s → %s: an end is no device or client of the snapshot", r.Type, r.From, r.To)
		}
		if r.ID != graph.ObservedRelationID(r.Type, r.From, r.FromPort, r.To, r.ToPort) || ids[r.ID] || !r.Observed {
			t.Errorf("relation %+v: id, uniqueness or observed flag wrong", r)
		}
		ids[r.ID] = true
		want := map[string]string{graph.RelVia: SourceUSB, graph.RelSubscribed: SourceALSA, graph.RelLinked: SourcePipeWire}[r.Type]
		if want == "" || r.Source != want {
			t.Errorf("relation %+v: type %q from source %q", r, r.Type, r.Source)
		}
		for _, s := range []string{r.FromPort, r.ToPort} {
			if len(s) > graph.MaxPort || !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
				t.Errorf("relation %s: port %q too long or not clean UTF-8", r.ID, s)
			}
		}
		size := 0
		for k, v := range r.Attrs {
			size += len(k) + len(v)
			if len(k) > graph.MaxRelationAttrKey || len(v) > graph.MaxRelationAttrVal || !utf8.ValidString(k+v) || strings.ContainsRune(k+v, 0) {
				t.Errorf("relation %s: attr %q=%q out of bounds", r.ID, k, v)
			}
		}
		if len(r.Attrs) > graph.MaxRelationAttrs || size > graph.MaxRelationAttrSize {
			t.Errorf("relation %s: attrs %v out of bounds", r.ID, r.Attrs)
		}
	}
}

func attrValues(d *graph.ObservedDevice) []string {
	var out []string
	for k, v := range d.Attrs {
		out = append(out, k, v)
	}
	return out
}

// The root hubs every scenario's sysfs has (the controller's two buses).
const (
	root3 = `usb:usb3 usb-root:0000:00:14.0:3 [usb] "Linux Foundation 2.0 root hub" infra`
	root4 = `usb:usb4 usb-root:0000:00:14.0:4 [usb] "Linux Foundation 3.0 root hub" infra`
)

func TestScenarios(t *testing.T) {
	t.Parallel()
	smallOK := []string{
		"source usb ok 6", "source alsa ok 2", "source pipewire ok 2",
		root3, root4,
		`usb:3-1 path:0944:0117:3-1 [usb,alsa,pipewire] "nanoKONTROL2"`,
		`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
		`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa,pipewire] "JD-Xi"`,
		`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
	}
	smallRels := []string{
		"subscribed usb:3-3.2 [JD-Xi JD-Xi MIDI 1] → client:alsa:Bitwig Studio [MIDI In 1]",
		"via usb:3-1 → usb:usb3 [port 1]",
		"via usb:3-3 → usb:usb3 [port 3]",
		"via usb:3-3.2 → usb:3-3 [port 2]",
		"via usb:3-6 → usb:usb3 [port 6]",
	}
	tests := []struct {
		name string
		want []string          // the summary; nil: not checked
		errs map[string]string // source → substring of its Error ("" source: none may have one)
		// rels are the relations (relLines) whose line starts with relType ("": all);
		// nil: not checked.
		rels    []string
		relType string
	}{
		{name: "old-kernel", want: smallOK, rels: smallRels},
		// UMP port 0 ("MIDI 2.0") is the one PipeWire subscribed to.
		{name: "newer-kernel", want: smallOK, rels: []string{"subscribed usb:3-3.2 [MIDI 2.0] → client:alsa:PipeWire-System [input]"}, relType: "subscribed"},
		{name: "seq-subscriptions", rels: []string{
			"subscribed client:alsa:Midi Through [Midi Through Port-0] → client:alsa:Bitwig Studio [MIDI In 1]",
			"subscribed usb:3-1 [nanoKONTROL2 nanoKONTROL2 _ CTRL] → client:alsa:PipeWire-RT-Event [input]",
			"subscribed usb:3-2 [nanoKONTROL2 nanoKONTROL2 _ CTRL] → client:alsa:PipeWire-RT-Event [input]",
			"subscribed usb:3-3.2 [JD-Xi JD-Xi MIDI 1] → client:alsa:Bitwig Studio [MIDI In 1]",
			"subscribed usb:3-3.2 [JD-Xi JD-Xi MIDI 1] → client:alsa:PipeWire-RT-Event [input]",
			"subscribed usb:3-4.1 [Arturia BeatStep Arturia BeatStep MIDI 1] → client:alsa:PipeWire-RT-Event [input]",
			"subscribed usb:3-4.4.1 [Arturia KeyStep 32 MIDI 1] → client:alsa:Bitwig Studio [MIDI In 2]",
			"subscribed usb:3-4.4.1 [Arturia KeyStep 32 MIDI 1] → client:alsa:PipeWire-RT-Event [input]",
		}, relType: "subscribed"},
		{name: "seq-garbage", want: smallOK, rels: smallRels, errs: map[string]string{
			"alsa": `seq/clients line 6: Connected From outside a port; ignored; seq/clients line 14: unreadable subscriber "x:y"; ignored; ` +
				"seq/clients: subscription 20:0 → 131:0 names a client the file does not list; skipped; " +
				"seq/clients: subscription 20:0 → 130:7 names a port the file does not list; skipped",
		}},
		{name: "pw-links", rels: []string{
			"linked client:pipewire:Easy Effects Sink [monitor_FL] → usb:3-3.1 [playback_FL]",
			"linked client:pipewire:Easy Effects Sink [monitor_FR] → usb:3-3.1 [playback_FR]",
			"linked client:pipewire:Firefox [output_FL] → client:pipewire:Easy Effects Sink [playback_FL]",
			"linked client:pipewire:Firefox [output_FR] → client:pipewire:Easy Effects Sink [playback_FR]",
			"linked usb:3-3.2 [JD-Xi JD-Xi MIDI 1] → client:pipewire:Surge XT [midi_in]",
			"linked usb:3-3.2 [capture_AUX0] → client:pipewire:OBS Studio [input_FL]",
		}, relType: "linked", errs: map[string]string{"pipewire": "pw-dump link 1027: port 9999 → 33 not in the dump; skipped"}},
		{name: "symlink-loop", want: smallOK, errs: map[string]string{
			"usb": "skipped 3-5: symlink points at another symlink",
		}},
		{name: "garbage", want: []string{
			"source usb ok 4", "source alsa ok 1", "source pipewire ok 1",
			root3, root4,
			// 3-1's sysfs entry is garbage and its usbbus too: ALSA and PipeWire still see
			// it on USB, usb does not, so it is left out rather than keyed a second way.
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa,pipewire] "JD-Xi"`,
		}, errs: map[string]string{
			"usb":  `skipped 3-1: idVendor "zz\x00\xff" is not 4 hex digits; skipped 3-6: busnum "banana" is not a bus number`,
			"alsa": `cards line 5: unreadable "this is not a card line"`,
		}},
		{name: "truncated-cards", want: []string{
			"source usb ok 6", "source alsa ok 1", "source pipewire ok 1",
			root3, root4,
			`usb:3-1 path:0944:0117:3-1 [usb] "nanoKONTROL2"`,
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa,pipewire] "JD-Xi"`,
			`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
		}, errs: map[string]string{"alsa": "client 28 (nanoKONTROL2): its card 3 is not in the cards file"}},
		{name: "truncated-pwdump", want: []string{
			"source usb ok 6", "source alsa ok 2", "source pipewire FAIL 0",
			root3, root4,
			`usb:3-1 path:0944:0117:3-1 [usb,alsa] "nanoKONTROL2"`,
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa] "JD-Xi"`,
			`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
		}, errs: map[string]string{"pipewire": "pipewire: pw-dump output is not valid JSON at byte"}},
		{name: "half-removed", want: []string{
			"source usb ok 4", "source alsa ok 1", "source pipewire ok 1",
			root3, root4,
			// 3-1 is half torn down in sysfs: ALSA and PipeWire still list its card, which
			// is left out until usb shows it again.
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa,pipewire] "JD-Xi"`,
		}, errs: map[string]string{
			"usb":  "skipped 3-1: no idVendor attribute; skipped 3-6: link target no such file or directory",
			"alsa": "card 3 (nanoKONTROL2) at port 1: not in the usb scan (unplugging, or not yet in sysfs); left out until usb shows it",
		}},
		{name: "missing-files", want: []string{
			"source usb ok 6", "source alsa ok 2", "source pipewire FAIL 0",
			root3, root4,
			`usb:3-1 path:0944:0117:3-1 [usb,alsa] "nanoKONTROL2"`,
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			// No usbbus, usbid, devnum or devpath: the long name's devpath still finds it.
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa] "JD-Xi"`,
			`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
		}, errs: map[string]string{"pipewire": "pw-dump.json: no such file or directory"}},
		{name: "non-utf8", want: []string{
			"source usb ok 6", "source alsa ok 2", "source pipewire ok 2",
			root3, root4,
			`usb:3-1 path:0944:0117:3-1 [usb,alsa,pipewire] "nanoKONTROL2"`,
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-3.2 path:0582:01a9:3-3.2 [usb,alsa,pipewire] "JD-Xi \\xff\\xfe"`,
			`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
		}},
		{name: "pw-coerce", want: smallOK, errs: map[string]string{"pipewire": "pw-dump object 21 is not an object; skipped"}},
		{name: "unreadable", want: []string{
			"source usb ok 5", "source alsa FAIL 0", "source pipewire FAIL 0",
			root3, root4,
			`usb:3-1 path:0944:0117:3-1 [usb] "nanoKONTROL2"`,
			`usb:3-3 path:05e3:0610:3-3 [usb] "Genesys Logic, Inc. Hub" infra`,
			`usb:3-6 path:04d9:1702:3-6 [usb] "Holtek Semiconductor, Inc. Keyboard LKS02"`,
		}, errs: map[string]string{
			"usb":      "skipped 3-3.2: idProduct: is a directory",
			"alsa":     "alsa: testdata/scenarios/unreadable/proc/asound/cards: is a directory",
			"pipewire": "pipewire: testdata/scenarios/unreadable/pw-dump.json: is a directory",
		}},
		{name: "empty", want: []string{"source usb FAIL 0", "source alsa FAIL 0", "source pipewire FAIL 0"}, errs: map[string]string{
			"usb":      "usb: testdata/scenarios/empty/sys/bus/usb/devices: no such file or directory",
			"alsa":     "alsa: testdata/scenarios/empty/proc/asound/cards: no such file or directory",
			"pipewire": "pipewire: testdata/scenarios/empty/pw-dump.json: no such file or directory",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			snap := scanDir(t, "testdata/scenarios/"+tt.name)
			checkInvariants(t, snap)
			got := summary(snap)
			if g, w := strings.Join(got, "\n"), strings.Join(tt.want, "\n"); tt.want != nil && g != w {
				t.Fatalf("snapshot:\n%s\nwant:\n%s", g, w)
			}
			if tt.rels != nil {
				var rels []string
				for _, l := range relLines(t, snap) {
					if strings.HasPrefix(l, tt.relType) {
						rels = append(rels, l)
					}
				}
				if g, w := strings.Join(rels, "\n"), strings.Join(tt.rels, "\n"); g != w {
					t.Errorf("relations:\n%s\nwant:\n%s", g, w)
				}
			}
			for _, st := range snap.Sources {
				want := tt.errs[st.Name]
				if want == "" && st.Error != "" {
					t.Errorf("source %s: unexpected error %q", st.Name, st.Error)
				}
				if !strings.Contains(st.Error, want) {
					t.Errorf("source %s: error %q, want it to contain %q", st.Name, st.Error, want)
				}
				if st.Root == "" {
					t.Errorf("source %s: no root", st.Name)
				}
			}
		})
	}
}
