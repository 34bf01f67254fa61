package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/types"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Embedded is n etcd members running inside the test process (go.etcd.io/etcd/server/v3/embed),
// for the test that partitions the network: Partition and Heal use etcd's own peer cut, which
// a child process cannot be given from outside. Every other fault uses Start's processes.
type Embedded struct {
	tb      TB
	cfg     config
	members []*embeddedMember
}

type embeddedMember struct {
	name      string
	clientURL string
	logPath   string
	etcd      *embed.Etcd
}

// StartEmbedded runs n members in this process with free loopback ports, data dirs and a log
// file each under tb.TempDir(), the same limits as Start (MaxTxnOps, MaxRequestBytes,
// StartTimeout, LogLevel and NoFsync apply; Flags does not), and returns once every member has
// joined and answers a linearizable Get. The members are closed when the test ends.
func StartEmbedded(tb TB, n int, opts ...Option) *Embedded {
	tb.Helper()
	if n < 1 {
		tb.Fatalf("etcdtest.StartEmbedded: %d members; want at least 1", n)
	}
	e := &Embedded{tb: tb, cfg: newConfig(opts)}
	tb.Cleanup(e.closeAll)
	var err error
	for range startAttempts {
		if err = e.launch(n); err == nil || !errors.Is(err, errPortTaken) {
			break
		}
		e.closeAll()
	}
	if err != nil {
		tb.Fatalf("etcdtest.StartEmbedded: %v", err)
	}
	return e
}

// launch starts n members on fresh ports and data dirs and waits until all are healthy.
func (e *Embedded) launch(n int) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	root := e.tb.TempDir()
	e.members = nil
	cfgs := make([]*embed.Config, n)
	var initial []string
	for i := range n {
		name := fmt.Sprintf("e%d", i)
		client := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])}
		peer := &url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
		m := &embeddedMember{name: name, clientURL: client.String(), logPath: filepath.Join(root, name+".log")}
		e.members = append(e.members, m)
		c := embed.NewConfig()
		c.Name = name
		c.Dir = filepath.Join(root, name+".etcd")
		c.ListenClientUrls, c.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
		c.ListenPeerUrls, c.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
		c.ClusterState = embed.ClusterStateFlagNew
		c.InitialClusterToken = filepath.Base(root)
		c.MaxTxnOps = e.cfg.maxTxnOps
		c.MaxRequestBytes = e.cfg.maxRequestBytes
		c.UnsafeNoFsync = e.cfg.noFsync
		c.LogLevel = e.cfg.logLevel
		c.LogOutputs = []string{m.logPath}
		initial = append(initial, name+"="+peer.String())
		cfgs[i] = c
	}
	for i, c := range cfgs {
		c.InitialCluster = strings.Join(initial, ",")
		etcd, err := embed.StartEtcd(c)
		if err != nil {
			if strings.Contains(err.Error(), "address already in use") {
				return fmt.Errorf("%w: member %d (%s): %v", errPortTaken, i, c.Name, err)
			}
			return fmt.Errorf("member %d (%s): %v\n%s", i, c.Name, err, logTail(e.members[i].logPath, 20))
		}
		e.members[i].etcd = etcd
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.startTimeout)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range e.members {
		wg.Go(func() {
			select {
			case <-m.etcd.Server.ReadyNotify():
			case err := <-m.etcd.Err():
				errs[i] = fmt.Errorf("member %d (%s) failed: %v\n%s", i, m.name, err, logTail(m.logPath, 20))
				return
			case <-ctx.Done():
				errs[i] = fmt.Errorf("member %d (%s) not ready: %v\n%s", i, m.name, ctx.Err(), logTail(m.logPath, 20))
				return
			}
			var last error
			for ctx.Err() == nil {
				if last = healthy(ctx, m.clientURL); last == nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			errs[i] = fmt.Errorf("member %d (%s, client %s): %v\n%s", i, m.name, m.clientURL, last, logTail(m.logPath, 20))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%d members not healthy within %s:\n%v", n, e.cfg.startTimeout, err)
	}
	return nil
}

// Len is the number of members.
func (e *Embedded) Len() int { return len(e.members) }

// Endpoints are the members' client URLs, in member order.
func (e *Embedded) Endpoints() []string {
	eps := make([]string, len(e.members))
	for i, m := range e.members {
		eps[i] = m.clientURL
	}
	return eps
}

// Endpoint is member i's client URL.
func (e *Embedded) Endpoint(i int) string { return e.member(i).clientURL }

// Client is a client of every member's endpoint, closed when the test ends.
func (e *Embedded) Client(tb TB) *clientv3.Client {
	tb.Helper()
	return newClient(tb, e.Endpoints())
}

// Partition cuts member i off from every other member, both ways: etcd's peer transport
// drops every raft message between them (EtcdServer.CutPeer on each side). Clients can still
// reach member i; it just cannot reach a quorum.
func (e *Embedded) Partition(i int) { e.cut(i, true) }

// Heal undoes Partition(i).
func (e *Embedded) Heal(i int) { e.cut(i, false) }

func (e *Embedded) cut(i int, cut bool) {
	e.tb.Helper()
	m := e.member(i)
	for j, o := range e.members {
		if j == i {
			continue
		}
		if cut {
			m.etcd.Server.CutPeer(o.etcd.Server.MemberID())
			o.etcd.Server.CutPeer(m.etcd.Server.MemberID())
		} else {
			m.etcd.Server.MendPeer(o.etcd.Server.MemberID())
			o.etcd.Server.MendPeer(m.etcd.Server.MemberID())
		}
	}
}

// Leader is the index of the member that a majority of members name as leader, asked again
// until ctx ends. A partitioned old leader that still believes it leads is outvoted.
func (e *Embedded) Leader(ctx context.Context) (int, error) {
	for {
		votes := map[types.ID]int{}
		index := map[types.ID]int{}
		for i, m := range e.members {
			index[m.etcd.Server.MemberID()] = i
			if l := m.etcd.Server.Leader(); l != 0 {
				votes[l]++
			}
		}
		for id, v := range votes {
			if i, ok := index[id]; ok && v > len(e.members)/2 {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("no member named leader by a majority of %d: %w", len(e.members), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitLeader waits until a majority names a leader and a write through a client of every
// endpoint is accepted.
func (e *Embedded) WaitLeader(ctx context.Context) error {
	return waitWritable(ctx, e.Endpoints(), e.Leader)
}

func (e *Embedded) member(i int) *embeddedMember {
	if i < 0 || i >= len(e.members) {
		e.tb.Fatalf("etcdtest: member %d of a %d-member cluster", i, len(e.members))
	}
	return e.members[i]
}

func (e *Embedded) closeAll() {
	var wg sync.WaitGroup
	for _, m := range e.members {
		if m.etcd != nil {
			wg.Go(m.etcd.Close)
		}
	}
	wg.Wait()
	// Close twice is not safe for every part of embed.Etcd; closeAll runs again at cleanup
	// after a failed launch.
	for _, m := range e.members {
		m.etcd = nil
	}
	if e.tb.Failed() {
		for _, m := range e.members {
			e.tb.Logf("embedded etcd member %s (client %s) log %s ends:\n%s", m.name, m.clientURL, m.logPath, logTail(m.logPath, 30))
		}
	}
}
