package remote_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestHandler_RequestIDForm: a request id a socket caller names is stored on every event
// of its request; one holding a newline, an ESC sequence or nothing but a space was
// stored as given. It must be one printable word (the CLI sends a uuid).
func TestHandler_RequestIDForm(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	sock, client := serve(t, svc, remote.Options{})
	defer client.Close()
	if _, err := client.CreateIdentity(caller("mcp:alice", "", ""), graph.IdentityCreate{Name: "Roland JD-Xi"}); err != nil {
		t.Fatal(err)
	}
	const args = "\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"]}"
	for _, rid := range []string{`a\nb`, `x\u001b[31m`, ` `, `two words`, `tab\there`, `\u2028`} {
		before := head(t, svc, "*")
		status, out := rawPost(t, sock, "/rpc/UpdateTags", `{"request_id":"`+rid+`"}`+args)
		e, _ := out["error"].(map[string]any)
		if status != http.StatusBadRequest || e == nil || e["code"] != graph.EINVALID || e["field"] != "request_id" ||
			!strings.HasPrefix(e["message"].(string), "request_id ") {
			t.Errorf("request_id %s: %d %v, want 400 INVALID naming request_id", rid, status, out)
		}
		if head(t, svc, "*") != before {
			t.Errorf("request_id %s: a refused call wrote an event", rid)
		}
	}
	if _, err := client.UpdateTags(caller("mcp:alice", "01a20ccd-2391-756f-8524-0b53c0a52f09", ""), "identity:roland-jd-xi", []string{"role:keys"}, nil); err != nil {
		t.Errorf("a uuid request id: %v", err)
	}
}
