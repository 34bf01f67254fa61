package etcdtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/devgraph/devgraph/internal/etcdtest"
)

// TestStart_ThreeMembers is the smoke test `make test` runs: three real etcd processes, a put
// through one member's endpoint read back through another's, and every process gone after.
func TestStart_ThreeMembers(t *testing.T) {
	c := etcdtest.Start(t, 3)
	if got, want := len(c.Endpoints()), 3; got != want {
		t.Fatalf("endpoints=%d, want %d", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Leader(ctx); err != nil {
		t.Fatal(err)
	}
	one := etcdtest.Client(t, c.Endpoint(0))
	two := etcdtest.Client(t, c.Endpoint(2))
	if _, err := one.Put(ctx, "smoke", "three members"); err != nil {
		t.Fatalf("put: %v", err)
	}
	resp, err := two.Get(ctx, "smoke")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "three members" {
		t.Fatalf("get smoke through member 2 = %v, want \"three members\"", resp.Kvs)
	}
}
