package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

// testRig is the demo studio written into a temp dir for the CLI's --sys-root,
// --proc-root, --pw-dump-file, --usb-ids and --dev-root; the test re-plugs devices and
// writes it again.
type testRig struct {
	t   *testing.T
	dir string
	gen int
	*fixture.Rig
}

func newTestRig(t *testing.T) *testRig {
	t.Helper()
	r := &testRig{t: t, dir: t.TempDir(), Rig: fixture.DemoRig()}
	r.write()
	return r
}

// write renders the rig into a fresh directory and swaps the root symlink to it in one
// rename, so a server polling in the background never reads a half-written tree.
func (r *testRig) write() {
	r.t.Helper()
	r.gen++
	gen := filepath.Join(r.dir, fmt.Sprintf("gen%d", r.gen))
	if err := r.Write(gen); err != nil {
		r.t.Fatalf("write rig: %v", err)
	}
	tmp := filepath.Join(r.dir, "root.new")
	if err := os.Symlink(gen, tmp); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.dir, "root")); err != nil {
		r.t.Fatal(err)
	}
}

// flags point the sources at the rig.
func (r *testRig) flags() []string {
	root := filepath.Join(r.dir, "root")
	return []string{"--sys-root", filepath.Join(root, "sys"), "--proc-root", filepath.Join(root, "proc"), "--pw-dump-file", filepath.Join(root, "pw-dump.json"),
		"--usb-ids", filepath.Join(root, "usb.ids"), "--dev-root", filepath.Join(root, "dev")}
}

type deviceList struct {
	Items []*graph.DeviceView `json:"items"`
	Total int                 `json:"total"`
}

func (l deviceList) find(ref string) *graph.DeviceView {
	for _, d := range l.Items {
		if d.Ref == ref {
			return d
		}
	}
	return nil
}

