package store_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// lockedBuffer is a log sink the store's goroutines may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestNotifier(t *testing.T) {
	t.Parallel()
	db := storetest.MustOpen(t)
	var mu sync.Mutex
	var got [][]*graph.Event
	arrived := make(chan struct{}, 10)
	cancel := db.Subscribe(func(evs []*graph.Event) {
		mu.Lock()
		got = append(got, evs)
		mu.Unlock()
		// a subscriber may write: this must not deadlock the commit loop
		if evs[0].Action == graph.ActIdentityCreate && evs[0].Target == "identity:unit-0" {
			if _, err := db.AddNote(context.Background(), graph.NoteCreate{Target: "unit-0", Body: "seen"}); err != nil {
				t.Error(err)
			}
		}
		arrived <- struct{}{}
	})
	seed(t, db, 2)
	for range 3 { // two creates and the subscriber's own note
		<-arrived
	}
	_, err := db.CreateIdentity(context.Background(), graph.IdentityCreate{Name: ""})
	if err == nil {
		t.Fatal("want error")
	}
	cancel()
	seed2, _ := db.CreateIdentity(context.Background(), graph.IdentityCreate{Name: "after cancel"})
	_ = seed2
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || len(got[0]) != 3 || got[0][0].Action != graph.ActIdentityCreate {
		t.Fatalf("notified %d batches", len(got))
	}
}

// A subscriber that never returns holds up no writer: 2,000 writes commit, it is dropped
// with a logged reason and told by a last fn(nil) once it returns, and a subscriber that
// keeps up hears every write.
func TestNotifier_SlowSubscriberIsDropped(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	db := storetest.MustOpen(t, store.Options{NoSync: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := ctxActor("cli:test")

	release := make(chan struct{})
	told := make(chan struct{})
	var stuckCalls atomic.Int64
	db.Subscribe(func(evs []*graph.Event) {
		if evs == nil {
			close(told)
			return
		}
		stuckCalls.Add(1)
		<-release // blocks until the test lets go
	})
	released := false
	letGo := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer letGo()
	var heard atomic.Int64
	db.Subscribe(func(evs []*graph.Event) { heard.Add(1) })

	const writes = 2000
	done := make(chan error, 1)
	go func() {
		for i := range writes {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("unit %d", i)}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute): // a deadlock guard, not a speed check
		t.Fatal("writes stalled behind a subscriber that does not return")
	}
	if !strings.Contains(logs.String(), "dropped a change subscriber") || !strings.Contains(logs.String(), "behind") {
		t.Errorf("no logged reason for the drop; log:\n%s", logs.String())
	}

	letGo()
	select {
	case <-told:
	case <-time.After(time.Minute):
		t.Fatal("the dropped subscriber was never told (fn(nil))")
	}
	if n := stuckCalls.Load(); n > 1 {
		t.Errorf("the dropped subscriber was called with %d batches; want only the one it was stuck in (the backlog is discarded)", n)
	}
	for deadline := time.Now().Add(time.Minute); heard.Load() < writes && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := heard.Load(); n != writes {
		t.Errorf("the subscriber that kept up heard %d writes, want %d", n, writes)
	}
}

// Cancel stops calls, even the drop notice; Close waits for what is queued.
func TestNotifier_CancelAndClose(t *testing.T) {
	t.Parallel()
	db, err := store.Open(t.TempDir()+"/devgraph.db", store.Options{NoBackup: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	var cancel func()
	cancel = db.Subscribe(func(evs []*graph.Event) {
		calls.Add(1)
		cancel() // cancelling from inside fn is allowed
	})
	var heard atomic.Int64
	db.Subscribe(func(evs []*graph.Event) { heard.Add(int64(len(evs))) })
	seed(t, db, 3)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("a subscriber that cancelled in its first call was called %d times", n)
	}
	if n := heard.Load(); n != 3*3 { // identity.create, hint.add, tag.add each
		t.Errorf("Close returned before subscribers heard every write: %d events", n)
	}
	cancel()
	db.Subscribe(func([]*graph.Event) {})() // after Close: a no-op
}
