//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/store"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The host's lease lost and claimed again while devgraph serve runs, and the short
// leases request keys ride on.

// stall stops the front end's process (SIGSTOP) until resume is called: nothing of it runs,
// so it renews no lease, as when the process stalls.
func (h *host) stall() (resume func()) {
	h.t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		h.t.Fatal(err)
	}
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			h.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	h.t.Cleanup(resume)
	return resume
}

// leaseOf returns the lease key rides on (0 when key is absent).
func leaseOf(t *testing.T, cli *clientv3.Client, key string) (clientv3.LeaseID, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease), resp.Kvs[0].Value
}

// TestLease_ReclaimAfterStall: host a's process stalls past its lease, so etcd expires
// it: host b shows a's devices host offline (remembered, not unplugged). When a runs
// again it claims its name under a new lease by itself: b shows it online with its live
// state, a's robot list is back on the new lease, the robot a stopped when its lease was
// lost has its stop recorded, and b drives a's robot again.
func TestLease_ReclaimAfterStall(t *testing.T) {
	c := etcdtest.Start(t, 3)
	dir := t.TempDir()
	a := startHost(t, c, "/reclaim", "studio-a", rigA(), filepath.Join(dir, "a"), "--sim-robot", "scout@1,1")
	b := startHost(t, c, "/reclaim", "studio-b", rigB(t, false), filepath.Join(dir, "b"))
	cli := c.Client(t)

	const (
		twin    = "studio-a/usb:3-1"
		aSerial = "studio-a/usb:3-7" // a's FTDI robot base: /dev/ttyUSB0 (live state)
	)
	b.eventually("sees a's devices live", 20*time.Second, func() bool {
		d := b.devices()
		return d[twin].Present && len(d[aSerial].Nodes) > 0
	})
	b.eventually("finds a's robot", 20*time.Second, func() bool {
		_, _, err := b.cli("robot", "status", "scout")
		return err == nil
	})
	b.cliOK("robot", "arm", "scout") // armed: a stops it when its lease is lost
	hostKey, listKey, liveKey := "/reclaim/hosts/studio-a", "/reclaim/robot/studio-a/list", "/reclaim/live/studio-a"
	before, _ := leaseOf(t, cli, hostKey)
	if before == 0 {
		t.Fatal("a holds no claim")
	}

	resume := a.stall()
	b.eventually("shows a's devices host offline", 3*HostTTL*time.Second, func() bool {
		return b.devices()[twin].HostOffline
	})
	d := b.devices()
	if !d[twin].Present || len(d[aSerial].Nodes) > 0 {
		t.Errorf("a's devices on b while a is offline: %+v %+v; want remembered present, no /dev nodes", d[twin], d[aSerial])
	}
	for _, k := range []string{hostKey, listKey, liveKey} {
		if id, _ := leaseOf(t, cli, k); id != 0 {
			t.Errorf("%s is still there with a's lease expired", k)
		}
	}
	resume()

	b.eventually("shows a online again, with its live state", 30*time.Second, func() bool {
		d := b.devices()
		return !d[twin].HostOffline && len(d[aSerial].Nodes) > 0
	})
	a.eventually("says it lost its lease and holds its name again", 10*time.Second, func() bool {
		l := a.log()
		return strings.Contains(l, "this host's lease is lost") && strings.Contains(l, "holds its name again and is online to the fleet")
	})
	now, claim := leaseOf(t, cli, hostKey)
	if now == 0 || now == before {
		t.Fatalf("a's claim after the stall rides on lease %x (before: %x); want a new one", now, before)
	}
	var hc hostClaim
	if json.Unmarshal(claim, &hc); hc.MachineID != "machine-studio-a" {
		t.Errorf("a's claim after the stall: %s", claim)
	}
	a.eventually("publishes its robot list on the new lease", 10*time.Second, func() bool {
		id, _ := leaseOf(t, cli, listKey)
		return id == now
	})
	if id, _ := leaseOf(t, cli, liveKey); id != now {
		t.Errorf("a's live state rides on lease %x, its claim on %x", id, now)
	}
	// The stop a made when its lease was lost is recorded, by the robot, saying why.
	b.eventually("the stop recorded", 30*time.Second, func() bool {
		return strings.Contains(b.cliOK("changelog"), "host studio-a lost its cluster lease")
	})
	// b drives a's robot again.
	out := b.cliOK("robot", "arm", "scout")
	if !strings.Contains(strings.ToLower(out), "armed") {
		t.Errorf("robot arm scout from b after a came back:\n%s", out)
	}
	b.cliOK("robot", "disarm", "scout")
	for _, h := range []*host{a, b} {
		h.cliOK("changelog", "verify")
	}
}

