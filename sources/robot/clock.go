package robot

import (
	"sync"
	"time"
)

// The fleet has one clock: Options.Now. The simulator's fixed-rate loop also needs to be
// woken on that clock, so Options.Every schedules its ticks. By default Every wakes on a
// time.Ticker and stamps each tick from Now; tests take both from one FakeClock
// (Now: c.Now, Every: c.Every) and advance it by hand, so no simulator test ever sleeps.

// EveryFunc calls fn once per period d with the tick's scheduled time (start+d,
// start+2d, …), one call at a time, until stop is called. A late call still carries its
// scheduled time, so the caller can measure lateness and integrate fixed steps. stop waits
// for a running fn to return, is safe twice and must not be called from inside fn.
type EveryFunc func(d time.Duration, fn func(tick time.Time)) (stop func())

// maxCatchUp is how many missed ticks wallEvery delivers after a stall before it
// skips ahead; beyond it the simulation slows down rather than bursting.
const maxCatchUp = 10

// wallEvery returns the EveryFunc of the wall clock read through clock: fn runs from one
// goroutine woken by a time.Ticker (stop ends it and waits for it). Ticks the ticker
// dropped while fn was slow are delivered late (each with its own scheduled time) up to
// maxCatchUp, so lateness is reported honestly; a longer stall skips ahead.
func wallEvery(clock func() time.Time) EveryFunc {
	return func(d time.Duration, fn func(tick time.Time)) (stop func()) {
		quit := make(chan struct{})
		finished := make(chan struct{})
		t := time.NewTicker(d)
		next := clock().Add(d)
		go func() {
			defer close(finished)
			defer t.Stop()
			for {
				select {
				case <-quit:
					return
				case <-t.C:
				}
				now := clock()
				if behind := now.Sub(next) / d; behind > maxCatchUp {
					next = next.Add((behind - maxCatchUp) * d)
				}
				for !next.After(now) {
					fn(next)
					next = next.Add(d)
					select {
					case <-quit:
						return
					default:
					}
				}
			}
		}()
		var once sync.Once
		return func() {
			once.Do(func() { close(quit) })
			<-finished
		}
	}
}

// FakeClock is a clock that only moves when Advance is called: give a fleet its Now and
// its Every. Ticks fall due inside
// Advance and their callbacks run synchronously in Advance's goroutine, in time order, so
// when Advance returns every tick up to the new time has been fully processed.
type FakeClock struct {
	advance sync.Mutex // one Advance at a time
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
}

type fakeTicker struct {
	d       time.Duration
	next    time.Time
	fn      func(time.Time)
	stopped bool
}

// NewFakeClock returns a FakeClock reading start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Every is an EveryFunc: it registers fn to run at every multiple of d after now, as
// Advance passes it. stop takes effect at once (fn runs inside Advance, never on its own).
func (c *FakeClock) Every(d time.Duration, fn func(tick time.Time)) (stop func()) {
	c.mu.Lock()
	t := &fakeTicker{d: d, next: c.now.Add(d), fn: fn}
	c.tickers = append(c.tickers, t)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		t.stopped = true
		c.mu.Unlock()
	}
}

// Advance moves the clock forward by d, running every tick that falls due on the way.
func (c *FakeClock) Advance(d time.Duration) {
	c.advance.Lock()
	defer c.advance.Unlock()
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTicker
		for _, t := range c.tickers {
			if !t.stopped && !t.next.After(end) && (due == nil || t.next.Before(due.next)) {
				due = t
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		at := due.next
		c.now = at
		due.next = at.Add(due.d)
		fn := due.fn
		c.mu.Unlock()
		fn(at)
	}
}
