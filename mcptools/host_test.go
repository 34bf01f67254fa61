package mcptools

import (
	"encoding/json"
	"strings"
	"testing"
)

// A device's host comes with detail: true (on a single machine it is the same for every
// device, so the compact view leaves it out; on a fleet the ref carries it too).
func TestDevices_Host(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "host")
	cn.call("graph_unbound", map[string]any{"limit": 1}) // the rig is observed (browse reads the store)
	res := cn.call("graph_browse", map[string]any{"id": "usb:3-3.2"})
	if res.IsError {
		t.Fatalf("graph_browse: %s", text(res))
	}
	compact, _ := json.Marshal(structured(t, res))
	if strings.Contains(string(compact), `"host"`) {
		t.Errorf("the compact view carries the host on a single machine: %s", compact)
	}
	detail, _ := json.Marshal(structured(t, cn.call("graph_browse", map[string]any{"id": "usb:3-3.2", "detail": true})))
	if !strings.Contains(string(detail), `"host":"studio"`) {
		t.Errorf("detail: true lacks the host: %s", detail)
	}
}
