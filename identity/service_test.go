package identity_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/fixture"
	"github.com/devgraph/devgraph/store/storetest"
)

// rig is the demo studio written into a temp dir, read by the real sources.
type rig struct {
	t   testing.TB
	dir string
	gen int
	*fixture.Rig
	live *sources.Live
}

func newRig(t testing.TB) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), Rig: fixture.DemoRig()}
	r.write()
	r.live = sources.Demo(filepath.Join(r.dir, "root"))
	r.live.ShareWindow = -1 // every request reads the tree as it is now
	return r
}

// write renders the rig into a fresh directory and swaps the root symlink to it in one
// rename, so a background poll never reads a half-written tree.
func (r *rig) write() {
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

func (r *rig) move(from, to string) {
	r.t.Helper()
	if err := r.Move(from, to); err != nil {
		r.t.Fatal(err)
	}
	r.write()
}

func newService(t testing.TB) (*identity.Service, *rig, context.Context) {
	t.Helper()
	r := newRig(t)
	svc := identity.New(storetest.MustOpen(t), r.live, nil)
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc, r, graph.WithActor(context.Background(), "cli:tester")
}

func device(t testing.TB, ctx context.Context, svc *identity.Service, ref string) *graph.DeviceView {
	t.Helper()
	v, err := svc.Device(ctx, ref)
	if err != nil {
		t.Fatalf("device %s: %v", ref, err)
	}
	return v
}

func why(m *graph.Match) string {
	if m == nil {
		return "<no match>"
	}
	var sb strings.Builder
	sb.WriteString(m.Summary)
	for _, r := range m.Explanation {
		sb.WriteString("\n  " + string(r.Kind) + "=" + r.Value + ": " + r.Note)
	}
	return sb.String()
}

func refs(vs []*graph.DeviceView) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Ref)
	}
	return out
}

func mustBind(t testing.TB, ctx context.Context, svc *identity.Service, in graph.BindInput) *graph.BindResult {
	t.Helper()
	res, err := svc.Bind(ctx, in)
	if err != nil {
		t.Fatalf("bind %+v: %v", in, err)
	}
	return res
}

func events(t testing.TB, ctx context.Context, svc *identity.Service) []*graph.Event {
	t.Helper()
	var all []*graph.Event
	f := graph.EventFilter{First: graph.MaxPageSize}
	for {
		evs, next, err := svc.FindEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, evs...)
		if next == "" {
			break
		}
		f.After = next
	}
	// oldest first
	for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
		all[i], all[j] = all[j], all[i]
	}
	return all
}

