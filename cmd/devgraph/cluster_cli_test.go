//go:build cluster

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/store"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func storeOf(c *etcdtest.Cluster, prefix string) string {
	eps := c.Endpoints()
	for i, ep := range eps {
		eps[i] = strings.TrimPrefix(ep, "http://")
	}
	return "etcd://" + strings.Join(eps, ",") + prefix
}

var headLine = regexp.MustCompile(`changelog ok: \d+ events checked \(seq 1\.\.\d+\), head [0-9a-f]+`)

// verified runs changelog verify with args and returns its line.
func verified(t *testing.T, c *cliEnv, args ...string) string {
	t.Helper()
	out := c.ok(append(args, "changelog", "verify")...)
	line := headLine.FindString(out)
	if line == "" {
		t.Fatalf("changelog verify %v: %q", args, out)
	}
	return line
}

// The cluster verbs end to end on a real 3-member cluster with a front end (the binary)
// serving host a: changelog verify, backup and export through the front end's socket
// and, with no front end, from a snapshot of the cluster, all on the same chain; a
// backup is an ordinary database that verifies; an export imported into an empty
// cluster keeps the chain on a fresh front end, and is refused where a host is live;
// doctor reports the members, the live hosts and the replica's lag, and exits 1 with a
// member down; a second machine taking host a's name is refused.
func TestClusterCLI_Verbs(t *testing.T) {
	ec := etcdtest.Start(t, 3)
	s := storeOf(ec, "/cli")
	dir := t.TempDir()
	replica := filepath.Join(dir, "a.db")
	env := append(procEnv(t), "DEVGRAPH_MACHINE_ID=machine-a")
	fe := startServe(t, env, "--store", s, "--db", replica, "--host-name", "a", "--demo", "--poll", "0")
	fe.waitLine("socket:")
	c := newCLI(t)
	c.ok("--db", replica, "identity", "create", "Roland JD-Xi", "--tag", "role:synth")
	c.ok("--db", replica, "note", "add", "roland-jd-xi", "MIDI out to the mixer")

	// Through the front end's socket, with or without --store; then from a snapshot.
	want := verified(t, c, "--db", replica)
	if got := verified(t, c, "--store", s, "--db", replica); got != want {
		t.Fatalf("verify --store through the front end: %q, want %q", got, want)
	}
	if got := verified(t, c, "--store", s); got != want {
		t.Fatalf("verify --store from a snapshot: %q, want %q", got, want)
	}
	for _, how := range [][]string{{"--db", replica}, {}} {
		b := filepath.Join(dir, "backup"+string(rune('0'+len(how)))+".db")
		out := c.ok(append([]string{"--store", s}, append(how, "backup", b)...)...)
		if !strings.Contains(out, "backed up "+s+" to "+b) {
			t.Fatalf("backup %v: %q", how, out)
		}
		if got := verified(t, c, "--db", b); got != want {
			t.Fatalf("the backup (%v) verifies as %q, want %q", how, got, want)
		}
		db, err := store.Open(b, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		of := db.ReplicaOf()
		db.Close()
		if of != "" {
			t.Fatalf("the backup (%v) is marked a replica of %q", how, of)
		}
		c.ok("--db", b, "tag", "roland-jd-xi", "+restored:yes") // an ordinary file takes writes
	}
	// Writes and streams go through a front end: --store with the front end's --db, and
	// without one the verb says how to start it.
	c.ok("--store", s, "--db", replica, "identity", "create", "Desk Mixer")
	for _, v := range [][]string{{"identity", "create", "Nobody"}, {"changelog", "--follow"}} {
		c.fail(1, "no front end serves the cluster "+s+" on this host", append([]string{"--store", s}, v...)...)
	}
	want = verified(t, c, "--db", replica)
	export := filepath.Join(dir, "fleet.jsonl")
	c.ok("--store", s, "export", export)

	// The export into an empty cluster (its own prefix): the chain is kept; a fresh
	// front end verifies it. Where a host is live, refused naming it.
	c.fail(1, "host a is live on the cluster", "--store", s, "import", export)
	s2 := storeOf(ec, "/imported")
	out := c.ok("--store", s2, "import", "--quiet", export)
	if !strings.Contains(out, "changelog kept byte for byte") {
		t.Fatalf("import: %q", out)
	}
	if got := verified(t, c, "--store", s2); got != want {
		t.Fatalf("the imported cluster verifies as %q, want %q", got, want)
	}
	replica2 := filepath.Join(dir, "b.db")
	fe2 := startServe(t, append(procEnv(t), "DEVGRAPH_MACHINE_ID=machine-b"), "--store", s2, "--db", replica2, "--host-name", "b", "--poll", "0", "--sys-root", dir, "--proc-root", dir, "--pw-dump-file", export)
	fe2.waitLine("socket:")
	if got := verified(t, c, "--db", replica2); got != want {
		t.Fatalf("a fresh front end on the imported cluster verifies as %q, want %q", got, want)
	}
	if out := c.ok("--db", replica2, "notes", "roland-jd-xi"); !strings.Contains(out, "MIDI out to the mixer") {
		t.Fatalf("the imported note: %q", out)
	}

	// Doctor: members, hosts, lag.
	var rep struct {
		Cluster struct {
			Members []struct {
				Name    string `json:"name"`
				Healthy bool   `json:"healthy"`
				Leader  bool   `json:"leader"`
			} `json:"members"`
			Limits string `json:"limits"`
			Schema int    `json:"schema"`
			Hosts  []struct {
				Name string `json:"name"`
			} `json:"hosts"`
			Head int64 `json:"head_revision"`
		} `json:"cluster"`
		Server     bool   `json:"server"`
		ReplicaLag *int64 `json:"replica_lag"`
		Chain      struct {
			OK bool `json:"ok"`
		} `json:"chain"`
	}
	c.jsonOf(&rep, "--store", s, "--db", replica, "doctor", "--json")
	leaders := 0
	for _, m := range rep.Cluster.Members {
		if !m.Healthy {
			t.Errorf("doctor: member %s unhealthy", m.Name)
		}
		if m.Leader {
			leaders++
		}
	}
	if len(rep.Cluster.Members) != 3 || leaders != 1 || rep.Cluster.Limits != "ok" || len(rep.Cluster.Hosts) != 1 || rep.Cluster.Hosts[0].Name != "a" {
		t.Fatalf("doctor --store: %+v", rep.Cluster)
	}
	if !rep.Server || rep.ReplicaLag == nil || *rep.ReplicaLag != 0 || !rep.Chain.OK {
		t.Fatalf("doctor --store beside an idle front end: server %v, lag %v, chain ok %v", rep.Server, rep.ReplicaLag, rep.Chain.OK)
	}
	table := c.ok("--store", s, "--db", replica, "doctor")
	for _, w := range []string{"member m0", "leader", "limits", "hosts", "1 online, 0 offline", "host a", "replica", "current"} {
		if !strings.Contains(table, w) {
			t.Fatalf("doctor's table lacks %q:\n%s", w, table)
		}
	}

	// Another machine claiming host a's name is refused; the front end keeps it.
	_, errs, code := runBin(t, append(procEnv(t), "DEVGRAPH_MACHINE_ID=machine-z"), "serve", "--store", s, "--db", filepath.Join(dir, "z.db"), "--host-name", "a", "--poll", "0")
	if code != 1 || !strings.Contains(errs, `host name "a" is held by another live host`) {
		t.Fatalf("a second machine as host a: exit %d, %q", code, errs)
	}

	// A prefix holding another tool's keys, and a graph at a newer schema: every verb
	// refuses with one line, and writes nothing.
	cli := ec.Client(t)
	if _, err := cli.Put(context.Background(), "/foreign/config", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(context.Background(), "/newer/schema", "99"); err != nil {
		t.Fatal(err)
	}
	for prefix, want := range map[string]string{
		"/foreign": "holds 1 keys but no devgraph graph: is --store's prefix right?",
		"/newer":   "the cluster's graph is at schema version 99, newer than this devgraph's",
	} {
		for _, v := range [][]string{{"changelog", "verify"}, {"backup", filepath.Join(dir, "never.db")}, {"import", export}, {"doctor"}} {
			c.fail(1, want, append([]string{"--store", storeOf(ec, prefix)}, v...)...)
		}
		resp, err := cli.Get(context.Background(), prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil || resp.Count != 1 {
			t.Fatalf("the refusals under %s wrote: %d keys (%v)", prefix, resp.Count, err)
		}
	}

	// With the front end stopped, its replica still reads (the last state it held), and
	// its backup is an ordinary database.
	fe.cmd.Process.Signal(syscall.SIGTERM)
	fe.wait()
	if got := verified(t, c, "--db", replica); got != want {
		t.Fatalf("the stopped front end's replica verifies as %q, want %q", got, want)
	}
	b3 := filepath.Join(dir, "backup-of-replica.db")
	c.ok("--db", replica, "backup", b3)
	c.ok("--db", b3, "tag", "roland-jd-xi", "+restored:yes")
	c.fail(1, "changes go through a front end", "--db", replica, "tag", "roland-jd-xi", "+x:y")

	ec.Kill(2)
	errs = c.fail(1, "the cluster is not healthy: etcd member m2", "--store", s, "doctor")
	var rep2 struct {
		Cluster struct {
			Problems []string `json:"problems"`
		} `json:"cluster"`
	}
	out, _, code = c.run("--store", s, "doctor", "--json")
	if code != 1 || json.Unmarshal([]byte(out), &rep2) != nil || len(rep2.Cluster.Problems) != 1 {
		t.Fatalf("doctor --json with a member down: exit %d, %s (%s)", code, out, errs)
	}
}
