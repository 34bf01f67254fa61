package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// The demo rig's devices the relation journey uses.
const (
	keystepRef  = "usb:3-4.4.1" // Arturia KeyStep 32, behind two hubs
	jdxiRef     = "usb:3-3.2"   // Roland JD-Xi, subscribed to Bitwig Studio in the sequencer
	robotBase   = "usb:3-7"     // FTDI USB-serial robot base
	rootHubRef  = "usb:usb3"    // bus 3's root hub: the controller every via chain ends at
	bitwig      = "client:alsa:Bitwig Studio"
	keystepID   = "identity:keystep"
	jdxiID      = "identity:jdxi"
	keystepName = "Arturia KeyStep"
)

// journey runs devgraph commands one way (in-process on the file, or the binary beside a
// running server) and checks their outcome.
type journey struct {
	t   *testing.T
	run func(args ...string) (stdout, stderr string, code int)
}

func (j *journey) ok(args ...string) string {
	j.t.Helper()
	out, errs, code := j.run(args...)
	if code != 0 {
		j.t.Fatalf("devgraph %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), code, errs, out)
	}
	return out
}

func (j *journey) json(v any, args ...string) {
	j.t.Helper()
	out := j.ok(args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		j.t.Fatalf("devgraph %s: not JSON (%v): %s", strings.Join(args, " "), err, out)
	}
}

// fail checks exit 1 with one line on stderr containing every want, and that the
// changelog did not move: bad input writes nothing.
func (j *journey) fail(wants []string, args ...string) {
	j.t.Helper()
	before := j.head()
	out, errs, code := j.run(args...)
	if code != 1 {
		j.t.Fatalf("devgraph %s: exit %d, want 1\nstderr: %s\nstdout: %s", strings.Join(args, " "), code, errs, out)
	}
	if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n > 0 || errs == "" {
		j.t.Errorf("devgraph %s: stderr is not one line: %q", strings.Join(args, " "), errs)
	}
	for _, w := range wants {
		if !strings.Contains(errs, w) {
			j.t.Errorf("devgraph %s: stderr %q lacks %q", strings.Join(args, " "), errs, w)
		}
	}
	for _, other := range []string{"graph_", "new_type"} { // MCP's words, not the CLI's
		if strings.Contains(errs, other) {
			j.t.Errorf("devgraph %s: stderr %q speaks MCP (%q) to a person at a terminal", strings.Join(args, " "), errs, other)
		}
	}
	if after := j.head(); after != before {
		j.t.Errorf("devgraph %s failed but wrote: changelog head %d → %d", strings.Join(args, " "), before, after)
	}
}

// head is the newest event's seq.
func (j *journey) head() uint64 {
	j.t.Helper()
	var evs eventList
	j.json(&evs, "changelog", "--json", "--limit", "1")
	if len(evs.Items) == 0 {
		return 0
	}
	return evs.Items[0].Seq
}

type relationList struct {
	Items []*graph.Relation `json:"items"`
	Total int               `json:"total"`
}

func (l relationList) find(typ, from, to string) *graph.Relation {
	for _, r := range l.Items {
		if r.Type == typ && r.From == from && r.To == to {
			return r
		}
	}
	return nil
}

// TestCLI_RelationJourney is issue 10's journey through the CLI on the demo rig, once on
// the file and once through a running server's socket: bind the KeyStep and the JD-Xi,
// cable one to the other, trace from the KeyStep to the DAW through the JD-Xi's
// sequencer subscription, find the robot base's path to its USB controller, delete the
// KeyStep (the cable's relation.remove in the changelog) and restore it (the cable is
// back); bad input exits 1 with one line and writes nothing; export draws the graph.
func TestCLI_RelationJourney(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		c := newCLI(t)
		r := newTestRig(t)
		base := append([]string{"--db", filepath.Join(t.TempDir(), "journey.db")}, r.flags()...)
		relationJourney(t, &journey{t: t, run: func(args ...string) (string, string, int) {
			return c.run(append(args, base...)...)
		}})
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		env := procEnv(t)
		r := newTestRig(t)
		db := filepath.Join(t.TempDir(), "journey.db")
		srv := startServe(t, env, append([]string{"--db", db, "--poll", "0"}, r.flags()...)...)
		srv.waitLine("socket: ")
		relationJourney(t, &journey{t: t, run: func(args ...string) (string, string, int) {
			// No source roots: only the server reads the rig, so every answer came
			// through its socket (the file itself is held).
			return runBin(t, env, append(args, "--db", db)...)
		}})
		srv.cmd.Process.Signal(syscall.SIGTERM)
		if err := srv.wait(); err != nil {
			t.Errorf("serve ended with %v:\n%s", err, srv.log())
		}
	})
}

