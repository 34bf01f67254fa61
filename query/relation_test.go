package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// The demo rig's things these tests relate (sources/fixture.DemoRig).
const (
	bitwig  = "client:alsa:Bitwig Studio" // a DAW subscribed from the JD-Xi
	firefox = "client:pipewire:Firefox"   // a player stream linked to the Scarlett
)

// relEnv is the seeded studio with the BeatStep bound and a cable declared through
// GraphQL (querytest.SeedCable): BeatStep MIDI OUT → JD-Xi MIDI IN. It returns the cable's
// id.
func relEnv(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t, query.Options{})
	e.seed()
	return e, e.SeedCable()
}

// eventCount is the number of events in the changelog.
func (e *env) eventCount(t *testing.T) string {
	t.Helper()
	return fmt.Sprint(get(e.ok(`{ stats { events } }`, nil), "stats.events"))
}

// TestRelation_Mutations: relate, a repeated relate, a dry run, updateRelation and unrelate
// (by tuple and by id), each with the events it writes, shared request id and actor.
func TestRelation_Mutations(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	n := 0
	mutate := func(t *testing.T, q string, vars map[string]any) (map[string]any, []map[string]any) {
		t.Helper()
		n++
		rid := fmt.Sprintf("rel-%03d", n)
		ctx := graph.WithRequestID(graph.WithActor(context.Background(), "http:tester"), rid)
		out := e.doCtx(ctx, q, vars)
		if errs, has := out["errors"]; has {
			t.Fatalf("mutation failed: %v\n%s", errs, q)
		}
		return out["data"].(map[string]any), e.requestEvents(t, rid)
	}
	const relate = `mutation($in: RelateInput!, $m: String){ relate(input: $in, message: $m){ action dryRun events relation { id type fromId fromPort toId toPort attrs observed source author createdAt from { id } to { id } } } }`
	in := map[string]any{"from": "beatstep", "fromPort": "MIDI OUT", "type": "cable", "to": "jdxi", "toPort": "MIDI IN", "attrs": map[string]any{"kind": "midi-din"}}

	var id string
	t.Run("relate", func(t *testing.T) {
		d, evs := mutate(t, relate, map[string]any{"in": in, "m": "patching the desk"})
		r := get(d, "relate.relation").(map[string]any)
		id, _ = r["id"].(string)
		if get(d, "relate.action") != "add" || get(d, "relate.events") != float64(1) || get(d, "relate.dryRun") != false {
			t.Errorf("relate: %v", d)
		}
		for k, want := range map[string]any{"type": "cable", "fromId": "identity:beatstep", "fromPort": "MIDI OUT", "toId": "identity:jdxi", "toPort": "MIDI IN",
			"observed": false, "source": nil, "author": "http:tester", "from.id": "identity:beatstep", "to.id": "identity:jdxi", "attrs.kind": "midi-din"} {
			if got := get(r, k); got != want {
				t.Errorf("relation.%s=%v, want %v", k, got, want)
			}
		}
		if len(evs) != 1 || evs[0]["action"] != "relation.add" || evs[0]["targetId"] != id || evs[0]["message"] != "patching the desk" || evs[0]["before"] != nil {
			t.Fatalf("relate events: %v", evs)
		}
	})
	t.Run("repeat", func(t *testing.T) {
		before := e.eventCount(t)
		d, evs := mutate(t, relate, map[string]any{"in": in})
		if get(d, "relate.action") != "none" || get(d, "relate.relation.id") != id || get(d, "relate.events") != float64(0) || len(evs) != 0 {
			t.Errorf("repeated relate: %v, events %v", d, evs)
		}
		if after := e.eventCount(t); after != before {
			t.Errorf("a repeated relate wrote events: %s → %s", before, after)
		}
	})
	t.Run("dryRun", func(t *testing.T) {
		before := e.eventCount(t)
		dry := map[string]any{"from": "scarlett", "type": "controls", "to": "jdxi", "dryRun": true}
		d, evs := mutate(t, relate, map[string]any{"in": dry})
		if get(d, "relate.action") != "add" || get(d, "relate.dryRun") != true || len(evs) != 0 {
			t.Errorf("dry relate: %v, events %v", d, evs)
		}
		if after := e.eventCount(t); after != before {
			t.Errorf("a dry run wrote events: %s → %s", before, after)
		}
		if tc := e.ok(`{ relations(filter: {type: "controls"}){ totalCount } }`, nil); get(tc, "relations.totalCount") != float64(0) {
			t.Errorf("a dry run stored the relation: %v", tc)
		}
	})
	t.Run("updateRelation", func(t *testing.T) {
		d, evs := mutate(t, `mutation($id: ID!){ updateRelation(id: $id, input: {attrs: {kind: "trs-midi", colour: "red"}, toPort: "MIDI IN 2"}){ action events relation { id toPort attrs updatedAt } } }`, map[string]any{"id": id})
		if get(d, "updateRelation.action") != "update" || get(d, "updateRelation.relation.id") != id || get(d, "updateRelation.relation.toPort") != "MIDI IN 2" ||
			get(d, "updateRelation.relation.attrs.colour") != "red" || get(d, "updateRelation.relation.attrs.kind") != "trs-midi" {
			t.Errorf("update: %v", d)
		}
		if len(evs) != 1 || evs[0]["action"] != "relation.update" || evs[0]["targetId"] != id || get(evs[0], "before.to_port") != "MIDI IN" || get(evs[0], "after.to_port") != "MIDI IN 2" {
			t.Errorf("update events: %v", evs)
		}
	})
	t.Run("changelog", func(t *testing.T) {
		d := e.ok(`query($id: ID!){ relation(id: $id){ changelog { totalCount nodes { action targetId } } } }`, map[string]any{"id": id})
		var acts []string
		for _, ev := range getList(d, "relation.changelog.nodes") {
			acts = append(acts, get(ev, "action").(string))
		}
		if got := strings.Join(acts, " "); got != "relation.update relation.add" {
			t.Errorf("relation changelog: %q", got)
		}
	})
	t.Run("unrelate by tuple", func(t *testing.T) {
		d, evs := mutate(t, `mutation { unrelate(from: "beatstep", fromPort: "midi out", type: "cable", to: "identity:jdxi", toPort: "MIDI IN 2"){ action events relation { id } } }`, nil)
		if get(d, "unrelate.action") != "remove" || get(d, "unrelate.relation.id") != id || len(evs) != 1 || evs[0]["action"] != "relation.remove" || evs[0]["targetId"] != id || evs[0]["after"] != nil {
			t.Errorf("unrelate: %v, events %v", d, evs)
		}
		if msg := e.fail(graph.ENOTFOUND, `query($id: ID!){ relation(id: $id){ id } }`, map[string]any{"id": id}); !strings.Contains(msg, "rel:") {
			t.Errorf("removed relation: %q", msg)
		}
	})
	t.Run("unrelate by id", func(t *testing.T) {
		d, _ := mutate(t, relate, map[string]any{"in": map[string]any{"from": "scarlett", "type": "controls", "to": "jdxi"}})
		id2 := get(d, "relate.relation.id")
		dry, evs := mutate(t, `mutation($id: ID){ unrelate(id: $id, dryRun: true){ action dryRun } }`, map[string]any{"id": id2})
		if get(dry, "unrelate.dryRun") != true || len(evs) != 0 {
			t.Errorf("dry unrelate: %v %v", dry, evs)
		}
		d, evs = mutate(t, `mutation($id: ID){ unrelate(id: $id){ action relation { id type } } }`, map[string]any{"id": id2})
		if get(d, "unrelate.action") != "remove" || get(d, "unrelate.relation.type") != "controls" || len(evs) != 1 || evs[0]["targetId"] != id2 {
			t.Errorf("unrelate by id: %v %v", d, evs)
		}
		msg := e.fail(graph.ENOTFOUND, `mutation($id: ID){ unrelate(id: $id){ action } }`, map[string]any{"id": id2})
		if !strings.Contains(msg, "rel:") {
			t.Errorf("unrelate twice: %q", msg)
		}
	})
	t.Run("readOnly", func(t *testing.T) {
		resp := e.exec.Execute(e.ctx, query.Request{Query: `mutation { relate(input: {from: "scarlett", type: "controls", to: "jdxi"}){ action } }`}, true)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != query.CodeForbidden {
			t.Errorf("relate on a read-only endpoint: %+v", resp.Errors)
		}
	})
}

