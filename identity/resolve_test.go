package identity_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestService_AliasRefs: on the demo rig every ref a merged device answers to reaches it
// through the service — its ALSA card, sequencer client and PipeWire names, any letter
// case — binds and unbinds included; a ref the twins share is refused naming both.
func TestService_AliasRefs(t *testing.T) {
	svc, _, ctx := newService(t)
	const jdxi = "device:path:0582:01a9:3-3.2"
	for _, ref := range []string{"alsa:card:JDXi", "alsa:seq:JD-Xi", "pipewire:alsa_card.usb-Roland_JD-Xi-00", "USB:3-3.2", "alsa:card:jdxi"} {
		if v := device(t, ctx, svc, ref); v.ID != jdxi {
			t.Fatalf("Device(%q)=%s, want %s", ref, v.ID, jdxi)
		}
	}
	if v := device(t, ctx, svc, "alsa:card:nanoKONTROL2_1"); v.Ref != "usb:3-2" {
		t.Fatalf("a twin's own card id reached %s, want usb:3-2", v.Ref)
	}
	res := mustBind(t, ctx, svc, graph.BindInput{Ref: "alsa:seq:JD-Xi", NewName: "Roland JD-Xi"})
	if res.Device == nil || res.Device.ID != jdxi {
		t.Fatalf("bind through an alias ref: %+v", res)
	}
	if id, err := svc.ResolveID(ctx, "ROLAND-JD-XI"); err != nil || id != "identity:roland-jd-xi" {
		t.Fatalf("ResolveID in capitals: %q, %v", id, err)
	}
	if _, err := svc.Unbind(ctx, "pipewire:alsa_card.usb-Roland_JD-Xi-00"); err != nil {
		t.Fatalf("unbind through the PipeWire name: %v", err)
	}
	_, err := svc.Bind(ctx, graph.BindInput{Ref: "alsa:seq:nanoKONTROL2", NewName: "Korg"})
	if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(err.Error(), "usb:3-1") || !strings.Contains(err.Error(), "usb:3-2") {
		t.Fatalf("bind through a ref both twins answer to: %v", err)
	}
}
