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
	mu    sync.Mutex
	sent  bool
	after []func()
}

// hold keeps fn for after the answer; false when it has been sent already.
func (h *answerHook) hold(fn func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sent {
		return false
	}
	h.after = append(h.after, fn)
	return true
}

func (h *answerHook) answered() {
	h.mu.Lock()
	after := h.after
	h.sent, h.after = true, nil
	h.mu.Unlock()
	for _, fn := range after {
		fn()
	}
}
