package query_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// TestNode_AnyIDForm: GraphQL takes every form the store resolves — a device by its ALSA
// card or PipeWire name, an identity in capitals, a robot by its bare name — and refuses
// a ref the twins both answer to with the code INVALID and both named.
func TestNode_AnyIDForm(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	out := e.ok(`{ card: node(id: "alsa:card:JDXi") { id } pw: node(id: "pipewire:alsa_card.usb-Roland_JD-Xi-00") { id } robot: node(id: "Scout") { id } }`, nil)
	for _, f := range []string{"card", "pw"} {
		if got := get(out, f+".id"); got != "device:path:0582:01a9:3-3.2" {
			t.Fatalf("%s: %v", f, got)
		}
	}
	if got, _ := get(out, "robot.id").(string); !strings.HasPrefix(got, "device:robot:") && !strings.HasPrefix(got, "identity:") {
		t.Fatalf("robot by its bare name: %v", got)
	}
	msg := e.fail(graph.EINVALID, `{ node(id: "alsa:seq:nanoKONTROL2") { id } }`, nil)
	if !strings.Contains(msg, "usb:3-1") || !strings.Contains(msg, "usb:3-2") {
		t.Fatalf("ambiguous ref: %q", msg)
	}
}
