package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// TestPrintTrace draws a hand-built trace: a stretch without forks on one line, a fork as
// indented branches, a cycle and the ends marked, ports beside their vertices.
func TestPrintTrace(t *testing.T) {
	t.Parallel()
	tr := &graph.TraceResult{
		From:      "identity:keystep",
		Direction: graph.DirOut,
		Vertices: []*graph.Vertex{
			{ID: "identity:keystep", Name: "KeyStep"},
			{ID: "identity:jdxi", Name: "JD-Xi"},
			{ID: "client:alsa:Bitwig Studio", Name: "Bitwig Studio"},
			{ID: "identity:scarlett", Name: "Scarlett 2i2"},
			{ID: "device:spk", Name: "Monitors"},
		},
		Hops: []graph.TraceHop{
			{Hop: graph.Hop{Type: "cable", From: "identity:keystep", FromPort: "MIDI OUT", To: "identity:jdxi", ToPort: "MIDI IN"}, Depth: 1, Parent: -1},
			{Hop: graph.Hop{Type: "subscribed", From: "identity:jdxi", FromPort: "JD-Xi MIDI 1", To: "client:alsa:Bitwig Studio", ToPort: "0", Observed: true}, Depth: 2, Parent: 0, End: true},
			{Hop: graph.Hop{Type: "cable", From: "identity:jdxi", FromPort: "OUT L", To: "identity:scarlett", ToPort: "Input 1"}, Depth: 2, Parent: 0},
			{Hop: graph.Hop{Type: "cable", From: "identity:scarlett", To: "device:spk"}, Depth: 3, Parent: 2, End: true},
			{Hop: graph.Hop{Type: "cable", From: "identity:scarlett", To: "identity:keystep"}, Depth: 3, Parent: 2, Cycle: true},
		},
		Ends:    []string{"client:alsa:Bitwig Studio", "device:spk"},
		Bounded: graph.Bounded{Visited: 5},
	}
	var b bytes.Buffer
	if err := printTrace(&b, tr); err != nil {
		t.Fatal(err)
	}
	want := `KeyStep [MIDI OUT] → cable → [MIDI IN] JD-Xi
├─ [JD-Xi MIDI 1] → subscribed → [0] Bitwig Studio (end)
└─ [OUT L] → cable → [Input 1] Scarlett 2i2
   ├─ → cable → Monitors (end)
   └─ → cable → KeyStep (cycle: already on this branch)
ends: Bitwig Studio (client:alsa:Bitwig Studio), Monitors (device:spk)
`
	if got := b.String(); got != want {
		t.Errorf("trace drawn as\n%s\nwant\n%s", got, want)
	}

	t.Run("Linear", func(t *testing.T) {
		lin := &graph.TraceResult{From: "identity:keystep", Direction: graph.DirOut, Vertices: tr.Vertices[:3], Hops: tr.Hops[:2],
			Ends: []string{"client:alsa:Bitwig Studio"}, Bounded: graph.Bounded{Truncated: true, TruncatedBy: graph.TruncTime, Visited: 3}}
		b.Reset()
		if err := printTrace(&b, lin); err != nil {
			t.Fatal(err)
		}
		want := "KeyStep [MIDI OUT] → cable → [MIDI IN] JD-Xi [JD-Xi MIDI 1] → subscribed → [0] Bitwig Studio (end)\n" +
			"ends: Bitwig Studio (client:alsa:Bitwig Studio)\n" +
			"truncated by time after 3 vertices: the trace may go on further\n"
		if got := b.String(); got != want {
			t.Errorf("linear trace drawn as\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Nothing", func(t *testing.T) {
		b.Reset()
		if err := printTrace(&b, &graph.TraceResult{From: "device:x", Direction: graph.DirIn}); err != nil {
			t.Fatal(err)
		}
		if got, want := b.String(), "device:x: nothing traced enters it\n"; got != want {
			t.Errorf("empty trace %q, want %q", got, want)
		}
		b.Reset()
		printTrace(&b, &graph.TraceResult{From: "identity:keystep", Port: "CV OUT", Direction: graph.DirOut, Vertices: tr.Vertices[:1]})
		if got, want := b.String(), "KeyStep [CV OUT]: nothing traced leaves it\n"; got != want {
			t.Errorf("empty trace from a port %q, want %q", got, want)
		}
	})
}

// TestPrintPath writes a path as one chain, a hop walked backwards with reversed arrows.
func TestPrintPath(t *testing.T) {
	t.Parallel()
	p := &graph.PathResult{From: "device:base", To: "device:root", Found: true,
		Vertices: []*graph.Vertex{{ID: "device:base", Name: "FT232R USB UART"}, {ID: "device:hub", Name: "USB 2.0 Hub"}, {ID: "device:root", Name: "xHCI Host Controller"}},
		Hops: []graph.Hop{
			{Type: "via", From: "device:base", To: "device:hub", Observed: true},
			{Type: "via", From: "device:hub", To: "device:root", Observed: true},
		}}
	var b bytes.Buffer
	if err := printPath(&b, p); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "FT232R USB UART → via → USB 2.0 Hub → via → xHCI Host Controller (2 hops)\n"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	p.Hops[1].Reverse = true
	b.Reset()
	printPath(&b, p)
	if got, want := b.String(), "FT232R USB UART → via → USB 2.0 Hub ← via ← xHCI Host Controller (2 hops)\n"; got != want {
		t.Errorf("reversed path %q, want %q", got, want)
	}
	b.Reset()
	printPath(&b, &graph.PathResult{From: "device:base", To: "device:x", Vertices: p.Vertices[:1], Bounded: graph.Bounded{Truncated: true, TruncatedBy: graph.TruncDepth, Visited: 9}})
	if got := b.String(); !strings.HasPrefix(got, "no path within the bounds between FT232R USB UART (device:base) and device:x\ntruncated by depth") {
		t.Errorf("no path: %q", got)
	}
}

// TestCLI_RelationUsage: the relation verbs' bad usage exits 2 with one line, before any
// database is opened; help VERB is the verb's -h.
func TestCLI_RelationUsage(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := "--db=" + t.TempDir() + "/x.db"
	c.fail(2, "missing arguments", "relate", "keystep", "cable", db)
	c.fail(2, "unexpected argument", "relate", "a", "cable", "b", "c", db)
	c.fail(2, "give a relation id", "unrelate", "a", "cable", db)
	c.fail(2, "go with the tuple", "unrelate", "rel:x", "--from-port", "OUT", db)
	c.fail(2, "nothing to change", "relation", "update", "rel:x", db)
	c.fail(2, "missing subcommand", "relation", db)
	c.fail(2, "unknown subcommand", "relation", "delete", db)
	c.fail(2, "takes no NODE", "relations", "--types", "keystep", db)
	c.fail(2, "--direction needs a NODE", "relations", "--direction", "out", db)
	c.fail(2, "missing arguments", "path", "keystep", db)
	c.fail(2, "missing arguments", "trace", db)
	c.fail(2, "unknown --format", "export", "--format", "png", db)
	c.fail(2, "--depth goes with --around", "export", "--format", "dot", "--depth", "2", db)
	c.fail(2, "give --format dot", "export", "--around", "keystep", db)
	c.fail(2, "unknown shell", "completion", "tcsh")
	c.fail(2, "unknown command", "help", "frobnicate")

	for _, verb := range [][]string{{"relate"}, {"relation", "update"}, {"unrelate"}, {"relations"}, {"trace"}, {"path"}, {"export"}, {"completion"}} {
		out, errs, code := c.run(append([]string{"help"}, verb...)...)
		if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: devgraph "+strings.Join(verb, " ")) {
			t.Errorf("help %s: exit %d, stderr %q, stdout %q", strings.Join(verb, " "), code, errs, out)
		}
	}
	if out := c.ok("help", "relate"); !strings.Contains(out, "-new-type") || !strings.Contains(out, "-from-port") {
		t.Errorf("help relate lacks its flags:\n%s", out)
	}
	if out := c.ok("help", "relation"); !strings.Contains(out, "\n  update REL") {
		t.Errorf("help relation lacks its subcommand:\n%s", out)
	}
	if out := c.ok("help"); !strings.Contains(out, "  unrelate ") || !strings.Contains(out, "  trace ") {
		t.Errorf("help lacks the relation verbs:\n%s", out)
	}
}
