package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runScenario runs one scenario of mcp-issue13.mjs against a fresh database and decodes
// what the client reports.
func runScenario(t *testing.T, scenario string, flags ...string) map[string]any {
	t.Helper()
	node := nodeAndSDK(t)
	bin := devgraphBinary(t)
	db := filepath.Join(t.TempDir(), scenario+".db")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"mcp-issue13.mjs", scenario, bin, db}, flags...)...)
	cmd.Dir = filepath.Join(repoRoot(t), "e2e")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node mcp-issue13.mjs %s: %v\nstdout: %s\nstderr: %s", scenario, err, stdout.String(), tail(stderr.String(), 4000))
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("client output %q: %v", stdout.String(), err)
	}
	return out
}

func stringList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestMCP_TypeScriptSDK_Protocol: through the official SDK over stdio, an unknown node or
// robot is resource-not-found (-32002) naming it, the parameters resource reads, and
// completion/complete offers ids and prompt values by prefix.
func TestMCP_TypeScriptSDK_Protocol(t *testing.T) {
	t.Parallel()
	out := runScenario(t, "protocol", "--demo")
	for _, k := range []string{"unknownNode", "unknownRobot"} {
		e := out[k].(map[string]any)
		if e["code"] != float64(-32002) {
			t.Errorf("%s: %v, want code -32002", k, e)
		}
	}
	if msg := out["unknownNode"].(map[string]any)["message"].(string); !strings.Contains(msg, "nobody") {
		t.Errorf("unknown node message %q does not name it", msg)
	}
	p := out["parameters"].(map[string]any)
	if p["robot"] != "robot:scout" || p["parameters"].(map[string]any)["arrival_threshold"] != 0.15 {
		t.Errorf("parameters resource: %v", p)
	}
	for k, want := range map[string]string{"completeNode": "usb:3-3.2", "completeRobot": "robot:scout", "completeSince": "24h", "completeBindRef": "usb:3-3.2"} {
		if got := stringList(out[k]); !slices.Contains(got, want) {
			t.Errorf("%s offered %v, want %s among them", k, got, want)
		}
	}
}
