package graph

import (
	"context"
	"sync"
)

// AfterAnswer runs fn once the answer to the request ctx serves has been sent, when the
// edge serving it gave ctx a hook (WithAnswerHook); otherwise, or once the answer has
// gone, at once. Work that should not compete with an answer on its way out (a server
// warming its indexes after its first search) waits for it this way.
func AfterAnswer(ctx context.Context, fn func()) {
	if h, ok := ctx.Value(answerKey).(*answerHook); ok && h.hold(fn) {
		return
	}
	fn()
}

// WithAnswerHook returns ctx for serving one request, and answered, which the edge
// calls once it has sent the request's answer: it runs, in order, what AfterAnswer put
// off. Calling answered again does nothing.
func WithAnswerHook(ctx context.Context) (_ context.Context, answered func()) {
	h := &answerHook{}
	return context.WithValue(ctx, answerKey, h), h.answered
}

type answerHook struct {
	after until[func()]
}

// hold keeps fn for after the answer; false when it has been sent already.
func (h *answerHook) hold(fn func()) bool { return h.after.add(fn) }

func (h *answerHook) answered() {
	for _, fn := range h.after.take(true) {
		fn()
	}
}

// until is what a request's edge keeps for later: it takes entries until it is closed.
type until[T any] struct {
	mu     sync.Mutex
	closed bool
	items  []T
}

// add keeps v; false once closed.
func (u *until[T]) add(v T) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return false
	}
	u.items = append(u.items, v)
	return true
}

// open says whether add still takes entries.
func (u *until[T]) open() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return !u.closed
}

// take returns what was kept and forgets it, closing u first when close is set.
func (u *until[T]) take(close bool) []T {
	u.mu.Lock()
	defer u.mu.Unlock()
	items := u.items
	u.items = nil
	u.closed = u.closed || close
	return items
}

// list returns what was kept, keeping it, closing u first when close is set.
func (u *until[T]) list(close bool) []T {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = u.closed || close
	return u.items[:len(u.items):len(u.items)]
}

// WithCommitHold returns ctx for serving one request whose edge will not send the
// answer before the writes made under ctx are durable, and settle, which the edge calls
// before sending it: settle waits for every commit a store held (HoldCommit), returns the
// first one's error, and ends the hold (a write made under ctx after it, by work the
// request left running, waits for its own commit). A store may so return from a write
// once its transaction's work is done and its results are final, before bbolt's commit
// has reached the disk, and the edge prepares the answer while the commit runs.
func WithCommitHold(ctx context.Context) (_ context.Context, settle func() error) {
	h := &commitHold{}
	return context.WithValue(ctx, commitKey, h), func() error { return h.settle(true) }
}

// HoldCommit hands wait, which returns once a write's commit has ended (with its error),
// to the edge serving ctx, and reports true; false when ctx has no hold (or no longer),
// and the caller must wait itself before returning.
func HoldCommit(ctx context.Context, wait func() error) bool {
	h, ok := ctx.Value(commitKey).(*commitHold)
	return ok && h.waits.add(&heldCommit{wait: wait})
}

// CanHoldCommit reports whether the edge serving ctx takes held commits (HoldCommit).
func CanHoldCommit(ctx context.Context) bool {
	h, ok := ctx.Value(commitKey).(*commitHold)
	return ok && h.waits.open()
}

// SettleCommits waits for the commits held under ctx and returns the first one's error.
// A store calls it before it reads or writes for ctx, so that a request sees its own
// writes and never writes on top of one that failed.
func SettleCommits(ctx context.Context) error {
	if h, ok := ctx.Value(commitKey).(*commitHold); ok {
		return h.settle(false)
	}
	return nil
}

type commitHold struct {
	waits until[*heldCommit] // closed once the edge settles; kept, ended or not
	mu    sync.Mutex
	err   error // the first held commit that failed
}

// heldCommit is one held commit's wait, made once: whoever settles while another is
// waiting for it waits with them (a read the request makes beside the edge's settle).
// wait must not settle ctx itself.
type heldCommit struct {
	once sync.Once
	wait func() error
	err  error
}

func (c *heldCommit) end() error {
	c.once.Do(func() { c.err = c.wait() })
	return c.err
}

// settle waits for the held commits; end closes the hold first, so that no commit is
// held that the edge would not wait for.
func (h *commitHold) settle(end bool) error {
	for _, c := range h.waits.list(end) {
		if err := c.end(); err != nil {
			h.mu.Lock()
			if h.err == nil {
				h.err = err
			}
			h.mu.Unlock()
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
