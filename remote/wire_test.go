package remote_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store/storetest"
)

// rawPost sends body as it is to the socket, with no client of ours re-encoding it.
func rawPost(t *testing.T, sock, path, body string) (int, map[string]any) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post("http://devgraph"+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST %s: %s: answer %q is not JSON", path, resp.Status, b)
	}
	return resp.StatusCode, out
}

// head is the newest event id of the actors matching glob (discovery writes its own
// events in the background): unchanged means none of their calls wrote anything.
func head(t *testing.T, svc graph.Service, glob string) string {
	t.Helper()
	evs, _, err := svc.FindEvents(context.Background(), graph.EventFilter{Actor: glob, First: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		return ""
	}
	return evs[0].ID
}

// Defect 1, the wire half: the change message travels in the body, so a message of
// several lines, or at the limit, reaches the changelog through a running server as
// typed (in an X-Devgraph-Message header the two-line one failed with a false "server
// is not answering").
func TestClient_MessageTravelsInTheBody(t *testing.T) {
	t.Parallel()
	s := newServed(t)
	if _, err := s.client.CreateIdentity(caller("mcp:alice", "req-1", ""), graph.IdentityCreate{Name: "Roland JD-Xi"}); err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]string{
		"TwoLines":  "moved to the studio\nsecond line: the rack",
		"AtTheCap":  strings.Repeat("é", graph.MaxMsgLen/2), // 1,024 bytes of two-byte runes
		"Controls":  "tab\there, \"quoted\", back\\slash, cr\r",
		"NonLatin1": "スタジオへ移動 🎹",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.client.UpdateTags(caller("mcp:alice", "req-"+name, msg), "identity:roland-jd-xi", []string{"location:" + strings.ToLower(name)}, nil); err != nil {
				t.Fatalf("%d-byte message: %v", len(msg), err)
			}
			evs, _, err := s.svc.FindEvents(context.Background(), graph.EventFilter{Actor: "mcp:*", First: 1})
			if err != nil || len(evs) != 1 {
				t.Fatal(evs, err)
			}
			if evs[0].Message != msg || evs[0].RequestID != "req-"+name || evs[0].Actor != "mcp:alice" {
				t.Fatalf("event message %q request %q actor %q, want %q", evs[0].Message, evs[0].RequestID, evs[0].Actor, msg)
			}
		})
	}
	t.Run("OverTheCapRefusedLikeTheFile", func(t *testing.T) {
		msg := strings.Repeat("x", graph.MaxMsgLen+1)
		before := head(t, s.svc, "mcp:*")
		_, err := s.client.UpdateTags(caller("mcp:alice", "req-over", msg), "identity:roland-jd-xi", []string{"location:over"}, nil)
		// The CLI opening the file calls the service directly.
		_, direct := s.svc.UpdateTags(caller("mcp:alice", "req-over", msg), "identity:roland-jd-xi", []string{"location:over"}, nil)
		if direct == nil || err == nil {
			t.Fatalf("a %d-byte message: through the socket %v, opening the file %v; want both refused", len(msg), err, direct)
		}
		if graph.ErrorCode(err) != graph.ErrorCode(direct) || graph.ErrorMessage(err) != graph.ErrorMessage(direct) || graph.ErrorField(err) != graph.ErrorField(direct) {
			t.Fatalf("through the socket %q (%s, field %q), opening the file %q (%s, field %q)", err, graph.ErrorCode(err), graph.ErrorField(err), direct, graph.ErrorCode(direct), graph.ErrorField(direct))
		}
		if head(t, s.svc, "mcp:*") != before {
			t.Fatal("a refused message wrote an event")
		}
	})
	t.Run("InvalidUTF8Refused", func(t *testing.T) {
		before := head(t, s.svc, "mcp:*")
		_, err := s.client.UpdateTags(caller("mcp:alice", "req-bad", "why\xff"), "identity:roland-jd-xi", []string{"location:bad"}, nil)
		want := graph.ValidateText("message", "why\xff", 0, graph.MaxMsgLen)
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "message" || graph.ErrorMessage(err) != graph.ErrorMessage(want) {
			t.Fatalf("message with 0xff: %v (field %q), want %q", err, graph.ErrorField(err), want)
		}
		if head(t, s.svc, "mcp:*") != before {
			t.Fatal("a refused message wrote an event")
		}
	})
}