func explain(m *graph.Match) string {
	if m == nil {
		return "(no match)"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %.2f: %s", m.Confidence, m.Score, m.Summary)
	for _, r := range m.Explanation {
		fmt.Fprintf(&sb, "\n  %s=%s %s %+.2f %s", r.Kind, r.Value, r.Class, r.Weight, r.Note)
	}
	return sb.String()
}

// TestCLI_Story is the sources/identity issue's end-to-end CLI story on a temp database
// with a copy of the demo rig the test re-plugs.
func TestCLI_Story(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	r := newTestRig(t)
	base := append([]string{"--db", filepath.Join(t.TempDir(), "story.db")}, r.flags()...)
	cli := func(args ...string) []string { return append(args, base...) }
	const synth, twinA, twinB = "identity:roland-jd-xi", "identity:nano-a", "identity:nano-b"

	// unbound lists the synth and the twins, never the hubs.
	var ub deviceList
	c.jsonOf(&ub, cli("unbound", "--json")...)
	for _, want := range []string{"usb:3-3.2", "usb:3-1", "usb:3-2"} {
		if ub.find(want) == nil {
			t.Errorf("unbound lacks %s", want)
		}
	}
	if ub.find("usb:3-3") != nil || ub.find("usb:3-4") != nil {
		t.Errorf("unbound lists a hub")
	}
	golden(t, "unbound", c.ok(cli("unbound")...))

	// doctor: each source ok, the chain verified; a broken source says why.
	var doc doctorReport
	c.jsonOf(&doc, cli("doctor", "--json")...)
	if doc.Server || doc.Chain == nil || !doc.Chain.OK || doc.SchemaVersion == 0 || len(doc.Sources) != 3 {
		t.Errorf("doctor: %+v", doc)
	}
	if doc.Relations == nil || len(doc.Relations) != 0 {
		t.Errorf("doctor: relation problems %v on a fresh database, want [] (checked and whole)", doc.Relations)
	}
	for _, s := range doc.Sources {
		if !s.OK {
			t.Errorf("doctor: source %s unavailable: %s", s.Name, s.Error)
		}
	}
	broken := append(cli("doctor", "--json"), "--pw-dump-file", filepath.Join(t.TempDir(), "missing.json"))
	c.jsonOf(&doc, broken...)
	for _, s := range doc.Sources {
		if s.Name == "pipewire" && (s.OK || s.Error == "") {
			t.Errorf("doctor with a missing pw-dump file: %+v", s)
		}
		if s.Name != "pipewire" && !s.OK {
			t.Errorf("doctor: a broken pipewire took %s down: %s", s.Name, s.Error)
		}
	}
	if table := c.ok(cli("doctor")...); !strings.Contains(table, "source usb") || !strings.Contains(table, "indexes and counters agree") {
		t.Errorf("doctor table:\n%s", table)
	}

	// bind the serial-less synth (a dry run first changes nothing).
	if out := c.ok(cli("bind", "usb:3-3.2", "--new", "Roland JD-Xi", "--dry-run")...); !strings.HasPrefix(out, "would bind usb:3-3.2 to identity:roland-jd-xi (new)") {
		t.Errorf("dry run printed %q", out)
	}
	c.fail(1, "roland-jd-xi", cli("show", "roland-jd-xi")...)
	out := c.ok(cli("bind", "usb:3-3.2", "--new", "Roland JD-Xi", "-m", "new synth on the desk")...)
	if !strings.HasPrefix(out, "bound usb:3-3.2 to identity:roland-jd-xi (new)") {
		t.Errorf("bind printed %q", out)
	}

	// devices shows it bound.
	var devs deviceList
	c.jsonOf(&devs, cli("devices", "--json")...)
	if d := devs.find("usb:3-3.2"); d == nil || d.BoundTo != synth || d.BoundBy != "explicit" {
		t.Fatalf("devices after bind: %+v", d)
	}
	golden(t, "devices", c.ok(cli("devices")...))

	// move it to another port: still high, and the explanation says why.
	if err := r.Move("3-3.2", "3-5"); err != nil {
		t.Fatal(err)
	}
	r.write()
	var dv graph.DeviceView
	c.jsonOf(&dv, cli("show", "usb:3-5", "--json")...)
	if dv.Match == nil || dv.Match.Confidence != graph.High || dv.BoundTo != synth {
		t.Fatalf("moved synth: bound to %q, %s", dv.BoundTo, explain(dv.Match))
	}
	if why := explain(dv.Match); !strings.Contains(why, "moved") || !strings.Contains(why, "3-3.2") {
		t.Errorf("the moved synth's explanation does not say why:\n%s", why)
	}
	if shown := c.ok(cli("show", "usb:3-5")...); !strings.Contains(shown, "match: "+dv.Match.Summary) {
		t.Errorf("show does not print the explanation:\n%s", shown)
	}

	// bind both twins: each recognised by its port, the port the only evidence.
	c.ok(cli("bind", "usb:3-1", "--new", "nanoKONTROL2 A", "--slug", "nano-a")...)
	c.ok(cli("bind", "usb:3-2", "--new", "nanoKONTROL2 B", "--slug", "nano-b")...)
	for ref, want := range map[string]string{"usb:3-1": twinA, "usb:3-2": twinB} {
		var v graph.DeviceView
		c.jsonOf(&v, cli("show", ref, "--json")...)
		if v.Match == nil || v.Match.Confidence != graph.High || v.Match.IdentityID != want {
			t.Errorf("twin %s: want high %s, got %s", ref, want, explain(v.Match))
			continue
		}
		if why := explain(v.Match); !strings.Contains(why, "port is the only evidence") {
			t.Errorf("twin %s's explanation does not say the port is the only evidence:\n%s", ref, why)
		}
	}

	// unplug twin B and plug it into a third port: high as neither twin.
	usbB, cardB := *r.Find("3-2"), *r.CardOf("3-2")
	if err := r.Remove("3-2"); err != nil {
		t.Fatal(err)
	}
	r.write()
	c.jsonOf(&devs, cli("devices", "--json")...) // observe the unplug
	usbB.Path = "3-8"
	if err := r.Plug(&usbB, &cardB); err != nil {
		t.Fatal(err)
	}
	r.write()
	dv = graph.DeviceView{} // Unmarshal would keep the earlier device's fields
	c.jsonOf(&dv, cli("show", "usb:3-8", "--json")...)
	if dv.Match != nil && dv.Match.Confidence == graph.High {
		t.Errorf("the replugged twin is high: %s", explain(dv.Match))
	}
	if dv.BoundTo != "" {
		t.Errorf("the replugged twin is bound to %s (%s): %s\n%s", dv.BoundTo, dv.BoundBy, explain(dv.Match), mustJSONs(dv))
	}
	ub = deviceList{}
	c.jsonOf(&ub, cli("unbound", "--json")...)
	if ub.find("usb:3-8") == nil {
		t.Errorf("unbound lacks the replugged twin")
	}
	c.jsonOf(&devs, cli("devices", "--all", "--json")...)
	var gone *graph.DeviceView
	for _, d := range devs.Items {
		if d.Ref == "usb:3-2" && !d.Present {
			gone = d
		}
	}
	if gone == nil {
		t.Errorf("devices --all does not remember the unplugged twin at usb:3-2")
	}

	// unbind twin A: its explicit binding goes (its port still matches it).
	if out := c.ok(cli("unbind", "usb:3-1")...); !strings.HasPrefix(out, "unbound usb:3-1") {
		t.Errorf("unbind: %q", out)
	}
	var a graph.DeviceView
	c.jsonOf(&a, cli("show", "usb:3-1", "--json")...)
	if a.IdentityID != "" {
		t.Errorf("twin A still explicitly bound to %s", a.IdentityID)
	}

	// the changelog shows each step, oldest first here.
	var evs eventList
	c.jsonOf(&evs, cli("changelog", "--json", "--limit", "500")...)
	type step struct{ actor, action, target string }
	want := []step{
		{"discovery:", graph.ActDeviceAppear, "device:path:0582:01a9:3-3.2"},
		{"cli:", graph.ActIdentityCreate, synth},
		{"cli:", graph.ActDeviceBind, "device:path:0582:01a9:3-3.2"},
		{"discovery:", graph.ActDeviceAppear, "device:path:0582:01a9:3-5"},
		{"cli:", graph.ActIdentityCreate, twinA},
		{"cli:", graph.ActDeviceBind, "device:path:0944:0117:3-1"},
		{"cli:", graph.ActIdentityCreate, twinB},
		{"cli:", graph.ActDeviceBind, "device:path:0944:0117:3-2"},
		{"discovery:", graph.ActDeviceDisappear, "device:path:0944:0117:3-2"},
		{"discovery:", graph.ActDeviceAppear, "device:path:0944:0117:3-8"},
		{"cli:", graph.ActDeviceUnbind, "device:path:0944:0117:3-1"},
	}
	i := 0
	for j := len(evs.Items) - 1; j >= 0 && i < len(want); j-- {
		e := evs.Items[j]
		if e.Action == want[i].action && e.Target == want[i].target && strings.HasPrefix(e.Actor, want[i].actor) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("the changelog lacks step %d %+v in order:\n%s", i, want[i], c.ok(cli("changelog", "--limit", "500")...))
	}
	for _, e := range evs.Items {
		if e.Action == graph.ActDeviceBind && e.Target == "device:path:0582:01a9:3-3.2" && e.Message != "new synth on the desk" {
			t.Errorf("the synth's bind event lost its message: %q", e.Message)
		}
	}
}

func mustJSONs(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