// TestRelation_Errors: bad input gets a clear error naming the field, and nothing is written.
func TestRelation_Errors(t *testing.T) {
	e, id := relEnv(t)
	before := e.eventCount(t)
	type errCase struct {
		name, code, field, q string
		vars                 map[string]any
		says                 string // the message mentions it
	}
	relate := func(in string) string { return `mutation { relate(input: {` + in + `}){ action } }` }
	for _, c := range []errCase{
		{"unknown node", graph.ENOTFOUND, "", relate(`from: "jdx", type: "controls", to: "scarlett"`), nil, "jdxi"},
		{"self-loop", graph.EINVALID, "", relate(`from: "jdxi", type: "controls", to: "identity:jdxi"`), nil, "itself"},
		{"self-loop through a binding", graph.EINVALID, "", relate(`from: "jdxi", type: "controls", to: "usb:3-3.2"`), nil, "self-loop"},
		{"unknown type", graph.EINVALID, "type", relate(`from: "jdxi", type: "cabel", to: "scarlett", attrs: {kind: "usb"}`), nil, "cable"},
		{"unknown type says newType", graph.EINVALID, "type", relate(`from: "jdxi", type: "cabel", to: "scarlett", attrs: {kind: "usb"}`), nil, "newType: true"},
		{"unknown type says relationTypes", graph.EINVALID, "type", relate(`from: "jdxi", type: "cabel", to: "scarlett", attrs: {kind: "usb"}`), nil, "relationTypes"},
		{"malformed type says relationTypes", graph.EINVALID, "type", relate(`from: "jdxi", type: "Bad Type!", to: "scarlett", newType: true`), nil, "relationTypes"},
		{"conflict says updateRelation", graph.ECONFLICT, "", relate(`from: "beatstep", fromPort: "MIDI OUT", type: "cable", to: "jdxi", toPort: "MIDI IN", attrs: {kind: "usb"}`), nil, `updateRelation(id: "` + id + `"`},
		{"unrelate unknown id", graph.ENOTFOUND, "id", `mutation { unrelate(id: "rel:01890000-0000-7000-8000-000000000000"){ action } }`, nil, "next: query `relations`"},
		{"malformed type", graph.EINVALID, "type", relate(`from: "jdxi", type: "Bad Type!", to: "scarlett", newType: true`), nil, "type"},
		{"reserved type", graph.EINVALID, "type", relate(`from: "jdxi", type: "via", to: "scarlett"`), nil, "observed"},
		{"attrs not an object", graph.EINVALID, "attrs", relate(`from: "jdxi", type: "controls", to: "scarlett", attrs: ["kind"]`), nil, "object"},
		{"attrs not an object (variable)", graph.EINVALID, "attrs", `mutation($a: JSON){ relate(input: {from: "jdxi", type: "controls", to: "scarlett", attrs: $a}){ action } }`, map[string]any{"a": "midi-din"}, "object"},
		{"attr value not a string", graph.EINVALID, "attrs", relate(`from: "jdxi", type: "controls", to: "scarlett", attrs: {channel: 10}`), nil, "attrs"},
		{"cable without kind", graph.EINVALID, "attrs", relate(`from: "jdxi", type: "cable", to: "scarlett"`), nil, "kind"},
		{"oversize port", graph.EINVALID, "fromPort", relate(`from: "jdxi", fromPort: "` + strings.Repeat("p", graph.MaxPort+1) + `", type: "controls", to: "scarlett"`), nil, "64"},
		{"to a tag", graph.EINVALID, "", relate(`from: "jdxi", type: "controls", to: "tag:role:synth"`), nil, "tag"},
		{"to a client", graph.EINVALID, "", relate(`from: "jdxi", type: "controls", to: "` + bitwig + `"`), nil, "client"},
		{"to a relation", graph.EINVALID, "", relate(`from: "jdxi", type: "controls", to: "` + id + `"`), nil, "relation"},
		{"conflicting attrs", graph.ECONFLICT, "", relate(`from: "beatstep", fromPort: "MIDI OUT", type: "cable", to: "jdxi", toPort: "MIDI IN", attrs: {kind: "usb"}`), nil, id},
		{"update nothing", graph.EINVALID, "input", `mutation($id: ID!){ updateRelation(id: $id, input: {}){ action } }`, map[string]any{"id": id}, "nothing"},
		{"update unknown", graph.ENOTFOUND, "", `mutation { updateRelation(id: "rel:01890000-0000-7000-8000-000000000000", input: {toPort: "x"}){ action } }`, nil, "rel:"},
		{"update attrs not an object", graph.EINVALID, "attrs", `mutation($id: ID!){ updateRelation(id: $id, input: {attrs: 3}){ action } }`, map[string]any{"id": id}, "object"},
		{"unrelate nothing", graph.EINVALID, "id", `mutation { unrelate { action } }`, nil, "id"},
		{"unrelate id and tuple", graph.EINVALID, "id", `mutation { unrelate(id: "` + id + `", from: "jdxi"){ action } }`, nil, "not both"},
		{"unrelate tuple without to", graph.EINVALID, "to", `mutation { unrelate(from: "beatstep", type: "cable"){ action } }`, nil, "to"},
		{"unrelate missing", graph.ENOTFOUND, "", `mutation { unrelate(from: "scarlett", type: "controls", to: "jdxi"){ action } }`, nil, ""},
		{"relations direction", graph.EINVALID, "direction", `{ identity(id: "jdxi"){ relations(direction: "sideways"){ totalCount } } }`, nil, "out, in or both"},
		{"relations unknown node", graph.ENOTFOUND, "", `{ relations(filter: {node: "jdx"}){ totalCount } }`, nil, "jdxi"},
		{"relation unknown", graph.ENOTFOUND, "", `{ relation(id: "obs:0000000000000000"){ id } }`, nil, ""},
		{"neighbors depth", graph.EINVALID, "depth", `{ identity(id: "jdxi"){ neighbors(depth: 5){ visited } } }`, nil, "1-4"},
		{"neighbors depth 0", graph.EINVALID, "depth", `{ identity(id: "jdxi"){ neighbors(depth: 0){ visited } } }`, nil, "depth"},
		{"neighbors direction", graph.EINVALID, "", `{ identity(id: "jdxi"){ neighbors(direction: "up"){ visited } } }`, nil, "direction"},
		{"subgraph depth", graph.EINVALID, "", `{ subgraph(around: "jdxi", depth: 9){ visited } }`, nil, "depth"},
		{"path maxDepth", graph.EINVALID, "maxDepth", `{ path(from: "beatstep", to: "jdxi", maxDepth: 9){ found } }`, nil, "1-8"},
		{"path maxDepth 0", graph.EINVALID, "maxDepth", `{ path(from: "beatstep", to: "jdxi", maxDepth: 0){ found } }`, nil, "1-8"},
		{"path unknown node", graph.ENOTFOUND, "", `{ path(from: "beatstep", to: "jdx"){ found } }`, nil, "jdxi"},
		{"trace unknown node", graph.ENOTFOUND, "", `{ trace(from: "beatstp"){ visited } }`, nil, "beatstep"},
		{"trace direction", graph.EINVALID, "", `{ trace(from: "beatstep", direction: "sideways"){ visited } }`, nil, "direction"},
		{"node unknown client", graph.ENOTFOUND, "", `{ node(id: "client:alsa:Bitwig Studi"){ id } }`, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := e.do(c.q, c.vars)
			errs, _ := out["errors"].([]any)
			if len(errs) == 0 {
				t.Fatalf("want %s, got %v", c.code, out)
			}
			msg, _ := get(errs[0], "message").(string)
			if got := get(errs[0], "extensions.code"); got != c.code {
				t.Fatalf("code=%v, want %s (%q)", got, c.code, msg)
			}
			if c.field != "" && get(errs[0], "extensions.field") != c.field {
				t.Errorf("field=%v, want %s (%q)", get(errs[0], "extensions.field"), c.field, msg)
			}
			if !strings.Contains(strings.ToLower(msg), strings.ToLower(c.says)) {
				t.Errorf("message %q does not mention %q", msg, c.says)
			}
			if strings.Contains(msg, "internal") {
				t.Errorf("internal error shown: %q", msg)
			}
			for _, other := range []string{"devgraph ", "--new-type", "--from-port", "graph_", "new_type", "max_depth"} {
				if strings.Contains(msg, other) {
					t.Errorf("message %q speaks another interface's words (%q), not GraphQL's", msg, other)
				}
			}
		})
	}
	if after := e.eventCount(t); after != before {
		t.Errorf("bad input wrote events: %s → %s", before, after)
	}
}

