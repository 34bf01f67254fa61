package mcptools

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// dropNotifier hands out subscriptions and lets the test drop them as the store does
// when a subscriber falls behind (a last call with nil).
type dropNotifier struct {
	mu        sync.Mutex
	fns       []func([]*graph.Event)
	cancelled int
}

func (d *dropNotifier) Subscribe(fn func([]*graph.Event)) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fns = append(d.fns, fn)
	return func() {
		d.mu.Lock()
		d.cancelled++
		d.mu.Unlock()
	}
}

func (d *dropNotifier) subscriptions() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.fns)
}

func (d *dropNotifier) last() func([]*graph.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fns[len(d.fns)-1]
}

// A subscription the store drops is not the end of hearing about changes: every watched
// resource is reported changed (the client re-reads) and the server subscribes again.
func TestServer_DroppedSubscriptionTellsAndResubscribes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	d := &dropNotifier{}
	srv, err := New(e.svc, Options{Exec: e.srv.opts.Exec, Finder: e.srv.opts.Finder, Notifier: d, Version: "test", NotifyInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.subscriptions(); got != 1 {
		t.Fatalf("New subscribed %d times, want 1", got)
	}
	sess := fakeSession("drop")
	srv.subs.add(context.Background(), sess, "devgraph://node/usb:3-3.2", nil)
	srv.subs.add(context.Background(), sess, "devgraph://changelog/recent", nil)

	d.last()(nil) // dropped
	if got := d.subscriptions(); got != 2 {
		t.Fatalf("after the drop the server holds %d subscriptions, want 2 (it subscribes again)", got)
	}
	srv.subs.mu.Lock()
	pending := len(srv.subs.pending)
	srv.subs.mu.Unlock()
	if pending != 2 {
		t.Fatalf("%d resources marked changed after the drop, want both watched ones", pending)
	}
	// The new subscription carries changes as before.
	d.last()([]*graph.Event{{Target: "identity:jdxi", Action: graph.ActTagAdd}})
	srv.Close()
	d.last()(nil) // a drop racing Close does not subscribe again
	if got := d.subscriptions(); got != 2 {
		t.Fatalf("a drop after Close subscribed again (%d subscriptions)", got)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancelled != 1 {
		t.Fatalf("Close cancelled %d subscriptions, want the current one", d.cancelled)
	}
}

// fakeSession is a session that only needs an identity here.
type fakeSession string

func (f fakeSession) Initialize()                                         {}
func (f fakeSession) Initialized() bool                                   { return true }
func (f fakeSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (f fakeSession) SessionID() string                                   { return string(f) }
