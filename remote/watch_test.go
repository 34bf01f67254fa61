package remote_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// watchServer is a real store behind a real SocketServer serving /watch.
func watchServer(t *testing.T) (*store.DB, *remote.SocketServer, *remote.Client) {
	t.Helper()
	st := storetest.MustOpen(t)
	s := &remote.SocketServer{Path: filepath.Join(shortDir(t), "devgraph.sock"), Changes: st, Notifier: st}
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	c := remote.NewClient(s.Path)
	t.Cleanup(func() { c.Close(); s.Close() })
	return st, s, c
}

func createN(t *testing.T, st *store.DB, from, n int) {
	t.Helper()
	ctx := graph.WithActor(context.Background(), "cli:t")
	for i := from; i < from+n; i++ {
		if _, err := st.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("unit %03d", i)}); err != nil {
			t.Error(err)
			return
		}
	}
}

// watch runs Client.Watch until want events arrived after the live mark, and returns
// the first page and the live events.
func watch(t *testing.T, c *remote.Client, f graph.EventFilter, first, want int, live func()) (page, stream []*graph.Event) {
	t.Helper()
	return watchUntil(t, c, f, first, func(s []*graph.Event) bool { return len(s) == want }, live)
}

func watchUntil(t *testing.T, c *remote.Client, f graph.EventFilter, first int, until func([]*graph.Event) bool, live func()) (page, stream []*graph.Event) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	isLive := false
	var wrote sync.WaitGroup
	defer wrote.Wait()
	go func() {
		done <- c.Watch(ctx, f, first, func(e *graph.Event) error {
			switch {
			case e == nil:
				isLive = true
				if live != nil {
					wrote.Add(1)
					go func() { defer wrote.Done(); live() }()
				}
			case !isLive:
				page = append(page, e)
			default:
				stream = append(stream, e)
			}
			if isLive && until(stream) {
				cancel()
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatalf("Watch: still waiting after %d live events", len(stream))
	}
	return page, stream
}

func TestWatch(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		st, _, c := watchServer(t)
		createN(t, st, 0, 5)
		page, stream := watch(t, c, graph.EventFilter{}, 3, 4, func() { createN(t, st, 5, 4) })
		if got := seqs(page); fmt.Sprint(got) != "[3 4 5]" {
			t.Fatalf("first page seqs=%v, want the 3 newest, oldest first", got)
		}
		if got := seqs(stream); fmt.Sprint(got) != "[6 7 8 9]" {
			t.Fatalf("live seqs=%v, want [6 7 8 9]", got)
		}
	})
	t.Run("NoGapNoRepeatUnderWrites", func(t *testing.T) {
		// A writer runs while the watch starts: the first page and the stream meet
		// exactly, whatever the interleaving.
		st, _, c := watchServer(t)
		createN(t, st, 0, 3)
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Add(1)
		go func() { defer wg.Done(); createN(t, st, 3, 60) }()
		page, stream := watchUntil(t, c, graph.EventFilter{}, 2, func(s []*graph.Event) bool {
			return len(s) > 0 && s[len(s)-1].Seq == 63
		}, nil)
		wg.Wait()
		all := append(page, stream...)
		if len(page) != 2 {
			t.Fatalf("first page %v, want 2 events", seqs(page))
		}
		for i := 1; i < len(all); i++ {
			if all[i].Seq != all[i-1].Seq+1 {
				t.Fatalf("a gap or repeat between page and stream: %v", seqs(all))
			}
		}
	})
	t.Run("Filters", func(t *testing.T) {
		st, _, c := watchServer(t)
		ctx := graph.WithActor(context.Background(), "cli:t")
		if _, err := st.CreateIdentity(ctx, graph.IdentityCreate{Name: "JD-Xi", Slug: "jdxi"}); err != nil {
			t.Fatal(err)
		}
		write := func() {
			mcp := graph.WithActor(context.Background(), "mcp:claude")
			createN(t, st, 0, 2)
			if _, err := st.AddNote(mcp, graph.NoteCreate{Target: "jdxi", Body: "warm up first"}); err != nil {
				t.Error(err)
			}
			if _, err := st.CreateIdentity(mcp, graph.IdentityCreate{Name: "other"}); err != nil {
				t.Error(err)
			}
			if _, err := st.AddNote(ctx, graph.NoteCreate{Target: "other", Body: "x"}); err != nil {
				t.Error(err)
			}
			if _, err := st.AddNote(ctx, graph.NoteCreate{Target: "jdxi", Body: "y"}); err != nil {
				t.Error(err)
			}
		}
		_, byActor := watch(t, c, graph.EventFilter{Actor: "mcp:*"}, 5, 2, write)
		if len(byActor) != 2 || byActor[0].Action != graph.ActNoteAdd || byActor[1].Action != graph.ActIdentityCreate {
			t.Fatalf("actor mcp:*: %v", actionsOf(byActor))
		}
		write2 := func() {
			for i, target := range []string{"other", "jdxi", "other", "jdxi"} {
				// distinct bodies: the same note again is a retry and writes nothing
				if _, err := st.AddNote(ctx, graph.NoteCreate{Target: target, Body: fmt.Sprintf("z%d", i)}); err != nil {
					t.Error(err)
				}
			}
		}
		page, byTarget := watch(t, c, graph.EventFilter{Target: "JDXI"}, 5, 2, write2)
		// the first watch's writes are the page now: jdxi's create and its two notes
		if len(page) != 3 || len(byTarget) != 2 || byTarget[0].Action != graph.ActNoteAdd || byTarget[1].Seq != byTarget[0].Seq+2 {
			t.Fatalf("target jdxi: page %v, live %v", actionsOf(page), actionsOf(byTarget))
		}
	})
	t.Run("ErrBadGlob", func(t *testing.T) {
		_, _, c := watchServer(t)
		err := c.Watch(context.Background(), graph.EventFilter{Action: "hint.[*"}, 1, func(*graph.Event) error { return nil })
		if graph.ErrorCode(err) != graph.EINVALID {
			t.Fatalf("bad glob: %v", err)
		}
	})
	t.Run("ErrServerGone", func(t *testing.T) {
		_, s, c := watchServer(t)
		err := c.Watch(context.Background(), graph.EventFilter{}, 1, func(e *graph.Event) error {
			if e == nil {
				go s.Close()
			}
			return nil
		})
		if graph.ErrorCode(err) != graph.EUNAVAILABLE {
			t.Fatalf("server closed: %v", err)
		}
	})
}

func seqs(evs []*graph.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func actionsOf(evs []*graph.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Action + " " + e.Target
	}
	return out
}
