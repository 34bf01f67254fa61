package cluster

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Streaming robot states. The host that drives a robot publishes its state under
//
//	P/robot/<host>/state/<ref>   the robot's state (JSON, naming the host), on <host>'s lease
//
// each time the local fleet tells of a change (a state change, or motion at most every
// NotifyEvery), at most every robotStreamEvery per robot (a change of its state — idle,
// navigating, stopped … — at once) and only when the state differs from the one last
// written: a robot at rest writes nothing, and these are never changelog writes. Every other host watches P/robot/, tells its subscribers of each
// state (so an MCP client subscribed to the robot's resource on any host hears it move)
// and answers the status of a robot on the move from it, without a command round trip.
//
// Order: a state streamed before a command's outcome must not be taken for newer than the
// outcome. The driving host writes an outcome and reads-then-writes a state under one lock
// (order), so a state with a higher revision than an outcome was read after the command
// ended; the caller keeps, per robot, the revision of the last outcome it had and ignores
// older states. A robot at rest is always asked (its battery drains without a change
// being told, so a rest state streamed earlier is not its state now).
const robotStreamEvery = 100 * time.Millisecond

// robotStream is both ends of the stream on one host.
type robotStream struct {
	// Publishing this host's robots.
	mu      sync.Mutex
	pending map[string]string // refs told of since they were last written: their state then
	wake    chan struct{}
	written int // states written (tests)
	order   sync.Mutex

	// The other hosts' robots: their states by host + "/" + ref, and their published
	// lists by host, as the watch of P/robot/ tells them.
	smu    sync.Mutex
	states map[string]*streamedState
	lists  map[string][]robotEntry
}

type streamedState struct {
	st  *graph.RobotState // nil: no state since the last outcome
	rev int64
	// told is the state a command's outcome gave (at rev), when no state was streamed
	// since: it answers the list of robots, never a status (see answered).
	told *graph.RobotState
}

func (s *robotStream) init() {
	s.pending, s.wake = map[string]string{}, make(chan struct{}, 1)
	s.states, s.lists = map[string]*streamedState{}, map[string][]robotEntry{}
}

// tell records that robot ref is in state now and wakes the publisher to stream it.
func (s *robotStream) tell(ref, state string) {
	s.mu.Lock()
	s.pending[ref] = state
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (r *Robots) stateKey(host, ref string) string {
	return r.fe.target.key("robot", host, "state", ref)
}

// openStream loads the other hosts' robot lists and streamed states, then starts the
// publisher (when the local fleet tells of changes) and the watch.
func (r *Robots) openStream() error {
	rev, err := r.loadStreams(r.ctx)
	if err != nil {
		return err
	}
	if f, ok := r.local.(interface {
		Subscribe(func(ref string, st graph.RobotState)) func()
	}); ok {
		stop := f.Subscribe(func(ref string, st graph.RobotState) { r.stream.tell(ref, st.State) })
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer stop()
			r.publishStates()
		}()
	}
	r.wg.Add(1)
	go r.watchStates(rev + 1)
	return nil
}

// publishStates writes the states of the robots the local fleet told of, each at most
// every robotStreamEvery but at once when its state changed (the last change always
// written), until the router closes.
func (r *Robots) publishStates() {
	s := &r.stream
	last := map[string]time.Time{}
	lastState := map[string]string{}
	sent := map[string]sentState{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-s.wake:
		case <-timer.C:
		case <-r.ctx.Done():
			return
		}
		s.mu.Lock()
		var due []string
		var next time.Duration
		for ref, state := range s.pending {
			if wait := robotStreamEvery - time.Since(last[ref]); wait > 0 && state == lastState[ref] {
				if next == 0 || wait < next {
					next = wait
				}
				continue
			}
			due = append(due, ref)
			lastState[ref] = state
			delete(s.pending, ref)
		}
		s.mu.Unlock()
		for _, ref := range due {
			last[ref] = time.Now()
			r.publishState(ref, sent)
		}
		if next > 0 {
			timer.Reset(next)
		}
	}
}

// sentState is the state last written for a robot, and the host lease it was written on
// (keys on a lost lease are gone: a state is written again on the next one).
type sentState struct {
	lease clientv3.LeaseID
	state []byte
}

