package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The host's lease, in epochs. A host is live while its claim P/hosts/<name> exists, and
// the claim, the host's live state, its robot list and the outcomes it writes ride on its
// lease. When the lease is lost (the cluster out of reach past HostTTL, or this process
// stalled that long) the epoch's lost channel closes: robots stop, and the keys on the
// lease are gone (etcd deletes them when it expires the lease). keepHost then claims the
// name again under a new lease, with the rules of the first claim, and once it holds one
// it starts a new epoch and closes the old one's next channel, so those who published on
// the old lease publish again on the new one.

// leaseEpoch is one lease this host held.
type leaseEpoch struct {
	id   clientv3.LeaseID
	lost chan struct{} // closed when this lease is lost
	next chan struct{} // closed when the next lease is held: hostLease returns it then

	// Once lost (under FrontEnd.leaseMu): when, and the claim of the machine that holds
	// the name meanwhile (zero while none is known to).
	lostAt time.Time
	holder hostClaim
}

func newEpoch(id clientv3.LeaseID) *leaseEpoch {
	return &leaseEpoch{id: id, lost: make(chan struct{}), next: make(chan struct{})}
}

// hostLease returns the host's current lease: the one it holds, or, while it is offline,
// the one it lost (whose lost channel is closed).
func (fe *FrontEnd) hostLease() *leaseEpoch {
	fe.leaseMu.Lock()
	defer fe.leaseMu.Unlock()
	return fe.lease
}

// leaseLost reports whether this host's lease is lost (it is claiming its name again).
func (fe *FrontEnd) leaseLost() bool {
	select {
	case <-fe.hostLease().lost:
		return true
	default:
		return false
	}
}

// LeaseLoss says whether this host's lease is lost: nil while it holds its name; else
// since when, and the machine that holds the name meanwhile, if one does.
func (fe *FrontEnd) LeaseLoss() *graph.LeaseLoss {
	fe.leaseMu.Lock()
	defer fe.leaseMu.Unlock()
	ep := fe.lease
	if ep == nil || ep.lostAt.IsZero() {
		return nil
	}
	return &graph.LeaseLoss{Host: fe.cfg.Host, Since: ep.lostAt, HeldBy: ep.holder.MachineID, HeldSince: ep.holder.Since}
}

// nameHeldError says another machine holds the host's name.
type nameHeldError struct {
	host string
	held hostClaim
}

func (e *nameHeldError) Error() string {
	return fmt.Sprintf("host name %q is held by another live host (machine %s, since %s)", e.host, shortID(e.held.MachineID), e.held.Since.Format(time.RFC3339))
}

// claimHost takes the host's name in the cluster under a lease of HostTTL seconds (see
// claim) and starts keeping it.
func (fe *FrontEnd) claimHost(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	id, ka, err := fe.claim(lctx)
	var held *nameHeldError
	if errors.As(err, &held) {
		return graph.FieldErrorf(graph.ECONFLICT, "host-name", "%s; pick another --host-name, or stop that host", held)
	}
	if err != nil {
		return err
	}
	fe.leaseMu.Lock()
	fe.lease = newEpoch(id)
	fe.leaseMu.Unlock()
	fe.wg.Add(1)
	go fe.keepHost(ka)
	return nil
}

// claim takes the host's name under a new lease: a name no live host holds, or one this
// machine holds (a restart before the old lease ran out, or this front end's own claim on
// a lease it lost), is taken; one another machine holds is refused with a *nameHeldError.
// It returns the lease and its keep-alive.
func (fe *FrontEnd) claim(ctx context.Context) (clientv3.LeaseID, <-chan *clientv3.LeaseKeepAliveResponse, error) {
	lease, err := fe.cli.Grant(ctx, HostTTL)
	if err != nil {
		return 0, nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not grant a lease: %v", fe.target.endpointList(), short(err))
	}
	ok := false
	defer func() {
		if !ok { // nothing rides on it: let it go now rather than in HostTTL
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			fe.cli.Revoke(rctx, lease.ID)
			cancel()
		}
	}()
	key := fe.target.key("hosts", fe.cfg.Host)
	b, _ := json.Marshal(hostClaim{MachineID: fe.cfg.MachineID, Version: fe.cfg.Version, Schema: migrations.CurrentVersion, Since: time.Now().UTC()})
	put := clientv3.OpPut(key, string(b), clientv3.WithLease(lease.ID))
	// Absent: take it. Held by this machine: take it back, unless it changed meanwhile
	// (then look again).
	cmp := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	for try := 0; ; try++ {
		resp, err := fe.cli.Txn(ctx).If(cmp).Then(put).Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return 0, nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", fe.target.endpointList(), short(err))
		}
		if resp.Succeeded {
			break
		}
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		} else {
			var held hostClaim
			json.Unmarshal(kvs[0].Value, &held)
			if held.MachineID == "" || held.MachineID != fe.cfg.MachineID {
				return 0, nil, &nameHeldError{host: fe.cfg.Host, held: held}
			}
			cmp = clientv3.Compare(clientv3.ModRevision(key), "=", kvs[0].ModRevision)
		}
		if try == 3 {
			return 0, nil, graph.Errorf(graph.EUNAVAILABLE, "the claim of host name %q on etcd at %s kept changing while it was taken; try again", fe.cfg.Host, fe.target.endpointList())
		}
	}
	ka, err := fe.cli.KeepAlive(fe.ctx, lease.ID)
	if err != nil {
		return 0, nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not keep the lease alive: %v", fe.target.endpointList(), short(err))
	}
	ok = true
	return lease.ID, ka, nil
}

