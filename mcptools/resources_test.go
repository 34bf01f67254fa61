package mcptools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

func readText(t *testing.T, cn *conn, uri string) string {
	t.Helper()
	res, err := cn.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("read %s: %T", uri, res.Contents[0])
	}
	return tc.Text
}

func updatedFor(uri string) func(mcp.JSONRPCNotification) bool {
	return func(n mcp.JSONRPCNotification) bool { return n.Params.AdditionalFields["uri"] == uri }
}

// TestResources reads every resource and checks that subscribers hear about changes —
// a tool's write and a device unplugged and plugged back in — on every transport in
// both eras (resources/subscribe in 2025-11-25, subscriptions/listen in 2026-07-28).
func TestResources(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{ownRig: true}) // it unplugs the BeatStep
			cn := e.dial(m.transport, m.modern, "reader")
			ctx := context.Background()

			rl, err := cn.c.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range rl.Resources {
				uris = append(uris, r.URI)
			}
			slices.Sort(uris)
			if want := []string{ChangelogRecentURI, SchemaURI}; !slices.Equal(uris, want) {
				t.Fatalf("resources %v, want %v", uris, want)
			}
			tl, err := cn.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var tmpls []string
			for _, r := range tl.ResourceTemplates {
				tmpls = append(tmpls, r.URITemplate.Raw())
			}
			slices.Sort(tmpls)
			if want := []string{"devgraph://node/{+id}", "devgraph://robot/{+id}/parameters", "devgraph://robot/{+id}/state"}; !slices.Equal(tmpls, want) {
				t.Fatalf("templates %v, want %v", tmpls, want)
			}

			if sdl := readText(t, cn, SchemaURI); !strings.Contains(sdl, "type Query") || !strings.Contains(sdl, "identities") {
				t.Fatalf("schema: %.200s", sdl)
			}
			cn.ok("graph_unbound", nil) // the sources have been read: devices are recorded
			var dev struct {
				Kind   string `json:"kind"`
				Device struct {
					ID  string `json:"id"`
					Ref string `json:"ref"`
				} `json:"device"`
			}
			if err := json.Unmarshal([]byte(readText(t, cn, NodeURI("usb:3-3.2"))), &dev); err != nil || dev.Device.Ref != "usb:3-3.2" {
				t.Fatalf("node usb:3-3.2: %+v %v", dev, err)
			}
			// Ids with colons in the {+id} template, in their full form too.
			if txt := readText(t, cn, NodeURI(dev.Device.ID)); !strings.Contains(txt, `"ref": "usb:3-3.2"`) {
				t.Fatalf("node %s: %.300s", dev.Device.ID, txt)
			}
			if _, err := cn.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: NodeURI("identity:nobody")}}); err == nil ||
				!strings.Contains(err.Error(), "nobody") {
				t.Fatalf("unknown node: %v", err)
			}

			cn.ok("graph_bind", map[string]any{"ref": "usb:3-3.2", "new_name": "Roland JD-Xi"})
			identURI := NodeURI("identity:roland-jd-xi")
			if txt := readText(t, cn, identURI); !strings.Contains(txt, `"name": "Roland JD-Xi"`) {
				t.Fatalf("identity node: %.300s", txt)
			}
			if txt := readText(t, cn, ChangelogRecentURI); !strings.Contains(txt, "device.bind") {
				t.Fatalf("changelog/recent lacks the bind: %.300s", txt)
			}

			// Subscribe: the identity (by its bare slug), the recent changelog, and the
			// BeatStep about to be unplugged.
			beat := NodeURI("usb:3-4.1")
			subs := []string{NodeURI("roland-jd-xi"), ChangelogRecentURI, beat}
			t.Cleanup(cn.subscribe(ctx, subs...))
			waitFor(t, func() bool { return e.srv.subs.count() >= len(subs) }, "subscriptions recorded")

			cn.ok("graph_tag", map[string]any{"target": "roland-jd-xi", "add": []any{"role:synth"}})
			cn.waitNote(string(mcp.MethodNotificationResourceUpdated), updatedFor(subs[0]), 20*time.Second)
			cn.waitNote(string(mcp.MethodNotificationResourceUpdated), updatedFor(ChangelogRecentURI), 20*time.Second)

			// Hot-plug: pull the BeatStep out of the rig; the poll loop records
			// device.disappear and the subscriber hears of it. Then plug it back.
			// Only an update that comes after the unplug counts: an earlier one (the
			// BeatStep recorded by a poll after the subscription) says nothing about it.
			before := len(cn.notesOf(string(mcp.MethodNotificationResourceUpdated)))
			mark := cn.mark()
			rig := fixture.DemoRig()
			if err := rig.Remove("3-4.1"); err != nil {
				t.Fatal(err)
			}
			if err := rig.Write(e.rig); err != nil {
				t.Fatal(err)
			}
			cn.waitNoteFrom(mark, string(mcp.MethodNotificationResourceUpdated), updatedFor(beat), 20*time.Second)
			waitFor(t, func() bool { return strings.Contains(readText(t, cn, beat), `"present": false`) }, "the unplugged BeatStep read as not present")
			mark = cn.mark()
			if err := fixture.DemoRig().Write(e.rig); err != nil {
				t.Fatal(err)
			}
			cn.waitNoteFrom(mark, string(mcp.MethodNotificationResourceUpdated), updatedFor(beat), 20*time.Second)
			if len(cn.notesOf(string(mcp.MethodNotificationResourceUpdated))) < before+2 {
				t.Fatalf("no update for the unplug and the re-plug")
			}
			waitFor(t, func() bool { return strings.Contains(readText(t, cn, beat), `"present": true`) }, "the re-plugged BeatStep read as present")
			if m.modern {
				// Notifications on a listen stream carry its subscription id.
				n := cn.waitNote(string(mcp.MethodNotificationResourceUpdated), updatedFor(beat), time.Second)
				if n.Params.Meta[mcp.MetaKeySubscriptionID] == nil {
					t.Errorf("resources/updated on a listen stream without a subscription id: %+v", n.Params.Meta)
				}
			} else {
				cn.unsubscribe(ctx, beat)
				waitFor(t, func() bool { return e.srv.subs.count() == len(subs)-1 }, "unsubscribe recorded")
			}
		})
	}
}

