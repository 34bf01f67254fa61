package store

import (
	"fmt"
	"sync/atomic"

	"github.com/devgraph/devgraph/graph"
)

// subscriberQueue is how many committed writes a subscription may hold that its fn has not
// been called with yet; one that falls further behind is dropped.
const subscriberQueue = 1024

// subscription is one Subscribe: its fn is called from a goroutine of its own, fed by a
// bounded queue, so no subscriber can hold up a writer or another subscriber.
type subscription struct {
	fn        func([]*graph.Event)
	queue     chan []*graph.Event // closed (under subMu) on cancel, drop or Close
	dropped   atomic.Bool
	cancelled atomic.Bool
}

// Subscribe calls fn after each committed write with its events, in commit order, from a
// goroutine of this subscription's own, never inside a transaction; fn may read and even
// write the store. Writers never wait for fn: a subscription holds up to 1,024 committed
// writes fn has not been called with yet, and one that falls further behind is dropped.
// Dropping logs the reason, discards what is still queued for fn, and calls fn one last
// time with nil events (a committed write always has events, so nil means only this): fn
// has missed changes and should re-read whatever it keeps, and may subscribe again.
// cancel stops further calls (a call already under way finishes, and so may a nil call
// already decided when cancel was called; no other follows); it may be called more than
// once and from inside fn. Close delivers what
// is queued, ends every subscription without the nil call, and waits for fn to return.
func (db *DB) Subscribe(fn func(events []*graph.Event)) (cancel func()) {
	s := &subscription{fn: fn, queue: make(chan []*graph.Event, subscriberQueue)}
	db.subMu.Lock()
	if db.subsClosed {
		db.subMu.Unlock()
		return func() {}
	}
	db.subN++
	n := db.subN
	db.subs[n] = s
	db.subWG.Add(1)
	db.subMu.Unlock()
	go db.deliver(s)
	return func() {
		s.cancelled.Store(true)
		db.subMu.Lock()
		if db.subs[n] == s {
			delete(db.subs, n)
			close(s.queue)
		}
		db.subMu.Unlock()
	}
}

// notify queues a committed write's events for every subscription, dropping any whose
// queue is full; it never blocks.
func (db *DB) notify(evs []*graph.Event) {
	if len(evs) == 0 {
		return
	}
	db.subMu.Lock()
	defer db.subMu.Unlock()
	for n, s := range db.subs {
		select {
		case s.queue <- evs:
		default:
			s.dropped.Store(true)
			delete(db.subs, n)
			close(s.queue)
			db.log.Warn("store: dropped a change subscriber", "reason",
				fmt.Sprintf("it fell %d committed writes behind; writers never wait for subscribers", subscriberQueue))
		}
	}
}

// deliver calls s.fn with each queued write until the queue is closed, then tells a
// dropped subscriber with fn(nil).
func (db *DB) deliver(s *subscription) {
	defer db.subWG.Done()
	for evs := range s.queue {
		if s.dropped.Load() || s.cancelled.Load() {
			continue // dropped: what is queued is stale; cancelled: unwanted
		}
		s.call(evs)
	}
	if s.dropped.Load() && !s.cancelled.Load() {
		s.call(nil)
	}
}

func (s *subscription) call(evs []*graph.Event) {
	defer func() { recover() }() // a panicking subscriber must not take the store down
	s.fn(evs)
}
