package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// robotSafetyWait bounds how long a stop or disarm waits for its event to be recorded
// before it is answered; the recording goes on in the background, in order.
const robotSafetyWait = 2 * time.Second

// robotWriter is the local fleet's store on a cluster: one goroutine makes every save in
// order. The saves a fleet never refuses over (stop, disarm, the end of a navigation, a
// robot coming to rest) are kept while the cluster does not answer and made once it does;
// others are answered with their own result, and refused at once while the writer is
// degraded (the cluster unreachable, or this host's lease lost).
type robotWriter struct {
	st      graph.RobotStore
	log     *slog.Logger
	offline func() bool // this host's lease is lost: only kept saves are taken until it is back

	mu       sync.Mutex
	queue    []*robotSave
	degraded bool
	closing  bool
	wake     chan struct{}
	done     chan struct{} // closed when run returns
}

type robotSave struct {
	ctx           context.Context
	rec           *graph.RobotRecord
	action        string
	before, after any
	kept          bool       // kept across an outage
	result        chan error // buffered 1
	abandoned     bool       // under robotWriter.mu: the caller stopped waiting, or was answered
	running       bool       // under robotWriter.mu: being written now
}

// newRobotWriter returns a writer saving through st; offline reports whether this host's
// lease is lost.
func newRobotWriter(st graph.RobotStore, log *slog.Logger, offline func() bool) *robotWriter {
	return &robotWriter{st: st, log: log, offline: offline, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func kept(action string) bool {
	switch action {
	case "", graph.ActRobotStop, graph.ActRobotDisarm, graph.ActRobotNavEnd:
		return true
	}
	return false
}

func (w *robotWriter) FindRobotRecords(ctx context.Context) ([]*graph.RobotRecord, error) {
	return w.st.FindRobotRecords(ctx)
}

// SaveRobot queues the save and waits for it: a kept one at most robotSafetyWait (none
// while degraded), another until it is made or ctx ends.
func (w *robotWriter) SaveRobot(ctx context.Context, rec *graph.RobotRecord, action string, before, after any) error {
	select {
	case <-w.done: // the router has closed: straight to the store
		return w.st.SaveRobot(ctx, rec, action, before, after)
	default:
	}
	cp := *rec
	s := &robotSave{ctx: context.WithoutCancel(ctx), rec: &cp, action: action, before: before, after: after, kept: kept(action), result: make(chan error, 1)}
	w.mu.Lock()
	if w.closing && !s.kept {
		w.mu.Unlock()
		return graph.Errorf(graph.EUNAVAILABLE, "devgraph is shutting down; try again when it is back")
	}
	if !s.kept && (w.degraded || w.offline()) {
		w.mu.Unlock()
		return errCutOff()
	}
	w.queue = append(w.queue, s)
	degraded := w.degraded
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	if s.kept {
		if degraded {
			return nil
		}
		t := time.NewTimer(robotSafetyWait)
		defer t.Stop()
		select {
		case err := <-s.result:
			return err
		case <-t.C:
			return nil // recorded when the cluster answers
		}
	}
	select {
	case err := <-s.result:
		return err
	case <-ctx.Done():
		w.mu.Lock()
		s.abandoned = true
		w.mu.Unlock()
		return ctx.Err()
	}
}

// degrade makes kept saves return at once and refuses the others until the queue is
// written, those already waiting in it included.
func (w *robotWriter) degrade() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.degraded = true
	for _, s := range w.queue {
		if !s.kept && !s.abandoned && !s.running {
			s.abandoned = true
			s.result <- errCutOff()
		}
	}
}

func errCutOff() error {
	return graph.Errorf(graph.EUNAVAILABLE, "this host is cut off from the cluster (robot changes are refused, and its robots were stopped); try again when it is back")
}

// settle ends a degradation that queued nothing (a lost lease with every robot at rest).
func (w *robotWriter) settle() {
	w.mu.Lock()
	if len(w.queue) == 0 {
		w.degraded = false
	}
	w.mu.Unlock()
}

func (w *robotWriter) close() {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run makes the queued saves in order until it is closed and the queue is empty; a kept
// save the cluster did not take (EUNAVAILABLE) is tried again, with backoff, until it
// does. The writer is degraded while such a save waits.
func (w *robotWriter) run(ctx context.Context) {
	defer close(w.done)
	attempt := 0
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			closing := w.closing
			w.mu.Unlock()
			if closing {
				return
			}
			select {
			case <-w.wake:
			case <-ctx.Done():
				w.close()
			}
			continue
		}
		s := w.queue[0]
		skip := s.abandoned
		s.running = true
		if w.closing && w.degraded {
			w.logDropped()
			w.mu.Unlock()
			return
		}
		closing := w.closing
		w.mu.Unlock()
		var err error
		if !skip {
			err = w.st.SaveRobot(s.ctx, s.rec, s.action, s.before, s.after)
			if err != nil && s.kept && graph.ErrorCode(err) == graph.EUNAVAILABLE && !closing {
				if attempt == 0 {
					w.log.Warn("cluster: the cluster did not take a robot event; keeping it (and those after it) until it does", "robot", s.rec.Ref, "action", s.action, "err", graph.ErrorMessage(err))
				}
				w.degrade()
				attempt++
				select {
				case <-time.After(backoff(attempt, 100*time.Millisecond, 2*time.Second)):
				case <-w.wake:
				}
				continue
			}
		}
		w.mu.Lock()
		s.running = false
		w.queue = w.queue[1:]
		if len(w.queue) == 0 && w.degraded {
			w.degraded = false
			if attempt > 0 {
				w.log.Info("cluster: the kept robot events are recorded; robot changes are accepted again")
			}
		}
		w.mu.Unlock()
		attempt = 0
		if skip {
			continue // its caller has its answer, or stopped waiting
		}
		if err != nil && s.kept {
			w.log.Warn("cluster: robot event not recorded", "robot", s.rec.Ref, "action", s.action, "err", err)
		}
		s.result <- err
	}
}

// logDropped says which kept events are not recorded because devgraph stopped while the
// cluster was unreachable. w.mu is held.
func (w *robotWriter) logDropped() {
	var lost []string
	for _, s := range w.queue {
		if s.action != "" && !s.abandoned {
			lost = append(lost, s.action+" "+s.rec.Ref)
		}
	}
	if len(lost) > 0 {
		w.log.Error("cluster: devgraph stopped while the cluster was unreachable; these robot events are not recorded", "events", strings.Join(lost, ", "))
	}
	w.queue = nil
}
