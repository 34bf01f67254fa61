//go:build cluster

package etcdtest_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/devgraph/devgraph/internal/etcdtest"
)

// mustPut writes key through cli, failing the test if the write is not acknowledged.
func mustPut(t *testing.T, cli *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, key, value); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// mustGet reads key linearizably through cli and checks its value.
func mustGet(t *testing.T, cli *clientv3.Client, key, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != want {
		t.Fatalf("get %s = %v, want %q", key, resp.Kvs, want)
	}
}

// newLeader waits for a leader other than old.
func newLeader(t *testing.T, leader func(context.Context) (int, error), old int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		l, err := leader(ctx)
		if err != nil {
			t.Fatalf("leader after losing member %d: %v", old, err)
		}
		if l != old {
			return l
		}
		select {
		case <-ctx.Done():
			t.Fatalf("member %d still leads", old)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestCluster_KillLeader(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var survivors []string
	for i := range c.Len() {
		if i != old {
			survivors = append(survivors, c.Endpoint(i))
		}
	}
	cli := etcdtest.Client(t, survivors...)
	mustPut(t, cli, "before", "acknowledged before the kill")

	c.Kill(old)
	l := newLeader(t, c.Leader, old)
	if err := c.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("member %d killed as leader; member %d leads", old, l)
	mustGet(t, cli, "before", "acknowledged before the kill")
	mustPut(t, cli, "during", "written while member was dead")

	// The killed member comes back on its data dir and catches up.
	c.Restart(old)
	back := etcdtest.Client(t, c.Endpoint(old))
	mustGet(t, back, "during", "written while member was dead")

	// A follower stopped and restarted the polite way keeps its data too.
	follower := (l + 1) % c.Len()
	c.Stop(follower)
	mustPut(t, cli, "stopped", "written while a follower was stopped")
	c.Restart(follower)
	mustGet(t, etcdtest.Client(t, c.Endpoint(follower)), "stopped", "written while a follower was stopped")
}

func TestCluster_PauseLeader(t *testing.T) {
	c := etcdtest.Start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old, err := c.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	paused := etcdtest.Client(t, c.Endpoint(old))
	mustPut(t, paused, "before", "v1")

	c.Pause(old)
	l := newLeader(t, c.Leader, old)
	t.Logf("member %d paused as leader; member %d leads", old, l)
	cli := etcdtest.Client(t, c.Endpoint(l))
	mustPut(t, cli, "before", "v2")
	// The paused member answers nothing, not even a serializable read of its own data.
	sctx, scancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = paused.Get(sctx, "before", clientv3.WithSerializable())
	scancel()
	if err == nil {
		t.Fatalf("a paused member answered a read")
	}

	c.Resume(old)
	mustGet(t, paused, "before", "v2")
}

func TestEmbedded_PartitionLeader(t *testing.T) {
	e := etcdtest.StartEmbedded(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cut := etcdtest.Client(t, e.Endpoint(old))
	mustPut(t, cut, "k", "before the partition")

	e.Partition(old)
	l := newLeader(t, e.Leader, old)
	t.Logf("member %d cut off as leader; member %d leads the majority", old, l)
	var majority []string
	for i := range e.Len() {
		if i != old {
			majority = append(majority, e.Endpoint(i))
		}
	}
	cli := etcdtest.Client(t, majority...)
	for i := range 20 {
		mustPut(t, cli, "k", "on the majority side "+string(rune('a'+i)))
	}
	// The cut-off member cannot commit a write: it has no quorum.
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = cut.Put(wctx, "minority", "must not commit")
	wcancel()
	if err == nil {
		t.Fatalf("the partitioned member committed a write")
	}

	e.Heal(old)
	if err := e.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	mustGet(t, cut, "k", "on the majority side t")
	gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
	defer gcancel()
	resp, err := cli.Get(gctx, "minority")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 0 {
		t.Fatalf("the write refused during the partition appeared after it healed: %v", resp.Kvs)
	}
}
