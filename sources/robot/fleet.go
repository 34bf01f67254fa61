package robot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources"
)

// Options configure a Fleet. The zero value is a fleet on the real clock at 50 Hz with no
// persistence.
type Options struct {
	// Now is the fleet's one clock (default time.Now), and Every wakes the tick loop on it
	// (default: a time.Ticker, each tick stamped from Now). A FakeClock gives both.
	Now      func() time.Time
	Every    EveryFunc
	TickRate int              // Hz, MinTickRate..MaxTickRate; 0 means DefaultTickRate
	Store    graph.RobotStore // optional: nil keeps nothing between runs and writes no events
	Logger   *slog.Logger
	// Params are the parameters of robots added from now on (DefaultParams when nil);
	// Geofence, when set, overrides their geofence.
	Params   *graph.RobotParams
	Geofence []graph.Point
	// TickObserver, when set, is told after every tick how late it started against its
	// schedule and how long it took (benchmarks and metrics).
	TickObserver func(late, took time.Duration)
}

// Fleet is every robot devgraph drives, implementing graph.Fleet. It owns one simulated
// world and one tick loop for all its simulated robots, persists them through the store,
// and tells subscribers about state changes.
type Fleet struct {
	opts  Options
	log   *slog.Logger
	store graph.RobotStore
	world *world

	mu       sync.RWMutex
	members  map[string]*member // by name
	records  map[string]*graph.RobotRecord
	running  bool
	closed   bool
	navs     int            // Navigate calls in flight
	navsIdle chan struct{}  // closed once the fleet is closed and navs is 0
	saves    sync.WaitGroup // first saves of robots added while running

	subMu   sync.RWMutex
	subs    map[int]func(ref string, st graph.RobotState)
	nextSub int

	qMu      sync.Mutex
	queue    []queued
	wake     chan struct{}
	quit     chan struct{}
	dispDone chan struct{}
}

type member struct {
	name, ref, serial string
	b                 Backend
	sim               *simRobot // nil for other backends
	opMu              sync.Mutex
}

var (
	_ graph.Fleet    = (*Fleet)(nil)
	_ sources.Source = (*Fleet)(nil) // Live merges robots beside usb, alsa and pipewire
)

// NewFleet returns a fleet configured by opts. Add robots, obstacles and objects, then Open.
func NewFleet(opts Options) (*Fleet, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Every == nil {
		opts.Every = wallEvery(opts.Now)
	}
	if opts.TickRate == 0 {
		opts.TickRate = DefaultTickRate
	}
	if opts.TickRate < MinTickRate || opts.TickRate > MaxTickRate {
		return nil, graph.FieldErrorf(graph.EINVALID, "tick_rate", "tick rate %d Hz is out of range; want %d..%d", opts.TickRate, MinTickRate, MaxTickRate)
	}
	if opts.Params != nil {
		if err := validParams(*opts.Params); err != nil {
			return nil, err
		}
	}
	if opts.Geofence != nil {
		fence, err := checkGeofence(opts.Geofence)
		if err != nil {
			return nil, err
		}
		opts.Geofence = fence
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f := &Fleet{
		opts:     opts,
		log:      log,
		store:    opts.Store,
		members:  map[string]*member{},
		navsIdle: make(chan struct{}),
		subs:     map[int]func(string, graph.RobotState){},
		wake:     make(chan struct{}, 1),
	}
	f.world = &world{
		clock:   opts.Now,
		every:   opts.Every,
		dt:      time.Second / time.Duration(opts.TickRate),
		notify:  f.enqueue,
		observe: opts.TickObserver,
	}
	return f, nil
}

// Open loads persisted robots from the store (pose and parameters of robots configured
// under the same name), records new ones, and starts the tick loop and the notifier.
func (f *Fleet) Open() error {
	f.mu.Lock()
	if f.running || f.closed {
		f.mu.Unlock()
		return graph.Errorf(graph.EINVALID, "the robot fleet is already open or closed")
	}
	var fresh []*member
	if f.store != nil {
		recs, err := f.store.FindRobotRecords(context.Background())
		if err != nil {
			f.mu.Unlock()
			return fmt.Errorf("load robots: %w", err)
		}
		f.records = map[string]*graph.RobotRecord{}
		for _, rec := range recs {
			f.records[rec.Serial] = rec
		}
		for _, m := range f.members {
			rec := f.records[m.serial]
			if rec == nil {
				fresh = append(fresh, m)
				continue
			}
			if r, ok := m.b.(interface {
				restore(*graph.RobotRecord) error
			}); ok {
				if err := r.restore(rec); err != nil {
					f.log.Warn("robot: ignoring stored record", "robot", m.ref, "err", err)
				}
			}
		}
	}
	f.running = true
	f.quit = make(chan struct{})
	f.dispDone = make(chan struct{})
	go f.dispatch()
	f.world.start()
	f.mu.Unlock()

	for _, m := range fresh {
		f.saveQuiet(m, "")
	}
	return nil
}

// Close ends every navigation (status cancelled), stops every robot, ends the tick loop,
// waits briefly for navigations to record their ends, waits for pending saves and flushes
// the notifier: no goroutine the fleet started outlives it. Safe twice.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	if f.navs == 0 {
		close(f.navsIdle)
	}
	wasRunning := f.running
	f.running = false
	members := f.sortedLocked()
	f.mu.Unlock()
	if !wasRunning {
		return nil
	}
	f.world.stop()
	var stopped []*member
	w := f.world
	w.mu.Lock()
	w.closed = true
	for _, m := range members {
		r := m.sim
		if r == nil {
			continue
		}
		moving := r.armed || r.nav != nil || r.v != 0 || r.om != 0
		r.halt()
		r.finish(graph.NavCancelled, "devgraph is shutting down; the robot was stopped")
		if moving {
			r.armed = false
			r.state = graph.RobotStopped
			stopped = append(stopped, m)
		}
	}
	w.mu.Unlock()
	for _, m := range members {
		if m.sim == nil {
			m.b.Stop()
		}
	}
	select {
	case <-f.navsIdle:
	case <-time.After(2 * time.Second):
		f.log.Warn("robot: navigations still recording their end at shutdown")
	}
	for _, m := range stopped {
		ctx := graph.WithActor(context.Background(), m.ref)
		st := m.b.Status()
		if err := f.save(ctx, m, graph.ActRobotStop, nil, summarize(st)); err != nil {
			f.log.Warn("robot: record shutdown stop", "robot", m.ref, "err", err)
		}
	}
	f.saves.Wait()
	close(f.quit)
	<-f.dispDone
	return nil
}

// navDone counts a Navigate call out; the last one out of a closed fleet tells Close.
func (f *Fleet) navDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.navs--
	if f.navs == 0 && f.closed {
		close(f.navsIdle)
	}
}

func (f *Fleet) sortedLocked() []*member {
	out := make([]*member, 0, len(f.members))
	for _, m := range f.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (f *Fleet) isRunning() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.running {
		return graph.Errorf(graph.EUNAVAILABLE, "the robot fleet is not running (devgraph is starting or shutting down); try again in a moment")
	}
	return nil
}
