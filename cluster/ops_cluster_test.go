//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/internal/testcert"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func storeURL(c *etcdtest.Cluster, prefix string) string {
	return "etcd://" + joinEndpoints(c.Endpoints()) + prefix
}

func dialT(t *testing.T, c *etcdtest.Cluster, prefix string) *Client {
	t.Helper()
	cc, err := Dial(context.Background(), storeURL(c, prefix), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// wantErr fails unless err is a devgraph error of code whose message holds want.
func wantErr(t *testing.T, what string, err error, code, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s %q", what, code, want)
	}
	if graph.ErrorCode(err) != code || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %v (code %s), want %s with %q", what, err, graph.ErrorCode(err), code, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: the error is not one line: %q", what, err)
	}
}

// sourceGraph is a single-host graph in an ordinary file: an identity with a bound
// device, a tag, a note and a relation; it returns the file's store and its export.
func sourceGraph(t *testing.T) (*store.DB, []byte) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "src.db"), store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := graph.WithActor(context.Background(), "cli:alice")
	observe(t, db, "sn:0582:01a9:A1", "usb:3-3.2")
	if _, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", New: &graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Desk Mixer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateTags(ctx, "roland-jd-xi", []string{"room:studio-a"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddNote(ctx, graph.NoteCreate{Target: "roland-jd-xi", Body: "MIDI out goes to the mixer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Relate(ctx, graph.RelationCreate{From: "roland-jd-xi", Type: "cable", To: "desk-mixer", Attrs: map[string]string{"kind": "midi-din"}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := db.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	return db, buf.Bytes()
}

func observe(t *testing.T, db *store.DB, key, ref string) {
	t.Helper()
	d := &graph.ObservedDevice{Key: key, Ref: ref, Source: "usb", Sources: []string{"usb"}, Name: "JD-Xi",
		Fingerprints: []graph.Fingerprint{{Kind: "usb_serial", Value: strings.TrimPrefix(key, "sn:")}}}
	snap := &graph.Snapshot{Taken: time.Now(), Devices: []*graph.ObservedDevice{d}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}
	if _, err := db.ObserveDevices(graph.WithActor(context.Background(), "discovery:usb"), snap); err != nil {
		t.Fatal(err)
	}
}

// built imports a single-host export into a new fleet file as host studio-a's, as
// `devgraph --store … --host-name studio-a import` does.
func built(t *testing.T, export []byte) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "import.db"), store.Options{Logger: quiet, Host: "studio-a", Fleet: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ImportWith(context.Background(), bytes.NewReader(export), nil, store.ImportOptions{QualifyHost: "studio-a"}); err != nil {
		t.Fatal(err)
	}
	return db
}

func head(t *testing.T, db *store.DB) *graph.VerifyReport {
	t.Helper()
	r, err := db.VerifyChangelog(context.Background())
	if err != nil || !r.OK {
		t.Fatalf("%s: the changelog does not verify: %v %+v", db.Path(), err, r)
	}
	return r
}

