package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/store"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// openFront opens a front end for host on the cluster, with its replica in a temp dir.
func openFront(t testing.TB, c *etcdtest.Cluster, prefix, host string) *FrontEnd {
	t.Helper()
	url := "etcd://" + joinEndpoints(c.Endpoints()) + prefix
	fe, err := Open(context.Background(), Config{Store: url, Replica: filepath.Join(t.TempDir(), host+".db"),
		Host: host, MachineID: "machine-" + host, Logger: quiet, Store0: store.Options{Logger: quiet}})
	if err != nil {
		t.Fatalf("front end %s: %v", host, err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func joinEndpoints(eps []string) string {
	var b bytes.Buffer
	for i, ep := range eps {
		if i > 0 {
			b.WriteByte(',')
		}
		_, hostport, _ := cutScheme(ep)
		b.WriteString(hostport)
	}
	return b.String()
}

func cutScheme(ep string) (string, string, bool) {
	for i := 0; i+3 <= len(ep); i++ {
		if ep[i:i+3] == "://" {
			return ep[:i], ep[i+3:], true
		}
	}
	return "", ep, false
}

// records reads every record a replica holds.
func records(t testing.TB, db *store.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.Records(context.Background(), func(b, k, v []byte) error {
		out[string(b)+"/"+string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// clusterRecords reads every record the cluster holds under prefix, at one revision.
func clusterRecords(t testing.TB, cli *clientv3.Client, prefix string) (map[string]string, int64) {
	t.Helper()
	resp, err := cli.Get(context.Background(), prefix+"/d/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key[len(prefix)+3:])] = string(kv.Value)
	}
	return out, resp.Header.Revision
}

// The one cluster test in `make test`: two front ends (hosts a and b) on a real 3-member
// etcd cluster see each other's writes, race each other for commits without losing or
// doubling one, and end with replicas equal to the cluster and chains that verify.
func TestCluster_Smoke(t *testing.T) {
	c := etcdtest.Start(t, 3)
	const prefix = "/smoke"
	a := openFront(t, c, prefix, "a")
	b := openFront(t, c, prefix, "b")
	ctx := context.Background()

	if _, err := a.DB().CreateIdentity(graph.WithActor(ctx, "cli:alice"), graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"}}); err != nil {
		t.Fatal(err)
	}
	// Read your own writes on a; b sees it once its feed applies it.
	if _, err := a.DB().FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{}); err != nil {
		t.Fatalf("a does not read its own write: %v", err)
	}
	waitRev(t, b.DB(), a.DB().ReplicaRev())
	if _, err := b.DB().FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{}); err != nil {
		t.Fatalf("b does not see a's write: %v", err)
	}

	// b's subscribers hear a's writes.
	heard := make(chan string, 64)
	cancel := b.DB().Subscribe(func(evs []*graph.Event) {
		for _, e := range evs {
			heard <- e.Action + " " + e.Target
		}
	})
	defer cancel()

	// Sixteen writers, eight on each front end, each adding its own tags: every commit
	// after the first on each side races the other side for the fence.
	var wg sync.WaitGroup
	const writers, each = 8, 6
	errs := make(chan error, 2*writers*each)
	for _, fe := range []*FrontEnd{a, b} {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					tag := fmt.Sprintf("w:%s-%d-%d", fe.Host(), w, i)
					if _, err := fe.DB().UpdateTags(ctx, "roland-jd-xi", []string{tag}, nil); err != nil {
						errs <- fmt.Errorf("%s: %v", tag, err)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	cli := c.Client(t)
	want, _ := clusterRecords(t, cli, prefix)
	for _, fe := range []*FrontEnd{a, b} {
		txn, err := cli.Get(ctx, prefix+"/txn")
		if err != nil {
			t.Fatal(err)
		}
		waitRev(t, fe.DB(), txn.Kvs[0].ModRevision)
		got := records(t, fe.DB())
		if len(got) != len(want) {
			t.Errorf("%s: replica holds %d records, the cluster %d", fe.Host(), len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: replica's %q differs from the cluster's", fe.Host(), k)
			}
		}
		rep, err := fe.DB().VerifyChangelog(ctx)
		if err != nil || !rep.OK {
			t.Fatalf("%s: changelog does not verify: %v %+v", fe.Host(), err, rep)
		}
		id, err := fe.DB().FindIdentityByID(ctx, "roland-jd-xi", graph.IdentityParts{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(id.Tags); n != 1+2*writers*each {
			t.Errorf("%s: identity has %d tags, want %d (each acknowledged add exactly once)", fe.Host(), n, 1+2*writers*each)
		}
	}
	// One event per acknowledged add, in one chain.
	events, _, err := a.DB().FindEvents(ctx, graph.EventFilter{Action: "tag.add", First: 1000})
	if err != nil {
		t.Fatal(err)
	}
	adds := map[string]int{}
	for _, e := range events {
		if e.Action == "tag.add" {
			adds[string(e.After)]++
		}
	}
	for k, n := range adds {
		if n != 1 {
			t.Errorf("tag.add %s recorded %d times", k, n)
		}
	}
	if st := a.Stats(); st.Conflicts.Load()+b.Stats().Conflicts.Load() == 0 {
		t.Logf("no conflicts between the front ends this run (commits a=%d b=%d)", st.Commits.Load(), b.Stats().Commits.Load())
	}
	// b heard a's adds (and its own).
	deadline := time.After(5 * time.Second)
	fromA := 0
	for fromA < writers*each {
		select {
		case s := <-heard:
			if bytes.Contains([]byte(s), []byte("tag.add")) {
				fromA++
			}
		case <-deadline:
			t.Fatalf("b's subscriber heard %d tag adds, want at least %d", fromA, writers*each)
		}
	}

	// A write on a replica with no front end is refused, naming how to start one.
	path := b.DB().Path()
	b.Close()
	ro, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.UpdateTags(ctx, "roland-jd-xi", []string{"x:y"}, nil)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("devgraph serve --store etcd://")) {
		t.Fatalf("a write on a replica without its front end: %v", err)
	}
}

func waitRev(t testing.TB, db *store.DB, rev int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.WaitReplica(ctx, rev); err != nil {
		t.Fatalf("replica %s did not reach revision %d (has %d)", db.Path(), rev, db.ReplicaRev())
	}
}
