package robot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources"
)

// Options configure a Fleet. The zero value is a fleet on the real clock at 50 Hz with no
// persistence.
type Options struct {
	Clock    Clock       // default RealClock
	TickRate int         // Hz, MinTickRate..MaxTickRate; 0 means DefaultTickRate
	Store    graph.Store // optional: nil keeps nothing between runs and writes no events
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
	store graph.Store
	world *world

	mu      sync.RWMutex
	members map[string]*member // by name
	records map[string]*graph.RobotRecord
	running bool
	closed  bool
	navs    sync.WaitGroup

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

type queued struct {
	m    *member
	st   graph.RobotState
	rest bool
}

var (
	_ graph.Fleet    = (*Fleet)(nil)
	_ sources.Source = (*Fleet)(nil) // Live merges robots beside usb, alsa and pipewire
)

// NewFleet returns a fleet configured by opts. Add robots, obstacles and objects, then Open.
func NewFleet(opts Options) (*Fleet, error) {
	if opts.Clock == nil {
		opts.Clock = RealClock{}
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
		opts:    opts,
		log:     log,
		store:   opts.Store,
		members: map[string]*member{},
		subs:    map[int]func(string, graph.RobotState){},
		wake:    make(chan struct{}, 1),
	}
	f.world = &world{
		clock:   opts.Clock,
		dt:      time.Second / time.Duration(opts.TickRate),
		notify:  f.enqueue,
		observe: opts.TickObserver,
	}
	return f, nil
}

// SimSpec is a simulated robot as the --sim-robot NAME[@x,y] flag gives it.
type SimSpec struct {
	Name string
	X, Y float64
}

// ParseSimSpec parses NAME[@x,y], e.g. "scout" or "carrier@2,-1.5". Names are lowercased
// and must be slugs ([a-z0-9][a-z0-9._-]{0,63}).
func ParseSimSpec(s string) (SimSpec, error) {
	name, at, hasAt := strings.Cut(strings.TrimSpace(s), "@")
	sp := SimSpec{Name: strings.ToLower(strings.TrimSpace(name))}
	if err := validName(sp.Name); err != nil {
		return SimSpec{}, err
	}
	if hasAt {
		xs, ys, ok := strings.Cut(at, ",")
		x, errX := strconv.ParseFloat(strings.TrimSpace(xs), 64)
		y, errY := strconv.ParseFloat(strings.TrimSpace(ys), 64)
		if !ok || errX != nil || errY != nil {
			return SimSpec{}, graph.FieldErrorf(graph.EINVALID, "sim-robot", "--sim-robot %q: want NAME[@x,y] with x and y in metres, e.g. scout@1.5,-2", s)
		}
		if err := graph.ValidateCoordinate("x", x); err != nil {
			return SimSpec{}, err
		}
		if err := graph.ValidateCoordinate("y", y); err != nil {
			return SimSpec{}, err
		}
		sp.X, sp.Y = x, y
	}
	return sp, nil
}

func validName(name string) error {
	if graph.ValidateSlug(name) != nil {
		return graph.FieldErrorf(graph.EINVALID, "name", "robot name %q: want 1-64 chars of a-z 0-9 . _ - starting with a letter or digit, e.g. scout", name)
	}
	return nil
}

// SimSerial is the robot_serial fingerprint of a simulated robot: SIM-<NAME>-0001.
func SimSerial(name string) string { return "SIM-" + strings.ToUpper(name) + "-0001" }

func deviceKey(serial string) string { return "robot:" + serial }

// AddSim adds a simulated robot at (x, y), heading 0, disarmed, battery full. A pose,
// parameters and battery persisted from an earlier run win over x, y and the defaults.
func (f *Fleet) AddSim(name string, x, y float64) error {
	return f.AddSimRobot(SimConfig{Name: name, X: x, Y: y})
}

// AddSimSpec adds a simulated robot from a --sim-robot NAME[@x,y] spec.
func (f *Fleet) AddSimSpec(spec string) error {
	sp, err := ParseSimSpec(spec)
	if err != nil {
		return err
	}
	return f.AddSim(sp.Name, sp.X, sp.Y)
}

// SimConfig is a simulated robot in full.
type SimConfig struct {
	Name       string
	X, Y       float64
	Heading    float64 // radians
	Battery    float64 // %; 0 means full
	Params     *graph.RobotParams
	NoGeofence bool // ignore the fleet's default geofence
}

// AddSimRobot adds a simulated robot described by c.
func (f *Fleet) AddSimRobot(c SimConfig) error {
	c.Name = strings.ToLower(strings.TrimSpace(c.Name))
	if err := validName(c.Name); err != nil {
		return err
	}
	for _, v := range []struct {
		f string
		v float64
	}{{"x", c.X}, {"y", c.Y}, {"heading", c.Heading}} {
		if err := graph.ValidateCoordinate(v.f, v.v); err != nil {
			return err
		}
	}
	if c.Battery < 0 || c.Battery > 100 {
		return graph.FieldErrorf(graph.EINVALID, "battery", "battery=%g is out of range; want 0..100 (%%)", c.Battery)
	}
	if c.Battery == 0 {
		c.Battery = 100
	}
	params := DefaultParams()
	if f.opts.Params != nil {
		params = *f.opts.Params
	}
	if c.Params != nil {
		if err := validParams(*c.Params); err != nil {
			return err
		}
		params = *c.Params
	}
	if f.opts.Geofence != nil && !c.NoGeofence && (c.Params == nil || c.Params.Geofence == nil) {
		params.Geofence = f.opts.Geofence
	}
	pos := graph.Point{X: c.X, Y: c.Y}
	if params.Geofence != nil && !pointInPolygon(pos, params.Geofence) {
		return graph.FieldErrorf(graph.EINVALID, "x", "robot %s at (%g, %g) would start outside its geofence %s", c.Name, c.X, c.Y, describeFence(params.Geofence))
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return graph.Errorf(graph.EUNAVAILABLE, "the robot fleet is closed")
	}
	if _, ok := f.members[c.Name]; ok {
		return graph.Errorf(graph.ECONFLICT, "a robot named %s already exists; choose another name", c.Name)
	}
	serial := SimSerial(c.Name)
	r := &simRobot{
		w: f.world, name: c.Name, ref: "robot:" + c.Name, serial: serial,
		pose:    graph.Pose{X: c.X, Y: c.Y, Heading: wrapAngle(c.Heading)},
		battery: c.Battery, state: graph.RobotIdle, params: params,
	}
	m := &member{name: c.Name, ref: r.ref, serial: serial, b: r, sim: r}
	r.member = m
	if rec := f.records[serial]; rec != nil {
		if err := r.restore(rec); err != nil {
			f.log.Warn("robot: ignoring stored record", "robot", r.ref, "err", err)
		}
	}
	f.world.mu.Lock()
	f.world.robots = append(f.world.robots, r)
	f.world.mu.Unlock()
	f.members[c.Name] = m
	if f.running && f.records[serial] == nil {
		go f.saveQuiet(m, "")
	}
	return nil
}

// AddObstacle puts a circular obstacle into the simulated world.
func (f *Fleet) AddObstacle(o Obstacle) error {
	if err := validName(o.ID); err != nil {
		return withField(err, "id")
	}
	if err := graph.ValidateCoordinate("x", o.X); err != nil {
		return err
	}
	if err := graph.ValidateCoordinate("y", o.Y); err != nil {
		return err
	}
	if !(o.R > 0 && o.R <= 100) {
		return graph.FieldErrorf(graph.EINVALID, "r", "obstacle radius %g: want 0 < r ≤ 100 (m)", o.R)
	}
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.obstacles {
		if x.ID == o.ID {
			return graph.Errorf(graph.ECONFLICT, "obstacle %s already exists", o.ID)
		}
	}
	w.obstacles = append(w.obstacles, o)
	return nil
}

// AddObject puts an object into the simulated world.
func (f *Fleet) AddObject(o Object) error {
	if err := validName(o.ID); err != nil {
		return withField(err, "id")
	}
	if err := graph.ValidateCoordinate("x", o.X); err != nil {
		return err
	}
	if err := graph.ValidateCoordinate("y", o.Y); err != nil {
		return err
	}
	if err := graph.ValidateText("kind", o.Kind, 1, 64); err != nil {
		return err
	}
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.object(o.ID) != nil {
		return graph.Errorf(graph.ECONFLICT, "object %s already exists", o.ID)
	}
	o.HeldBy = ""
	w.objects = append(w.objects, &o)
	return nil
}

// Objects lists the world's objects where they are now.
func (f *Fleet) Objects() []Object {
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Object, len(w.objects))
	for i, o := range w.objects {
		out[i] = *o
	}
	return out
}

