package robot

import "github.com/devgraph/devgraph/graph"

type queued struct {
	m    *member
	st   graph.RobotState
	rest bool
}

// Subscribe calls fn with a robot's state on every state change and, while it moves, at
// most every NotifyEvery (10 Hz). Calls come from one goroutine, in order; a slow fn
// delays the others, never the robots. cancel stops the calls.
func (f *Fleet) Subscribe(fn func(ref string, st graph.RobotState)) (cancel func()) {
	f.subMu.Lock()
	id := f.nextSub
	f.nextSub++
	f.subs[id] = fn
	f.subMu.Unlock()
	return func() {
		f.subMu.Lock()
		delete(f.subs, id)
		f.subMu.Unlock()
	}
}

const maxQueue = 4096

// enqueue is world.notify: called with world.mu held, never blocks, takes no fleet lock
// but its own (AddSimRobot holds f.mu while it takes world.mu).
func (f *Fleet) enqueue(r *simRobot, rest bool) {
	f.subMu.RLock()
	n := len(f.subs)
	f.subMu.RUnlock()
	if n == 0 && (!rest || f.store == nil) {
		return
	}
	m := r.member
	if m == nil {
		return
	}
	f.qMu.Lock()
	if len(f.queue) >= maxQueue { // a stuck subscriber: keep the newest state per robot
		last := map[*member]int{}
		for i, q := range f.queue {
			last[q.m] = i
		}
		kept := f.queue[:0]
		for i, q := range f.queue {
			if last[q.m] == i || q.rest {
				kept = append(kept, q)
			}
		}
		f.queue = kept
	}
	f.queue = append(f.queue, queued{m: m, st: r.stateLocked(), rest: rest})
	f.qMu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// dispatch delivers queued states to subscribers and saves a robot's pose when it comes
// to rest, off the tick loop.
func (f *Fleet) dispatch() {
	defer close(f.dispDone)
	for {
		var quitting bool
		select {
		case <-f.wake:
		case <-f.quit:
			quitting = true
		}
		for {
			f.qMu.Lock()
			batch := f.queue
			f.queue = nil
			f.qMu.Unlock()
			if len(batch) == 0 {
				break
			}
			f.subMu.RLock()
			fns := make([]func(string, graph.RobotState), 0, len(f.subs))
			for _, fn := range f.subs {
				fns = append(fns, fn)
			}
			f.subMu.RUnlock()
			for _, q := range batch {
				for _, fn := range fns {
					fn(q.m.ref, q.st)
				}
				if q.rest && f.store != nil {
					f.saveQuiet(q.m, "")
				}
			}
		}
		if quitting {
			return
		}
	}
}