// TestLease_RequestKeys: request keys ride on leases of reqLeaseTTL that take new keys for
// reqLeaseUse; with both short they vanish on their own while writes go on, and a request
// lease etcd no longer has is replaced without failing the write.
func TestLease_RequestKeys(t *testing.T) {
	c := etcdtest.Start(t, 1)
	fe := openFront(t, c, "/req", "a")
	cli := c.Client(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	write := func(name string) string {
		t.Helper()
		if _, err := fe.DB().CreateIdentity(ctx, graph.IdentityCreate{Name: name}); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
		resp, err := cli.Get(context.Background(), "/req/req/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByModRevision, clientv3.SortDescend), clientv3.WithLimit(1))
		if err != nil || len(resp.Kvs) == 0 {
			t.Fatalf("no request key after %s: %v", name, err)
		}
		return string(resp.Kvs[0].Key)
	}
	ttlOf := func(key string) (clientv3.LeaseID, *clientv3.LeaseTimeToLiveResponse) {
		t.Helper()
		id, _ := leaseOf(t, cli, key)
		if id == 0 {
			return 0, nil
		}
		ttl, err := cli.TimeToLive(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return id, ttl
	}

	t.Run("AFewMinutes", func(t *testing.T) {
		_, ttl := ttlOf(write("first"))
		if ttl == nil || ttl.GrantedTTL != reqLeaseTTL || ttl.TTL <= 0 || ttl.TTL > reqLeaseTTL {
			t.Fatalf("a request key's lease: %+v; want granted %d s", ttl, reqLeaseTTL)
		}
	})

	t.Run("Rotate", func(t *testing.T) {
		fe.reqs.mu.Lock()
		fe.reqs.id, fe.reqs.ttl, fe.reqs.use = 0, 3, time.Second
		fe.reqs.mu.Unlock()
		k1 := write("rotate 1")
		l1, _ := ttlOf(k1)
		var last clientv3.LeaseID
		n := 0
		waitUntil(t, "the first request key gone with its lease", 30*time.Second, func() bool {
			n++
			last, _ = ttlOf(write("rotate more " + string(rune('a'+n%26)) + time.Now().Format("150405.000")))
			id, _ := leaseOf(t, cli, k1)
			return id == 0
		})
		if last == l1 {
			t.Errorf("the newest request key rides on the first lease, %x", l1)
		}
	})

	t.Run("LeaseGone", func(t *testing.T) {
		fe.reqs.mu.Lock()
		gone := fe.reqs.id
		fe.reqs.ttl, fe.reqs.use = reqLeaseTTL, time.Hour
		fe.reqs.mu.Unlock()
		if _, err := cli.Revoke(context.Background(), gone); err != nil {
			t.Fatal(err)
		}
		retries := fe.Stats().Retries.Load()
		id, _ := ttlOf(write("after the lease went"))
		if id == 0 || id == gone {
			t.Fatalf("the write's request key rides on %x; the revoked lease was %x", id, gone)
		}
		if fe.Stats().Retries.Load() != retries+1 {
			t.Errorf("retries %d → %d; want one (the Txn on the lease etcd no longer had)", retries, fe.Stats().Retries.Load())
		}
	})
}

// loseAnswer is a gRPC client interceptor that, while armed, lets the next commit's Txn
// reach etcd and loses its answer (optionally after deleting the commit's request key,
// as if its lease had gone).
type loseAnswer struct {
	armed    atomic.Bool
	dropKey  atomic.Bool
	deleteBy *clientv3.Client
	lost     atomic.Int32
}

func (l *loseAnswer) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	txn, ok := req.(*pb.TxnRequest)
	if !ok || method != "/etcdserverpb.KV/Txn" || !l.armed.Load() {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var reqKey string
	for _, op := range txn.Success {
		if p := op.GetRequestPut(); p != nil && strings.Contains(string(p.Key), "/req/") {
			reqKey = string(p.Key)
		}
	}
	if reqKey == "" {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	l.armed.Store(false)
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return err
	}
	if l.dropKey.Load() {
		if _, err := l.deleteBy.Delete(ctx, reqKey); err != nil {
			return err
		}
	}
	l.lost.Add(1)
	return status.Error(codes.Unavailable, "test: the answer was lost on its way back")
}

// TestCommit_AnswerLost: a commit whose Txn reached etcd but whose answer was lost is
// sent again and found committed — by its request key, or, that gone, by P/txn naming
// it — so the write is made once and acknowledged.
func TestCommit_AnswerLost(t *testing.T) {
	c := etcdtest.Start(t, 1)
	la := &loseAnswer{deleteBy: c.Client(t)}
	fe, err := Open(context.Background(), Config{Store: "etcd://" + joinEndpoints(c.Endpoints()) + "/lost", Replica: filepath.Join(t.TempDir(), "a.db"),
		Host: "a", MachineID: "machine-a", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store0: store.Options{Logger: quiet},
		dialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(la.intercept)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	ctx := graph.WithActor(context.Background(), "cli:test")
	for _, tc := range []struct {
		name    string
		dropKey bool
	}{{"ByRequestKey", false}, {"ByTxnKey", true}} {
		t.Run(tc.name, func(t *testing.T) {
			lost, ambiguous := la.lost.Load(), fe.Stats().Ambiguous.Load()
			la.dropKey.Store(tc.dropKey)
			la.armed.Store(true)
			name := "answer lost " + tc.name
			id, err := fe.DB().CreateIdentity(ctx, graph.IdentityCreate{Name: name})
			if err != nil {
				t.Fatalf("the write whose answer was lost: %v", err)
			}
			if la.lost.Load() != lost+1 {
				t.Fatal("no answer was lost")
			}
			if got := fe.Stats().Ambiguous.Load(); got != ambiguous+1 {
				t.Errorf("ambiguous commits %d → %d; want one more", ambiguous, got)
			}
			evs, _, err := fe.DB().FindEvents(context.Background(), graph.EventFilter{Action: graph.ActIdentityCreate, First: 100})
			if err != nil {
				t.Fatal(err)
			}
			made := 0
			for _, ev := range evs {
				if ev.Target == id.ID || strings.Contains(string(ev.After), name) {
					made++
				}
			}
			if made != 1 {
				t.Errorf("the write is in the changelog %d times; want once", made)
			}
			if rep, err := fe.DB().VerifyChangelog(context.Background()); err != nil || !rep.OK {
				t.Errorf("changelog: %+v %v", rep, err)
			}
		})
	}
}

// syncBuffer is a log a test reads while the front end writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// openLoggedRobotHost is openRobotHost with the front end's log kept in logs.
func openLoggedRobotHost(t *testing.T, c *etcdtest.Cluster, prefix, host string, logs io.Writer, sims ...string) *robotHost {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logs, nil))
	fe, err := Open(context.Background(), Config{Store: "etcd://" + joinEndpoints(c.Endpoints()) + prefix, Replica: filepath.Join(t.TempDir(), host+".db"),
		Host: host, MachineID: "machine-" + host, Logger: log, Store0: store.Options{Logger: quiet}})
	if err != nil {
		t.Fatalf("front end %s: %v", host, err)
	}
	t.Cleanup(func() { fe.Close() })
	return startRobots(t, fe, false, sims...)
}

// TestLease_NameTaken: host a loses its lease, and meanwhile another machine claims the
// name a. Host a stops its armed robot, stays offline (the other holds the name), says so
// naming that machine, refuses robot changes, keeps serving reads, and keeps trying: once
// the other machine's claim is gone it takes its name back under a new lease, publishes its
// robot list on it, takes robot changes again, and b drives its robot.
func TestLease_NameTaken(t *testing.T) {
	c := etcdtest.Start(t, 1)
	logs := &syncBuffer{}
	a := openLoggedRobotHost(t, c, "/taken", "a", logs, "scout@1,1")
	b := openRobotHost(t, c, "/taken", "b")
	cli := c.Client(t)
	ctx := graph.WithActor(context.Background(), "cli:test")
	if _, err := b.robots.Arm(ctx, "robot:scout"); err != nil {
		t.Fatalf("arm a's robot from b: %v", err)
	}
	hostKey := "/taken/hosts/a"

	// The other machine's claim, on its own lease, where a's was; then a's lease goes.
	other, err := cli.Grant(context.Background(), HostTTL)
	if err != nil {
		t.Fatal(err)
	}
	ka, err := cli.KeepAlive(context.Background(), other.ID)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range ka {
		}
	}()
	claim, _ := json.Marshal(hostClaim{MachineID: "other-machine-0042", Version: "test", Since: time.Now().UTC()})
	if _, err := cli.Put(context.Background(), hostKey, string(claim), clientv3.WithLease(other.ID)); err != nil {
		t.Fatal(err)
	}
	lost := a.fe.hostLease()
	if _, err := cli.Revoke(context.Background(), lost.id); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost.lost:
	case <-time.After(3 * HostTTL * time.Second):
		t.Fatal("a did not notice its lease was gone")
	}
	waitUntil(t, "a says the name is held by the other machine", 30*time.Second, func() bool {
		return strings.Contains(logs.String(), "this host stays offline: another machine (other-machine-0042) claimed the name a")
	})
	waitUntil(t, "a's robot stopped", 10*time.Second, func() bool {
		st, _ := a.fleet.Status(ctx, "robot:scout")
		return st != nil && !st.Armed
	})
	if _, err := a.robots.Arm(ctx, "robot:scout"); graph.ErrorCode(err) != graph.EUNAVAILABLE {
		t.Fatalf("arm while a is offline: %v; want EUNAVAILABLE", err)
	}
	if _, v := leaseOf(t, cli, hostKey); !strings.Contains(string(v), "other-machine-0042") {
		t.Errorf("the claim while the other machine holds it: %s", v)
	}
	if _, _, err := a.fe.DB().FindEvents(ctx, graph.EventFilter{First: 1}); err != nil {
		t.Errorf("a's reads while it is offline: %v", err)
	}
	// a shows itself offline while the lease is lost (GraphQL hosts, device views, doctor).
	if a.fe.HostOnline("a") || slices.Contains(a.fe.HostsOnline(), "a") {
		t.Errorf("a says it is online while its lease is lost: %v", a.fe.HostsOnline())
	}
	if fh := fleetHost(t, a.fe, "a"); fh == nil || fh.Online {
		t.Errorf("a's FleetHosts row for itself while its lease is lost: %+v; want offline", fh)
	}
	waitUntil(t, "a's lease loss names the other machine", 10*time.Second, func() bool {
		l := a.fe.LeaseLoss()
		return l != nil && l.HeldBy == "other-machine-0042"
	})
	if l := a.fe.LeaseLoss(); l.Since.IsZero() || !strings.Contains(l.String(), "lost its cluster lease at") || !strings.Contains(l.String(), "held by another machine, other-machine-0042") {
		t.Errorf("a's lease loss: %+v %q", l, l)
	}
	// Said once per holder, not once per attempt (it tries every 0.5–5 s).
	time.Sleep(3 * time.Second)
	if n := strings.Count(logs.String(), "this host stays offline"); n != 1 {
		t.Errorf("a said it stays offline %d times; want once:\n%s", n, logs)
	}
	select {
	case <-lost.next:
		t.Fatal("a holds a lease while another machine holds its name")
	default:
	}

	// The other machine goes.
	if _, err := cli.Revoke(context.Background(), other.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost.next:
	case <-time.After(30 * time.Second):
		t.Fatalf("a did not take its name back once the other machine's claim was gone:\n%s", logs)
	}
	now := a.fe.hostLease()
	if id, v := leaseOf(t, cli, hostKey); id != now.id || !strings.Contains(string(v), "machine-a") {
		t.Errorf("a's claim once it holds its name again: lease %x (a holds %x) %s", id, now.id, v)
	}
	// The lease's next is closed just before the line is logged (cluster/lease.go).
	waitUntil(t, "a's log says it is back", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "this host holds its name again and is online to the fleet")
	})
	if !a.fe.HostOnline("a") || a.fe.LeaseLoss() != nil {
		t.Errorf("a once it holds its name again: online %v, lease loss %+v", a.fe.HostOnline("a"), a.fe.LeaseLoss())
	}
	if fh := fleetHost(t, a.fe, "a"); fh == nil || !fh.Online {
		t.Errorf("a's FleetHosts row for itself once it holds its name again: %+v", fh)
	}
	waitUntil(t, "a's robot list on its new lease", 10*time.Second, func() bool {
		id, _ := leaseOf(t, cli, "/taken/robot/a/list")
		return id == now.id
	})
	if _, err := a.robots.Arm(ctx, "robot:scout"); err != nil {
		t.Fatalf("arm on a once it holds its name again: %v", err)
	}
	st, err := b.robots.Disarm(ctx, "robot:scout")
	if err != nil || st.Armed {
		t.Fatalf("disarm a's robot from b once a is back: %+v %v", st, err)
	}
	waitUntil(t, "the stop recorded", 30*time.Second, func() bool {
		for _, ev := range robotEvents(t, a, graph.ActRobotStop) {
			if ev.Message == "host a lost its cluster lease" {
				return true
			}
		}
		return false
	})
}

// fleetHost is fe's FleetHosts row for host (nil when it has none).
func fleetHost(t *testing.T, fe *FrontEnd, host string) *graph.FleetHost {
	t.Helper()
	list, err := fe.FleetHosts(context.Background())
	if err != nil {
		t.Fatalf("FleetHosts: %v", err)
	}
	for i := range list {
		if list[i].Name == host {
			return &list[i]
		}
	}
	return nil
}