// Defect 7 on the socket: text that is not valid UTF-8 is refused with its field named,
// never replaced with U+FFFD — whether our client sends it or a raw body does.
func TestHandler_RefusesInvalidText(t *testing.T) {
	t.Parallel()
	svc := identity.New(storetest.MustOpen(t), nil, nil)
	sock, client := serve(t, svc, remote.Options{})
	defer client.Close()
	if _, err := client.CreateIdentity(caller("mcp:alice", "", ""), graph.IdentityCreate{Name: "Roland JD-Xi"}); err != nil {
		t.Fatal(err)
	}
	t.Run("RawBody", func(t *testing.T) {
		for _, tc := range []struct{ method, body, field string }{
			{"CreateIdentity", "{}\n{\"name\":\"JD\xff\"}", "name"},
			{"CreateIdentity", "{}\n{\"name\":\"JD\\ud800\"}", "name"},
			{"CreateIdentity", "{}\n{\"name\":\"JD\\u0000\"}", "name"},
			{"UpdateTags", "{}\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\",\"role:\xc3\"]}", "add[1]"},
			{"AddNote", "{}\n{\"target\":\"identity:roland-jd-xi\",\"kind\":\"info\",\"body\":\"\\udc00 low\"}", "body"},
			{"UpdateTags", "{\"message\":\"why\xff\"}\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"]}", "message"},
			{"UpdateTags", "{\"message\":\"why\\ud83d\"}\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"]}", "message"},
			{"UpdateTags", "{\"actor\":\"cli:\xff\"}\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"]}", "actor"},
			{"UpdateTags", "{\"request_id\":\"" + strings.Repeat("r", 129) + "\"}\n{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"]}", "request_id"},
		} {
			before := head(t, svc, "*")
			status, out := rawPost(t, sock, "/rpc/"+tc.method, tc.body)
			e, _ := out["error"].(map[string]any)
			if status != http.StatusBadRequest || e == nil || e["code"] != graph.EINVALID || e["field"] != tc.field ||
				!strings.HasPrefix(e["message"].(string), tc.field+" ") {
				t.Errorf("%s %q: %d %v, want 400 INVALID naming %s", tc.method, tc.body, status, out, tc.field)
			}
			if head(t, svc, "*") != before {
				t.Errorf("%s %q: a refused call wrote an event", tc.method, tc.body)
			}
		}
		ids, _, _, err := svc.FindIdentities(context.Background(), graph.IdentityFilter{})
		if err != nil || len(ids) != 1 {
			t.Fatalf("identities %v %v, want only the JD-Xi", ids, err)
		}
	})
	t.Run("Client", func(t *testing.T) {
		before := head(t, svc, "*")
		ctx := caller("mcp:alice", "", "")
		_, err := client.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD\xff"})
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "name" || graph.ErrorMessage(err) != "name is not valid UTF-8; send text as UTF-8" {
			t.Errorf("name with 0xff: %v (field %q)", err, graph.ErrorField(err))
		}
		_, err = client.AddNote(ctx, graph.NoteCreate{Target: "identity:roland-jd-xi", Kind: "info", Body: "a\xc3"})
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "body" {
			t.Errorf("note body with a cut rune: %v (field %q)", err, graph.ErrorField(err))
		}
		_, err = client.UpdateTags(ctx, "identity:roland-jd-xi", []string{"role:synth", "role:\xff"}, nil)
		if graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "add[1]" {
			t.Errorf("tag with 0xff: %v (field %q)", err, graph.ErrorField(err))
		}
		if head(t, svc, "*") != before {
			t.Error("a refused call wrote an event")
		}
	})
}

// The socket's /graphql (devgraph query) takes the caller line first and refuses text
// that is not valid UTF-8 with the field named, before the executor runs.
func TestSocketServer_GraphQLText(t *testing.T) {
	t.Parallel()
	s, _, exec := openSocket(t, false)
	cl := remote.NewClient(s.Path)
	defer cl.Close()
	ctx := graph.WithMessage(graph.WithActor(context.Background(), "mcp:alice"), "two\nlines")
	resp, err := cl.Post(ctx, "/graphql", "application/json", strings.NewReader(`{"query": "{ stats { identities } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || len(exec.actors) != 1 || exec.actors[0] != "mcp:alice" {
		t.Fatalf("a two-line message: %s, actors %v", resp.Status, exec.actors)
	}
	for body, field := range map[string]string{
		"{}\n{\"query\":\"mutation($m: String) { x }\",\"variables\":{\"message\":\"\\ud800\"}}": "variables.message",
		"{}\n{\"query\":\"{ find(text: \\\"\xff\\\") }\"}":                                       "query",
		"{\"message\":\"\xfe\"}\n{\"query\":\"{ stats { identities } }\"}":                       "message",
	} {
		status, out := rawPost(t, s.Path, "/graphql", body)
		errs, _ := out["errors"].([]any)
		if status != 400 || len(errs) != 1 {
			t.Errorf("%q: %d %v", body, status, out)
			continue
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		if ext["code"] != graph.EINVALID || ext["field"] != field {
			t.Errorf("%q: %v, want INVALID naming %s", body, out, field)
		}
	}
	if len(exec.actors) != 1 {
		t.Errorf("the executor ran %d times, want once", len(exec.actors))
	}
}