// TestRelation_Queries: relation, node on rel:/obs:/client: ids, relations on every node
// kind with paging (declared first, then observed; totalCount counts both), filters and
// relationTypes.
func TestRelation_Queries(t *testing.T) {
	e, id := relEnv(t)

	t.Run("relation and node", func(t *testing.T) {
		d := e.ok(`query($id: ID!){ relation(id: $id){ id type observed attrs } node(id: $id){ __typename id ... on Relation { fromId toId } } }`, map[string]any{"id": id})
		if get(d, "relation.id") != id || get(d, "relation.attrs.length") != "1.5m" || get(d, "node.__typename") != "Relation" || get(d, "node.fromId") != "identity:beatstep" {
			t.Errorf("relation/node: %v", d)
		}
		d = e.ok(`query($id: ID!){ node(id: $id){ __typename id ... on Client { source name relations { totalCount nodes { id type observed source fromId toId } } } } }`, map[string]any{"id": bitwig})
		if get(d, "node.__typename") != "Client" || get(d, "node.source") != "alsa" || get(d, "node.name") != "Bitwig Studio" {
			t.Fatalf("client node: %v", d)
		}
		rels := getList(d, "node.relations.nodes")
		if len(rels) == 0 || get(d, "node.relations.totalCount") != float64(len(rels)) {
			t.Fatalf("client relations: %v", d)
		}
		obs := rels[0]
		if get(obs, "observed") != true || get(obs, "type") != graph.RelSubscribed || get(obs, "source") != "alsa" || get(obs, "toId") != bitwig {
			t.Errorf("bitwig's subscription: %v", obs)
		}
		oid := get(obs, "id").(string)
		d = e.ok(`query($id: ID!){ node(id: $id){ __typename ... on Relation { id observed author createdAt changelog { totalCount } } } }`, map[string]any{"id": oid})
		if get(d, "node.__typename") != "Relation" || get(d, "node.id") != oid || get(d, "node.observed") != true || get(d, "node.author") != nil || len(getList(d, "node.changelog.nodes")) != 0 {
			t.Errorf("observed relation as a node: %v", d)
		}
	})

	t.Run("identity relations page declared then observed", func(t *testing.T) {
		// The JD-Xi's vertex: the declared cable, then what the sources see on its device.
		all := e.ok(`{ identity(id: "jdxi"){ relations(first: 100){ totalCount pageInfo { hasNextPage } nodes { id observed } } } }`, nil)
		nodes := getList(all, "identity.relations.nodes")
		total := get(all, "identity.relations.totalCount")
		if total != float64(len(nodes)) || len(nodes) < 2 || get(nodes[0], "id") != id || get(nodes[0], "observed") != false {
			t.Fatalf("jdxi relations: %v", all)
		}
		seenObserved := false
		for _, n := range nodes {
			if get(n, "observed") == true {
				seenObserved = true
			} else if seenObserved {
				t.Errorf("a declared relation after an observed one: %v", nodes)
			}
		}
		if !seenObserved {
			t.Errorf("no observed relation on the JD-Xi's vertex (its USB via, its subscription): %v", nodes)
		}
		// One at a time, every edge's cursor resumes.
		var paged []any
		after := ""
		for i := 0; i <= len(nodes); i++ {
			d := e.ok(`query($a: String){ identity(id: "jdxi"){ relations(first: 1, after: $a){ totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id } } } } }`, map[string]any{"a": after})
			if get(d, "identity.relations.totalCount") != total {
				t.Fatalf("totalCount changes with paging: %v", d)
			}
			for _, ed := range getList(d, "identity.relations.edges") {
				paged = append(paged, get(ed, "node.id"))
			}
			if get(d, "identity.relations.pageInfo.hasNextPage") != true {
				break
			}
			after = get(d, "identity.relations.pageInfo.endCursor").(string)
		}
		if len(paged) != len(nodes) {
			t.Fatalf("paged %d relations, want %d", len(paged), len(nodes))
		}
		for i := range nodes {
			if paged[i] != get(nodes[i], "id") {
				t.Errorf("page %d: %v, want %v", i, paged[i], get(nodes[i], "id"))
			}
		}
		// first: 0 reads only the count.
		d := e.ok(`{ identity(id: "jdxi"){ relations(first: 0){ totalCount edges { cursor } } } }`, nil)
		if get(d, "identity.relations.totalCount") != total || len(getList(d, "identity.relations.edges")) != 0 {
			t.Errorf("first: 0: %v", d)
		}
		e.fail(graph.EINVALID, `{ identity(id: "jdxi"){ relations(first: 101){ totalCount } } }`, nil)
	})

	t.Run("direction and type", func(t *testing.T) {
		d := e.ok(`{ identity(id: "jdxi"){ in: relations(direction: "in", type: "cable"){ totalCount nodes { id } } out: relations(direction: "out", type: "cable"){ totalCount } } }`, nil)
		if get(d, "identity.in.totalCount") != float64(1) || get(d, "identity.in.nodes.0.id") != id || get(d, "identity.out.totalCount") != float64(0) {
			t.Errorf("jdxi cables in/out: %v", d)
		}
		d = e.ok(`{ relations(filter: {node: "beatstep", direction: "out", type: "cable"}){ totalCount nodes { id } } }`, nil)
		if get(d, "relations.totalCount") != float64(1) || get(d, "relations.nodes.0.id") != id {
			t.Errorf("root relations filtered: %v", d)
		}
	})

	t.Run("device and robot", func(t *testing.T) {
		// The JD-Xi's device shows its identity's cable too (one vertex), and hangs off a hub.
		d := e.ok(`{ device(id: "usb:3-3.2"){ relations(first: 100){ totalCount nodes { id type observed fromId toId } } } }`, nil)
		var cable, via bool
		for _, r := range getList(d, "device.relations.nodes") {
			cable = cable || get(r, "id") == id
			via = via || get(r, "type") == graph.RelVia && get(r, "observed") == true
		}
		if !cable || !via {
			t.Errorf("JD-Xi device relations (cable %v, via %v): %v", cable, via, d)
		}
		d = e.ok(`{ robots { nodes { ref relations { totalCount } neighbors { around visited } } } }`, nil)
		if len(getList(d, "robots.nodes")) == 0 || get(d, "robots.nodes.0.relations.totalCount") == nil {
			t.Errorf("robot relations: %v", d)
		}
	})

	t.Run("declared and observed filters", func(t *testing.T) {
		d := e.ok(`{ stats { relations } declared: relations(filter: {declared: true}){ totalCount nodes { observed } } live: relations(filter: {observed: true}, first: 100){ totalCount nodes { observed type } } }`, nil)
		if get(d, "declared.totalCount") != float64(1) || get(d, "declared.nodes.0.observed") != false || get(d, "stats.relations") != float64(1) {
			t.Errorf("declared relations: %v", d)
		}
		types := map[any]bool{}
		for _, r := range getList(d, "live.nodes") {
			if get(r, "observed") != true {
				t.Errorf("a declared relation in the live set: %v", r)
			}
			types[get(r, "type")] = true
		}
		for _, want := range []string{graph.RelVia, graph.RelSubscribed, graph.RelLinked} {
			if !types[want] {
				t.Errorf("the live set has no %s relation: %v", want, types)
			}
		}
	})

	t.Run("relationTypes", func(t *testing.T) {
		d := e.ok(`{ relationTypes { type count seeded reserved } }`, nil)
		byType := map[string]map[string]any{}
		for _, x := range getList(d, "relationTypes") {
			byType[get(x, "type").(string)] = x.(map[string]any)
		}
		if c := byType["cable"]; c == nil || c["count"] != float64(1) || c["seeded"] != true || c["reserved"] != false {
			t.Errorf("cable: %v", c)
		}
		for _, r := range graph.ReservedRelationTypes {
			if byType[r]["reserved"] != true {
				t.Errorf("%s not reserved: %v", r, byType[r])
			}
		}
		for _, s := range graph.SeedRelationTypes {
			if byType[s]["seeded"] != true {
				t.Errorf("%s not seeded: %v", s, byType[s])
			}
		}
	})
}

