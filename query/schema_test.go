package query_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

func TestSchema_RootFields(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()

	t.Run("node", func(t *testing.T) {
		d := e.ok(`{ a: node(id:"identity:jdxi"){ id __typename ... on Identity { name } }
			b: node(id:"usb:3-3.2"){ id __typename ... on Device { ref name } }
			c: node(id:"tag:role:synth"){ id __typename ... on Tag { count } }
			d: node(id:"jdxi"){ id } }`, nil)
		if got := get(d, "a.name"); got != "Roland JD-Xi" {
			t.Errorf("identity node name=%v", got)
		}
		if got := get(d, "b.__typename"); got != "Device" {
			t.Errorf("device ref resolved to %v, want Device", got)
		}
		if id, _ := get(d, "b.id").(string); !strings.HasPrefix(id, "device:") {
			t.Errorf("device id=%q, want device:…", id)
		}
		if got := get(d, "c.count"); got != float64(1) {
			t.Errorf("tag count=%v, want 1", got)
		}
		if got := get(d, "d.id"); got != "identity:jdxi" {
			t.Errorf("bare slug resolved to %v", got)
		}
		msg := e.fail(graph.ENOTFOUND, `{ node(id:"identity:jdx1"){ id } }`, nil)
		if !strings.Contains(msg, "jdxi") {
			t.Errorf("not-found message %q does not suggest identity:jdxi", msg)
		}
	})

	t.Run("identity", func(t *testing.T) {
		d := e.ok(`{ identity(id:"identity:jdxi"){ id slug name data createdAt updatedAt hints { kind value class } tags { name namespace value count seeded } } }`, nil)
		if got := get(d, "identity.data.room"); got != "studio" {
			t.Errorf("data.room=%v", got)
		}
		if got := get(d, "identity.slug"); got != "jdxi" {
			t.Errorf("slug=%v", got)
		}
		if n := len(getList(d, "identity.hints")); n < 3 {
			t.Errorf("hints=%d, want the bound device's fingerprints", n)
		}
		if got := get(d, "identity.tags.1.seeded"); got != true {
			t.Errorf("role:synth seeded=%v", got)
		}
		e.fail(graph.ENOTFOUND, `{ identity(id:"nope-nothing"){ id } }`, nil)
	})

	t.Run("identities", func(t *testing.T) {
		d := e.ok(`{ identities(first: 5){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, nil)
		if got := get(d, "identities.totalCount"); got != float64(123) {
			t.Errorf("totalCount=%v, want 123", got)
		}
		if n := len(getList(d, "identities.edges")); n != 5 {
			t.Errorf("edges=%d, want 5", n)
		}
	})

	t.Run("devices", func(t *testing.T) {
		d := e.ok(`{ devices(first: 100){ totalCount nodes { id ref present boundBy identity { id } match { confidence score summary explanation { kind class weight note } } fingerprints { kind value } } } }`, nil)
		nodes := getList(d, "devices.nodes")
		if len(nodes) == 0 || get(d, "devices.totalCount") != float64(len(nodes)) {
			t.Fatalf("devices=%d totalCount=%v", len(nodes), get(d, "devices.totalCount"))
		}
		found := false
		for _, n := range nodes {
			if get(n, "ref") == "usb:3-3.2" {
				found = true
				if get(n, "identity.id") != "identity:jdxi" || get(n, "boundBy") != "explicit" {
					t.Errorf("JD-Xi device: identity=%v boundBy=%v", get(n, "identity.id"), get(n, "boundBy"))
				}
				if get(n, "match.confidence") != "high" {
					t.Errorf("JD-Xi match=%v", get(n, "match"))
				}
			}
			if get(n, "present") != true {
				t.Errorf("device %v listed without all but not present", get(n, "ref"))
			}
		}
		if !found {
			t.Error("usb:3-3.2 not listed")
		}
		one := e.ok(`{ device(id:"usb:3-3.2"){ name key aliases sources attrs firstSeen lastSeen infra } }`, nil)
		if get(one, "device.name") == "" || get(one, "device.firstSeen") == nil {
			t.Errorf("device fields: %v", one)
		}
	})

	t.Run("tags", func(t *testing.T) {
		d := e.ok(`{ all: tags(first: 100){ totalCount nodes { name count seeded } } ns: tags(namespace:"role"){ nodes { name count } } used: tags(inUse:true){ nodes { name count } } }`, nil)
		counts := map[string]float64{}
		for _, x := range getList(d, "used.nodes") {
			counts[get(x, "name").(string)] = get(x, "count").(float64)
		}
		if counts["project:live-set"] != 40 || counts["role:synth"] != 1 || counts["location:desk"] != 1 {
			t.Errorf("in-use counts=%v", counts)
		}
		for _, x := range getList(d, "ns.nodes") {
			if !strings.HasPrefix(get(x, "name").(string), "role:") {
				t.Errorf("tags(namespace: role) gave %v", get(x, "name"))
			}
		}
		if get(d, "all.totalCount").(float64) <= float64(len(getList(d, "used.nodes"))) {
			t.Errorf("tags without inUse should include the seeded vocabulary")
		}
	})

	t.Run("notes", func(t *testing.T) {
		d := e.ok(`{ all: notes { totalCount } on: notes(target:"identity:jdxi", kind:"warning"){ totalCount nodes { kind body author time target { id } } } }`, nil)
		if get(d, "all.totalCount") != float64(3) || get(d, "on.totalCount") != float64(1) {
			t.Errorf("notes totals all=%v warning=%v", get(d, "all.totalCount"), get(d, "on.totalCount"))
		}
		if get(d, "on.nodes.0.author") != "test:seed" || get(d, "on.nodes.0.target.id") != "identity:jdxi" {
			t.Errorf("note=%v", get(d, "on.nodes.0"))
		}
	})

	t.Run("changelog", func(t *testing.T) {
		d := e.ok(`{ changelog(first: 3){ totalCount nodes { seq id time actor action targetId requestId hash prevHash } } }`, nil)
		nodes := getList(d, "changelog.nodes")
		if len(nodes) != 3 {
			t.Fatalf("events=%d", len(nodes))
		}
		seq, _ := get(nodes[0], "seq").(string)
		if seq == "" || get(d, "changelog.totalCount") == nil {
			t.Errorf("seq=%v (want a decimal string), totalCount=%v", get(nodes[0], "seq"), get(d, "changelog.totalCount"))
		}
		if fmt.Sprint(get(d, "changelog.totalCount")) != seq {
			t.Errorf("newest seq %s != totalCount %v", seq, get(d, "changelog.totalCount"))
		}
		if get(nodes[0], "prevHash") != get(nodes[1], "hash") {
			t.Errorf("chain: newest prevHash != next hash")
		}
	})

	t.Run("unbound", func(t *testing.T) {
		d := e.ok(`{ unbound { totalCount nodes { ref name match { confidence candidates { identityId score } } fingerprints { kind } } } }`, nil)
		refs := map[string]bool{}
		for _, x := range getList(d, "unbound.nodes") {
			refs[get(x, "ref").(string)] = true
		}
		if refs["usb:3-3.2"] {
			t.Error("the bound JD-Xi is listed as unbound")
		}
		if !refs["usb:3-1"] || !refs["usb:3-2"] {
			t.Errorf("unbound=%v, want the two nanoKONTROL2 twins", refs)
		}
	})

	t.Run("find", func(t *testing.T) {
		d := e.ok(`{ a: find(text:"jdxi"){ edges { kind name score matched node { id } } }
			b: find(text:"filler 01", first: 3){ edges { name } }
			c: find(text:"", tags:["project:live-set"], kind:"identity", first: 100){ totalCount edges { name } }
			d: find(text:"jd", kind:"device"){ edges { kind node { id } } } }`, nil)
		if get(d, "a.edges.0.node.id") != "identity:jdxi" && get(d, "a.edges.0.kind") != "device" {
			t.Errorf("find jdxi best=%v", get(d, "a.edges.0"))
		}
		if n := len(getList(d, "b.edges")); n != 3 {
			t.Errorf("first:3 gave %d", n)
		}
		if n := len(getList(d, "c.edges")); n != 40 {
			t.Errorf("tag filter gave %d, want 40", n)
		}
		for _, x := range getList(d, "d.edges") {
			if get(x, "kind") != "device" {
				t.Errorf("kind filter leaked %v", x)
			}
		}
		e.fail(graph.EINVALID, `{ find(text:"x", kind:"planet"){ edges { name } } }`, nil)
		e.fail(graph.EINVALID, `{ find(text:"x", tags:["no tag"]){ edges { name } } }`, nil)
	})

	t.Run("match", func(t *testing.T) {
		d := e.ok(`{ match(fingerprints:[{kind:"usb_id", value:"0582:01A9"},{kind:"alsa_card_id", value:"JDXi"}]){ identityId confidence score summary explanation { kind note } identity { name } } }`, nil)
		if get(d, "match.identityId") != "identity:jdxi" {
			t.Errorf("match=%v", get(d, "match"))
		}
		msg := e.fail(graph.EINVALID, `{ match(fingerprints:[{kind:"colour", value:"red"}]){ score } }`, nil)
		if !strings.Contains(msg, "usb_id") {
			t.Errorf("unknown kind message %q does not list the kinds", msg)
		}
	})

	t.Run("sources stats verify", func(t *testing.T) {
		d := e.ok(`{ sources { name ok error devices durationMs root } stats { identities devices notes events schemaVersion fileBytes } changelogVerify { ok checked headSeq headHash brokenSeq } }`, nil)
		if n := len(getList(d, "sources")); n < 3 {
			t.Errorf("sources=%d, want usb, alsa, pipewire", n)
		}
		if get(d, "stats.identities") != float64(123) || get(d, "stats.notes") != float64(3) {
			t.Errorf("stats=%v", get(d, "stats"))
		}
		if get(d, "changelogVerify.ok") != true || get(d, "changelogVerify.headSeq") != get(d, "stats.events") {
			t.Errorf("verify=%v stats=%v", get(d, "changelogVerify"), get(d, "stats"))
		}
	})
}

// TestSchema_Paging walks every connection across pages and checks totals and cursors.
func TestSchema_Paging(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()

	walk := func(t *testing.T, q string, vars map[string]any, field string, pageSize int) (ids []string, total any) {
		t.Helper()
		after := any(nil)
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("paging does not end")
			}
			v := map[string]any{"first": pageSize, "after": after}
			for k, x := range vars {
				v[k] = x
			}
			d := e.ok(q, v)
			conn := get(d, field)
			edges := getList(conn, "edges")
			if len(edges) > pageSize {
				t.Fatalf("page of %d edges, asked for %d", len(edges), pageSize)
			}
			for _, ed := range edges {
				ids = append(ids, fmt.Sprint(get(ed, "node.id")))
			}
			total = get(conn, "totalCount")
			if get(conn, "pageInfo.hasNextPage") != true {
				return ids, total
			}
			after = get(conn, "pageInfo.endCursor")
			if last := edges[len(edges)-1]; get(last, "cursor") != after {
				t.Fatalf("last edge cursor %v != endCursor %v", get(last, "cursor"), after)
			}
		}
	}
	unique := func(t *testing.T, ids []string) {
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("%s appears on two pages", id)
			}
			seen[id] = true
		}
	}

	t.Run("identities", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String){ identities(first: $first, after: $after){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, nil, "identities", 50)
		if len(ids) != 123 || total != float64(123) {
			t.Fatalf("walked %d identities, total %v; want 123", len(ids), total)
		}
		unique(t, ids)
		for i := 1; i < len(ids); i++ {
			if ids[i-1] >= ids[i] {
				t.Fatalf("not sorted by id: %s then %s", ids[i-1], ids[i])
			}
		}
	})

	t.Run("resume from a middle edge", func(t *testing.T) {
		d := e.ok(`{ identities(first: 10){ edges { cursor node { id } } } }`, nil)
		edges := getList(d, "identities.edges")
		mid := get(edges[3], "cursor")
		d2 := e.ok(`query($a: String){ identities(first: 3, after: $a){ edges { node { id } } } }`, map[string]any{"a": mid})
		for i, ed := range getList(d2, "identities.edges") {
			if want := get(edges[4+i], "node.id"); get(ed, "node.id") != want {
				t.Errorf("after edge 3, item %d = %v, want %v", i, get(ed, "node.id"), want)
			}
		}
		e.fail(graph.EINVALID, `{ identities(first: 3, after: "garbage!"){ totalCount } }`, nil)
	})

	t.Run("filtered identities", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String, $tags: [String!]){ identities(first: $first, after: $after, filter: {tags: $tags}){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"tags": []any{"project:live-set"}}, "identities", 15)
		if len(ids) != 40 || total != float64(40) {
			t.Fatalf("walked %d tagged identities, total %v; want 40", len(ids), total)
		}
		unique(t, ids)
	})

	t.Run("tag nodes", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String){ node(id:"tag:project:live-set"){ ... on Tag { nodes(first: $first, after: $after){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } } }`, nil, "node.nodes", 7)
		if len(ids) != 40 || total != float64(40) {
			t.Fatalf("walked %d tagged nodes, total %v; want 40", len(ids), total)
		}
		unique(t, ids)
	})

	t.Run("changelog", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String){ changelog(first: $first, after: $after){ totalCount edges { cursor node { id: seq } } pageInfo { hasNextPage endCursor } } }`, nil, "changelog", 60)
		if fmt.Sprint(len(ids)) != fmt.Sprint(total) {
			t.Fatalf("walked %d events, total %v", len(ids), total)
		}
		unique(t, ids)
	})

	t.Run("notes", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String){ identity(id:"jdxi"){ notes(first: $first, after: $after){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }`, nil, "identity.notes", 2)
		if len(ids) != 3 || total != float64(3) {
			t.Fatalf("walked %d notes, total %v; want 3", len(ids), total)
		}
	})

	// Lists the service returns whole (find hits, tags, unbound devices) page the same way.
	t.Run("find", func(t *testing.T) {
		q := `query($first: Int, $after: String){ find(text: "", tags: ["project:live-set"], kind: "identity", first: $first, after: $after){ totalCount edges { cursor score node { id } } pageInfo { hasNextPage endCursor } } }`
		ids, total := walk(t, q, nil, "find", 7)
		if len(ids) != 40 || total != float64(40) {
			t.Fatalf("walked %d hits, total %v; want 40", len(ids), total)
		}
		unique(t, ids)
		one := e.ok(q, map[string]any{"first": 100})
		for i, ed := range getList(one, "find.edges") {
			if fmt.Sprint(get(ed, "node.id")) != ids[i] {
				t.Fatalf("hit %d: one page gives %v, paging gives %s", i, get(ed, "node.id"), ids[i])
			}
		}
	})
	t.Run("tags", func(t *testing.T) {
		q := `query($first: Int, $after: String){ tags(first: $first, after: $after){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`
		ids, total := walk(t, q, nil, "tags", 4)
		if fmt.Sprint(len(ids)) != fmt.Sprint(total) || len(ids) < 5 {
			t.Fatalf("walked %d tags, total %v", len(ids), total)
		}
		unique(t, ids)
	})
	t.Run("unbound", func(t *testing.T) {
		q := `query($first: Int, $after: String){ unbound(first: $first, after: $after){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`
		ids, total := walk(t, q, nil, "unbound", 1)
		if fmt.Sprint(len(ids)) != fmt.Sprint(total) || len(ids) < 2 {
			t.Fatalf("walked %d unbound devices, total %v", len(ids), total)
		}
		unique(t, ids)
	})

	t.Run("devices all", func(t *testing.T) {
		ids, total := walk(t, `query($first: Int, $after: String){ devices(first: $first, after: $after, filter: {all: true}){ totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, nil, "devices", 3)
		if fmt.Sprint(len(ids)) != fmt.Sprint(total) || len(ids) == 0 {
			t.Fatalf("walked %d devices, total %v", len(ids), total)
		}
		unique(t, ids)
	})

	t.Run("page cap", func(t *testing.T) {
		// first outside 0..MaxPageSize is INVALID on every list field, both directions.
		max := e.exec.Limits().MaxPageSize
		d := e.ok(fmt.Sprintf(`{ identities(first: %d){ edges { node { id } } } }`, max), nil)
		if n := len(getList(d, "identities.edges")); n != max {
			t.Errorf("first: %d gave %d edges, want %d", max, n, max)
		}
		for _, q := range []string{
			`{ identities(first: 100000){ totalCount } }`, `{ identities(first: -1){ totalCount } }`,
			`{ devices(first: 100000){ totalCount } }`, `{ notes(first: -5){ totalCount } }`,
			`{ changelog(first: 100000){ totalCount } }`, `{ find(text: "jd", first: -5){ totalCount } }`,
			`{ find(text: "jd", first: 100000){ totalCount } }`, `{ robots(first: 100000){ totalCount } }`,
			`{ unbound(first: -1){ totalCount } }`, `{ tags(first: 100000){ totalCount } }`,
			`{ tag: node(id: "tag:role:synth"){ ... on Tag { nodes(first: 100000){ totalCount } } } }`,
		} {
			msg := e.fail(graph.EINVALID, q, nil)
			if !strings.Contains(msg, fmt.Sprint(max)) {
				t.Errorf("%s: message %q does not name the cap %d", q, msg, max)
			}
		}
	})
}

func TestSchema_Filters(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	d := e.ok(`{
		byName: identities(filter: {name: "fill"}, first: 1){ totalCount }
		byHint: identities(filter: {hint: {kind: "usb_id", value: "1235:8210"}}){ nodes { id } }
		byIds: identities(filter: {ids: ["identity:jdxi", "identity:beatstep"]}){ totalCount }
		byTags: identities(filter: {tags: ["role:synth", "manufacturer:roland"]}){ nodes { id } }
		usb: devices(filter: {source: "usb"}){ nodes { source } }
		bound: devices(filter: {identity: "identity:jdxi", all: true}){ nodes { ref } }
		tagged: devices(filter: {tags: ["location:desk"]}){ nodes { ref } }
		tagEvents: changelog(filter: {action: "tag.*", target: "identity:jdxi"}){ nodes { action targetId } }
		actor: changelog(filter: {actor: "test:*"}, first: 1){ nodes { actor } }
		since: changelog(filter: {since: "2026-11-01T09:00:00.100Z", until: "2026-11-01T09:00:00.110Z"}){ nodes { time } }
	}`, nil)
	if get(d, "byName.totalCount") != float64(120) {
		t.Errorf("name prefix fill: %v", get(d, "byName.totalCount"))
	}
	if get(d, "byHint.nodes.0.id") != "identity:scarlett" {
		t.Errorf("hint filter: %v", get(d, "byHint"))
	}
	if get(d, "byIds.totalCount") != float64(2) {
		t.Errorf("ids filter: %v", get(d, "byIds"))
	}
	if l := getList(d, "byTags.nodes"); len(l) != 1 || get(l[0], "id") != "identity:jdxi" {
		t.Errorf("tags filter: %v", l)
	}
	for _, x := range getList(d, "usb.nodes") {
		if get(x, "source") != "usb" {
			t.Errorf("source filter leaked %v", x)
		}
	}
	if l := getList(d, "bound.nodes"); len(l) != 1 || get(l[0], "ref") != "usb:3-3.2" {
		t.Errorf("identity filter: %v", l)
	}
	if l := getList(d, "tagged.nodes"); len(l) != 1 || get(l[0], "ref") != "usb:3-3.2" {
		t.Errorf("device tags filter: %v", l)
	}
	tagEvents := getList(d, "tagEvents.nodes")
	if len(tagEvents) != 2 {
		t.Errorf("tag.* on jdxi: %d events, want 2", len(tagEvents))
	}
	for _, x := range tagEvents {
		if !strings.HasPrefix(get(x, "action").(string), "tag.") || get(x, "targetId") != "identity:jdxi" {
			t.Errorf("filter leaked %v", x)
		}
	}
	if get(d, "actor.nodes.0.actor") != "test:seed" {
		t.Errorf("actor glob: %v", get(d, "actor"))
	}
	since := getList(d, "since.nodes")
	if len(since) == 0 {
		t.Error("time window gave no events")
	}
	for _, x := range since {
		ts, err := time.Parse(time.RFC3339Nano, get(x, "time").(string))
		lo, hi := time.Date(2026, 11, 1, 9, 0, 0, 100e6, time.UTC), time.Date(2026, 11, 1, 9, 0, 0, 110e6, time.UTC)
		if err != nil || ts.Before(lo) || ts.After(hi) {
			t.Errorf("event at %v is outside the window (%v)", ts, err)
		}
	}
	e.fail(graph.EINVALID, `{ changelog(filter: {since: "yesterday-ish"}){ totalCount } }`, nil)
}

// TestSchema_Links follows each link both ways.
func TestSchema_Links(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	d := e.ok(`{ identity(id:"jdxi"){
		id
		devices { id ref identity { id } fingerprints { kind } tags { name } notes { totalCount } changelog(first: 5){ nodes { action target { id } } } match { identity { id } } }
		tags { name nodes(first: 10){ nodes { id } } }
		notes { nodes { id target { id ... on Identity { name } } } }
		changelog(first: 50){ nodes { action targetId target { id } } }
	} }`, nil)
	dev := get(d, "identity.devices.0")
	if get(dev, "identity.id") != "identity:jdxi" || get(dev, "match.identity.id") != "identity:jdxi" {
		t.Errorf("identity → device → identity: %v", dev)
	}
	if get(dev, "tags.0.name") != "location:desk" {
		t.Errorf("device tags: %v", get(dev, "tags"))
	}
	var bindSeen bool
	for _, ev := range getList(dev, "changelog.nodes") {
		if get(ev, "action") == graph.ActDeviceBind {
			bindSeen = true
		}
		if get(ev, "target.id") != get(dev, "id") {
			t.Errorf("device event target %v", get(ev, "target.id"))
		}
	}
	if !bindSeen {
		t.Errorf("device changelog lacks device.bind: %v", get(dev, "changelog"))
	}
	for _, tg := range getList(d, "identity.tags") {
		found := false
		for _, n := range getList(tg, "nodes.nodes") {
			found = found || get(n, "id") == "identity:jdxi"
		}
		if !found {
			t.Errorf("tag %v → nodes lacks identity:jdxi", get(tg, "name"))
		}
	}
	for _, n := range getList(d, "identity.notes.nodes") {
		if get(n, "target.id") != "identity:jdxi" || get(n, "target.name") != "Roland JD-Xi" {
			t.Errorf("note → target: %v", n)
		}
	}
	acts := map[string]bool{}
	for _, ev := range getList(d, "identity.changelog.nodes") {
		acts[get(ev, "action").(string)] = true
		// Events about the identity include its notes' and devices' events.
		if get(ev, "target.id") != get(ev, "targetId") {
			t.Errorf("event target %v does not resolve (targetId %v)", get(ev, "target"), get(ev, "targetId"))
		}
	}
	for _, a := range []string{graph.ActIdentityCreate, graph.ActTagAdd, graph.ActNoteAdd} {
		if !acts[a] {
			t.Errorf("identity changelog lacks %s: %v", a, acts)
		}
	}
	// An event whose target is gone links to null, not an error.
	if err := e.svc.DeleteIdentity(e.ctx, "identity:beatstep"); err != nil {
		t.Fatal(err)
	}
	d = e.ok(`{ changelog(filter:{target:"identity:beatstep"}){ nodes { action target { id } } } }`, nil)
	for _, ev := range getList(d, "changelog.nodes") {
		if get(ev, "target") != nil {
			t.Errorf("deleted target resolves to %v", get(ev, "target"))
		}
	}
}

// events returns the changelog events of one request id, oldest first.
func (e *env) requestEvents(t *testing.T, requestID string) []map[string]any {
	t.Helper()
	d := e.ok(`{ changelog(first: 100){ nodes { action actor targetId message requestId before after } } }`, nil)
	var out []map[string]any
	for _, ev := range getList(d, "changelog.nodes") {
		if get(ev, "requestId") == requestID {
			out = append([]map[string]any{ev.(map[string]any)}, out...)
		}
	}
	return out
}

// TestSchema_Mutations runs every mutation through GraphQL and reads its events back.
func TestSchema_Mutations(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	n := 0
	// mutate runs a mutation under a fresh request id and returns its data and events.
	mutate := func(t *testing.T, q string, vars map[string]any) (map[string]any, []map[string]any) {
		t.Helper()
		n++
		rid := fmt.Sprintf("req-%03d", n)
		ctx := graph.WithRequestID(graph.WithActor(context.Background(), "http:tester"), rid)
		out := e.doCtx(ctx, q, vars)
		if errs, has := out["errors"]; has {
			t.Fatalf("mutation failed: %v\n%s", errs, q)
		}
		evs := e.requestEvents(t, rid)
		for _, ev := range evs {
			if ev["actor"] != "http:tester" {
				t.Errorf("event actor=%v, want http:tester", ev["actor"])
			}
		}
		return out["data"].(map[string]any), evs
	}
	actions := func(evs []map[string]any) string {
		var s []string
		for _, ev := range evs {
			s = append(s, ev["action"].(string)+"@"+ev["targetId"].(string))
		}
		return strings.Join(s, " ")
	}

	t.Run("createIdentity", func(t *testing.T) {
		d, evs := mutate(t, `mutation { createIdentity(name: "Korg Minilogue", data: {room: "b"}, tags: ["role:synth"], hints: [{kind: "usb_id", value: "0944:010f"}], message: "new synth"){ id name data hints { kind } tags { name } } }`, nil)
		if get(d, "createIdentity.id") != "identity:korg-minilogue" || get(d, "createIdentity.data.room") != "b" {
			t.Errorf("created %v", d)
		}
		if len(evs) == 0 || evs[0]["action"] != graph.ActIdentityCreate || evs[0]["message"] != "new synth" {
			t.Errorf("events %s (message %v)", actions(evs), evs)
		}
		e.fail(graph.ECONFLICT, `mutation { createIdentity(name: "Korg Minilogue"){ id } }`, nil)
		e.fail(graph.EINVALID, `mutation { createIdentity(name: ""){ id } }`, nil)
		e.fail(graph.EINVALID, `mutation { createIdentity(name: "x", data: [1,2]){ id } }`, nil)
	})
	t.Run("renameIdentity", func(t *testing.T) {
		d, evs := mutate(t, `mutation { renameIdentity(id: "korg-minilogue", name: "Korg Minilogue XD"){ name } }`, nil)
		if get(d, "renameIdentity.name") != "Korg Minilogue XD" || actions(evs) != "identity.rename@identity:korg-minilogue" {
			t.Errorf("rename: %v %s", d, actions(evs))
		}
	})
	t.Run("updateIdentity", func(t *testing.T) {
		d, evs := mutate(t, `mutation($d: JSON){ updateIdentity(id: "korg-minilogue", data: $d){ data } }`, map[string]any{"d": map[string]any{"room": "c", "voices": 4}})
		if get(d, "updateIdentity.data.voices") != float64(4) || actions(evs) != "identity.update@identity:korg-minilogue" {
			t.Errorf("update: %v %s", d, actions(evs))
		}
		if get(evs[0], "before.data.room") != "b" || get(evs[0], "after.data.room") != "c" {
			t.Errorf("update before/after: %v → %v", evs[0]["before"], evs[0]["after"])
		}
	})
	t.Run("addHints removeHints", func(t *testing.T) {
		d, evs := mutate(t, `mutation { addHints(id: "korg-minilogue", hints: [{kind: "usb_serial", value: "0944:010F:SN1"}, {kind: "alsa_card_id", value: "minilogue"}]){ hints { kind value } } }`, nil)
		if len(getList(d, "addHints.hints")) != 3 || !strings.Contains(actions(evs), "hint.add@identity:korg-minilogue") {
			t.Errorf("addHints: %v %s", d, actions(evs))
		}
		// A unit hint held elsewhere: conflict naming the holder, then move.
		msg := e.fail(graph.ECONFLICT, `mutation { addHints(id: "scarlett", hints: [{kind: "usb_serial", value: "0944:010f:SN1"}]){ id } }`, nil)
		if !strings.Contains(msg, "korg-minilogue") {
			t.Errorf("conflict message %q does not name the holder", msg)
		}
		_, evs = mutate(t, `mutation { addHints(id: "scarlett", hints: [{kind: "usb_serial", value: "0944:010f:SN1"}], move: true){ id } }`, nil)
		if !strings.Contains(actions(evs), "hint.move") {
			t.Errorf("move: %s", actions(evs))
		}
		d, evs = mutate(t, `mutation { removeHints(id: "korg-minilogue", hints: [{kind: "alsa_card_id", value: "minilogue"}]){ hints { kind } } }`, nil)
		if len(getList(d, "removeHints.hints")) != 1 || !strings.Contains(actions(evs), "hint.remove@identity:korg-minilogue") {
			t.Errorf("removeHints: %v %s", d, actions(evs))
		}
	})
	t.Run("tag", func(t *testing.T) {
		d, evs := mutate(t, `mutation { tag(target: "korg-minilogue", add: ["Manufacturer:Korg", "status:ok"], remove: ["role:synth"], message: "retag"){ targetId tags { name count } target { id } } }`, nil)
		names := []string{}
		for _, x := range getList(d, "tag.tags") {
			names = append(names, get(x, "name").(string))
		}
		if strings.Join(names, ",") != "manufacturer:korg,status:ok" || get(d, "tag.target.id") != "identity:korg-minilogue" {
			t.Errorf("tag: %v", d)
		}
		if a := actions(evs); !strings.Contains(a, "tag.add") || !strings.Contains(a, "tag.remove") {
			t.Errorf("tag events: %s", a)
		}
		for _, ev := range evs {
			if ev["message"] != "retag" {
				t.Errorf("event message=%v", ev["message"])
			}
		}
		before := e.ok(`{ stats { events } }`, nil)
		e.fail(graph.EINVALID, `mutation { tag(target: "korg-minilogue", add: ["status:ok", "bad tag no colon"]){ targetId } }`, nil)
		if after := e.ok(`{ stats { events } }`, nil); get(after, "stats.events") != get(before, "stats.events") {
			t.Errorf("a failed tag wrote events")
		}
	})
	var noteID string
	t.Run("addNote deleteNote", func(t *testing.T) {
		d, evs := mutate(t, `mutation { addNote(target: "korg-minilogue", body: "Needs a **new** PSU.", kind: "danger"){ id kind body author target { id } } }`, nil)
		noteID, _ = get(d, "addNote.id").(string)
		if !strings.HasPrefix(noteID, "note:") || get(d, "addNote.author") != "http:tester" || actions(evs) != "note.add@"+noteID {
			t.Errorf("addNote: %v %s", d, actions(evs))
		}
		e.fail(graph.EINVALID, `mutation { addNote(target: "korg-minilogue", body: "x", kind: "shouty"){ id } }`, nil)
		e.fail(graph.EINVALID, `mutation($b: String!){ addNote(target: "korg-minilogue", body: $b){ id } }`, map[string]any{"b": strings.Repeat("x", 17*1024)})
		d, evs = mutate(t, `mutation($id: ID!){ deleteNote(id: $id){ id deleted } }`, map[string]any{"id": noteID})
		if get(d, "deleteNote.deleted") != true || actions(evs) != "note.delete@"+noteID {
			t.Errorf("deleteNote: %v %s", d, actions(evs))
		}
		e.fail(graph.ENOTFOUND, `mutation($id: ID!){ deleteNote(id: $id){ id } }`, map[string]any{"id": noteID})
	})
	t.Run("bind unbind", func(t *testing.T) {
		d, evs := mutate(t, `mutation { bind(ref: "usb:3-1", newName: "nanoKONTROL2 left", slug: "nano-left", dryRun: true){ dryRun created identity { id } hintsAdded { kind } events } }`, nil)
		if get(d, "bind.dryRun") != true || len(evs) != 0 {
			t.Errorf("dry run wrote %s: %v", actions(evs), d)
		}
		if _, err := e.svc.FindIdentityByID(e.ctx, "identity:nano-left", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Errorf("dry run created the identity (err %v)", err)
		}
		d, evs = mutate(t, `mutation { bind(ref: "usb:3-1", newName: "nanoKONTROL2 left", slug: "nano-left", message: "left of the desk"){ created identity { id } device { ref identity { id } } match { confidence } hintsAdded { kind } } }`, nil)
		if get(d, "bind.created") != true || get(d, "bind.device.identity.id") != "identity:nano-left" {
			t.Errorf("bind: %v", d)
		}
		a := actions(evs)
		if !strings.Contains(a, "identity.create@identity:nano-left") || !strings.Contains(a, "device.bind@device:") {
			t.Errorf("bind events: %s", a)
		}
		d, evs = mutate(t, `mutation { unbind(ref: "usb:3-1"){ ref boundBy } }`, nil)
		if !strings.Contains(actions(evs), "device.unbind") {
			t.Errorf("unbind: %v %s", d, actions(evs))
		}
		e.fail(graph.EINVALID, `mutation { bind(ref: "usb:3-1"){ created } }`, nil)
		e.fail(graph.ENOTFOUND, `mutation { bind(ref: "usb:9-9", identity: "jdxi"){ created } }`, nil)
	})
	t.Run("merge delete restore", func(t *testing.T) {
		d, evs := mutate(t, `mutation { mergeIdentities(from: "nano-left", into: "korg-minilogue"){ id hints { kind } } }`, nil)
		a := actions(evs)
		if get(d, "mergeIdentities.id") != "identity:korg-minilogue" || !strings.Contains(a, "identity.merge") {
			t.Errorf("merge: %v %s", d, a)
		}
		d, evs = mutate(t, `mutation { deleteIdentity(id: "korg-minilogue", message: "sold"){ id deleted } }`, nil)
		if get(d, "deleteIdentity.id") != "identity:korg-minilogue" || !strings.Contains(actions(evs), "identity.delete@identity:korg-minilogue") {
			t.Errorf("delete: %v %s", d, actions(evs))
		}
		e.fail(graph.ENOTFOUND, `{ identity(id: "korg-minilogue"){ id } }`, nil)
		d, evs = mutate(t, `mutation { restoreIdentity(id: "identity:korg-minilogue"){ id name } }`, nil)
		if get(d, "restoreIdentity.name") != "Korg Minilogue XD" || !strings.Contains(actions(evs), "identity.restore") {
			t.Errorf("restore: %v %s", d, actions(evs))
		}
		e.fail(graph.ENOTFOUND, `mutation { deleteIdentity(id: "never-was"){ id } }`, nil)
	})
	t.Run("pruneChangelog", func(t *testing.T) {
		before := e.ok(`{ changelogVerify { checked } }`, nil)
		const prune = `mutation { pruneChangelog(before: "2026-11-01T09:00:00.050Z"){ dropped } }`
		// Without the prune permission (an HTTP request whose token is not marked prune).
		if msg := e.fail(graph.EFORBIDDEN, prune, nil); !strings.Contains(msg, "name token prune") {
			t.Errorf("forbidden prune: %q", msg)
		}
		ctx := graph.WithPrunePermission(graph.WithRequestID(graph.WithActor(context.Background(), "http:admin"), "req-prune"))
		future := e.doCtx(ctx, `mutation { pruneChangelog(before: "2999-01-01T00:00:00Z"){ dropped } }`, nil)
		if got := get(future, "errors.0.extensions.code"); got != graph.EINVALID {
			t.Errorf("future before: %v", future)
		}
		d := e.doCtx(ctx, prune, nil)
		if got := get(d, "data.pruneChangelog.dropped"); got == float64(0) || got == nil {
			t.Errorf("prune dropped %v (%v)", got, d)
		}
		if evs := e.requestEvents(t, "req-prune"); len(evs) != 1 || evs[0]["action"] != graph.ActChangelogPrune || evs[0]["actor"] != "http:admin" {
			t.Errorf("prune events %v", evs)
		}
		after := e.ok(`{ changelogVerify { ok checked checkpoint prunedBy { actor eventSeq firstSeq lastSeq checkpoint dropped } } }`, nil)
		if get(after, "changelogVerify.ok") != true || get(after, "changelogVerify.checked") == get(before, "changelogVerify.checked") ||
			get(after, "changelogVerify.prunedBy.actor") != "http:admin" || get(after, "changelogVerify.prunedBy.firstSeq") != "1" {
			t.Errorf("after prune: %v (before %v)", after, before)
		}
	})
	t.Run("read-only refuses mutations", func(t *testing.T) {
		resp := e.exec.Execute(context.Background(), query.Request{Query: `mutation { createIdentity(name: "Sneaky"){ id } }`}, true)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != query.CodeForbidden {
			t.Fatalf("read-only mutation: %+v", resp)
		}
		if _, err := e.svc.FindIdentityByID(e.ctx, "identity:sneaky", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Errorf("read-only mutation wrote (err %v)", err)
		}
		resp = e.exec.Execute(context.Background(), query.Request{Query: `{ stats { identities } }`}, true)
		if len(resp.Errors) != 0 {
			t.Errorf("read-only query: %+v", resp.Errors)
		}
	})
}

func TestSchema_Golden(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	golden(t, "identity_jdxi.json", e.do(`{ identity(id:"jdxi"){ id name data hints { kind value class } tags { name count seeded }
		notes { totalCount nodes { kind body author time } }
		devices { ref name sources present boundBy fingerprints { kind value } match { confidence score summary explanation { kind value class weight note } } } } }`, nil))
	golden(t, "unbound.json", e.do(`{ unbound { totalCount pageInfo { hasNextPage } nodes { ref name source fingerprints { kind value } match { confidence score summary candidates { identityId score confidence } } } } }`, nil))
	golden(t, "changelog_jdxi.json", e.do(`{ changelog(filter: {target: "identity:jdxi"}){ totalCount nodes { seq time actor action targetId before after } } }`, nil))

	sdl := e.exec.SDL()
	path := filepath.Join("testdata", "schema.graphql")
	if *update {
		if err := os.WriteFile(path, []byte(sdl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if sdl != string(want) {
		t.Errorf("SDL differs from %s (run with -update if intended)", path)
	}
}

// TestSchema_Robots drives the simulated robot through every robot mutation and reads the
// robot.* events back.
func TestSchema_Robots(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	ctx := graph.WithRequestID(graph.WithActor(context.Background(), "http:pilot"), "robot-req")
	run := func(q string, vars map[string]any) map[string]any {
		t.Helper()
		out := e.doCtx(ctx, q, vars)
		if errs, has := out["errors"]; has {
			t.Fatalf("%s: %v", q, errs)
		}
		return out["data"].(map[string]any)
	}
	d := run(`mutation { bind(ref: "robot:scout", newName: "Scout Rover", slug: "rover"){ identity { id } } }`, nil)
	if get(d, "bind.identity.id") != "identity:rover" {
		t.Fatalf("bind robot: %v", d)
	}
	d = run(`{ robots { totalCount nodes { ref name state armed battery pose { x y heading } gripper params { maxSpeed arrivalThreshold geofence { x } } identity { id } device { ref } } }
		robot(id: "rover"){ ref detect { id kind distance } } }`, nil)
	if l := getList(d, "robots.nodes"); len(l) != 1 || get(l[0], "identity.id") != "identity:rover" || get(l[0], "device.ref") != "robot:scout" || get(l[0], "armed") != false {
		t.Fatalf("robots: %v", l)
	}
	if get(d, "robot.detect.0.id") != "cup" {
		t.Errorf("detect: %v", get(d, "robot.detect"))
	}
	d = run(`mutation { robotArm(robot: "rover", message: "mission"){ armed state } }`, nil)
	if get(d, "robotArm.armed") != true {
		t.Errorf("arm: %v", d)
	}
	d = run(`mutation { robotSetParameters(robot: "rover", params: {maxSpeed: 0.8, arrivalThreshold: 0.2}){ params { maxSpeed arrivalThreshold } } }`, nil)
	if get(d, "robotSetParameters.params.maxSpeed") != 0.8 {
		t.Errorf("parameters: %v", d)
	}
	msg := e.fail(graph.EINVALID, `mutation { robotSetParameters(robot: "rover", params: {maxSpeed: -3}){ ref } }`, nil)
	if !strings.Contains(strings.ToLower(msg), "speed") {
		t.Errorf("bad parameter message %q", msg)
	}
	d = run(`mutation { robotGrasp(robot: "rover", object: "cup"){ holding gripper } }`, nil)
	if get(d, "robotGrasp.holding") != "cup" {
		t.Errorf("grasp: %v", d)
	}
	// Navigate blocks until arrival; the simulator's clock is advanced meanwhile.
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				e.robotClock.Advance(20 * time.Millisecond)
				time.Sleep(time.Millisecond)
			}
		}
	}()
	d = run(`mutation { robotNavigate(robot: "rover", x: 1.5, y: 0, timeoutS: 30){ status distanceRemaining elapsedS battery pose { x y } } }`, nil)
	close(done)
	if get(d, "robotNavigate.status") != graph.NavArrived {
		t.Errorf("navigate: %v", d)
	}
	e.fail(graph.EINVALID, `mutation { robotNavigate(robot: "rover", x: 1e9, y: 0){ status } }`, nil)
	e.fail(graph.EINVALID, `mutation { robotNavigate(robot: "rover", x: 1, y: 0, timeoutS: -1){ status } }`, nil)
	d = run(`mutation { robotRelease(robot: "rover"){ holding gripper } }`, nil)
	if get(d, "robotRelease.holding") != nil {
		t.Errorf("release: %v", d)
	}
	if d = run(`mutation { robotDisarm(robot: "rover"){ armed } }`, nil); get(d, "robotDisarm.armed") != false {
		t.Errorf("disarm: %v", d)
	}
	run(`mutation { robotArm(robot: "rover"){ armed } }`, nil)
	d = run(`mutation { robotStop(robot: "rover"){ state armed } }`, nil)
	if get(d, "robotStop.state") != graph.RobotStopped {
		t.Errorf("stop: %v", d)
	}
	e.fail(graph.ENOTFOUND, `mutation { robotArm(robot: "robot:nobody"){ armed } }`, nil)

	d = e.ok(`{ changelog(filter: {action: "robot.*"}){ nodes { action actor requestId message } } }`, nil)
	seen := map[string]bool{}
	for _, ev := range getList(d, "changelog.nodes") {
		seen[get(ev, "action").(string)] = true
		if get(ev, "actor") != "http:pilot" {
			t.Errorf("robot event actor %v", get(ev, "actor"))
		}
	}
	for _, a := range []string{graph.ActRobotArm, graph.ActRobotParameters, graph.ActRobotNavStart, graph.ActRobotNavEnd, graph.ActRobotStop, graph.ActRobotDisarm} {
		if !seen[a] {
			t.Errorf("no %s event (saw %v)", a, seen)
		}
	}
}

// Device.nodes: the /dev nodes a present device provides, with their stable links, both on
// a device listed through the service and on one loaded as a node.
func TestSchema_DeviceNodes(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	const want = "/dev/ttyUSB0 tty /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"
	d := e.ok(`{ a: devices(filter:{source:"usb"}, first: 50){ edges { node { ref nodes { path kind links } } } }
		b: node(id:"usb:3-7"){ ... on Device { nodes { kind path links } } }
		c: node(id:"usb:3-3"){ ... on Device { nodes { path } } } }`, nil)
	var a string
	for _, edge := range getList(d, "a.edges") {
		n := edge.(map[string]any)["node"].(map[string]any)
		if n["ref"] == "usb:3-7" {
			a = fmt.Sprint(get(n, "nodes.0.path"), " ", get(n, "nodes.0.kind"), " ", get(n, "nodes.0.links.0"))
		}
	}
	if a != want {
		t.Errorf("devices: robot base nodes %q, want %q", a, want)
	}
	if b := fmt.Sprint(get(d, "b.nodes.0.path"), " ", get(d, "b.nodes.0.kind"), " ", get(d, "b.nodes.0.links.0")); b != want {
		t.Errorf("node(id): robot base nodes %q, want %q", b, want)
	}
	if n := getList(d, "c.nodes"); n == nil || len(n) != 0 {
		t.Errorf("a hub has nodes %v, want an empty list", n)
	}
}
