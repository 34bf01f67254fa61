//go:build cluster

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/migrations"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// graphqlPost sends one GraphQL request to the real HTTP server at base.
func graphqlPost(t *testing.T, base, query string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A fleet upgraded host by host, end to end with the binary. The cluster's graph is at
// schema 3 (the committed version-3 file) and an older host is live. `devgraph serve
// --store` of this devgraph serves it read-only: reads work; a write is refused with
// the same one line through the CLI, GraphQL and MCP; GraphQL hosts and doctor list the
// hosts (the older one with its schema). migrate is refused while the older host lives,
// then migrates; the front end takes writes again without a restart, and doctor is
// clean.
func TestClusterCLI_Upgrade(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	ctx := context.Background()
	s := storeURL(t, ec, "/up")
	cli := ec.Client(t)
	var ops []clientv3.Op
	err := migrations.EachRecord("../../store/testdata/schema-v3.bolt", func(b, k, v []byte) error {
		ops = append(ops, clientv3.OpPut("/up/d/"+string(b)+"/"+string(k), string(v)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, clientv3.OpPut("/up/schema", "3"), clientv3.OpPut("/up/txn", "seeded-by-the-test"))
	if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, "/up/hosts/old", `{"machine_id":"machine-old","version":"v0.3.0","schema":3,"since":"2026-11-28T09:00:00Z"}`, clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}

	srv, base, _, db := serveHost(t, s, "a")
	c := newCLI(t)
	const refused = "this front end is read-only: the cluster's graph is at schema version 3 and this devgraph writes version 4 (the fleet is mid-upgrade); finish upgrading devgraph on every host, then run `devgraph --store "
	if out := c.ok(append(db, "identities")...); !strings.Contains(out, "Focusrite Scarlett 2i2") {
		t.Fatalf("reading the old graph: %q", out)
	}
	c.fail(1, refused, append(db, "identity", "create", "Desk Mixer")...)
	c.fail(1, refused, append(db, "tag", "jdxi", "+room:b")...)
	gq := graphqlPost(t, base, `mutation { createIdentity(name: "Desk Mixer") { id } }`)
	if errs, _ := gq["errors"].([]any); len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["message"].(string), refused) {
		t.Fatalf("a GraphQL write mid-upgrade: %v", gq)
	}
	// MCP offers --read-only's tools mid-upgrade: no graph_tag.
	agent := newMCPAgent(t, ctx, base, "agent")
	if tools := agent.tools(ctx); slices.Contains(tools, "graph_tag") || !slices.Contains(tools, "graph_find") {
		t.Fatalf("MCP tools mid-upgrade: %v; want the reading tools only", tools)
	}
	if _, err := agent.call(ctx, "graph_tag", map[string]any{"target": "jdxi", "add": []any{"room:b"}}, ""); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("graph_tag mid-upgrade: %v; want tool not found", err)
	}

	// The hosts, through GraphQL and doctor.
	gq = graphqlPost(t, base, `{ hosts { name online schema devices } }`)
	hosts, _ := gq["data"].(map[string]any)["hosts"].([]any)
	got := ""
	for _, h := range hosts {
		m := h.(map[string]any)
		got += m["name"].(string) + "/" + okIf(m["online"].(bool), "online", "offline") + "/" + jsonText(m["schema"]) + "/" + jsonText(m["devices"]) + " "
	}
	if got != "a/online/4/2 old/online/3/0 " {
		t.Fatalf("GraphQL hosts: %q (%v)", got, gq)
	}
	out, _, code := c.run("--store", s, "--db", db[1], "doctor")
	for _, w := range []string{"older than this devgraph's 4", "2 online, 0 offline", "host old", "devgraph v0.3.0 (schema 3)"} {
		if code != 1 || !strings.Contains(out, w) {
			t.Fatalf("doctor mid-upgrade (exit %d) lacks %q:\n%s", code, w, out)
		}
	}

	// With no front end, verify, export and backup read a snapshot migrated locally (the
	// cluster is not changed): the chain is the front end's, the devices take --host-name.
	if got, want := verified(t, c, "--store", s, "--host-name", "a"), verified(t, c, db...); got != want {
		t.Fatalf("verify --store mid-upgrade from a snapshot: %q; the front end: %q", got, want)
	}
	dir := t.TempDir()
	export, backup := filepath.Join(dir, "mid.jsonl"), filepath.Join(dir, "mid.db")
	c.ok("--store", s, "--host-name", "a", "export", export)
	if raw, err := os.ReadFile(export); err != nil || !strings.Contains(string(raw), `"host":"a"`) || !strings.Contains(string(raw), "Focusrite Scarlett 2i2") {
		t.Fatalf("export --store mid-upgrade: %v\n%.400s", err, raw)
	}
	c.ok("--store", s, "--host-name", "a", "backup", backup)
	if got, want := verified(t, c, "--db", backup, "--host-name", "a"), verified(t, c, db...); got != want {
		t.Fatalf("the mid-upgrade backup verifies as %q; the front end: %q", got, want)
	}
	if got, _ := cli.Get(ctx, "/up/schema"); string(got.Kvs[0].Value) != "3" {
		t.Fatalf("P/schema after reading snapshots: %s; want 3 (untouched)", got.Kvs[0].Value)
	}

	// migrate: refused while the older host lives, then done.
	c.fail(1, "old (devgraph v0.3.0, schema 3) still runs an older devgraph", "--store", s, "migrate")
	if out := c.ok("--store", s, "migrate", "--status"); !strings.Contains(out, "3→4: give every device and robot record the host") || !strings.Contains(out, "still on an older devgraph") {
		t.Fatalf("migrate --status: %q", out)
	}
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("--store", s, "--host-name", "a", "migrate"); !strings.Contains(out, "migrated the cluster's graph from schema version 3 to 4") {
		t.Fatalf("migrate: %q", out)
	}
	waitUntil(t, "the front end taking writes", 20*time.Second, func() bool {
		_, _, code := c.run(append(db, "identity", "create", "Desk Mixer")...)
		return code == 0
	})
	if !strings.Contains(srv.log(), "takes writes again") {
		t.Fatalf("the front end did not say it takes writes again:\n%s", srv.log())
	}
	// MCP offers the writing tools again, to the session open since before.
	if tools := agent.tools(ctx); !slices.Contains(tools, "graph_tag") {
		t.Fatalf("MCP tools once the graph is migrated: %v; want graph_tag back", tools)
	}
	agent.ok(ctx, "graph_tag", map[string]any{"target": "jdxi", "add": []any{"room:b"}})
	if got, want := verified(t, c, "--store", s), verified(t, c, db...); got != want {
		t.Fatalf("the cluster verifies as %q, the front end as %q", got, want)
	}
	// The older host had no devices: gone with its claim, it is not listed.
	out = c.ok("--store", s, "--db", db[1], "doctor")
	if strings.Contains(out, "host old") || !strings.Contains(out, "1 online, 0 offline") || !strings.Contains(out, "schema version 4") {
		t.Fatalf("doctor after the migration:\n%s", out)
	}
	if out := c.ok("--store", s, "migrate"); !strings.Contains(out, "at schema version 4 (current); nothing to do") {
		t.Fatalf("migrate again: %q", out)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