// TestRelation_Traversal: neighbors on each node kind, path, trace and subgraph, through
// the cable declared above and what the demo rig's sources observe.
func TestRelation_Traversal(t *testing.T) {
	e, id := relEnv(t)

	t.Run("neighbors", func(t *testing.T) {
		d := e.ok(`{ identity(id: "beatstep"){ neighbors(types: ["cable"]){ around depth truncated truncatedBy visited nodes { id kind name depth devices } edges { id from to fromId toId type } } } }`, nil)
		g := get(d, "identity.neighbors")
		if get(g, "around") != "identity:beatstep" || get(g, "depth") != float64(1) || get(g, "truncated") != false || get(g, "truncatedBy") != nil {
			t.Errorf("neighbors: %v", g)
		}
		nodes := getList(g, "nodes")
		if len(nodes) != 2 || get(nodes[0], "id") != "identity:beatstep" || get(nodes[1], "id") != "identity:jdxi" || get(nodes[1], "depth") != float64(1) {
			t.Fatalf("neighbors nodes: %v", nodes)
		}
		if devs := getList(nodes[1], "devices"); len(devs) != 1 || !strings.HasPrefix(devs[0].(string), "device:") {
			t.Errorf("the JD-Xi's vertex names its device: %v", nodes[1])
		}
		edges := getList(g, "edges")
		if len(edges) != 1 || get(edges[0], "id") != id || get(edges[0], "from") != "identity:beatstep" || get(edges[0], "to") != "identity:jdxi" {
			t.Errorf("neighbors edges: %v", edges)
		}
		// A client's neighbours: the JD-Xi's vertex, by its subscription.
		d = e.ok(`query($id: ID!){ node(id: $id){ ... on Client { neighbors { nodes { id } edges { type from to observed } } } } }`, map[string]any{"id": bitwig})
		var reached bool
		for _, n := range getList(d, "node.neighbors.nodes") {
			reached = reached || get(n, "id") == "identity:jdxi"
		}
		if !reached {
			t.Errorf("Bitwig's neighbours do not include the JD-Xi: %v", d)
		}
		// declared / observed choose what is followed.
		d = e.ok(`{ identity(id: "jdxi"){ declared: neighbors(declared: true){ edges { observed } } observed: neighbors(observed: true){ edges { observed type } } } }`, nil)
		if de := getList(d, "identity.declared.edges"); len(de) != 1 || get(de[0], "observed") != false {
			t.Errorf("declared neighbours: %v", d)
		}
		oe := getList(d, "identity.observed.edges")
		if len(oe) == 0 {
			t.Errorf("no observed neighbours: %v", d)
		}
		for _, ed := range oe {
			if get(ed, "observed") != true {
				t.Errorf("a declared edge among observed neighbours: %v", ed)
			}
		}
		// Depth widens; the device's neighbours are its identity's vertex's.
		d = e.ok(`{ a: device(id: "usb:3-3.2"){ neighbors(depth: 1){ around visited } } b: device(id: "usb:3-3.2"){ neighbors(depth: 3){ nodes { id } } } c: identity(id: "jdxi"){ neighbors(depth: 1){ nodes { id } } } }`, nil)
		if get(d, "a.neighbors.around") != "identity:jdxi" || len(getList(d, "b.neighbors.nodes")) <= len(getList(d, "c.neighbors.nodes")) {
			t.Errorf("device neighbors: %v", d)
		}
	})

	t.Run("path", func(t *testing.T) {
		d := e.ok(`{ path(from: "beatstep", to: "`+bitwig+`"){ from to found length hops { relationId type from to observed reverse } nodes { id } truncated visited } }`, nil)
		if get(d, "path.found") != true || get(d, "path.length") != float64(2) || get(d, "path.hops.0.relationId") != id || get(d, "path.hops.1.type") != graph.RelSubscribed {
			t.Errorf("path beatstep → bitwig: %v", d)
		}
		if len(getList(d, "path.nodes")) != 3 {
			t.Errorf("path vertices: %v", d)
		}
		// Directed, against the cable: nothing.
		d = e.ok(`{ path(from: "jdxi", to: "beatstep", types: ["cable"], directed: true){ found length hops { type } } }`, nil)
		if get(d, "path.found") != false || get(d, "path.length") != float64(0) {
			t.Errorf("directed path against the cable: %v", d)
		}
	})

	t.Run("trace", func(t *testing.T) {
		d := e.ok(`{ trace(from: "beatstep", port: "MIDI OUT"){ from port direction ends hops { relationId type from to depth parent end cycle relation { id } } nodes { id } truncated } }`, nil)
		ends := getList(d, "trace.ends")
		hops := getList(d, "trace.hops")
		if get(d, "trace.direction") != "out" || len(hops) < 2 || get(hops[0], "relationId") != id || get(hops[0], "relation.id") != id || get(hops[0], "parent") != float64(-1) {
			t.Fatalf("trace: %v", d)
		}
		var bw bool
		for _, x := range ends {
			bw = bw || x == bitwig
		}
		if !bw {
			t.Errorf("the trace from the BeatStep does not end at Bitwig: %v", ends)
		}
		d = e.ok(`{ trace(from: "`+bitwig+`", direction: "in"){ ends hops { type } } }`, nil)
		var bs bool
		for _, x := range getList(d, "trace.ends") {
			bs = bs || x == "identity:beatstep"
		}
		if !bs {
			t.Errorf("the upstream trace from Bitwig does not reach the BeatStep: %v", d)
		}
	})

	t.Run("subgraph", func(t *testing.T) {
		d := e.ok(`{ whole: subgraph { around nodes { id } edges { id from to } truncated } near: subgraph(around: "jdxi", depth: 1, types: ["cable"]){ around nodes { id } edges { id } } }`, nil)
		if get(d, "whole.around") != nil || len(getList(d, "whole.edges")) < 3 {
			t.Errorf("whole graph: %v", d)
		}
		ids := map[any]bool{}
		for _, n := range getList(d, "whole.nodes") {
			ids[get(n, "id")] = true
		}
		for _, ed := range getList(d, "whole.edges") {
			if !ids[get(ed, "from")] || !ids[get(ed, "to")] {
				t.Errorf("an edge whose end is not among the nodes: %v", ed)
			}
		}
		if get(d, "near.around") != "identity:jdxi" || len(getList(d, "near.nodes")) != 2 || len(getList(d, "near.edges")) != 1 {
			t.Errorf("subgraph around the JD-Xi: %v", d)
		}
	})
}