// An export imported into an empty cluster keeps its chain byte for byte: a fresh front
// end's replica holds every record of the file the import built, and verifies with the
// source's head. Then the cluster is not empty: a second import is refused, and so is
// one while a host is live; a snapshot (what verify, export and backup read without a
// front end) equals the cluster.
func TestOps_ImportSnapshot(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	src, export := sourceGraph(t)
	want := head(t, src)
	cc := dialT(t, c, "/imp")
	defer func(n int) { loadBatch = n }(loadBatch)
	loadBatch = 7 // several Txns, the schema key in the last
	tmp := built(t, export)
	st, err := cc.Load(ctx, tmp, ImportOptions{Host: "importer", MachineID: "m-imp"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Txns < 3 {
		t.Fatalf("the import took %d Txns, want several", st.Txns)
	}
	fe := openFront(t, c, "/imp", "a")
	got := head(t, fe.DB())
	if got.HeadHash != want.HeadHash || got.HeadSeq != want.HeadSeq {
		t.Fatalf("after the import the chain's head is %d %s, the source's %d %s", got.HeadSeq, got.HeadHash, want.HeadSeq, want.HeadHash)
	}
	wantRecs, gotRecs := records(t, tmp), records(t, fe.DB())
	for k, v := range wantRecs {
		if gotRecs[k] != v {
			t.Errorf("record %s differs in the replica", k)
		}
	}
	if n, _, _, err := fe.DB().FindNotes(ctx, graph.NoteFilter{Target: "roland-jd-xi"}); err != nil || len(n) != 1 {
		t.Fatalf("the note did not come through: %v %v", n, err)
	}
	// The single-host export's device is studio-a's in the fleet.
	if d, err := fe.DB().FindDeviceByID(ctx, "studio-a/usb:3-3.2"); err != nil || d.Host != "studio-a" {
		t.Fatalf("the imported device by its qualified ref: %+v %v", d, err)
	}

	// Not empty, and a host is live: refused, naming it, nothing written.
	before, _ := clusterRecords(t, c.Client(t), "/imp")
	_, err = cc.Load(ctx, built(t, export), ImportOptions{})
	wantErr(t, "import beside a live host", err, graph.ECONFLICT, "host a is live")
	fe.Close()
	waitNoHosts(t, cc)
	_, err = cc.Load(ctx, built(t, export), ImportOptions{})
	wantErr(t, "import into a graph", err, graph.ECONFLICT, "holds a devgraph graph under /imp already")
	after, _ := clusterRecords(t, c.Client(t), "/imp")
	if len(after) != len(before) {
		t.Fatalf("a refused import changed the cluster: %d records, were %d", len(after), len(before))
	}

	// A snapshot is an ordinary read of the cluster at one revision.
	path := filepath.Join(t.TempDir(), "snap.db")
	rev, err := cc.Snapshot(ctx, path, store.Options{Logger: quiet, Host: "b"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := store.Open(path, store.Options{Logger: quiet, Host: "b", Fleet: true})
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.ReplicaRev() != rev || snap.ReplicaOf() != cc.Name() {
		t.Fatalf("the snapshot is of %q at %d, want %q at %d", snap.ReplicaOf(), snap.ReplicaRev(), cc.Name(), rev)
	}
	if r := head(t, snap); r.HeadHash != want.HeadHash {
		t.Fatalf("the snapshot's head is %s, want %s", r.HeadHash, want.HeadHash)
	}
	if got := records(t, snap); len(got) != len(after) {
		t.Fatalf("the snapshot holds %d records, the cluster %d", len(got), len(after))
	}
	// Its backup is an ordinary database, writable, with the same chain.
	var buf bytes.Buffer
	if _, err := snap.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	bpath := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(bpath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(bpath, store.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.ReplicaOf() != "" {
		t.Fatalf("the backup of a replica is still marked as one (of %q)", b.ReplicaOf())
	}
	if r := head(t, b); r.HeadHash != want.HeadHash {
		t.Fatalf("the backup's head is %s, want %s", r.HeadHash, want.HeadHash)
	}
	if _, err := b.CreateIdentity(graph.WithActor(ctx, "cli:bob"), graph.IdentityCreate{Name: "After Restore"}); err != nil {
		t.Fatalf("the backup does not take writes: %v", err)
	}
}

func waitNoHosts(t *testing.T, cc *Client) {
	t.Helper()
	for i := 0; i < 100; i++ {
		h, err := cc.LiveHosts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("a closed front end's host claim is still there")
}

// An import that stops halfway leaves records but no graph: a front end starting on it
// is refused with the import's marker explained, so is another import, until one with
// Force clears it and imports whole; the chain then verifies on a fresh front end.
func TestOps_ImportStoppedHalfway(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ctx := context.Background()
	src, export := sourceGraph(t)
	want := head(t, src)
	cc := dialT(t, c, "/half")
	defer func(n int) { loadBatch = n }(loadBatch)
	loadBatch = 5
	stopLoad = func(n int) error {
		if n == 3 {
			return errors.New("killed")
		}
		return nil
	}
	_, err := cc.Load(ctx, built(t, export), ImportOptions{Host: "importer"})
	stopLoad = nil
	if err == nil {
		t.Fatal("the stopped import reports success")
	}
	left, _ := clusterRecords(t, c.Client(t), "/half")
	if len(left) == 0 {
		t.Fatal("the stopped import left no records (the test stopped it too early)")
	}
	_, err = Open(ctx, Config{Store: storeURL(c, "/half"), Replica: filepath.Join(t.TempDir(), "r.db"), Host: "a", MachineID: "m-a", Logger: quiet, Store0: store.Options{Logger: quiet}})
	wantErr(t, "a front end on a stopped import", err, graph.ECONFLICT, "started")
	wantErr(t, "a front end on a stopped import", err, graph.ECONFLICT, "on importer, has not finished")
	_, err = cc.Load(ctx, built(t, export), ImportOptions{})
	wantErr(t, "an import over a stopped one", err, graph.ECONFLICT, "import --force FILE")
	_, err = cc.Snapshot(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{Logger: quiet})
	wantErr(t, "a snapshot of a stopped import", err, graph.ECONFLICT, "has not finished")

	if _, err := cc.Load(ctx, built(t, export), ImportOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	fe := openFront(t, c, "/half", "a")
	if got := head(t, fe.DB()); got.HeadHash != want.HeadHash {
		t.Fatalf("after the forced import the head is %s, want %s", got.HeadHash, want.HeadHash)
	}
	resp, err := c.Client(t).Get(ctx, "/half/import")
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("the import's marker is still there: %v %v", resp, err)
	}
}

// Bad input refused whole with a one-line error: a prefix holding another tool's keys,
// a cluster at a newer schema, and (on a cluster started with small limits) limits too
// small, for a front end, a snapshot and an import alike.
func TestOps_BadClusters(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ctx := context.Background()
	cli := c.Client(t)
	if _, err := cli.Put(ctx, "/other/config", "x"); err != nil {
		t.Fatal(err)
	}
	cc := dialT(t, c, "/other")
	_, err := cc.Snapshot(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{Logger: quiet})
	wantErr(t, "snapshot of a foreign prefix", err, graph.EINVALID, "holds 1 keys but no devgraph graph: is --store's prefix right?")
	_, err = cc.Load(ctx, built(t, mustExport(t)), ImportOptions{})
	wantErr(t, "import into a foreign prefix", err, graph.EINVALID, "holds 1 keys but no devgraph graph")
	if resp, _ := cli.Get(ctx, "/other/", clientv3.WithPrefix()); len(resp.Kvs) != 1 {
		t.Fatalf("a refused import wrote into the foreign prefix: %d keys", len(resp.Kvs))
	}

	openFront(t, c, "/newer", "a").Close()
	if _, err := cli.Put(ctx, "/newer/schema", strconv.Itoa(migrations.CurrentVersion+1)); err != nil {
		t.Fatal(err)
	}
	cn := dialT(t, c, "/newer")
	_, err = cn.Snapshot(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{Logger: quiet})
	wantErr(t, "snapshot of a newer schema", err, graph.EINVALID, fmt.Sprintf("schema version %d, newer than this devgraph's %d: upgrade devgraph", migrations.CurrentVersion+1, migrations.CurrentVersion))
	_, err = Open(ctx, Config{Store: storeURL(c, "/newer"), Replica: filepath.Join(t.TempDir(), "r.db"), Host: "b", MachineID: "m-b", Logger: quiet})
	wantErr(t, "front end on a newer schema", err, graph.EINVALID, "newer than this devgraph's")
	h, err := cn.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Graph == "ok" || len(h.Problems) == 0 {
		t.Fatalf("doctor's health of a newer schema: graph %q, problems %v", h.Graph, h.Problems)
	}

	small := etcdtest.Start(t, 1, etcdtest.MaxTxnOps(128))
	cs := dialT(t, small, "/small")
	const need = "allows fewer than 16384 operations in one transaction; devgraph needs every member started with --max-txn-ops=16384 --max-request-bytes=10485760"
	_, err = Open(ctx, Config{Store: storeURL(small, "/small"), Replica: filepath.Join(t.TempDir(), "r.db"), Host: "a", MachineID: "m-a", Logger: quiet})
	wantErr(t, "front end on small limits", err, graph.ELIMIT, need)
	_, err = cs.Load(ctx, built(t, mustExport(t)), ImportOptions{})
	wantErr(t, "import on small limits", err, graph.ELIMIT, need)
	if h, err := cs.Health(ctx); err != nil || !strings.Contains(h.Limits, need) {
		t.Fatalf("doctor's limits on a small cluster: %q %v", h.Limits, err)
	}
	if resp, _ := small.Client(t).Get(ctx, "/small/", clientv3.WithPrefix()); len(resp.Kvs) != 0 {
		t.Fatalf("the refusals wrote %d keys", len(resp.Kvs))
	}
}

func mustExport(t *testing.T) []byte {
	_, e := sourceGraph(t)
	return e
}

// A host name another live machine holds is refused; the same machine (a restart before
// its lease ran out) takes it back; once the holder is gone the name is free.
func TestOps_HostNameClaims(t *testing.T) {
	c := etcdtest.Start(t, 1)
	ctx := context.Background()
	a := openFront(t, c, "/hosts", "studio-a")
	cfg := Config{Store: storeURL(c, "/hosts"), Replica: filepath.Join(t.TempDir(), "r.db"), Host: "studio-a", MachineID: "another-machine", Logger: quiet, Store0: store.Options{Logger: quiet}}
	_, err := Open(ctx, cfg)
	wantErr(t, "a second machine claiming studio-a", err, graph.ECONFLICT, `host name "studio-a" is held by another live host (machine machine-stud`)
	cfg.MachineID = "machine-studio-a"
	again, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("the same machine does not take its name back: %v", err)
	}
	again.Close()
	a.Close()
	cfg.MachineID, cfg.Replica = "another-machine", filepath.Join(t.TempDir(), "r2.db")
	fe, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("a free name is refused: %v", err)
	}
	fe.Close()
}

// Two front ends race the same bind: exactly one writes it (one device.bind event); the
// other, made again on a replica that holds the winner's commit, finds it bound already.
// Racing binds of one device to two identities: one wins, the other is refused.
func TestOps_RacingBinds(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := graph.WithActor(context.Background(), "cli:alice")
	a := openFront(t, c, "/race", "a")
	b := openFront(t, c, "/race", "b")
	observe(t, a.DB(), "sn:0582:01a9:R1", "usb:1-1")
	observe(t, a.DB(), "sn:0582:01a9:R2", "usb:1-2")
	// On a fleet, a's devices are "a/…" from anywhere.
	for _, n := range []string{"Synth One", "Synth Two"} {
		if _, err := a.DB().CreateIdentity(ctx, graph.IdentityCreate{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	waitRev(t, b.DB(), a.DB().ReplicaRev())

	race := func(dev string, ids [2]string) ([2]*graph.BindResult, [2]error) {
		var res [2]*graph.BindResult
		var errs [2]error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, fe := range []*FrontEnd{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res[i], errs[i] = fe.DB().BindDevice(ctx, graph.BindRequest{DeviceID: dev, IdentityID: ids[i]})
			}()
		}
		close(start)
		wg.Wait()
		return res, errs
	}
	binds := func(dev string) int {
		d, err := a.DB().FindDeviceByID(ctx, dev)
		if err != nil {
			t.Fatal(err)
		}
		evs, _, err := a.DB().FindEvents(ctx, graph.EventFilter{Target: d.ID, Action: "device.bind", First: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}

	res, errs := race("a/usb:1-1", [2]string{"synth-one", "synth-one"})
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("the same bind from two hosts: %v / %v", errs[0], errs[1])
	}
	if res[0].AlreadyBound == res[1].AlreadyBound {
		t.Fatalf("the same bind from two hosts: already_bound %v and %v, want exactly one", res[0].AlreadyBound, res[1].AlreadyBound)
	}
	waitRev(t, a.DB(), b.DB().ReplicaRev())
	if n := binds("a/usb:1-1"); n != 1 {
		t.Fatalf("the same bind from two hosts wrote %d device.bind events, want 1", n)
	}

	res, errs = race("a/usb:1-2", [2]string{"synth-one", "synth-two"})
	won := 0
	for i := range errs {
		if errs[i] == nil && !res[i].AlreadyBound {
			won++
		} else if errs[i] != nil && graph.ErrorCode(errs[i]) != graph.ECONFLICT {
			t.Fatalf("the losing bind: %v (code %s), want a conflict", errs[i], graph.ErrorCode(errs[i]))
		}
	}
	if won != 1 {
		t.Fatalf("binding one device to two identities at once: %d won (%v / %v), want exactly one", won, errs[0], errs[1])
	}
	waitRev(t, a.DB(), b.DB().ReplicaRev())
	if n := binds("a/usb:1-2"); n != 1 {
		t.Fatalf("racing binds to two identities wrote %d device.bind events, want 1", n)
	}
	for _, fe := range []*FrontEnd{a, b} {
		head(t, fe.DB())
	}
}

// Health lists every member (one leader), the limits, the graph and the live hosts, and
// names a member that is down.
func TestOps_Health(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx := context.Background()
	fe := openFront(t, c, "/doc", "a")
	cc := dialT(t, c, "/doc")
	h, err := cc.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	for _, m := range h.Members {
		if !m.Healthy || m.DBSize == 0 || m.RaftIndex == 0 {
			t.Errorf("member %+v", m)
		}
		if m.Leader {
			leaders++
		}
	}
	if len(h.Members) != 3 || leaders != 1 || h.Limits != "ok" || h.Graph != "ok" || h.Schema != migrations.CurrentVersion || len(h.Problems) > 0 {
		t.Fatalf("health of a whole cluster: %+v", h)
	}
	if len(h.Hosts) != 1 || h.Hosts[0].Name != "a" || h.Hosts[0].MachineID != "machine-a" {
		t.Fatalf("live hosts: %+v", h.Hosts)
	}
	if h.Head != fe.DB().ReplicaRev() {
		t.Fatalf("head revision %d, the idle front end's replica holds %d", h.Head, fe.DB().ReplicaRev())
	}
	c.Kill(2)
	h, err = cc.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "etcd member m2 ("+c.Endpoint(2)+") is unhealthy") {
		t.Fatalf("health with member m2 killed: problems %q", h.Problems)
	}
}

// An unreachable cluster is named within the connect timeout.
func TestOps_Unreachable(t *testing.T) {
	c := etcdtest.Start(t, 1)
	url := storeURL(c, "/x")
	c.Kill(0)
	_, err := Dial(context.Background(), url, 500*time.Millisecond)
	wantErr(t, "dial a dead cluster", err, graph.EUNAVAILABLE, "cannot reach etcd at "+strings.TrimPrefix(c.Endpoint(0), "http://")+" within 500ms")
}

// TLS misconfiguration, on a member serving its clients over TLS (a certificate from
// internal/testcert): etcds:// with its CA works; etcd:// (plain) against it, and
// etcds:// with a CA that does not trust it, are refused within the connect timeout with
// the endpoint named and what to check.
func TestOps_TLS(t *testing.T) {
	cert, key, _ := testcert.Write(t)
	other, _, _ := testcert.Write(t)
	client, peer := freePort(t), freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(etcdtest.Binary(t), "--name", "tls", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", "https://"+client, "--advertise-client-urls", "https://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "tls=http://"+peer, "--cert-file", cert, "--key-file", key,
		"--max-txn-ops", "16384", "--max-request-bytes", "10485760", "--log-level", "error")
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	ctx := context.Background()
	good := "etcds://" + client + "/tls?cacert=" + cert
	cc, err := Dial(ctx, good, 30*time.Second)
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
		t.Fatalf("etcds:// with the member's CA: %v\n%s", err, b)
	}
	defer cc.Close()
	if h, err := cc.Health(ctx); err != nil || len(h.Problems) > 0 || h.Limits != "ok" {
		t.Fatalf("health over TLS: %+v %v", h, err)
	}
	_, err = Dial(ctx, "etcd://"+client+"/tls", time.Second)
	wantErr(t, "etcd:// against a TLS member", err, graph.EUNAVAILABLE, "cannot reach etcd at "+client+" within 1s")
	wantErr(t, "etcd:// against a TLS member", err, graph.EUNAVAILABLE, "the cluster speaks TLS: use etcds://")
	_, err = Dial(ctx, "etcds://"+client+"/tls?cacert="+other, time.Second)
	wantErr(t, "etcds:// with a CA that does not trust the member", err, graph.EUNAVAILABLE, "its TLS: tls: failed to verify certificate: x509: certificate signed by unknown authority")
	// etcds:// against a plain member.
	plain := etcdtest.Start(t, 1)
	_, err = Dial(ctx, "etcds://"+strings.TrimPrefix(plain.Endpoint(0), "http://")+"/tls?cacert="+cert, time.Second)
	wantErr(t, "etcds:// against a plain member", err, graph.EUNAVAILABLE, "the cluster does not speak TLS there: use etcd://")
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
