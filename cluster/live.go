package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Host liveness and live state. A host is live while its claim P/hosts/<name> exists:
// the claim rides on the host's lease, so it vanishes on its own when the host dies and
// nothing is written for it. Each host publishes what its sources see and never store
// (graph.HostLive: observed relations, clients, the /dev nodes of its present devices) as
// P/live/<name> on the same lease, only when it changed and at most every PublishEvery.
// One Watch over both prefixes keeps every front end's view of the fleet: which hosts
// are live and what each of the others sees.

// PublishEvery is the shortest time between two publications of a host's live state.
const PublishEvery = 2 * time.Second

var (
	_ graph.FleetLive = (*FrontEnd)(nil)
	_ graph.Live      = (*hostLive)(nil)
)

// fleetView is this front end's view of the fleet, kept by watchFleet.
type fleetView struct {
	mu    sync.RWMutex
	hosts map[string]bool            // live hosts (a claim exists)
	live  map[string]*graph.HostLive // published live state by host
	else_ []*graph.HostLive          // Elsewhere's answer, rebuilt on change
	dirty bool
}

// HostOnline reports whether host is live: "" always is; this host unless its lease is
// lost; another while its claim exists. See graph.HostStatus.
func (fe *FrontEnd) HostOnline(host string) bool {
	if host == "" {
		return true
	}
	if host == fe.cfg.Host {
		return !fe.leaseLost()
	}
	v := &fe.view
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.hosts[host]
}

// HostsOnline lists the live hosts, this one included unless its lease is lost, sorted.
func (fe *FrontEnd) HostsOnline() []string {
	out := []string{}
	if !fe.leaseLost() {
		out = append(out, fe.cfg.Host)
	}
	v := &fe.view
	v.mu.RLock()
	for h := range v.hosts {
		if h != fe.cfg.Host {
			out = append(out, h)
		}
	}
	v.mu.RUnlock()
	sort.Strings(out)
	return out
}

// Elsewhere returns the live state the other live hosts published, sorted by host.
func (fe *FrontEnd) Elsewhere() []*graph.HostLive {
	v := &fe.view
	v.mu.RLock()
	if !v.dirty {
		out := v.else_
		v.mu.RUnlock()
		return out
	}
	v.mu.RUnlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dirty {
		var out []*graph.HostLive
		for h, st := range v.live {
			if h != fe.cfg.Host && v.hosts[h] {
				out = append(out, st)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
		v.else_, v.dirty = out, false
	}
	return v.else_
}

// fleetRange is the keys the fleet view watches: P/hosts/… and P/live/… (nothing else
// devgraph keeps sorts between them).
func (fe *FrontEnd) fleetRange() (start, end string) {
	return fe.target.key("hosts") + "/", clientv3.GetPrefixRangeEnd(fe.target.key("live") + "/")
}

// loadFleet reads every claim and live state at one revision into the view; it returns
// that revision.
func (fe *FrontEnd) loadFleet(ctx context.Context) (int64, error) {
	start, end := fe.fleetRange()
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := fe.cli.Get(gctx, start, clientv3.WithRange(end))
	cancel()
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", fe.target.endpointList(), short(err))
	}
	v := &fe.view
	v.mu.Lock()
	v.hosts, v.live, v.dirty = map[string]bool{}, map[string]*graph.HostLive{}, true
	v.mu.Unlock()
	for _, kv := range resp.Kvs {
		fe.applyFleet(kv.Key, kv.Value, false)
	}
	return resp.Header.Revision, nil
}

// applyFleet records one claim or live state put (or deleted) in the view.
func (fe *FrontEnd) applyFleet(key, value []byte, deleted bool) {
	hostsP, liveP := fe.target.key("hosts")+"/", fe.target.key("live")+"/"
	k := string(key)
	v := &fe.view
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dirty = true
	switch {
	case strings.HasPrefix(k, hostsP):
		h := k[len(hostsP):]
		if deleted {
			delete(v.hosts, h)
		} else {
			v.hosts[h] = true
		}
	case strings.HasPrefix(k, liveP):
		h := k[len(liveP):]
		if deleted {
			delete(v.live, h)
			return
		}
		st := &graph.HostLive{}
		if err := json.Unmarshal(value, st); err != nil || st.Host != h {
			fe.log.Warn("cluster: a host's live state cannot be read; ignoring it", "host", h, "err", err)
			delete(v.live, h)
			return
		}
		v.live[h] = st
	}
}

// follow applies every change to the keys in [start, end) from revision from on, until
// ctx ends. It is the loop of each view kept from etcd (the fleet view, the other hosts'
// robots, a graph at an older schema), run by the goroutine its owner starts and waits
// for. What is queued when a watch response arrives is applied with it, in order, as one
// batch. When the watch breaks (a member lost its leader, the history was compacted) or
// apply fails, it waits 100 ms to 2 s, backing off while that goes on, and loads the keys
// afresh: load reads them whole at one revision into the view (clearing what it held:
// what happened while the watch was down is read, not replayed) and returns that
// revision, which the next watch starts after.
func (fe *FrontEnd) follow(ctx context.Context, start, end string, from int64, load func(context.Context) (int64, error), apply func([]*clientv3.Event) error) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := fe.cli.Watch(wctx, start, clientv3.WithRange(end), clientv3.WithRev(from))
		for broken := false; !broken; {
			var evs []*clientv3.Event
			evs, broken = nextBatch(wch)
			if len(evs) > 0 {
				if err := apply(evs); err != nil {
					break
				}
				attempt, from = 0, evs[len(evs)-1].Kv.ModRevision+1
			}
			if ctx.Err() != nil {
				break
			}
		}
		cancel()
		select {
		case <-time.After(backoff(attempt, 100*time.Millisecond, 2*time.Second)):
		case <-ctx.Done():
			return
		}
		if rev, err := load(ctx); err == nil {
			from = rev + 1
		}
	}
}