// Obstacles lists the world's obstacles.
func (f *Fleet) Obstacles() []Obstacle {
	w := f.world
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Obstacle(nil), w.obstacles...)
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
	f.mu.Unlock()

	go f.dispatch()
	f.world.start()
	for _, m := range fresh {
		f.saveQuiet(m, "")
	}
	return nil
}

// Close ends every navigation (status cancelled), stops every robot, ends the tick loop,
// waits briefly for navigations to record their ends and flushes the notifier. Safe twice.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
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
	waited := make(chan struct{})
	go func() { f.navs.Wait(); close(waited) }()
	select {
	case <-waited:
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
	close(f.quit)
	<-f.dispDone
	return nil
}

// Name is the source name under which robots appear in snapshots.
func (f *Fleet) Name() string { return "robot" }

// Scan reports every robot as a device: key robot:<serial>, ref robot:<name>, one
// robot_serial fingerprint.
func (f *Fleet) Scan(ctx context.Context) ([]*graph.ObservedDevice, error) {
	f.mu.RLock()
	members := f.sortedLocked()
	f.mu.RUnlock()
	out := make([]*graph.ObservedDevice, 0, len(members))
	for _, m := range members {
		attrs := map[string]string{"model": "devgraph differential-drive"}
		if m.sim != nil {
			attrs["model"] = "devgraph-sim differential-drive"
			attrs["sim"] = "true"
		}
		out = append(out, &graph.ObservedDevice{
			Key:          deviceKey(m.serial),
			Ref:          m.ref,
			Source:       "robot",
			Sources:      []string{"robot"},
			Name:         m.name,
			Fingerprints: []graph.Fingerprint{{Kind: graph.FPRobotSerial, Value: m.serial}},
			Attrs:        attrs,
		})
	}
	return out, nil
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

func (f *Fleet) sortedLocked() []*member {
	out := make([]*member, 0, len(f.members))
	for _, m := range f.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// lookup finds a robot by ref (robot:<name>), bare name or device id.
func (f *Fleet) lookup(ref string) (*member, error) {
	s := strings.TrimSpace(ref)
	f.mu.RLock()
	defer f.mu.RUnlock()
	name := strings.ToLower(strings.TrimPrefix(s, "robot:"))
	if m := f.members[name]; m != nil {
		return m, nil
	}
	for _, m := range f.members {
		if s == graph.DeviceID(deviceKey(m.serial)) || s == deviceKey(m.serial) {
			return m, nil
		}
	}
	refs := make([]string, 0, len(f.members))
	for _, m := range f.sortedLocked() {
		refs = append(refs, m.ref)
	}
	if len(refs) == 0 {
		return nil, &graph.Error{Code: graph.ENOTFOUND, Field: "robot", Message: fmt.Sprintf("no robot %q; no robots are running (start the server with --demo or --sim-robot NAME)", ref)}
	}
	return nil, &graph.Error{Code: graph.ENOTFOUND, Field: "robot", Message: fmt.Sprintf("no robot %q%s; robots: %s (robot_status lists them)", ref, suggest("robot:"+name, refs), strings.Join(refs, ", "))}
}

func (f *Fleet) isRunning() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.running {
		return graph.Errorf(graph.EUNAVAILABLE, "the robot fleet is not running (devgraph is starting or shutting down); try again in a moment")
	}
	return nil
}

// summary is the part of a robot's state its changelog events carry.
type summary struct {
	State   string     `json:"state"`
	Armed   bool       `json:"armed"`
	Pose    graph.Pose `json:"pose"`
	Battery float64    `json:"battery"`
	Holding string     `json:"holding,omitempty"`
}

func summarize(st graph.RobotState) summary {
	return summary{State: st.State, Armed: st.Armed, Pose: st.Pose, Battery: st.Battery, Holding: st.Holding}
}

type navStart struct {
	Goal     graph.Point `json:"goal"`
	TimeoutS float64     `json:"timeout_s"`
}

// save persists m's record and, with an action, one changelog event.
func (f *Fleet) save(ctx context.Context, m *member, action string, before, after any) error {
	if f.store == nil {
		return nil
	}
	st := m.b.Status()
	rec := &graph.RobotRecord{Ref: m.ref, Serial: m.serial, Name: m.name, Pose: st.Pose, Params: st.Params, Battery: st.Battery}
	if err := f.store.SaveRobot(ctx, rec, action, before, after); err != nil {
		return fmt.Errorf("save robot %s: %w", m.ref, err)
	}
	return nil
}

func (f *Fleet) saveQuiet(m *member, action string) {
	ctx := graph.WithActor(context.Background(), m.ref)
	if err := f.save(ctx, m, action, nil, nil); err != nil {
		f.log.Warn("robot: save", "robot", m.ref, "err", err)
	}
}

// Robots lists every robot's state, sorted by name.
func (f *Fleet) Robots(ctx context.Context) ([]*graph.RobotState, error) {
	f.mu.RLock()
	members := f.sortedLocked()
	f.mu.RUnlock()
	out := make([]*graph.RobotState, len(members))
	for i, m := range members {
		st := m.b.Status()
		out[i] = &st
	}
	return out, nil
}

// Status is one robot's state.
func (f *Fleet) Status(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st := m.b.Status()
	return &st, nil
}

// Navigate drives the robot to goal and blocks until the navigation ends; see the package
// comment for the outcomes. A refused goal is an error and moves nothing; every other
// outcome is a result. Start and end are changelog events (the end with the caller's
// actor and request id even when the caller has gone).
func (f *Fleet) Navigate(ctx context.Context, ref string, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	if !f.running {
		f.mu.RUnlock()
		return nil, f.isRunning()
	}
	f.navs.Add(1)
	f.mu.RUnlock()
	defer f.navs.Done()

	if err := m.b.CheckGoal(goal); err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	if err := f.save(ctx, m, graph.ActRobotNavStart, before, navStart{Goal: graph.Point{X: goal.X, Y: goal.Y}, TimeoutS: goal.TimeoutS}); err != nil {
		return nil, err
	}
	res, err := m.b.Navigate(ctx, goal, progress)
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := f.save(bg, m, graph.ActRobotNavEnd, navStart{Goal: graph.Point{X: goal.X, Y: goal.Y}, TimeoutS: goal.TimeoutS}, res); err != nil {
		f.log.Warn("robot: record navigation end", "robot", m.ref, "err", err)
	}
	return res, nil
}

// Stop is the emergency stop. It answers at once: it never waits for the store or for
// other commands; a failure to record it is logged, never returned.
func (f *Fleet) Stop(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	st := m.b.Stop()
	if err := f.save(ctx, m, graph.ActRobotStop, before, summarize(st)); err != nil {
		f.log.Warn("robot: record stop", "robot", m.ref, "err", err)
	}
	return &st, nil
}

// Arm enables motion. Arming an armed robot changes nothing and records nothing.
func (f *Fleet) Arm(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	before := summarize(m.b.Status())
	st, err := m.b.Arm()
	if err != nil || before.Armed {
		return &st, err
	}
	if err := f.save(ctx, m, graph.ActRobotArm, before, summarize(st)); err != nil {
		m.b.Disarm()
		return nil, err
	}
	return &st, nil
}

// Disarm cuts motor power; like Stop it never fails on the store. Disarming a disarmed
// robot records nothing.
func (f *Fleet) Disarm(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	before := summarize(m.b.Status())
	st := m.b.Disarm()
	if before.Armed {
		if err := f.save(ctx, m, graph.ActRobotDisarm, before, summarize(st)); err != nil {
			f.log.Warn("robot: record disarm", "robot", m.ref, "err", err)
		}
	}
	return &st, nil
}

// Detect lists the objects the robot sees.
func (f *Fleet) Detect(ctx context.Context, ref string) ([]graph.DetectedObject, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	return m.b.Detect()
}

// Grasp picks up an object within reach.
func (f *Fleet) Grasp(ctx context.Context, ref, objectID string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st, err := m.b.Grasp(strings.TrimSpace(objectID))
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// Release drops the held object at the robot's position.
func (f *Fleet) Release(ctx context.Context, ref string) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	st, err := m.b.Release()
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// SetParameters validates and applies u (all or nothing), persists the parameters and
// records a robot.parameters event. Setting what is already set records nothing.
func (f *Fleet) SetParameters(ctx context.Context, ref string, u graph.RobotParamsUpdate) (*graph.RobotState, error) {
	m, err := f.lookup(ref)
	if err != nil {
		return nil, err
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	before := m.b.Parameters()
	st, err := m.b.SetParameters(u)
	if err != nil {
		return nil, err
	}
	if paramsEqual(before, st.Params) {
		return &st, nil
	}
	if err := f.save(ctx, m, graph.ActRobotParameters, before, st.Params); err != nil {
		if _, rerr := m.b.SetParameters(fullUpdate(before)); rerr != nil {
			f.log.Warn("robot: restore parameters", "robot", m.ref, "err", rerr)
		}
		return nil, err
	}
	return &st, nil
}

// suggest returns "; did you mean X?" for the candidate closest to s, or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := graph.EditDistance(strings.ToLower(s), strings.ToLower(c), 0); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(3, len(best)/2) {
		return ""
	}
	return "; did you mean " + best + "?"
}
