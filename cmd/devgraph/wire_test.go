package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// Defect 1, the wire half, end to end: `-m` through a running server's socket. A
// two-line message and one of 1,024 bytes reach the changelog as typed (in an HTTP
// header the two-line one failed with a false "server is not answering"); one of 1,025
// bytes and one that is not valid UTF-8 are refused with the same words as when the
// CLI opens the file itself, and write nothing.
func TestProcess_MessageThroughServer(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	r := newTestRig(t)
	db := filepath.Join(t.TempDir(), "wire.db")
	srv := startServe(t, env, append([]string{"--db", db, "--poll", "200ms"}, r.flags()...)...)
	srv.waitLine("socket: ")
	cli := func(a ...string) (string, string, int) { return runBin(t, env, append(a, "--db", db)...) }
	if out, errs, code := cli("identity", "create", "Roland JD-Xi"); code != 0 {
		t.Fatalf("create through the server: exit %d %q %q", code, out, errs)
	}
	lastEvent := func() *graph.Event {
		t.Helper()
		out, errs, code := cli("changelog", "--json", "--limit", "1")
		var evs eventList
		if code != 0 || json.Unmarshal([]byte(out), &evs) != nil || len(evs.Items) != 1 {
			t.Fatalf("changelog: exit %d %q %q", code, out, errs)
		}
		return evs.Items[0]
	}
	for i, msg := range []string{"moved to the studio\nfor the session on friday", strings.Repeat("ü", graph.MaxMsgLen/2)} {
		tag := []string{"+location:studio", "+location:rack"}[i]
		if out, errs, code := cli("tag", "roland-jd-xi", tag, "-m", msg); code != 0 {
			t.Fatalf("tag with a %d-byte message through the server: exit %d %q %q", len(msg), code, out, errs)
		}
		if ev := lastEvent(); ev.Message != msg || ev.Action != graph.ActTagAdd {
			t.Fatalf("event %s message %q, want %q", ev.Action, ev.Message, msg)
		}
	}
	refused := map[string]string{}
	before := lastEvent().ID
	for _, msg := range []string{strings.Repeat("x", graph.MaxMsgLen+1), "why\xff"} {
		out, errs, code := cli("tag", "roland-jd-xi", "+role:synth", "-m", msg)
		if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("a %d-byte message through the server: exit %d %q %q, want exit 1 and one line", len(msg), code, out, errs)
		}
		refused[msg] = errs
	}
	if lastEvent().ID != before {
		t.Error("a refused message wrote an event")
	}
	// The same commands with the CLI opening the file.
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.log())
	}
	for msg, viaServer := range refused {
		_, errs, code := cli("tag", "roland-jd-xi", "+role:synth", "-m", msg)
		if code != 1 || errs != viaServer {
			t.Errorf("a %d-byte message: opening the file exit %d %q, through the server %q", len(msg), code, errs, viaServer)
		}
	}
}