// nextBatch waits for a watch response and takes those queued behind it; it returns
// their events, and whether the watch ended (closed, failed or compacted: the events of
// such a response are not returned).
func nextBatch(wch clientv3.WatchChan) (evs []*clientv3.Event, ended bool) {
	resp, ok := <-wch
	for {
		if !ok || resp.CompactRevision != 0 || resp.Err() != nil {
			return evs, true
		}
		evs = append(evs, resp.Events...)
		select {
		case resp, ok = <-wch:
		default:
			return evs, false
		}
	}
}

// watchFleet keeps the view current from revision from on (see follow).
func (fe *FrontEnd) watchFleet(from int64) {
	defer fe.wg.Done()
	start, end := fe.fleetRange()
	fe.follow(fe.ctx, start, end, from, fe.loadFleet, func(evs []*clientv3.Event) error {
		for _, ev := range evs {
			fe.applyFleet(ev.Kv.Key, ev.Kv.Value, ev.Type == mvccpb.DELETE)
		}
		return nil
	})
}

// startLive fills the fleet view and starts its watch and the publisher.
func (fe *FrontEnd) startLive(ctx context.Context) error {
	rev, err := fe.loadFleet(ctx)
	if err != nil {
		return err
	}
	fe.pub.wake = make(chan struct{}, 1)
	fe.wg.Add(2)
	go fe.watchFleet(rev + 1)
	go fe.publishLoop()
	return nil
}

// publisher holds the newest live state offered and what was last written.
type publisher struct {
	mu    sync.Mutex
	in    *graph.Snapshot // the local reading last seen, and
	out   *graph.Snapshot // its qualified form (sources share readings: same in, same out)
	want  []byte          // the newest state offered, encoded
	wake  chan struct{}
	count int // publications made (doctor, tests)
}

// Live returns local as this host of the fleet reads it: each reading's devices, refs and
// observed relations carry the host (on a fleet store), and a reading whose live state
// changed is published for the other hosts.
func (fe *FrontEnd) Live(local graph.Live) graph.Live { return &hostLive{fe: fe, local: local} }

type hostLive struct {
	fe    *FrontEnd
	local graph.Live
}

