//go:build cluster

package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/migrations"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// seedOld writes the graph of an old file (whatever its version) into the cluster under
// prefix as the records a fleet of that version would hold, with P/schema at the file's
// version: a cluster written by an older devgraph.
func seedOld(t *testing.T, cli *clientv3.Client, prefix, file string) {
	t.Helper()
	var ops []clientv3.Op
	version := ""
	err := migrations.EachRecord(file, func(b, k, v []byte) error {
		if string(b) == "meta" && string(k) == "version" {
			version = string(v)
		}
		ops = append(ops, clientv3.OpPut(prefix+"/d/"+string(b)+"/"+string(k), string(v)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, clientv3.OpPut(prefix+"/schema", version), clientv3.OpPut(prefix+"/txn", uuid.NewString()))
	if _, err := cli.Txn(context.Background()).Then(ops...).Commit(); err != nil {
		t.Fatal(err)
	}
}

// deviceByKey finds a device (present or not) by its record key in a front end's replica.
func deviceByKey(t *testing.T, fe *FrontEnd, key string) *graph.Device {
	t.Helper()
	devs, _, _, err := fe.DB().FindDevices(context.Background(), graph.DeviceFilter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Key == key {
			return d
		}
	}
	return nil
}

// A fleet mid-upgrade. The cluster's graph is at schema version 3 (the committed
// version-3 file), an older host is live on it. A front end of this devgraph serves it
// read-only: its replica is migrated locally (devices get a host), every read works,
// every write is refused naming both versions and the migrate command; a commit of the
// older host (a raw version-3 device record) reaches the replica migrated. migrate is
// refused while the older host is live; once it is gone, a migration stopped halfway
// leaves the graph marked (a new front end is refused, the running one stays
// read-only, saying so), and running migrate again finishes it. The running front end
// then takes writes without a restart, its replica equals the cluster, the changelog
// chain is the one it was, and a new front end opens the migrated graph writable.
func TestOps_MidUpgradeAndMigrate(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	cli := c.Client(t)
	const prefix = "/up"
	seedOld(t, cli, prefix, "../store/testdata/schema-v3.bolt")
	lease, err := cli.Grant(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	claim, _ := json.Marshal(hostClaim{MachineID: "machine-old", Version: "v0.3.0", Schema: 3, Since: time.Now().UTC()})
	if _, err := cli.Put(ctx, prefix+"/hosts/old", string(claim), clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}

	fe := openFront(t, c, prefix, "a")
	why := fe.ReadOnly()
	// MCP's writing tools follow OnReadOnly (mcptools Options.Writable).
	turned := make(chan string, 16)
	defer fe.OnReadOnly(func() { turned <- fe.ReadOnly() })()
	for _, want := range []string{"read-only", "schema version 3", "writes version 4", "devgraph --store " + storeURL(c, prefix) + " migrate"} {
		if !strings.Contains(why, want) {
			t.Fatalf("ReadOnly() = %q, want %q in it", why, want)
		}
	}
	actx := graph.WithActor(ctx, "cli:alice")
	if _, err := fe.DB().FindIdentityByID(ctx, "jdxi", graph.IdentityParts{}); err != nil {
		t.Fatalf("reading an identity of the old graph: %v", err)
	}
	const keystep = "path:1c75:0263:1-2"
	if d := deviceByKey(t, fe, keystep); d == nil || d.Host != "a" {
		t.Fatalf("the old graph's device, migrated locally: %+v", d)
	}
	before := head(t, fe.DB())
	_, err = fe.DB().CreateIdentity(actx, graph.IdentityCreate{Name: "Desk Mixer"})
	wantErr(t, "a write on a front end mid-upgrade", err, graph.EUNAVAILABLE, why)

	// The older host commits: a version-3 device record, renamed.
	dkey := prefix + "/d/devices/" + keystep
	resp, err := cli.Get(ctx, dkey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the device record: %v %v", resp, err)
	}
	var rec map[string]any
	json.Unmarshal(resp.Kvs[0].Value, &rec)
	if _, ok := rec["host"]; ok {
		t.Fatalf("the seeded record is not version 3: %s", resp.Kvs[0].Value)
	}
	rec["name"] = "KeyStep 37 (renamed by the old host)"
	raw, _ := json.Marshal(rec)
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut(dkey, string(raw)), clientv3.OpPut(prefix+"/txn", uuid.NewString())).Commit(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the old host's commit in the read-only replica", 20*time.Second, func() bool {
		d := deviceByKey(t, fe, keystep)
		return d != nil && d.Name == "KeyStep 37 (renamed by the old host)" && d.Host == "a"
	})

	cc := dialT(t, c, prefix)
	scratch := func() string { return filepath.Join(t.TempDir(), "migrate.db") }
	_, err = cc.Migrate(ctx, MigrateOptions{Host: "a", Scratch: scratch()})
	wantErr(t, "migrate with an older host live", err, graph.ECONFLICT, "old (devgraph v0.3.0, schema 3) still runs an older devgraph")
	if _, err := cli.Revoke(ctx, lease.ID); err != nil {
		t.Fatal(err)
	}

	// Stopped after its first Txn of records.
	migrateBatch = 2
	stopMigrate = func(txns int) error {
		if txns == 2 {
			return errors.New("stopped by the test")
		}
		return nil
	}
	defer func() { migrateBatch, stopMigrate = NeedTxnOps, nil }()
	if _, err := cc.Migrate(ctx, MigrateOptions{Host: "a", Scratch: scratch()}); err == nil || !strings.Contains(err.Error(), "stopped by the test") {
		t.Fatalf("the stopped migration: %v", err)
	}
	stopMigrate = nil
	if got, _ := cli.Get(ctx, prefix+"/schema"); string(got.Kvs[0].Value) != "3>4" {
		t.Fatalf("P/schema of a stopped migration: %s", got.Kvs[0].Value)
	}
	waitUntil(t, "the front end saying a migration is under way", 20*time.Second, func() bool {
		return strings.Contains(fe.ReadOnly(), "a migration of the cluster's graph from schema version 3 to 4 is under way")
	})
	_, err = Open(ctx, Config{Store: storeURL(c, prefix), Replica: filepath.Join(t.TempDir(), "b.db"), Host: "b", MachineID: "machine-b", Logger: quiet})
	wantErr(t, "a front end starting mid-migration", err, graph.EUNAVAILABLE, "is under way")

	st, err := cc.Migrate(ctx, MigrateOptions{Host: "a", Scratch: scratch()})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Resumed || st.From != 3 || st.To != 4 || st.Puts < 4 || st.Txns < 3 {
		t.Fatalf("the resumed migration: %+v", st)
	}
	if got, _ := cli.Get(ctx, prefix+"/schema"); string(got.Kvs[0].Value) != "4" {
		t.Fatalf("P/schema after the migration: %s", got.Kvs[0].Value)
	}
	if again, err := cc.Migrate(ctx, MigrateOptions{Host: "a", Scratch: scratch()}); err != nil || !again.Already {
		t.Fatalf("migrating a migrated graph: %+v %v", again, err)
	}

	waitUntil(t, "the front end taking writes again", 20*time.Second, func() bool { return fe.ReadOnly() == "" })
	select {
	case got := <-turned:
		if got != "" {
			t.Errorf("OnReadOnly's first call, once the graph is migrated: ReadOnly() = %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnReadOnly did not call when the front end took writes again")
	}
	if _, err := fe.DB().CreateIdentity(actx, graph.IdentityCreate{Name: "Desk Mixer"}); err != nil {
		t.Fatalf("a write once the graph is migrated: %v", err)
	}
	after := head(t, fe.DB())
	if after.HeadSeq != before.HeadSeq+1 {
		t.Fatalf("the chain had %d events, has %d after the migration and one write", before.HeadSeq, after.HeadSeq)
	}
	want, _ := clusterRecords(t, cli, prefix)
	got := records(t, fe.DB())
	if len(got) != len(want) {
		t.Fatalf("replica %d records, cluster %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("record %s: replica %q, cluster %q", k, got[k], v)
		}
	}
	if want["meta/version"] != "4" || !strings.Contains(want["devices/"+keystep], `"host":"a"`) || !strings.Contains(want["devices/"+keystep], "renamed by the old host") {
		t.Fatalf("the migrated cluster: version %q, device %s", want["meta/version"], want["devices/"+keystep])
	}
	fb := openFront(t, c, prefix, "b")
	if fb.ReadOnly() != "" {
		t.Fatalf("a new front end on the migrated graph: %s", fb.ReadOnly())
	}
	head(t, fb.DB())

	// The fleet's hosts: a and b online (a holds the old graph's two devices); once a is
	// gone, a is offline with its devices remembered.
	hosts, err := fb.FleetHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 || hosts[0].Name != "a" || !hosts[0].Online || hosts[0].Devices != 2 || hosts[0].Schema != migrations.CurrentVersion || hosts[0].Since.IsZero() ||
		hosts[1].Name != "b" || !hosts[1].Online || hosts[1].Devices != 0 {
		t.Fatalf("hosts: %+v", hosts)
	}
	fe.Close()
	hosts, err = fb.FleetHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 2 || hosts[0].Name != "a" || hosts[0].Online || hosts[0].Devices != 2 || !hosts[0].Since.IsZero() || !hosts[1].Online {
		t.Fatalf("hosts with a gone: %+v", hosts)
	}
}

// doctor asks the members at the endpoints --store gives, not only at the client URLs
// they advertise (which need not be reachable from this host), and shows both when they
// differ; an endpoint given that does not answer is a problem of its own.
func TestOps_HealthGivenEndpoints(t *testing.T) {
	const nowhere = "http://192.0.2.1:2379" // TEST-NET-1: never reachable
	c := etcdtest.Start(t, 3, etcdtest.Flags("--advertise-client-urls", nowhere))
	ctx := context.Background()
	cc := dialT(t, c, "/eps")
	h, err := cc.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	given := strings.Split(joinEndpoints(c.Endpoints()), ",")
	for i, m := range h.Members {
		if !m.Healthy || m.Advertised != nowhere || m.Endpoint != given[i] {
			t.Errorf("member %+v, want it reached at %s, advertising %s", m, given[i], nowhere)
		}
	}
	if len(h.Members) != 3 || len(h.Problems) != 0 {
		t.Fatalf("health: %+v", h)
	}
	dead := freePort(t)
	cc2, err := Dial(ctx, "etcd://"+joinEndpoints(c.Endpoints())+","+dead+"/eps", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cc2.Close()
	h, err = cc2.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "the endpoint "+dead+" that --store gives does not answer") {
		t.Fatalf("problems with a dead endpoint given: %q", h.Problems)
	}
}

// A writing front end whose commit is refused because P/schema moved under it (a newer
// devgraph's graph put there) turns read-only: the write gets ReadOnly's message, and
// OnReadOnly's subscribers are told.
func TestOps_SchemaMovedUnderWriter(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ctx := context.Background()
	const prefix = "/moved"
	fe := openFront(t, c, prefix, "a")
	if why := fe.ReadOnly(); why != "" {
		t.Fatalf("a fresh front end is read-only: %q", why)
	}
	turned := make(chan string, 4)
	defer fe.OnReadOnly(func() { turned <- fe.ReadOnly() })()
	newer := migrations.CurrentVersion + 1
	if _, err := c.Client(t).Put(ctx, prefix+"/schema", strconv.Itoa(newer)); err != nil {
		t.Fatal(err)
	}
	_, err := fe.DB().CreateIdentity(graph.WithActor(ctx, "cli:alice"), graph.IdentityCreate{Name: "Desk Mixer"})
	want := fmt.Sprintf("read-only: the cluster's graph is now at schema version %d and this devgraph writes version %d; upgrade devgraph on host a", newer, migrations.CurrentVersion)
	wantErr(t, "a write after the schema moved", err, graph.EUNAVAILABLE, want)
	if got := fe.ReadOnly(); !strings.Contains(got, want) {
		t.Fatalf("ReadOnly() = %q, want %q in it", got, want)
	}
	select {
	case got := <-turned:
		if !strings.Contains(got, want) {
			t.Fatalf("OnReadOnly's subscriber read %q, want %q in it", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnReadOnly's subscriber was not told the front end turned read-only")
	}
}