func TestPrompts(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(modeName(m.transport, m.modern), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			cn := e.dial(m.transport, m.modern, "prompter")
			ctx := context.Background()
			pl, err := cn.c.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range pl.Prompts {
				names = append(names, p.Name)
			}
			slices.Sort(names)
			want := []string{PromptBindNewDevice, PromptDescribeSetup, PromptReviewChanges, PromptRobotMission}
			if !slices.Equal(names, want) {
				t.Fatalf("prompts %v, want %v", names, want)
			}
			for _, tc := range []struct {
				name string
				args map[string]string
				want []string
			}{
				{PromptDescribeSetup, map[string]string{"focus": "role:synth"}, []string{"graph_find", "graph_unbound", "graph_trace", "usb:3-3.2", "role:synth"}},
				{PromptBindNewDevice, map[string]string{"name": "Roland JD-Xi"}, []string{"graph_unbound", "graph_bind", "graph_suggest_tags", "Roland JD-Xi"}},
				{PromptReviewChanges, map[string]string{"since": "7d", "actor": "mcp:*"}, []string{`graph_changelog {since: "7d", actor: "mcp:*"}`}},
				{PromptRobotMission, map[string]string{"robot": "robot:scout", "object": "crate"}, []string{"robot_arm", "robot_navigate", "robot_grasp", "robot_release", "robot:scout", "crate"}},
			} {
				res, err := cn.c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: tc.name, Arguments: tc.args}})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if len(res.Messages) == 0 {
					t.Fatalf("%s: no messages", tc.name)
				}
				txt := res.Messages[0].Content.(mcp.TextContent).Text
				for _, w := range tc.want {
					if !strings.Contains(txt, w) {
						t.Errorf("%s: %q lacks %q", tc.name, txt, w)
					}
				}
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	// A bound on liveness, not a speed: under -race with the other packages' tests
	// running, coalesced notifications took over 5 s to arrive (make race, CI).
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestResources_NoteNode reads a note as a node resource: the note itself, not just its id.
func TestResources_NoteNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	ctx := graph.WithActor(context.Background(), "cli:alice")
	if _, err := e.svc.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	n, err := e.svc.AddNote(ctx, graph.NoteCreate{Target: "korg-minilogue", Kind: "warning", Body: "key C4 sticks"})
	if err != nil {
		t.Fatal(err)
	}
	cn := e.dial("inprocess", false, "reader")
	var doc struct {
		Kind string     `json:"kind"`
		Note graph.Note `json:"note"`
	}
	if err := json.Unmarshal([]byte(readText(t, cn, NodeURI(n.ID))), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "note" || doc.Note.ID != n.ID || doc.Note.Body != "key C4 sticks" || doc.Note.Kind != "warning" ||
		doc.Note.Target != "identity:korg-minilogue" || doc.Note.Author != "cli:alice" {
		t.Fatalf("note node: %+v", doc)
	}
	if err := e.svc.DeleteNote(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	_, err = cn.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: NodeURI(n.ID)}})
	if err == nil || !strings.Contains(err.Error(), "note") {
		t.Fatalf("deleted note: %v", err)
	}
}

// TestResources_ClientNode: a client's id may hold spaces ("Bitwig Studio"); its node
// resource is read through NodeURI (spaces percent-encoded, as a URI must carry them) and
// through a URI a model writes by hand with %20.
func TestResources_ClientNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cn := e.dial("inprocess", false, "reader")
	cn.ok("graph_unbound", nil) // the sources have been read
	const id = "client:alsa:Bitwig Studio"
	for _, uri := range []string{NodeURI(id), "devgraph://node/client:alsa:Bitwig%20Studio"} {
		var doc struct {
			Kind   string `json:"kind"`
			Client struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"client"`
			Relations []struct {
				Type string `json:"type"`
			} `json:"relations"`
		}
		if err := json.Unmarshal([]byte(readText(t, cn, uri)), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "client" || doc.Client.ID != id || doc.Client.Name != "Bitwig Studio" || len(doc.Relations) == 0 {
			t.Fatalf("%s: %+v", uri, doc)
		}
	}
	if got, want := NodeURI(id), "devgraph://node/client:alsa:Bitwig%20Studio"; got != want {
		t.Fatalf("NodeURI=%q, want %q", got, want)
	}
}