// TestRelation_DeleteRestore: deleting an identity removes its relations (relation.remove
// in the changelog, under the delete's request id); restoring it brings them back.
func TestRelation_DeleteRestore(t *testing.T) {
	e, id := relEnv(t)
	ctx := graph.WithRequestID(graph.WithActor(context.Background(), "http:tester"), "del-1")
	if out := e.doCtx(ctx, `mutation { deleteIdentity(id: "beatstep"){ deleted } }`, nil); out["errors"] != nil {
		t.Fatalf("delete: %v", out)
	}
	e.fail(graph.ENOTFOUND, `query($id: ID!){ relation(id: $id){ id } }`, map[string]any{"id": id})
	d := e.ok(`query($id: ID!){ changelog(filter: {target: $id}){ nodes { action requestId before } } identity(id: "jdxi"){ relations(type: "cable"){ totalCount } } }`, map[string]any{"id": id})
	if get(d, "changelog.nodes.0.action") != "relation.remove" || get(d, "changelog.nodes.0.requestId") != "del-1" || get(d, "changelog.nodes.0.before.id") != id {
		t.Errorf("the cable's removal is not in the changelog: %v", d)
	}
	if get(d, "identity.relations.totalCount") != float64(0) {
		t.Errorf("the JD-Xi still has a cable after the BeatStep's delete: %v", d)
	}
	e.ok(`mutation { restoreIdentity(id: "identity:beatstep"){ id } }`, nil)
	d = e.ok(`query($id: ID!){ relation(id: $id){ id fromId toId attrs } }`, map[string]any{"id": id})
	if get(d, "relation.fromId") != "identity:beatstep" || get(d, "relation.attrs.kind") != "midi-din" {
		t.Errorf("restore did not bring the cable back: %v", d)
	}
}

