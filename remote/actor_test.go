package remote_test

import (
	"context"
	"net"
	"net/http"
	"os/user"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// The socket records a caller that names no actor as cli:<the peer's user>, accepts the
// contract's actor forms, and refuses anything else with 400 and nothing written.
func TestHandler_Actor(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	sock, client := serve(t, svc, remote.Options{})
	defer client.Close()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	lastActor := func() string {
		t.Helper()
		evs, _, err := svc.FindEvents(context.Background(), graph.EventFilter{First: 1})
		if err != nil || len(evs) == 0 {
			t.Fatalf("events: %v %v", evs, err)
		}
		return evs[0].Actor
	}

	t.Run("NoActorIsThePeersUser", func(t *testing.T) {
		// A raw request whose caller line names no actor.
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}}}
		resp, err := hc.Post("http://devgraph/rpc/CreateIdentity", "application/json", strings.NewReader("{}\n"+`{"name":"Headless"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("create without an actor: %s", resp.Status)
		}
		if got, want := lastActor(), "cli:"+u.Username; got != want {
			t.Fatalf("actor %q, want %q", got, want)
		}
	})
	t.Run("SocketFormsAccepted", func(t *testing.T) {
		for i, a := range []string{"cli:" + u.Username, "cli:" + u.Uid, "mcp:Claude-Desktop"} {
			if _, err := client.AddNote(caller(a, "", ""), graph.NoteCreate{Target: "identity:headless", Kind: "info", Body: "n" + string(rune('0'+i))}); err != nil {
				t.Fatalf("actor %q: %v", a, err)
			}
			if got := lastActor(); got != a {
				t.Fatalf("actor %q recorded as %q", a, got)
			}
		}
	})
	// Defect 5 (issue 11): a socket caller named any actor of the contract, so the same
	// user could write as a token holder (http:ci), a source or a robot, or as another
	// OS user. Now those are refused, clearly, and nothing is written.
	t.Run("ForgedActorsRefused", func(t *testing.T) {
		forged := map[string]string{
			"http:ci":                        "http: actors are recorded only by the server itself",
			"http:local":                     "http: actors are recorded only by the server itself",
			"discovery:usb":                  "discovery: actors are recorded only by the server itself",
			"robot:r1":                       "robot: actors are recorded only by the server itself",
			"cli:someone-else-" + u.Username: "is not the socket peer's user: this connection is cli:" + u.Username,
		}
		for _, other := range []string{"nobody", "daemon"} {
			if o, err := user.Lookup(other); err == nil && o.Uid != u.Uid {
				forged["cli:"+other] = "is not the socket peer's user"
			}
		}
		for a, want := range forged {
			before := lastActor()
			_, err := client.UpdateTags(caller(a, "", ""), "identity:headless", []string{"role:synth"}, nil)
			if graph.ErrorCode(err) != graph.EINVALID || !strings.Contains(graph.ErrorMessage(err), want) || graph.ErrorField(err) != "actor" {
				t.Errorf("actor %q: %v (field %q), want INVALID on actor saying %q", a, err, graph.ErrorField(err), want)
			}
			if got := lastActor(); got != before {
				t.Errorf("actor %q: a refused call wrote an event by %q", a, got)
			}
		}
	})
	t.Run("OthersRefused", func(t *testing.T) {
		for _, a := range []string{"root", "admin:me", "cli:", "mcp:  ", "mcp:" + strings.Repeat("x", 125), "mcp:a\tb"} {
			before := lastActor()
			_, err := client.UpdateTags(caller(a, "", ""), "identity:headless", []string{"role:synth"}, nil)
			if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "actor" {
				t.Errorf("actor %q: %v, want INVALID naming the actor", a, err)
			}
			if got := lastActor(); got != before {
				t.Errorf("actor %q: a refused call wrote an event by %q", a, got)
			}
		}
	})
}

func TestValidActor(t *testing.T) {
	t.Parallel()
	for a, ok := range map[string]bool{
		"cli:alice": true, "mcp:unknown": true,
		"http:local": false, "http:ci": false, "discovery:alsa": false, "robot:scout": false,
		"": false, "unknown": false, "cli:": false, "mcp:\xff\xfe": false, "mcp:x\x00": false,
		"mcp:" + strings.Repeat("a", 124): true, "mcp:" + strings.Repeat("a", 125): false,
	} {
		if err := remote.ValidActor(a); (err == nil) != ok {
			t.Errorf("ValidActor(%q) = %v, want ok=%v", a, err, ok)
		}
	}
}