func relationJourney(t *testing.T, j *journey) {
	// Bind the KeyStep and the JD-Xi.
	j.ok("bind", keystepRef, "--new", keystepName, "--slug", "keystep")
	j.ok("bind", jdxiRef, "--new", "Roland JD-Xi", "--slug", "jdxi")

	// Cable KeyStep MIDI OUT → JD-Xi MIDI IN: a dry run writes nothing, then the add.
	cable := []string{"relate", "keystep", "cable", "jdxi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--attr", "kind=midi-din"}
	head := j.head()
	if out := j.ok(append(cable, "--dry-run")...); !strings.HasPrefix(out, "would add ") {
		t.Errorf("relate --dry-run printed %q", out)
	}
	if h := j.head(); h != head {
		t.Errorf("relate --dry-run wrote: head %d → %d", head, h)
	}
	var ch graph.RelationChange
	j.json(&ch, append(cable, "--json", "-m", "patched the desk")...)
	if ch.Action != "add" || ch.Events != 1 || ch.Relation == nil || graph.KindOf(ch.Relation.ID) != graph.KindRelation {
		t.Fatalf("relate: %+v", ch)
	}
	rel := ch.Relation
	if rel.From != keystepID || rel.To != jdxiID || rel.FromPort != "MIDI OUT" || rel.ToPort != "MIDI IN" || rel.Attrs["kind"] != "midi-din" || !strings.HasPrefix(rel.Author, "cli:") {
		t.Errorf("the cable: %+v", rel)
	}
	head = j.head()

	// The same relate again (ports typed in another case, flags before and between the
	// positionals) writes nothing.
	again := []string{"relate", "--attr", "kind=midi-din", "--from-port", "midi out", "keystep", "cable", "--to-port", "MIDI IN", "jdxi"}
	if out := j.ok(again...); !strings.Contains(out, rel.ID) || !strings.Contains(out, "nothing written") {
		t.Errorf("repeat relate printed %q", out)
	}
	ch = graph.RelationChange{}
	j.json(&ch, append(again, "--json")...)
	if ch.Action != "none" || ch.Events != 0 || ch.Relation == nil || ch.Relation.ID != rel.ID {
		t.Errorf("repeat relate: %+v", ch)
	}
	if h := j.head(); h != head {
		t.Errorf("repeat relate wrote: head %d → %d", head, h)
	}

	// relations: the KeyStep's cable, and on the JD-Xi the cable and the observed
	// subscription to the DAW; the vocabulary counts the cable.
	var rels relationList
	j.json(&rels, "relations", "keystep", "--json")
	if r := rels.find(graph.RelCable, keystepID, jdxiID); r == nil || r.ID != rel.ID || r.Observed {
		t.Errorf("relations keystep: %s", mustJSONs(rels))
	}
	rels = relationList{}
	j.json(&rels, "relations", "jdxi", "--json")
	var sub *graph.Relation
	for _, r := range rels.Items {
		if r.Type == graph.RelSubscribed && r.To == bitwig {
			sub = r
		}
	}
	if rels.find(graph.RelCable, keystepID, jdxiID) == nil || sub == nil || !sub.Observed || sub.Source != "alsa" {
		t.Errorf("relations jdxi lacks the cable or the subscription to %s: %s", bitwig, mustJSONs(rels))
	}
	if rels.Total != len(rels.Items) {
		t.Errorf("relations jdxi: total %d, %d items", rels.Total, len(rels.Items))
	}
	rels = relationList{}
	j.json(&rels, "relations", "jdxi", "--direction", "in", "--type", "cable", "--json")
	if len(rels.Items) != 1 || rels.Items[0].ID != rel.ID {
		t.Errorf("relations jdxi --direction in --type cable: %s", mustJSONs(rels))
	}
	// Without a node: every declared relation; --observed, everything the sources see.
	rels = relationList{}
	j.json(&rels, "relations", "--json")
	if rels.Total != 1 || len(rels.Items) != 1 || rels.Items[0].ID != rel.ID {
		t.Errorf("relations (all declared): %s", mustJSONs(rels))
	}
	rels = relationList{}
	j.json(&rels, "relations", "--observed", "--json")
	if len(rels.Items) == 0 || rels.Total != len(rels.Items) {
		t.Errorf("relations --observed: %d items, total %d", len(rels.Items), rels.Total)
	}
	for _, r := range rels.Items {
		if !r.Observed || graph.KindOf(r.ID) != graph.KindObserved {
			t.Errorf("relations --observed lists %+v", r)
		}
	}
	if table := j.ok("relations", "jdxi"); !strings.Contains(table, rel.ID) || !strings.Contains(table, "observed (alsa)") || !strings.Contains(table, "kind=midi-din") {
		t.Errorf("relations jdxi table:\n%s", table)
	}
	var types struct {
		Items []graph.RelationTypeCount `json:"items"`
	}
	j.json(&types, "relations", "--types", "--json")
	counts := map[string]graph.RelationTypeCount{}
	for _, tc := range types.Items {
		counts[tc.Type] = tc
	}
	if counts["cable"].Count != 1 || !counts["cable"].Seeded || !counts["subscribed"].Reserved || counts["controls"].Type == "" {
		t.Errorf("relations --types: %+v", types.Items)
	}
	if table := j.ok("relations", "--types"); !strings.Contains(table, "observed only") {
		t.Errorf("relations --types table:\n%s", table)
	}

	// show lists the relations, declared and observed, in the table and the JSON.
	shown := j.ok("show", "jdxi")
	if !strings.Contains(shown, rel.ID) || !strings.Contains(shown, bitwig) {
		t.Errorf("show jdxi does not list its relations:\n%s", shown)
	}
	var showJSON struct {
		ID        string            `json:"id"`
		Relations []*graph.Relation `json:"relations"`
	}
	j.json(&showJSON, "show", "keystep", "--json")
	if showJSON.ID != keystepID || len(showJSON.Relations) == 0 || showJSON.Relations[0].ID != rel.ID {
		t.Errorf("show keystep --json: %s", mustJSONs(showJSON))
	}
	// A bound device shows its identity's relations: one vertex.
	if shown := j.ok("show", jdxiRef); !strings.Contains(shown, rel.ID) || !strings.Contains(shown, bitwig) {
		t.Errorf("show %s does not list the relations of its vertex:\n%s", jdxiRef, shown)
	}
	if out := j.ok("show", rel.ID); !strings.Contains(out, "midi-din") || !strings.Contains(out, "[MIDI IN] "+jdxiID) {
		t.Errorf("show %s:\n%s", rel.ID, out)
	}
	if out := j.ok("show", bitwig); !strings.Contains(out, "Bitwig Studio") || !strings.Contains(out, "subscribed") {
		t.Errorf("show %s:\n%s", bitwig, out)
	}

	// trace from the KeyStep reaches the DAW: cable to the JD-Xi, then its sequencer
	// subscription.
	var tr graph.TraceResult
	j.json(&tr, "trace", "keystep", "--json")
	if tr.From != keystepID || !contains(tr.Ends, bitwig) || tr.Truncated {
		t.Fatalf("trace keystep: %s", mustJSONs(tr))
	}
	var path []string
	for i := range tr.Hops {
		if tr.Hops[i].To != bitwig {
			continue
		}
		for k := i; k >= 0; k = tr.Hops[k].Parent {
			path = append([]string{tr.Hops[k].Type}, path...)
		}
		break
	}
	if strings.Join(path, " ") != "cable subscribed" {
		t.Errorf("trace keystep reaches %s by %v, want cable then subscribed: %s", bitwig, path, mustJSONs(tr))
	}
	drawn := j.ok("trace", "keystep")
	if !strings.HasPrefix(drawn, keystepName+" [MIDI OUT] → cable → [MIDI IN] Roland JD-Xi") || !strings.Contains(drawn, "subscribed →") || !strings.Contains(drawn, "Bitwig Studio (end)") {
		t.Errorf("trace keystep drawn as:\n%s", drawn)
	}
	golden(t, "trace-keystep", drawn)
	// --port filters the first hop: nothing leaves the KeyStep by a port it has no cable on.
	tr = graph.TraceResult{}
	j.json(&tr, "trace", "keystep", "--port", "CV OUT", "--json")
	if len(tr.Hops) != 0 {
		t.Errorf("trace keystep --port \"CV OUT\": %s", mustJSONs(tr))
	}
	tr = graph.TraceResult{}
	j.json(&tr, "trace", "keystep", "--port", "midi out", "--json")
	if !contains(tr.Ends, bitwig) {
		t.Errorf("trace keystep --port \"midi out\" does not reach %s: %s", bitwig, mustJSONs(tr))
	}
	// Upstream from the DAW finds the KeyStep.
	tr = graph.TraceResult{}
	j.json(&tr, "trace", bitwig, "--in", "--json")
	if !contains(tr.Ends, keystepID) {
		t.Errorf("trace %q --in does not reach the KeyStep: %s", bitwig, mustJSONs(tr))
	}

	// path: the robot base hangs off the root hub (its controller) by via.
	var p graph.PathResult
	j.json(&p, "path", robotBase, rootHubRef, "--json")
	if !p.Found || len(p.Hops) == 0 || len(p.Vertices) != len(p.Hops)+1 {
		t.Fatalf("path %s %s: %s", robotBase, rootHubRef, mustJSONs(p))
	}
	for _, h := range p.Hops {
		if h.Type != graph.RelVia || !h.Observed {
			t.Errorf("path hop %+v, want observed via", h)
		}
	}
	if out := j.ok("path", robotBase, rootHubRef, "--directed"); !strings.Contains(out, "→ via →") || !strings.Contains(out, plural(len(p.Hops), "hop", "hops")) {
		t.Errorf("path drawn as %q", out)
	}
	golden(t, "path-robot-base", j.ok("path", robotBase, rootHubRef))
	// keystep to jdxi is one cable; directed the other way there is none.
	p = graph.PathResult{}
	j.json(&p, "path", "jdxi", "keystep", "--directed", "--type", "cable", "--json")
	if p.Found {
		t.Errorf("path jdxi keystep --directed --type cable found %s", mustJSONs(p))
	}

	// relation update: a key added, the others kept; the port changed.
	ch = graph.RelationChange{}
	j.json(&ch, "relation", "update", rel.ID, "--attr", "colour=red", "--json")
	if ch.Action != "update" || ch.Relation.Attrs["colour"] != "red" || ch.Relation.Attrs["kind"] != "midi-din" {
		t.Errorf("relation update --attr colour=red: %+v", ch)
	}
	if out := j.ok("relation", "update", rel.ID, "--attr", "colour="); !strings.HasPrefix(out, "updated "+rel.ID) || strings.Contains(out, "colour") {
		t.Errorf("relation update --attr colour=: %q", out)
	}

	ch = graph.RelationChange{}
	j.json(&ch, "relation", "update", rel.ID, "--to-port", "MIDI IN 2", "--json")
	if ch.Action != "update" || ch.Relation.ToPort != "MIDI IN 2" || ch.Relation.FromPort != "MIDI OUT" {
		t.Errorf("relation update --to-port: %+v", ch)
	}
	j.ok("relation", "update", rel.ID, "--to-port", "MIDI IN")
	var updates eventList
	j.json(&updates, "changelog", "--action", "relation.update", "--target", rel.ID, "--json")
	if len(updates.Items) != 4 {
		t.Errorf("relation.update events on %s: %d, want 4 (two attrs, two ports)", rel.ID, len(updates.Items))
	}

	// Bad input: exit 1, one line naming what is wrong, nothing written.
	j.fail([]string{"keystpe", "keystep"}, "relate", "keystpe", "cable", "jdxi", "--attr", "kind=midi-din")
	j.fail([]string{"self"}, "relate", "jdxi", "cable", "jdxi", "--attr", "kind=midi-din")
	j.fail([]string{"self-loop"}, "relate", "jdxi", "controls", jdxiRef) // the JD-Xi's own device: one vertex
	j.fail([]string{"cabel", "--new-type"}, "relate", "keystep", "cabel", "jdxi")
	j.fail([]string{"via"}, "relate", "keystep", "via", "jdxi", "--new-type")
	j.fail([]string{"kind"}, "relate", "keystep", "cable", "jdxi", "--to-port", "USB")
	j.fail([]string{"client"}, "relate", "jdxi", "controls", bitwig)
	manyAttrs := []string{"relate", "keystep", "controls", "jdxi"}
	for i := 0; i <= graph.MaxRelationAttrs; i++ {
		manyAttrs = append(manyAttrs, "--attr", fmt.Sprintf("k%d=v", i))
	}
	j.fail([]string{"attr"}, manyAttrs...)
	j.fail([]string{"attr"}, "relate", "keystep", "controls", "jdxi", "--attr", "note="+strings.Repeat("x", graph.MaxRelationAttrVal+1))
	j.fail([]string{"port"}, "relate", "keystep", "controls", "jdxi", "--from-port", strings.Repeat("P", graph.MaxPort+1))
	j.fail([]string{"key=value"}, "relate", "keystep", "controls", "jdxi", "--attr", "novalue")
	j.fail([]string{"depth"}, "export", "--format", "dot", "--around", "keystep", "--depth", "9")
	j.fail([]string{"depth"}, "path", "keystep", "jdxi", "--max-depth", "99")
	j.fail([]string{"--depth 0", "1-4"}, "export", "--format", "dot", "--around", "keystep", "--depth", "0")
	j.fail([]string{"--max-depth 0", "1-8"}, "path", "keystep", "jdxi", "--max-depth", "0")
	j.fail([]string{"direction"}, "relations", "keystep", "--direction", "sideways")
	j.fail([]string{"nosuch"}, "trace", "nosuch")
	j.fail([]string{"rel:0190"}, "unrelate", "rel:01900000-0000-7000-8000-000000000000")
	j.fail([]string{"rel:0190", "run `devgraph relations`"}, "relation", "update", "rel:01900000-0000-7000-8000-000000000000", "--attr", "x=y")
	j.fail([]string{"tag", "run `devgraph identities`"}, "relate", "keystep", "controls", "tag:role:synth")
	j.fail([]string{"jdxi"}, "unrelate", "jdxi", "controls", "keystep")
	j.fail([]string{"already relates", "relation update " + rel.ID}, "relate", "keystep", "cable", "jdxi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--attr", "kind=trs-midi")

	// Export draws the graph for Graphviz and Mermaid, whole or around a node.
	if out := j.ok("export", "--format", "dot"); !strings.HasPrefix(out, "digraph") || !strings.Contains(out, keystepName) {
		t.Errorf("export --format dot:\n%.400s", out)
	}
	if out := j.ok("export", "--format", "mermaid", "--around", "keystep", "--depth", "2"); !strings.HasPrefix(out, "flowchart") || !strings.Contains(out, "Bitwig Studio") {
		t.Errorf("export --format mermaid --around keystep --depth 2:\n%.400s", out)
	}
	if out := j.ok("export"); !strings.Contains(out, rel.ID) {
		t.Errorf("export (jsonl) lacks the cable %s", rel.ID)
	}

	// Delete the KeyStep: its cable goes, recorded as relation.remove.
	j.ok("identity", "delete", "keystep", "-m", "lent to a friend")
	var evs eventList
	j.json(&evs, "changelog", "--action", "relation.*", "--json")
	var removed *graph.Event
	for _, e := range evs.Items {
		if e.Action == "relation.remove" && e.Target == rel.ID {
			removed = e
		}
	}
	if removed == nil {
		t.Fatalf("the changelog lacks relation.remove of %s: %s", rel.ID, j.ok("changelog", "--action", "relation.*"))
	}
	if removed.Message != "lent to a friend" {
		t.Errorf("relation.remove message %q", removed.Message)
	}
	rels = relationList{}
	j.json(&rels, "relations", "jdxi", "--type", "cable", "--json")
	if len(rels.Items) != 0 {
		t.Errorf("the cable outlived the KeyStep: %s", mustJSONs(rels))
	}

	// Restore it: the cable is back, the same relation.
	j.ok("identity", "restore", "keystep")
	rels = relationList{}
	j.json(&rels, "relations", "keystep", "--json")
	if r := rels.find(graph.RelCable, keystepID, jdxiID); r == nil || r.ID != rel.ID || r.FromPort != "MIDI OUT" {
		t.Errorf("relations after restore: %s", mustJSONs(rels))
	}

	// unrelate by the tuple (dry first), then by id: gone, and a second time an error.
	if out := j.ok("unrelate", "keystep", "cable", "jdxi", "--from-port", "MIDI OUT", "--to-port", "MIDI IN", "--dry-run"); !strings.HasPrefix(out, "would remove "+rel.ID) {
		t.Errorf("unrelate --dry-run: %q", out)
	}
	if out := j.ok("unrelate", rel.ID); !strings.HasPrefix(out, "removed "+rel.ID) {
		t.Errorf("unrelate: %q", out)
	}
	j.fail([]string{rel.ID}, "unrelate", rel.ID)
	if v := j.ok("changelog", "verify"); !strings.HasPrefix(v, "changelog ok") {
		t.Errorf("changelog verify: %q", v)
	}
}