// keepHost keeps the host's lease alive; when it is lost it ends the epoch, claims the
// name again until it holds it (or the front end closes), and starts the next epoch.
func (fe *FrontEnd) keepHost(ka <-chan *clientv3.LeaseKeepAliveResponse) {
	defer fe.wg.Done()
	for {
		for range ka {
		}
		if fe.ctx.Err() != nil {
			return
		}
		old := fe.hostLease()
		lostAt := time.Now()
		fe.leaseMu.Lock()
		old.lostAt = lostAt.UTC()
		fe.leaseMu.Unlock()
		fe.log.Error("cluster: this host's lease is lost (the cluster was out of reach, or this process stalled, for its 10 s); its robots stop and it shows offline to the fleet; it keeps claiming its name again", "host", fe.cfg.Host)
		close(old.lost)
		id, next, ok := fe.reclaim()
		if !ok {
			return // closing
		}
		ka = next
		// Whatever still rides on the old lease (if etcd has not expired it yet) goes now:
		// it is published again on the new one.
		rctx, cancel := context.WithTimeout(fe.ctx, time.Second)
		fe.cli.Revoke(rctx, old.id)
		cancel()
		fe.leaseMu.Lock()
		fe.lease = newEpoch(id)
		fe.leaseMu.Unlock()
		close(old.next)
		fe.log.Info("cluster: this host holds its name again and is online to the fleet; its live state and robots are published again", "host", fe.cfg.Host, "offline", time.Since(lostAt).Round(100*time.Millisecond).String())
	}
}

// reclaim claims the host's name until it holds it, each attempt bounded, with jittered
// backoff between them; it reports false when the front end closes first. Each new reason
// it cannot (the cluster unreachable, the name held by another machine) is logged once,
// and again every minute it lasts.
func (fe *FrontEnd) reclaim() (clientv3.LeaseID, <-chan *clientv3.LeaseKeepAliveResponse, bool) {
	said, saidAt := "", time.Time{}
	for attempt := 0; ; attempt++ {
		select {
		case <-time.After(backoff(attempt, 500*time.Millisecond, 5*time.Second)):
		case <-fe.ctx.Done():
			return 0, nil, false
		}
		actx, cancel := context.WithTimeout(fe.ctx, 3*time.Second)
		id, ka, err := fe.claim(actx)
		cancel()
		if err == nil {
			return id, ka, true
		}
		if fe.ctx.Err() != nil {
			return 0, nil, false
		}
		var held *nameHeldError
		reason := "unreachable"
		holder := hostClaim{}
		if errors.As(err, &held) {
			reason = "held by " + held.held.MachineID
			holder = held.held
		}
		fe.leaseMu.Lock()
		fe.lease.holder = holder
		fe.leaseMu.Unlock()
		if reason == said && time.Since(saidAt) < time.Minute {
			continue
		}
		said, saidAt = reason, time.Now()
		if held != nil {
			fe.log.Error(fmt.Sprintf("cluster: this host stays offline: another machine (%s) claimed the name %s while this host's lease was lost; it keeps trying, and takes the name back once that host is gone (stop it, or restart this one with another --host-name)", held.held.MachineID, fe.cfg.Host),
				"host", fe.cfg.Host, "holder", held.held.MachineID, "holder_version", held.held.Version, "since", held.held.Since.Format(time.RFC3339))
			continue
		}
		fe.log.Warn("cluster: this host is still offline: it cannot claim its name again yet; it keeps trying", "host", fe.cfg.Host, "err", graph.ErrorMessage(err))
	}
}

// Request keys (P/req/<id>) only have to outlive the time a commit is sent again after an
// answer was lost (30 s), so they ride on short leases that are never kept alive: a lease
// of reqLeaseTTL takes new request keys for reqLeaseUse after it was asked for, then the
// next commit asks for a new one. Every request key so lives at least reqLeaseTTL -
// reqLeaseUse and vanishes within reqLeaseTTL; an idle front end asks for none.
const (
	reqLeaseTTL = 120 // seconds
	reqLeaseUse = time.Minute
)

// reqLeases is the lease new request keys ride on.
type reqLeases struct {
	mu      sync.Mutex
	id      clientv3.LeaseID
	granted time.Time // when it was asked for (etcd counts its TTL from later)
	ttl     int64     // reqLeaseTTL, shorter in tests
	use     time.Duration
}

// requestLease returns the lease for a new request key: the current one while it is
// younger than its use, else (or when fresh is set: etcd no longer has it) a new one.
func (fe *FrontEnd) requestLease(ctx context.Context, fresh bool) (clientv3.LeaseID, error) {
	r := &fe.reqs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.id != 0 && !fresh && time.Since(r.granted) < r.use {
		return r.id, nil
	}
	asked := time.Now()
	gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	lease, err := fe.cli.Grant(gctx, r.ttl)
	cancel()
	if err != nil {
		return 0, err
	}
	r.id, r.granted = lease.ID, asked
	return r.id, nil
}

func isLeaseNotFound(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || strings.Contains(err.Error(), "requested lease not found")
}