// publishState writes ref's state now, unless it is the one last written on this lease.
func (r *Robots) publishState(ref string, sent map[string]sentState) {
	s := &r.stream
	s.order.Lock()
	defer s.order.Unlock()
	st, err := r.local.Status(r.ctx, ref)
	if err != nil {
		return // gone from the fleet
	}
	host := r.fe.cfg.Host
	b, _ := json.Marshal(hostedState{st, host})
	lease := r.fe.hostLease().id
	if prev := sent[ref]; prev.lease == lease && bytes.Equal(b, prev.state) {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	if _, err := r.fe.cli.Put(ctx, r.stateKey(host, ref), string(b), clientv3.WithLease(lease)); err != nil {
		select {
		case <-r.fe.Lost(): // cut off: nothing is streamed until the host is back
		default:
			if r.ctx.Err() == nil {
				r.log.Debug("cluster: streaming a robot's state", "robot", ref, "err", short(err))
			}
		}
		return
	}
	sent[ref] = sentState{lease, b}
	s.mu.Lock()
	s.written++
	s.mu.Unlock()
}

// StatesWritten reports how many robot states this host has streamed.
func (r *Robots) StatesWritten() int {
	r.stream.mu.Lock()
	defer r.stream.mu.Unlock()
	return r.stream.written
}

// loadStreams reads the other hosts' robot lists and streamed states at one revision,
// in place of those held; it returns that revision.
func (r *Robots) loadStreams(ctx context.Context) (int64, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := r.fe.cli.Get(gctx, r.fe.target.key("robot")+"/", clientv3.WithPrefix())
	cancel()
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer (other hosts' robots): %v", r.fe.target.endpointList(), short(err))
	}
	r.stream.smu.Lock()
	r.stream.states, r.stream.lists = map[string]*streamedState{}, map[string][]robotEntry{}
	r.stream.smu.Unlock()
	for _, kv := range resp.Kvs {
		r.applyState(kv, false)
	}
	return resp.Header.Revision, nil
}

// watchStates follows the other hosts' robot lists and streamed states from revision
// from on (see FrontEnd.follow), telling the subscribers of each state.
func (r *Robots) watchStates(from int64) {
	defer r.wg.Done()
	prefix := r.fe.target.key("robot") + "/"
	r.fe.follow(r.ctx, prefix, clientv3.GetPrefixRangeEnd(prefix), from, r.loadStreams, func(evs []*clientv3.Event) error {
		for _, ev := range evs {
			if ref := r.applyState(ev.Kv, ev.Type == mvccpb.DELETE); ref != "" {
				r.notify(ref)
			}
		}
		return nil
	})
}

// applyState records another host's streamed state or published robot list (or their
// deletion: the host is gone); it returns the robot's ref when kv is a state, "" for any
// other key.
func (r *Robots) applyState(kv *mvccpb.KeyValue, deleted bool) string {
	rest := strings.TrimPrefix(string(kv.Key), r.fe.target.key("robot")+"/")
	host, rest, _ := strings.Cut(rest, "/")
	if host == r.fe.cfg.Host {
		return ""
	}
	s := &r.stream
	if rest == "list" {
		var list []robotEntry
		ok := false
		if !deleted {
			_, list, ok = r.listOf(kv.Key, kv.Value)
		}
		s.smu.Lock()
		if ok {
			s.lists[host] = list
		} else {
			delete(s.lists, host) // gone, or unreadable (as readLists leaves it out)
		}
		s.smu.Unlock()
		return ""
	}
	ref, ok := strings.CutPrefix(rest, "state/")
	if !ok || ref == "" {
		return ""
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	key := host + "/" + ref
	if deleted {
		delete(s.states, key)
		return ref
	}
	var st graph.RobotState
	if err := json.Unmarshal(kv.Value, &st); err != nil {
		r.log.Warn("cluster: ignoring a robot state that cannot be read", "key", string(kv.Key), "err", err)
		return ""
	}
	if cur := s.states[key]; cur != nil && cur.rev >= kv.ModRevision {
		return "" // an outcome this host had is newer
	}
	s.states[key] = &streamedState{st: &st, rev: kv.ModRevision}
	return ref
}

// answered records that a command's outcome for robots of host is newer than every state
// host streamed before it: those are not taken for the robots' state any more. (The
// outcome's own state answers no status — only streamed states, which a moving robot
// renews, do — but it is the robot's state in the list of robots until host streams a
// newer one.)
func (s *robotStream) answered(host string, o *outcome) {
	floor := func(ref string, told *graph.RobotState) {
		key := host + "/" + ref
		if cur := s.states[key]; cur == nil || cur.rev < o.rev {
			s.states[key] = &streamedState{rev: o.rev, told: told}
		}
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	switch {
	case o.State != nil:
		floor(o.State.Ref, o.State)
	case o.Ref != "":
		floor(o.Ref, nil)
	}
	for _, st := range o.States {
		floor(st.Ref, st)
	}
}

// streamed returns copies of the states host streamed for every robot of its list (or,
// newer, that a command's outcome gave), in the list's order; nil when any robot has
// none (not streamed on host's lease yet).
func (s *robotStream) streamed(host string, list []robotEntry) []*graph.RobotState {
	s.smu.Lock()
	defer s.smu.Unlock()
	out := make([]*graph.RobotState, 0, len(list))
	for _, e := range list {
		cur := s.states[host+"/"+e.Ref]
		st := (*graph.RobotState)(nil)
		if cur != nil {
			st = cmp.Or(cur.st, cur.told)
		}
		if st == nil {
			return nil
		}
		cp := *st
		out = append(out, &cp)
	}
	return out
}

// moving returns a copy of the state host streams for its robot ref when that robot is
// on the move (navigating), nil otherwise (and for ref "").
func (s *robotStream) moving(host, ref string) *graph.RobotState {
	s.smu.Lock()
	defer s.smu.Unlock()
	e := s.states[host+"/"+ref]
	if ref == "" || e == nil || e.st == nil || e.st.State != graph.RobotNavigating {
		return nil
	}
	cp := *e.st
	return &cp
}
