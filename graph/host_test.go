package graph_test

import (
	"testing"

	"github.com/devgraph/devgraph/graph"
)

func TestHostSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Studio-A.lab.example": "studio-a",
		"studio-a":             "studio-a",
		"  MyBox  ":            "mybox",
		"box_1.local":          "box-1",
		"-weird-.x":            "weird",
		"":                     "localhost",
		"...":                  "localhost",
		"ÄÖ":                   "localhost",
	} {
		got := graph.HostSlug(in)
		if got != want {
			t.Errorf("HostSlug(%q) = %q, want %q", in, got, want)
		}
		if err := graph.ValidateHost(got); err != nil {
			t.Errorf("HostSlug(%q) = %q is not a valid host name: %v", in, got, err)
		}
	}
}

func TestValidateHost(t *testing.T) {
	for _, ok := range []string{"studio-a", "a", "h1", "0box"} {
		if err := graph.ValidateHost(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Studio", "studio.a", "-a", "a/b", "a@b", "a b", "a\x00"} {
		err := graph.ValidateHost(bad)
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "host_name" {
			t.Errorf("%q: err=%v field %q", bad, err, graph.ErrorField(err))
		}
	}
}

// The qualified forms are exactly DESIGN.md's, qualifying twice changes nothing, and a
// bare form splits to no host.
func TestQualifyHost(t *testing.T) {
	if got := graph.QualifyHost("studio-a", "usb:3-3.2"); got != "studio-a/usb:3-3.2" {
		t.Errorf("ref %q", got)
	}
	if got := graph.QualifyDeviceID("studio-a", "device:path:0582:0160:3-3.2"); got != "device:studio-a/path:0582:0160:3-3.2" {
		t.Errorf("device id %q", got)
	}
	if got := graph.QualifyFingerprint("studio-a", graph.Fingerprint{Kind: graph.FPUSBPath, Value: "3-3.2"}); got.Value != "studio-a/3-3.2" {
		t.Errorf("usb_path %q", got.Value)
	}
	if got := graph.QualifyFingerprint("studio-a", graph.Fingerprint{Kind: graph.FPUSBID, Value: "0582:0160"}); got.Value != "0582:0160" {
		t.Errorf("usb_id qualified: %q", got.Value)
	}
	if got := graph.QualifyHost("studio-b", "studio-a/usb:3-3.2"); got != "studio-a/usb:3-3.2" {
		t.Errorf("qualified twice %q", got)
	}
	if got := graph.QualifyDeviceID("studio-a", "identity:jdxi"); got != "identity:jdxi" {
		t.Errorf("identity qualified: %q", got)
	}
	if h, rest := graph.SplitHost("usb:3-3.2"); h != "" || rest != "usb:3-3.2" {
		t.Errorf("bare ref split to %q %q", h, rest)
	}
	if h, rest := graph.SplitHost("pipewire:alsa_card.usb-Roland/x"); h != "" || rest != "pipewire:alsa_card.usb-Roland/x" {
		t.Errorf("a ref with a slash after its source split to %q %q", h, rest)
	}
	if !graph.IsRef("studio-a/usb:3-3.2") || graph.IsRef("studio-a/jdxi") {
		t.Error("IsRef on qualified forms")
	}
	if _, err := graph.NormalizeFingerprint(graph.FPUSBPath, "studio-a/3-3.2"); err != nil {
		t.Errorf("qualified usb_path refused: %v", err)
	}
	if _, err := graph.NormalizeFingerprint(graph.FPUSBPath, "studio-a/nope"); err == nil {
		t.Error("a qualified usb_path with a bad path was accepted")
	}
	od := &graph.ObservedDevice{Key: "path:0582:0160:3-3.2", Ref: "usb:3-3.2", Fingerprints: []graph.Fingerprint{{Kind: graph.FPUSBPath, Value: "3-3.2"}}}
	q := graph.QualifyObserved("studio-a", od)
	if q.Key != "studio-a/path:0582:0160:3-3.2" || q.Ref != "studio-a/usb:3-3.2" || q.Fingerprints[0].Value != "studio-a/3-3.2" || od.Fingerprints[0].Value != "3-3.2" {
		t.Errorf("observed %+v (original %+v)", q, od)
	}
}

func TestActorAt(t *testing.T) {
	if got := graph.ActorAt("cli:alice", "studio-a"); got != "cli:alice@studio-a" {
		t.Errorf("got %q", got)
	}
	if got := graph.ActorAt("cli:alice@studio-a", "studio-a"); got != "cli:alice@studio-a" {
		t.Errorf("twice: %q", got)
	}
	if got := graph.ActorAt("mcp:bob@home", "studio-a"); got != "mcp:bob@home@studio-a" {
		t.Errorf("a client name with an at sign: %q", got)
	}
	if who, h := graph.SplitActorHost("cli:alice@studio-a"); who != "cli:alice" || h != "studio-a" {
		t.Errorf("split %q %q", who, h)
	}
	if who, h := graph.SplitActorHost("cli:alice"); who != "cli:alice" || h != "" {
		t.Errorf("split bare %q %q", who, h)
	}
}