// TestService_Story is the end-to-end story at the service level, over a real
// store file and the real sources reading a fixture rig that the test re-plugs.
func TestService_Story(t *testing.T) {
	t.Parallel()
	svc, r, ctx := newService(t)
	const synth, twinA, twinB = "identity:roland-jd-xi", "identity:nano-a", "identity:nano-b"

	// 1. unbound: everything but the hubs, nothing known yet.
	ub, err := svc.Unbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"usb:3-3.2", "usb:3-1", "usb:3-2", "usb:3-3.1", "alsa:card:PCH"} {
		if !contains(refs(ub), want) {
			t.Errorf("unbound lacks %s: %v", want, refs(ub))
		}
	}
	for _, hub := range []string{"usb:3-3", "usb:3-4"} {
		if contains(refs(ub), hub) {
			t.Errorf("unbound lists hub %s", hub)
		}
	}
	appeared := len(events(t, ctx, svc))
	if appeared == 0 {
		t.Fatal("observing the rig wrote no device.appear events")
	}

	// 2. bind the serial-less synth: a dry run first writes nothing.
	dry := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi", DryRun: true})
	if !dry.DryRun || !dry.Created || len(dry.HintsAdded) < 5 {
		t.Errorf("dry run: dry=%v created=%v hints=%v, want a new identity with the device's 6 fingerprints", dry.DryRun, dry.Created, dry.HintsAdded)
	}
	if dry.Match == nil || dry.Match.Confidence != graph.High || dry.Match.IdentityID != synth {
		t.Errorf("dry run: the match afterwards reads %s", why(dry.Match))
	}
	if n := len(events(t, ctx, svc)); n != appeared {
		t.Fatalf("dry run wrote %d events", n-appeared)
	}
	if _, err := svc.FindIdentityByID(ctx, synth, graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
		t.Fatalf("dry run created the identity: err=%v", err)
	}
	res := mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-3.2", NewName: "Roland JD-Xi"})
	if res.Identity.ID != synth || !res.Created {
		t.Fatalf("bind: identity=%s created=%v", res.Identity.ID, res.Created)
	}
	for _, k := range []graph.FingerprintKind{graph.FPUSBID, graph.FPUSBPath, graph.FPALSACardID, graph.FPMIDIClient, graph.FPPipeWireDevice} {
		found := false
		for _, h := range res.Identity.Hints {
			found = found || h.Kind == k
		}
		if !found {
			t.Errorf("bound identity lacks a %s hint: %v", k, res.Identity.Hints)
		}
	}

	// 3. devices shows it bound.
	v := device(t, ctx, svc, "usb:3-3.2")
	if v.BoundTo != synth || v.BoundBy != "explicit" || v.Identity != "Roland JD-Xi" {
		t.Errorf("after bind: bound_to=%q by %q name %q", v.BoundTo, v.BoundBy, v.Identity)
	}
	devs, _, _, err := svc.Devices(ctx, graph.DeviceFilter{IdentityID: "roland-jd-xi"})
	if err != nil || len(devs) != 1 || devs[0].Ref != "usb:3-3.2" {
		t.Errorf("devices bound to the synth: %v %v", refs(devs), err)
	}
	if ub, _ := svc.Unbound(ctx); contains(refs(ub), "usb:3-3.2") {
		t.Errorf("unbound still lists the bound synth")
	}

	// 4. move it to another port: still high, and the explanation says why.
	r.move("3-3.2", "3-5")
	v = device(t, ctx, svc, "usb:3-5")
	if v.Match.Confidence != graph.High || v.Match.IdentityID != synth || v.BoundTo != synth || v.BoundBy != "match" {
		t.Fatalf("moved synth: bound_to=%q by %q, match %s", v.BoundTo, v.BoundBy, why(v.Match))
	}
	for _, s := range []string{"model and names agree", "moved ports", "3-3.2"} {
		if !strings.Contains(why(v.Match), s) {
			t.Errorf("moved synth's explanation lacks %q:\n%s", s, why(v.Match))
		}
	}
	if old := device(t, ctx, svc, "device:path:0582:01a9:3-3.2"); old.Present || old.BoundTo != synth || old.BoundBy != "explicit" {
		t.Errorf("the synth's old port record: present=%v bound_to=%q by %q", old.Present, old.BoundTo, old.BoundBy)
	}
	devs, total, _, err := svc.Devices(ctx, graph.DeviceFilter{IdentityID: synth})
	if err != nil || total != 1 || refs(devs)[0] != "usb:3-5" {
		t.Errorf("present devices of the synth after the move: %v (total %d) %v", refs(devs), total, err)
	}
	devs, total, _, err = svc.Devices(ctx, graph.DeviceFilter{IdentityID: synth, All: true})
	if err != nil || total != 2 {
		t.Errorf("all devices of the synth after the move: %v (total %d) %v, want its old and new port records", refs(devs), total, err)
	}
	if page, _, next, err := svc.Devices(ctx, graph.DeviceFilter{IdentityID: synth, All: true, First: 1}); err != nil || len(page) != 1 || next == "" {
		t.Errorf("first page of one: %v next=%q %v", refs(page), next, err)
	} else if rest, _, next2, err := svc.Devices(ctx, graph.DeviceFilter{IdentityID: synth, All: true, First: 1, After: next}); err != nil || len(rest) != 1 || next2 != "" || rest[0].ID == page[0].ID {
		t.Errorf("second page: %v next=%q %v", refs(rest), next2, err)
	}

	t.Log("moved synth:", why(v.Match))
	// 5. bind both twins: each is recognised by its port.
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-1", NewName: "nanoKONTROL2 A", Slug: "nano-a"})
	if a := device(t, ctx, svc, "usb:3-1"); a.Match.Confidence != graph.High || a.Match.IdentityID != twinA {
		t.Errorf("first twin after its bind: %s", why(a.Match))
	}
	if b := device(t, ctx, svc, "usb:3-2"); b.Match.Confidence == graph.High {
		t.Errorf("second twin is high before its bind: %s", why(b.Match))
	}
	mustBind(t, ctx, svc, graph.BindInput{Ref: "usb:3-2", NewName: "nanoKONTROL2 B", Slug: "nano-b"})
	for ref, want := range map[string]string{"usb:3-1": twinA, "usb:3-2": twinB} {
		v := device(t, ctx, svc, ref)
		if v.Match.Confidence != graph.High || v.Match.IdentityID != want || v.Match.Ambiguous {
			t.Errorf("twin %s: want high %s, got %s", ref, want, why(v.Match))
		}
		for _, s := range []string{"port is the only evidence", "identical units swapped between ports can be told apart by nothing else"} {
			if !strings.Contains(why(v.Match), s) {
				t.Errorf("twin %s's explanation lacks %q:\n%s", ref, s, why(v.Match))
			}
		}
	}

	// 6. unplug twin B and plug it into a third port while A stays: high for neither.
	usbB, cardB := *r.Find("3-2"), *r.CardOf("3-2")
	if err := r.Remove("3-2"); err != nil {
		t.Fatal(err)
	}
	r.write()
	if v := device(t, ctx, svc, "device:path:0944:0117:3-2"); v.Present {
		t.Fatal("unplugged twin still present")
	}
	usbB.Path = "3-8"
	if err := r.Plug(&usbB, &cardB); err != nil {
		t.Fatal(err)
	}
	r.write()
	v = device(t, ctx, svc, "usb:3-8")
	if v.Match.Confidence == graph.High || v.BoundTo != "" {
		t.Errorf("replugged twin: bound_to=%q, match %s", v.BoundTo, why(v.Match))
	}
	if !v.Match.Ambiguous || !strings.Contains(v.Match.Summary, twinA) || !strings.Contains(v.Match.Summary, twinB) {
		t.Errorf("replugged twin's match should name both twins as ambiguous: %s", why(v.Match))
	}
	if a := device(t, ctx, svc, "usb:3-1"); a.Match.Confidence != graph.High || a.Match.IdentityID != twinA {
		t.Errorf("twin A on its port: %s", why(a.Match))
	}
	t.Log("replugged twin:", why(v.Match))
	t.Log("twin A:", why(device(t, ctx, svc, "usb:3-1").Match))
	ub, _ = svc.Unbound(ctx)
	if !contains(refs(ub), "usb:3-8") {
		t.Errorf("unbound lacks the replugged twin: %v", refs(ub))
	}
	for _, u := range ub {
		if u.Ref != "usb:3-8" {
			continue
		}
		var cands []string
		for _, c := range u.Match.Candidates {
			cands = append(cands, c.IdentityID)
		}
		if len(u.Fingerprints) == 0 || len(u.Match.Explanation) == 0 || u.Match.Score <= 0 || !contains(cands, twinA) || !contains(cands, twinB) {
			t.Errorf("unbound entry for the replugged twin: fingerprints=%v score=%v candidates=%v\n%s", u.Fingerprints, u.Match.Score, cands, why(u.Match))
		}
	}
	if contains(refs(ub), "usb:3-5") {
		t.Errorf("unbound lists the moved synth, which is recognised: %v", refs(ub))
	}

	// 7. the changelog shows each step.
	type step struct{ actor, action, target string }
	want := []step{
		{"discovery:", graph.ActDeviceAppear, "device:path:0582:01a9:3-3.2"},
		{"cli:tester", graph.ActIdentityCreate, synth},
		{"cli:tester", graph.ActHintAdd, synth},
		{"cli:tester", graph.ActDeviceBind, "device:path:0582:01a9:3-3.2"},
		{"discovery:usb", graph.ActDeviceAppear, "device:path:0582:01a9:3-5"},
		{"discovery:usb", graph.ActDeviceDisappear, "device:path:0582:01a9:3-3.2"},
		{"cli:tester", graph.ActIdentityCreate, twinA},
		{"cli:tester", graph.ActDeviceBind, "device:path:0944:0117:3-1"},
		{"cli:tester", graph.ActIdentityCreate, twinB},
		{"cli:tester", graph.ActDeviceBind, "device:path:0944:0117:3-2"},
		{"discovery:usb", graph.ActDeviceDisappear, "device:path:0944:0117:3-2"},
		{"discovery:usb", graph.ActDeviceAppear, "device:path:0944:0117:3-8"},
	}
	evs := events(t, ctx, svc)
	i := 0
	for _, e := range evs {
		if i < len(want) && e.Action == want[i].action && e.Target == want[i].target && strings.HasPrefix(e.Actor, want[i].actor) {
			i++
		}
	}
	if i < len(want) {
		var got []string
		for _, e := range evs {
			got = append(got, e.Actor+" "+e.Action+" "+e.Target)
		}
		t.Errorf("changelog lacks step %d %+v in order; have:\n%s", i, want[i], strings.Join(got, "\n"))
	}
	// one request per bind: the synth's create, hints and bind share a request id
	rid := map[string]int{}
	for _, e := range evs {
		if e.Actor == "cli:tester" && (e.Target == synth || e.Target == "device:path:0582:01a9:3-3.2") {
			rid[e.RequestID]++
		}
	}
	if len(rid) != 1 {
		t.Errorf("the synth's bind wrote events under %d request ids, want 1", len(rid))
	}
	if rep, err := svc.VerifyChangelog(ctx); err != nil || !rep.OK {
		t.Errorf("changelog verify: %+v %v", rep, err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