func (l *hostLive) Snapshot(ctx context.Context) (*graph.Snapshot, error) {
	snap, err := l.local.Snapshot(ctx)
	if err != nil || snap == nil {
		return snap, err
	}
	fe := l.fe
	p := &fe.pub
	p.mu.Lock()
	defer p.mu.Unlock()
	if snap == p.in {
		return p.out, nil
	}
	qh := "" // the host refs carry: none unless the store is a fleet's
	if fe.db.MultiHost() {
		qh = fe.cfg.Host
	}
	q := qualifySnapshot(qh, snap)
	p.in, p.out = snap, q
	enc := encodeHostLive(fe.cfg.Host, qh, q)
	if !bytes.Equal(enc, p.want) {
		p.want = enc
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	return q, nil
}

// Publications reports how many times this host wrote its live state.
func (fe *FrontEnd) Publications() int {
	fe.pub.mu.Lock()
	defer fe.pub.mu.Unlock()
	return fe.pub.count
}

// publishLoop writes the newest live state offered, on the host's lease, when it differs
// from the last one written, at most every PublishEvery. When the host holds a new lease
// (its old one was lost, and with it the state written on it) it writes the state again
// at once.
func (fe *FrontEnd) publishLoop() {
	defer fe.wg.Done()
	p := &fe.pub
	key := fe.target.key("live", fe.cfg.Host)
	var written []byte
	var last time.Time
	lease := fe.hostLease()
	for attempt := 0; ; {
		select {
		case <-p.wake:
		case <-lease.next:
			lease, written, last, attempt = fe.hostLease(), nil, time.Time{}, 0
		case <-fe.ctx.Done():
			return
		}
		if wait := PublishEvery - time.Since(last); wait > 0 {
			select {
			case <-time.After(wait):
			case <-fe.ctx.Done():
				return
			}
		}
		p.mu.Lock()
		want := p.want
		p.mu.Unlock()
		if bytes.Equal(want, written) {
			continue
		}
		pctx, cancel := context.WithTimeout(fe.ctx, 5*time.Second)
		_, err := fe.cli.Put(pctx, key, string(want), clientv3.WithLease(lease.id))
		cancel()
		last = time.Now()
		if err != nil {
			select {
			case <-lease.lost: // gone with its lease: written again on the next one
				continue
			default:
			}
			if fe.ctx.Err() != nil {
				return
			}
			fe.log.Warn("cluster: publishing this host's live state failed; retrying", "err", short(err))
			attempt++
			// Try again later, with what is newest then (publishLoop still counts in wg, so
			// Close's Wait cannot have ended).
			fe.wg.Add(1)
			go func(d time.Duration) {
				defer fe.wg.Done()
				select {
				case <-time.After(d):
				case <-fe.ctx.Done():
					return
				}
				select {
				case p.wake <- struct{}{}:
				default:
				}
			}(backoff(attempt, 500*time.Millisecond, 5*time.Second))
			continue
		}
		attempt = 0
		written = want
		p.mu.Lock()
		p.count++
		p.mu.Unlock()
	}
}

// qualifySnapshot returns snap as a fleet names it: devices' keys, refs and usb_path
// fingerprints, and observed relations' device ends (and so their ids), carry host.
// Clients keep their bare ids here (they are this host's); the published state
// qualifies them.
func qualifySnapshot(host string, snap *graph.Snapshot) *graph.Snapshot {
	cp := *snap
	cp.Devices = make([]*graph.ObservedDevice, len(snap.Devices))
	for i, d := range snap.Devices {
		if d == nil {
			continue
		}
		cp.Devices[i] = graph.QualifyObserved(host, d)
	}
	cp.Relations = make([]*graph.Relation, 0, len(snap.Relations))
	for _, r := range snap.Relations {
		if r != nil {
			cp.Relations = append(cp.Relations, qualifyRelation(host, r, false))
		}
	}
	return &cp
}

// qualifyRelation copies an observed relation with its device ends (and, with clients,
// its client ends) carrying host, and its id made from the new ends.
func qualifyRelation(host string, r *graph.Relation, clients bool) *graph.Relation {
	end := func(id string) string {
		switch graph.KindOf(id) {
		case graph.KindDevice:
			return graph.QualifyDeviceID(host, id)
		case graph.KindClient:
			if clients {
				return graph.QualifyClientID(host, id)
			}
		}
		return id
	}
	cp := *r
	cp.From, cp.To = end(r.From), end(r.To)
	if cp.From != r.From || cp.To != r.To {
		cp.ID = graph.ObservedRelationID(r.Type, cp.From, r.FromPort, cp.To, r.ToPort)
	}
	return &cp
}

// encodeHostLive is the live state of a reading as host publishes it, its ids qualified
// with qh (host on a fleet store): the same reading always encodes the same, so an
// unchanged one is never written again.
func encodeHostLive(host, qh string, snap *graph.Snapshot) []byte {
	st := &graph.HostLive{Host: host}
	for _, d := range snap.Devices {
		if d == nil {
			continue
		}
		st.Devices = append(st.Devices, &graph.ObservedDevice{Key: graph.QualifyHost(qh, d.Key), Ref: graph.QualifyHost(qh, d.Ref),
			Source: d.Source, Fingerprints: d.Fingerprints, Infra: d.Infra, Nodes: d.Nodes})
	}
	for _, r := range snap.Relations {
		if r != nil {
			st.Relations = append(st.Relations, qualifyRelation(qh, r, true))
		}
	}
	for _, c := range snap.Clients {
		if c != nil {
			cp := *c
			cp.ID = graph.QualifyClientID(qh, c.ID)
			st.Clients = append(st.Clients, &cp)
		}
	}
	sort.Slice(st.Devices, func(i, j int) bool { return st.Devices[i].Key < st.Devices[j].Key })
	sort.Slice(st.Relations, func(i, j int) bool { return st.Relations[i].ID < st.Relations[j].ID })
	sort.Slice(st.Clients, func(i, j int) bool { return st.Clients[i].ID < st.Clients[j].ID })
	b, _ := json.Marshal(st)
	if len(b) <= graph.MaxHostLiveBytes {
		return b
	}
	// Too big: first what the others need least (attributes, fingerprints, links), then
	// the longest list halved until it fits; the state says it was cut.
	st.Truncated = true
	for _, d := range st.Devices {
		d.Fingerprints = nil
		nodes := make([]graph.DeviceNode, len(d.Nodes))
		for i, n := range d.Nodes {
			nodes[i] = graph.DeviceNode{Path: n.Path, Kind: n.Kind}
		}
		d.Nodes = nodes
	}
	for i, r := range st.Relations {
		cp := *r
		cp.Attrs = nil
		st.Relations[i] = &cp
	}
	for _, c := range st.Clients {
		c.Attrs = nil
	}
	for {
		b, _ = json.Marshal(st)
		if len(b) <= graph.MaxHostLiveBytes {
			return b
		}
		switch n, m, k := len(st.Devices), len(st.Relations), len(st.Clients); {
		case m >= n && m >= k:
			st.Relations = st.Relations[:m/2]
		case n >= k:
			st.Devices = st.Devices[:n/2]
		default:
			st.Clients = st.Clients[:k/2]
		}
	}
}