// TestRelation_Complexity: traversals count toward the complexity limit by their bounds,
// relation lists like every other connection.
func TestRelation_Complexity(t *testing.T) {
	e, _ := relEnv(t)
	e.ok(`{ subgraph { nodes { id name } edges { from to type } } }`, nil)
	e.ok(`{ identities(first: 100){ nodes { relations(first: 100){ nodes { id type } } } } }`, nil)
	e.ok(`{ identities(first: 100){ nodes { neighbors { visited } } } }`, nil)
	for _, q := range []string{
		`{ identities(first: 100){ nodes { neighbors(depth: 4){ nodes { id name kind } edges { from to } } } } }`,
		`{ identities(first: 100){ nodes { relations(first: 100){ nodes { from { id } to { id } changelog(first: 100){ nodes { action } } } } } } }`,
		`query($d: Int){ identities(first: 100){ nodes { neighbors(depth: $d){ nodes { id name kind } edges { from to } } } } }`,
	} {
		msg := e.fail(graph.ELIMIT, q, map[string]any{"d": 4})
		if !strings.Contains(msg, "complexity") {
			t.Errorf("%s: %q", q, msg)
		}
	}
}

// TestRelation_Golden: relations, path, trace and subgraph on the demo rig with the cable
// declared and what the sources observe, as GraphQL answers them.
func TestRelation_Golden(t *testing.T) {
	e, _ := relEnv(t)
	const rel = `id type fromId fromPort toId toPort attrs observed source author createdAt`
	golden(t, "relations_jdxi.json", e.do(`{ identity(id: "jdxi"){ relations { totalCount pageInfo { hasNextPage } nodes { `+rel+` } } } }`, nil))
	golden(t, "relations_declared.json", e.do(`{ relations(filter: {declared: true}){ totalCount nodes { `+rel+` from { id } to { id } changelog { nodes { action actor targetId } } } } }`, nil))
	const hop = `relationId type from fromNode fromPort to toNode toPort observed source reverse`
	golden(t, "path_keystep_controller.json", e.do(`{ path(from: "usb:3-4.4.1", to: "usb:usb3"){ from to found length hops { `+hop+` } nodes { id kind name depth devices } truncated truncatedBy visited } }`, nil))
	golden(t, "path_beatstep_bitwig.json", e.do(`{ path(from: "beatstep", to: "`+bitwig+`"){ found length hops { `+hop+` } nodes { id kind name } } }`, nil))
	golden(t, "trace_beatstep.json", e.do(`{ trace(from: "beatstep", port: "MIDI OUT"){ from port direction ends hops { `+hop+` depth parent cycle end } nodes { id kind name depth } truncated truncatedBy visited } }`, nil))
	golden(t, "subgraph_jdxi.json", e.do(`{ subgraph(around: "jdxi", depth: 2){ around depth nodes { id kind name depth devices } edges { id type from to fromId toId fromPort toPort observed source attrs } truncated truncatedBy visited } }`, nil))
}
