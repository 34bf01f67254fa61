package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Robots on a fleet. Every host drives its own robots (its local graph.Fleet); Robots is
// the graph.Fleet the edges of every host use instead, and routes each command to the host
// that drives the robot, through etcd only (no extra ports or certificates):
//
//	P/robot/<host>/list      the robots <host> drives (JSON), on its host lease
//	P/robot/<host>/cmd/<id>  a command for one of them (JSON: verb, args, the caller's actor,
//	                         request id and message, deadline), on the caller's host lease;
//	                         put again with cancel set to cancel it
//	P/robot/<host>/out/<id>  its progress (navigate) and then its outcome, on <host>'s lease,
//	                         written only while cmd/<id> exists
//	P/robot/<host>/state/<ref>  a robot's state, streamed by <host> as it changes, on its
//	                         lease (robotstream.go)
//
// The caller deletes cmd/<id> and out/<id> when it has the outcome; a caller that dies
// loses cmd/<id> with its lease, the driver cancels the command and deletes out/<id>; a
// driver that dies loses out/<id> with its lease and its host claim, which the caller
// watches. So an idle fleet writes nothing to etcd.
//
// Which host drives a robot is decided in one place (driverOf): a robot of this host's
// fleet is driven here; another is looked up in the other hosts' published lists (by
// ref, name, device id or device key, as a fleet looks robots up); a ref qualified with
// its host ("studio-a/robot:scout") goes to that host.
type Robots struct {
	// ReadOnly (set before Open) makes this host refuse, as a --read-only server does,
	// every command from another host that moves or changes one of its robots; robot_stop
	// is always run.
	ReadOnly bool

	fe     *FrontEnd
	local  graph.Fleet
	writer *robotWriter
	log    *slog.Logger
	stream robotStream

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[string]*driven // commands this host is running for callers, by id
	opened   bool
	subs     map[int]func(ref string)
	nextSub  int
}

// driven is a command this host runs for a caller on another host.
type driven struct {
	cancel context.CancelFunc
	gone   bool // the caller deleted its command (or died): write no outcome
}

var _ graph.Fleet = (*Robots)(nil)

// How long a caller waits for a command other than navigate, and for a navigation beyond
// its own timeout, before saying the driving host did not answer.
const (
	robotCallWait   = 10 * time.Second
	robotNavGrace   = 30 * time.Second
	robotNavDefault = 30 * time.Second // a goal without timeout_s: the fleet's default
	robotCancelWait = 10 * time.Second // after a cancel, for the driver's "cancelled" result
)

// NewRobots returns the router for this front end. Wrap the local fleet's store with
// Store before building the fleet, then Open with the fleet.
func NewRobots(fe *FrontEnd) *Robots {
	r := &Robots{fe: fe, log: fe.log, inflight: map[string]*driven{}, subs: map[int]func(string){}}
	r.stream.init()
	r.ctx, r.cancel = context.WithCancel(fe.ctx)
	return r
}

// Store wraps the store the local fleet saves robots through: saves are made in order by
// one writer, and the events a fleet never refuses over (stop, disarm, the end of a
// navigation, a robot at rest) are kept and written once the cluster answers again when it
// does not, so a stop made while the cluster is unreachable is recorded after it is back.
// Other robot writes (arm, parameters, a navigation's start) fail while it is unreachable.
func (r *Robots) Store(st graph.RobotStore) graph.RobotStore {
	if r.writer == nil {
		r.writer = newRobotWriter(st, r.log, r.fe.leaseLost)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.writer.run(r.ctx)
		}()
	}
	return r.writer
}

// Open starts routing: it publishes the robots local drives, serves other hosts'
// commands for them, and stops them all when this host's lease is lost.
func (r *Robots) Open(local graph.Fleet) error {
	r.mu.Lock()
	if r.opened {
		r.mu.Unlock()
		return graph.Errorf(graph.EINVALID, "the robot router is already open")
	}
	r.opened, r.local = true, local
	r.mu.Unlock()
	if err := r.publish(); err != nil {
		return err
	}
	if err := r.openStream(); err != nil {
		return err
	}
	r.wg.Add(2)
	go r.serve()
	go r.guard()
	return nil
}

// Close stops serving other hosts' commands (each running one ends cancelled, its caller
// told) and ends the writer, which records what it still holds if the cluster answers.
// Safe twice.
func (r *Robots) Close() error {
	r.mu.Lock()
	for _, d := range r.inflight {
		d.cancel()
	}
	r.mu.Unlock()
	if r.writer != nil {
		r.writer.close()
	}
	r.cancel()
	r.wg.Wait()
	return nil
}

// robotEntry is one robot in a host's published list.
type robotEntry struct {
	Ref    string `json:"ref"`
	Name   string `json:"name"`
	Serial string `json:"serial,omitempty"`
	Device string `json:"device_id,omitempty"`
}

func (r *Robots) listKey(host string) string { return r.fe.target.key("robot", host, "list") }
func (r *Robots) cmdKey(host, id string) string {
	return r.fe.target.key("robot", host, "cmd", id)
}
func (r *Robots) outKey(host, id string) string {
	return r.fe.target.key("robot", host, "out", id)
}
func (r *Robots) hostKey(host string) string { return r.fe.target.key("hosts", host) }

// publish writes the list of the robots this host drives on its host lease (nothing when
// it drives none), and has their states streamed.
func (r *Robots) publish() error {
	states, err := r.local.Robots(r.ctx)
	if err != nil {
		return err
	}
	if len(states) == 0 {
		return nil
	}
	list := make([]robotEntry, 0, len(states))
	for _, st := range states {
		list = append(list, robotEntry{Ref: st.Ref, Name: st.Name, Serial: st.Serial, Device: st.DeviceID})
	}
	b, _ := json.Marshal(list)
	ctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
	defer cancel()
	if _, err := r.fe.cli.Put(ctx, r.listKey(r.fe.cfg.Host), string(b), clientv3.WithLease(r.fe.hostLease().id)); err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "publish this host's robots on etcd at %s: %v", r.fe.target.endpointList(), short(err))
	}
	// Each robot's state is streamed once with the list, so the other hosts list the
	// fleet's robots without asking this one.
	for _, st := range states {
		r.stream.tell(st.Ref, st.State)
	}
	return nil
}

// is reports whether name names this robot as a fleet looks robots up: by its ref, its
// name (any case, with or without "robot:"), its device id or its serial's ref.
func (e robotEntry) is(name string) bool {
	return e.Ref == name || strings.EqualFold(e.Name, strings.TrimPrefix(name, "robot:")) ||
		(e.Device != "" && e.Device == name) || (e.Serial != "" && name == "robot:"+e.Serial)
}

// lists returns every other live host's published robots as the watch of P/robot/ last
// told them (robotstream.go): no round trip.
func (r *Robots) lists() map[string][]robotEntry {
	s := &r.stream
	s.smu.Lock()
	defer s.smu.Unlock()
	out := make(map[string][]robotEntry, len(s.lists))
	for host, list := range s.lists {
		out[host] = list // never changed in place: applyState replaces a host's list whole
	}
	return out
}

// readLists reads every other live host's published robots from etcd: what driverOf
// falls back on for a robot the watch has not told of (a host that published its list
// an instant ago).
func (r *Robots) readLists(ctx context.Context) (map[string][]robotEntry, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := r.fe.cli.Get(gctx, r.fe.target.key("robot")+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer (other hosts' robots): %v", r.fe.target.endpointList(), short(err))
	}
	out := map[string][]robotEntry{}
	for _, kv := range resp.Kvs {
		if host, list, ok := r.listOf(kv.Key, kv.Value); ok {
			out[host] = list
		}
	}
	return out, nil
}

// listOf decodes key and value when they are another host's published robot list.
func (r *Robots) listOf(key, value []byte) (host string, list []robotEntry, ok bool) {
	host, rest, ok := strings.Cut(strings.TrimPrefix(string(key), r.fe.target.key("robot")+"/"), "/")
	if !ok || rest != "list" || host == r.fe.cfg.Host {
		return "", nil, false
	}
	if err := json.Unmarshal(value, &list); err != nil {
		r.log.Warn("cluster: ignoring a host's unreadable robot list", "host", host, "err", err)
		return "", nil, false
	}
	return host, list, true
}

// driverOf says which host drives robot: "" for this host; else the host, the name to
// give that host's fleet, and the robot's ref there when its published list names it
// ("" when not). This is the one place that decides it; once robot records carry their
// host, it can read the record instead of the published lists.
func (r *Robots) driverOf(ctx context.Context, robot string) (host, name, ref string, err error) {
	name = strings.TrimSpace(robot)
	// Qualified with its host: a ref ("studio-a/robot:scout") or a device id
	// ("device:studio-a/robot:SIM-SCOUT-0001"); the host's fleet takes it without the host.
	kind, local := "", name
	if rest, ok := strings.CutPrefix(name, "device:"); ok {
		kind, local = "device:", rest
	}
	if host, rest, ok := strings.Cut(local, "/"); ok && validHost(host) == nil {
		if host == r.fe.cfg.Host {
			return "", kind + rest, "", nil
		}
		return host, kind + rest, findRef(r.lists()[host], kind+rest), nil
	}
	_, lerr := r.local.Status(ctx, name)
	if lerr == nil {
		return "", name, "", nil
	}
	if graph.ErrorCode(lerr) != graph.ENOTFOUND {
		return "", "", "", lerr
	}
	lists := r.lists()
	for attempt := 0; ; attempt++ {
		for _, host := range sortedHosts(lists) {
			if ref := findRef(lists[host], name); ref != "" {
				return host, name, ref, nil
			}
		}
		if attempt > 0 {
			break
		}
		// Not in the lists the watch told of: read them once, in case the host that
		// drives it published its list an instant ago.
		if lists, err = r.readLists(ctx); err != nil {
			return "", "", "", err
		}
	}
	// Nowhere: the fleet's own answer, naming every robot of the fleet.
	var refs []string
	if states, err := r.local.Robots(ctx); err == nil {
		for _, st := range states {
			refs = append(refs, st.Ref)
		}
	}
	for _, host := range sortedHosts(lists) {
		for _, e := range lists[host] {
			refs = append(refs, e.Ref)
		}
	}
	if len(refs) == 0 {
		return "", "", "", &graph.Error{Code: graph.ENOTFOUND, Field: "robot",
			Message: fmt.Sprintf("no robot %q; no live host of the fleet drives a robot (start devgraph serve with --demo or --sim-robot NAME on the host that drives it)", robot)}
	}
	sort.Strings(refs)
	bare := strings.ToLower(strings.TrimPrefix(name, "robot:"))
	return "", "", "", &graph.Error{Code: graph.ENOTFOUND, Field: "robot",
		Message: fmt.Sprintf("no robot %q%s; robots: %s", robot, graph.DidYouMean("robot:"+bare, refs), strings.Join(refs, ", ")),
		Steps:   []graph.Step{graph.ListStep(graph.ListRobots, "")}}
}

// findRef returns the ref of the robot of list that name names, "" when none.
func findRef(list []robotEntry, name string) string {
	for _, e := range list {
		if e.is(name) {
			return e.Ref
		}
	}
	return ""
}

func sortedHosts(m map[string][]robotEntry) []string {
	out := make([]string, 0, len(m))
	for h := range m {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// Robots lists every robot of the fleet: this host's, and each other host's from the
// states that host streamed (robotstream.go) for every robot of its published list; a
// host with a robot that has none (not streamed on its lease yet, or older than a command
// this host had answered) is asked, and one that does not answer is left out, and logged.
func (r *Robots) Robots(ctx context.Context) ([]*graph.RobotState, error) {
	out, err := r.local.Robots(ctx)
	if err != nil {
		return nil, err
	}
	lists := r.lists()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for host, list := range lists {
		if len(list) == 0 {
			continue
		}
		if sts := r.stream.streamed(host, list); sts != nil {
			mu.Lock()
			out = append(out, sts...)
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := r.call(ctx, host, command{Verb: verbRobots}, nil)
			if err != nil {
				r.log.Warn("cluster: a host did not list its robots", "host", host, "err", err)
				return
			}
			mu.Lock()
			out = append(out, o.States...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, nil
}

// Status answers a robot of another host that is on the move from the state its host
// streams (see robotstream.go), and asks the host otherwise.
func (r *Robots) Status(ctx context.Context, ref string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbStatus}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Status(ctx, name) })
}

// Navigate drives a robot of any host and blocks until the navigation ends, with
// progress from the driving host; cancelling ctx cancels it there, and the result is the
// driving host's "cancelled" result.
func (r *Robots) Navigate(ctx context.Context, ref string, goal graph.Goal, progress func(graph.NavProgress)) (*graph.NavResult, error) {
	host, name, _, err := r.driverOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return r.local.Navigate(ctx, name, goal, progress)
	}
	g := goal
	o, err := r.call(ctx, host, command{Verb: verbNavigate, Robot: name, Goal: &g}, progress)
	if err != nil {
		return nil, err
	}
	return o.Nav, nil
}

func (r *Robots) Stop(ctx context.Context, ref string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbStop}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Stop(ctx, name) })
}

func (r *Robots) Arm(ctx context.Context, ref string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbArm}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Arm(ctx, name) })
}

func (r *Robots) Disarm(ctx context.Context, ref string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbDisarm}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Disarm(ctx, name) })
}

func (r *Robots) Detect(ctx context.Context, ref string) ([]graph.DetectedObject, error) {
	host, name, _, err := r.driverOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return r.local.Detect(ctx, name)
	}
	o, err := r.call(ctx, host, command{Verb: verbDetect, Robot: name}, nil)
	if err != nil {
		return nil, err
	}
	return o.Objects, nil
}

func (r *Robots) Grasp(ctx context.Context, ref, objectID string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbGrasp, Object: objectID}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Grasp(ctx, name, objectID) })
}

func (r *Robots) Release(ctx context.Context, ref string) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbRelease}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.Release(ctx, name) })
}

func (r *Robots) SetParameters(ctx context.Context, ref string, u graph.RobotParamsUpdate) (*graph.RobotState, error) {
	return r.stateCall(ctx, ref, command{Verb: verbParameters, Params: &u}, func(f graph.Fleet, name string) (*graph.RobotState, error) { return f.SetParameters(ctx, name, u) })
}

// stateCall runs a command that answers a robot's state: on the local fleet, or on the
// driving host; a status of a robot on the move there is answered from its streamed state.
func (r *Robots) stateCall(ctx context.Context, ref string, c command, local func(graph.Fleet, string) (*graph.RobotState, error)) (*graph.RobotState, error) {
	host, name, robotRef, err := r.driverOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return local(r.local, name)
	}
	if c.Verb == verbStatus {
		if st := r.stream.moving(host, robotRef); st != nil {
			return st, nil
		}
	}
	c.Robot = name
	o, err := r.call(ctx, host, c, nil)
	if err != nil {
		return nil, err
	}
	return o.State, nil
}

// Subscribe calls fn with a robot's ref when its state changes: on every change of this
// host's robots (when the local fleet tells of them), and for another host's robot on each
// state that host streams (every change, motion at most every robotStreamEvery), each
// robot event the changelog brings, each answer to a command from this host and each
// progress of a navigation this host asked for. Nothing is written to etcd for it. cancel
// stops the calls.
func (r *Robots) Subscribe(fn func(ref string)) (cancel func()) {
	r.mu.Lock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	r.mu.Unlock()
	var stops []func()
	if f, ok := r.local.(interface {
		Subscribe(func(ref string, st graph.RobotState)) func()
	}); ok {
		stops = append(stops, f.Subscribe(func(ref string, _ graph.RobotState) { fn(ref) }))
	}
	stops = append(stops, r.fe.DB().Subscribe(func(evs []*graph.Event) {
		targets := map[string]bool{} // device keys, qualified with their host or not
		for _, ev := range evs {
			if strings.HasPrefix(ev.Action, "robot.") {
				targets[strings.TrimPrefix(ev.Target, "device:")] = true
			}
		}
		if len(targets) == 0 {
			return
		}
		// A robot event targets the robot's device; the other hosts' lists name it (the
		// local fleet tells of its own robots itself).
		lists := r.lists()
		for _, host := range sortedHosts(lists) {
			for _, e := range lists[host] {
				key := strings.TrimPrefix(e.Device, "device:")
				if targets[key] || targets[host+"/"+key] {
					fn(e.Ref)
				}
			}
		}
	}))
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
		for _, stop := range stops {
			stop()
		}
	}
}

// notify tells the subscribers that a robot of another host changed.
func (r *Robots) notify(ref string) {
	r.mu.Lock()
	fns := make([]func(string), 0, len(r.subs))
	for _, fn := range r.subs {
		fns = append(fns, fn)
	}
	r.mu.Unlock()
	for _, fn := range fns {
		fn(ref)
	}
}

// The verbs of a command.
const (
	verbRobots     = "robots"
	verbStatus     = "status"
	verbNavigate   = "navigate"
	verbStop       = "stop"
	verbArm        = "arm"
	verbDisarm     = "disarm"
	verbDetect     = "detect"
	verbGrasp      = "grasp"
	verbRelease    = "release"
	verbParameters = "parameters"
)

// command is the value of P/robot/<host>/cmd/<id>.
type command struct {
	Verb     string                   `json:"verb"`
	Robot    string                   `json:"robot,omitempty"`
	Goal     *graph.Goal              `json:"goal,omitempty"`
	Object   string                   `json:"object,omitempty"`
	Params   *graph.RobotParamsUpdate `json:"params,omitempty"`
	Actor    string                   `json:"actor"`
	Request  string                   `json:"request_id,omitempty"`
	Message  string                   `json:"message,omitempty"`
	From     string                   `json:"from"`     // the caller's host
	Deadline time.Time                `json:"deadline"` // when the caller stops waiting, on its clock
	WaitS    float64                  `json:"wait_s"`   // the same as a duration: the driver runs the command at most this long on its own clock
	Cancel   bool                     `json:"cancel,omitempty"`
}

// outcome is the value of P/robot/<host>/out/<id>: a navigation's progress, then (Done)
// what the command returned.
type outcome struct {
	Ref      string                 `json:"ref,omitempty"` // the robot's ref, with progress
	Progress *graph.NavProgress     `json:"progress,omitempty"`
	Done     bool                   `json:"done,omitempty"`
	State    *graph.RobotState      `json:"state,omitempty"`
	States   []*graph.RobotState    `json:"states"`
	Nav      *graph.NavResult       `json:"nav,omitempty"`
	Objects  []graph.DetectedObject `json:"objects"`
	Err      *wireError             `json:"error,omitempty"`

	rev int64 // the out key's revision, as the caller read it
}

// hostedState is a robot state as it leaves its driving host: it names that host, so the
// caller's edges do not take it for one of their own (a state's host field, where the
// graph has one, is read from "host"; the outer field wins over an inner one).
type hostedState struct {
	*graph.RobotState
	Host string `json:"host"`
}

// sentOutcome is an outcome as the driving host writes it, its states hosted.
type sentOutcome struct {
	*outcome
	State  *hostedState  `json:"state,omitempty"`
	States []hostedState `json:"states"`
}

func hostedOutcome(o *outcome, host string) *sentOutcome {
	s := &sentOutcome{outcome: o}
	if o.State != nil {
		s.State = &hostedState{o.State, host}
	}
	if o.States != nil {
		s.States = make([]hostedState, len(o.States))
		for i, st := range o.States {
			s.States[i] = hostedState{st, host}
		}
	}
	return s
}

// wireError is a *graph.Error as it crosses to the caller: code, field, message and
// advice, so the caller's edge says exactly what a local call's would.
type wireError struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Field   string       `json:"field,omitempty"`
	Steps   []graph.Step `json:"steps,omitempty"`
}

func toWire(err error, host string) *wireError {
	var ge *graph.Error
	if errors.As(err, &ge) {
		return &wireError{Code: ge.Code, Message: ge.Message, Field: ge.Field, Steps: ge.Steps}
	}
	return &wireError{Code: graph.EINTERNAL, Message: fmt.Sprintf("internal error on host %s; see its server log", host)}
}

func (w *wireError) err() error {
	return &graph.Error{Code: w.Code, Message: w.Message, Field: w.Field, Steps: w.Steps}
}

// call sends c to host and waits for its outcome, handing progress on as it comes. The
// host must be live; if it stops answering (its claim gone) or the command's deadline
// passes, the call ends with EUNAVAILABLE. Cancelling ctx cancels the command on the host
// and waits (briefly) for its outcome, which for a navigation is its "cancelled" result.
func (r *Robots) call(ctx context.Context, host string, c command, progress func(graph.NavProgress)) (*outcome, error) {
	wait := robotCallWait
	if c.Verb == verbNavigate && c.Goal != nil {
		t := robotNavDefault
		if c.Goal.TimeoutS > 0 {
			t = time.Duration(c.Goal.TimeoutS * float64(time.Second))
		}
		wait = t + robotNavGrace
	}
	c.Actor, c.Request, c.Message, c.From = graph.ActorFrom(ctx), graph.RequestIDFrom(ctx), graph.MessageFrom(ctx), r.fe.cfg.Host
	c.Deadline, c.WaitS = time.Now().Add(wait).UTC(), wait.Seconds()
	what, robot := c.Verb, "its robots"
	if c.Robot != "" {
		what, robot = c.Verb+" "+c.Robot, c.Robot
	}
	id := uuid.NewString()
	cmdKey, outKey, hostKey := r.cmdKey(host, id), r.outKey(host, id), r.hostKey(host)
	b, err := json.Marshal(c)
	if err != nil { // a non-finite number: refused as a local fleet refuses it
		if c.Goal != nil {
			if verr := graph.ValidateGoal(*c.Goal); verr != nil {
				return nil, verr
			}
		}
		return nil, graph.Errorf(graph.EINVALID, "%s: %v; give finite numbers", what, err)
	}

	select {
	case <-r.fe.Lost():
		return nil, graph.Errorf(graph.EUNAVAILABLE, "this host is offline to the fleet (its cluster lease was lost; it keeps claiming its name again, see its log), so it cannot reach host %s, which drives %s; try again once it is back", host, robot)
	default:
	}
	pctx, pcancel := context.WithTimeout(r.ctx, 5*time.Second)
	resp, err := r.fe.cli.Txn(pctx).If(clientv3.Compare(clientv3.CreateRevision(hostKey), ">", 0)).
		Then(clientv3.OpPut(cmdKey, string(b), clientv3.WithLease(r.fe.hostLease().id))).Commit()
	pcancel()
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "cannot send %s to host %s: etcd at %s did not answer (%v); try again when the cluster is back", what, host, r.fe.target.endpointList(), short(err))
	}
	if !resp.Succeeded {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "host %s, which drives %s, is offline; start devgraph serve there, or try again when it is back", host, robot)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 5*time.Second)
		defer cancel()
		if _, err := r.fe.cli.Txn(dctx).Then(clientv3.OpDelete(cmdKey), clientv3.OpDelete(outKey)).Commit(); err != nil {
			r.log.Warn("cluster: clean up a robot command", "key", cmdKey, "err", short(err))
		}
	}()

	wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(r.ctx))
	defer wcancel()
	from := resp.Header.Revision + 1
	hostFrom := from
	outCh := r.fe.cli.Watch(wctx, outKey, clientv3.WithRev(from))
	hostCh := r.fe.cli.Watch(wctx, hostKey, clientv3.WithRev(hostFrom))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	done := ctx.Done()
	cancelled := false
	for {
		select {
		case wr, ok := <-outCh:
			if !ok || wr.Err() != nil {
				if r.ctx.Err() != nil {
					return nil, graph.Errorf(graph.EUNAVAILABLE, "devgraph is shutting down; %s on host %s was left running: call robot_stop if it must stop", what, host)
				}
				// The watch broke (a member lost its leader): watch again from where it was.
				time.Sleep(50 * time.Millisecond)
				outCh = r.fe.cli.Watch(wctx, outKey, clientv3.WithRev(from))
				continue
			}
			for _, ev := range wr.Events {
				from = ev.Kv.ModRevision + 1
				if ev.Type == clientv3.EventTypeDelete {
					continue
				}
				var o outcome
				if err := json.Unmarshal(ev.Kv.Value, &o); err != nil {
					return nil, graph.Errorf(graph.EINTERNAL, "host %s answered %s unreadably: %v", host, what, err)
				}
				if o.Done {
					o.rev = ev.Kv.ModRevision
					r.stream.answered(host, &o)
					if o.Err != nil {
						return nil, o.Err.err()
					}
					if o.State != nil {
						r.notify(o.State.Ref)
					}
					return &o, nil
				}
				if o.Ref != "" {
					r.notify(o.Ref)
				}
				if o.Progress != nil && progress != nil {
					progress(*o.Progress)
				}
			}
		case wr, ok := <-hostCh:
			if !ok || wr.Err() != nil {
				if r.ctx.Err() != nil {
					hostCh = nil // the out watch ends the call
					continue
				}
				time.Sleep(50 * time.Millisecond)
				hostCh = r.fe.cli.Watch(wctx, hostKey, clientv3.WithRev(hostFrom))
				continue
			}
			for _, ev := range wr.Events {
				hostFrom = ev.Kv.ModRevision + 1
				if ev.Type == clientv3.EventTypeDelete {
					return nil, graph.Errorf(graph.EUNAVAILABLE, "host %s, which drives %s, went offline during %s (its lease expired): the robot's state is unknown until that host is back; check it with robot_status then", host, robot, c.Verb)
				}
			}
		case <-done:
			// Cancel on the driving host, and wait for what the command answers then.
			done, cancelled = nil, true
			c.Cancel = true
			b, _ := json.Marshal(c)
			cctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
			_, err := r.fe.cli.Txn(cctx).If(clientv3.Compare(clientv3.CreateRevision(cmdKey), ">", 0)).
				Then(clientv3.OpPut(cmdKey, string(b), clientv3.WithLease(r.fe.hostLease().id))).Commit()
			cancel()
			if err != nil {
				return nil, graph.Errorf(graph.EUNAVAILABLE, "%s was cancelled, but the cancel could not reach host %s (%v): call robot_stop", what, host, short(err))
			}
			timer.Reset(robotCancelWait)
		case <-timer.C:
			if cancelled {
				return nil, graph.Errorf(graph.EUNAVAILABLE, "%s was cancelled, but host %s did not confirm it within %s: call robot_stop", what, host, robotCancelWait)
			}
			return nil, graph.Errorf(graph.EUNAVAILABLE, "host %s did not answer %s within %s; it may be overloaded or cut off from the cluster: check the robot with robot_status, and stop it with robot_stop if it must stop", host, what, wait)
		}
	}
}

// serve runs the commands other hosts send to this host's robots, as they arrive.
func (r *Robots) serve() {
	defer r.wg.Done()
	prefix := r.cmdKey(r.fe.cfg.Host, "")
	var from int64
	for attempt := 0; r.ctx.Err() == nil; attempt++ {
		if from == 0 {
			// Commands sent while this host was starting are still waiting.
			gctx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
			resp, err := r.fe.cli.Get(gctx, prefix, clientv3.WithPrefix())
			cancel()
			if err == nil {
				from = resp.Header.Revision + 1
				evs := make([]*clientv3.Event, len(resp.Kvs))
				for i, kv := range resp.Kvs {
					evs[i] = &clientv3.Event{Type: clientv3.EventTypePut, Kv: kv}
				}
				r.dispatch(evs)
			}
		}
		if from != 0 {
			from = r.watchCommands(prefix, from)
		}
		select {
		case <-time.After(backoff(attempt, 50*time.Millisecond, 2*time.Second)):
		case <-r.ctx.Done():
		}
	}
}

// watchCommands dispatches what one Watch delivers until it ends; it returns the
// revision to watch from next.
func (r *Robots) watchCommands(prefix string, from int64) int64 {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(r.ctx))
	defer cancel()
	for wr := range r.fe.cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if wr.CompactRevision != 0 {
			return 0 // read what is waiting again
		}
		if err := wr.Err(); err != nil {
			r.log.Warn("cluster: robot command watch interrupted", "err", short(err))
			return from
		}
		r.dispatch(wr.Events)
		if n := len(wr.Events); n > 0 {
			from = wr.Events[n-1].Kv.ModRevision + 1
		}
	}
	return from
}

// dispatch starts the commands in evs, stops first (robot_stop is acted on before
// anything else), cancels those cancelled, and marks those whose caller is gone.
func (r *Robots) dispatch(evs []*clientv3.Event) {
	type start struct {
		id string
		c  command
	}
	var starts []start
	for _, ev := range evs {
		id := string(ev.Kv.Key[strings.LastIndexByte(string(ev.Kv.Key), '/')+1:])
		if ev.Type == clientv3.EventTypeDelete {
			r.mu.Lock()
			if d := r.inflight[id]; d != nil {
				d.gone = true
				d.cancel()
			}
			r.mu.Unlock()
			continue
		}
		var c command
		if err := json.Unmarshal(ev.Kv.Value, &c); err != nil {
			r.log.Warn("cluster: ignoring an unreadable robot command", "key", string(ev.Kv.Key), "err", err)
			continue
		}
		r.mu.Lock()
		d := r.inflight[id]
		r.mu.Unlock()
		switch {
		case d != nil && c.Cancel:
			d.cancel()
		case d == nil && !c.Cancel && ev.Kv.Version == 1:
			starts = append(starts, start{id, c})
		}
	}
	sort.SliceStable(starts, func(i, j int) bool { return starts[i].c.Verb == verbStop && starts[j].c.Verb != verbStop })
	for _, s := range starts {
		r.run(s.id, s.c)
	}
}

// run runs one command for a caller in its own goroutine, and writes its outcome. Its
// events carry the caller's actor qualified with the caller's host ("mcp:agent@b"), and
// its request id and message.
func (r *Robots) run(id string, c command) {
	ctx := graph.WithActor(r.ctx, c.Actor)
	if validHost(c.From) == nil && c.From != r.fe.cfg.Host {
		ctx = graph.WithActorOfHost(r.ctx, c.Actor, c.From)
	}
	if c.Request != "" {
		ctx = graph.WithRequestID(ctx, c.Request)
	}
	if c.Message != "" {
		ctx = graph.WithMessage(ctx, c.Message)
	}
	wait := time.Duration(c.WaitS * float64(time.Second))
	if wait <= 0 || wait > robotCallWait+robotNavGrace+time.Hour {
		wait = robotCallWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	d := &driven{cancel: cancel}
	r.mu.Lock()
	if r.ctx.Err() != nil {
		r.mu.Unlock()
		cancel()
		return
	}
	r.inflight[id] = d
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		o := r.exec(ctx, id, c)
		o.Done = true
		r.mu.Lock()
		delete(r.inflight, id)
		gone := d.gone
		r.mu.Unlock()
		if gone {
			r.drop(id)
			return
		}
		r.answer(id, o)
	}()
}

// exec runs a command on the local fleet.
func (r *Robots) exec(ctx context.Context, id string, c command) *outcome {
	o := &outcome{}
	var err error
	if r.ReadOnly {
		if what := readOnlyRefused[c.Verb]; what != "" {
			return &outcome{Err: toWire(r.readOnlyRefusal(ctx, c.Robot, what), r.fe.cfg.Host)}
		}
	}
	switch c.Verb {
	case verbRobots:
		o.States, err = r.local.Robots(ctx)
	case verbStatus:
		o.State, err = r.local.Status(ctx, c.Robot)
	case verbStop:
		o.State, err = r.local.Stop(ctx, c.Robot)
	case verbArm:
		o.State, err = r.local.Arm(ctx, c.Robot)
	case verbDisarm:
		o.State, err = r.local.Disarm(ctx, c.Robot)
	case verbDetect:
		o.Objects, err = r.local.Detect(ctx, c.Robot)
	case verbGrasp:
		o.State, err = r.local.Grasp(ctx, c.Robot, c.Object)
	case verbRelease:
		o.State, err = r.local.Release(ctx, c.Robot)
	case verbParameters:
		if c.Params == nil {
			err = graph.FieldErrorf(graph.EINVALID, "parameters", "no parameters given")
			break
		}
		o.State, err = r.local.SetParameters(ctx, c.Robot, *c.Params)
	case verbNavigate:
		if c.Goal == nil {
			err = graph.FieldErrorf(graph.EINVALID, "goal", "no goal given; give x and y in metres")
			break
		}
		ref := c.Robot
		if st, err := r.local.Status(ctx, c.Robot); err == nil {
			ref = st.Ref
		}
		o.Nav, err = r.local.Navigate(ctx, c.Robot, *c.Goal, func(p graph.NavProgress) {
			r.answer(id, &outcome{Ref: ref, Progress: &p})
		})
		o.Ref = ref
	default:
		err = graph.Errorf(graph.EINVALID, "host %s does not know the robot command %q; is it running an older devgraph?", r.fe.cfg.Host, c.Verb)
	}
	if err != nil {
		if graph.ErrorCode(err) == graph.EINTERNAL {
			r.log.Error("cluster: robot command", "verb", c.Verb, "robot", c.Robot, "from", c.From, "err", err)
		}
		return &outcome{Err: toWire(err, r.fe.cfg.Host)}
	}
	return o
}

// answer writes o to the command's out key, on this host's lease, if the command is
// still there (its caller has not gone). An outcome is written between two of the
// robots' streamed states, never during one (see robotStream.order).
func (r *Robots) answer(id string, o *outcome) {
	host := r.fe.cfg.Host
	b, _ := json.Marshal(hostedOutcome(o, host))
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 5*time.Second)
	defer cancel()
	if o.Done {
		r.stream.order.Lock()
		defer r.stream.order.Unlock()
	}
	_, err := r.fe.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(r.cmdKey(host, id)), ">", 0)).
		Then(clientv3.OpPut(r.outKey(host, id), string(b), clientv3.WithLease(r.fe.hostLease().id))).Commit()
	if err != nil && o.Done {
		r.log.Warn("cluster: could not answer a robot command", "id", id, "err", short(err))
	}
}

// readOnlyRefused says, in a user's words, what each command a read-only host refuses
// changes (the words a --read-only server's socket uses); the others are reads, and stop.
var readOnlyRefused = map[string]string{
	verbNavigate:   "driving a robot",
	verbArm:        "arming a robot",
	verbDisarm:     "disarming a robot",
	verbGrasp:      "grasping with a robot",
	verbRelease:    "releasing a robot's gripper",
	verbParameters: "changing a robot's parameters",
}

// readOnlyRefusal is a read-only host's answer to a command that would move or change
// robot: refused before the robot is looked up, as a --read-only server refuses it, with
// stopping the robot (always allowed) as the next step.
func (r *Robots) readOnlyRefusal(ctx context.Context, robot, what string) error {
	ref := robot
	if st, err := r.local.Status(ctx, robot); err == nil {
		ref = st.Ref
	}
	host := r.fe.cfg.Host
	return (&graph.Error{Code: graph.EFORBIDDEN, Field: "robot",
		Message: fmt.Sprintf("host %s, which drives %s, is read-only (--read-only): %s is refused and nothing was changed; stopping the robot is always allowed; ask its owner, or serve host %s without --read-only", host, ref, what, host),
	}).Next(graph.Step{Do: graph.StepStop, Robot: graph.QualifyHost(host, ref)})
}

// drop deletes what a command whose caller has gone left behind.
func (r *Robots) drop(id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 5*time.Second)
	defer cancel()
	if _, err := r.fe.cli.Delete(ctx, r.outKey(r.fe.cfg.Host, id)); err != nil {
		r.log.Warn("cluster: clean up a robot command", "id", id, "err", short(err))
	}
}

// guard stops every robot this host drives when its lease is lost: a host cut off from
// the cluster must not leave robots moving that no one elsewhere can stop. A robot that is
// disarmed and at rest is safe already and is left as it is. Robot changes other than
// stops are refused until the host holds a lease again; then its robot list is published
// on the new lease and it takes changes and other hosts' commands again.
func (r *Robots) guard() {
	defer r.wg.Done()
	for {
		lease := r.fe.hostLease()
		select {
		case <-lease.lost:
		case <-r.ctx.Done():
			return
		}
		r.stopAll()
		select {
		case <-lease.next:
		case <-r.ctx.Done():
			return
		}
		r.resume()
	}
}

// stopAll stops this host's robots that are armed or moving; its lease is lost.
func (r *Robots) stopAll() {
	if r.writer != nil {
		r.writer.degrade()
	}
	states, err := r.local.Robots(context.Background())
	if err != nil {
		r.log.Error("cluster: lease lost, cannot list this host's robots to stop them", "err", err)
		return
	}
	for _, st := range states {
		if !st.Armed && (st.State == graph.RobotIdle || st.State == graph.RobotStopped) {
			continue
		}
		ctx := graph.WithMessage(graph.WithActor(context.Background(), st.Ref), "host "+r.fe.cfg.Host+" lost its cluster lease")
		if _, err := r.local.Stop(ctx, st.Ref); err != nil {
			r.log.Error("cluster: lease lost, could not stop a robot", "robot", st.Ref, "err", err)
			continue
		}
		r.log.Warn("cluster: lease lost; robot stopped", "robot", st.Ref)
	}
	if r.writer != nil {
		r.writer.settle()
	}
}

// resume publishes this host's robot list on its new lease (trying again while that lease
// holds) and takes robot changes again.
func (r *Robots) resume() {
	lease := r.fe.hostLease()
	for attempt := 0; ; attempt++ {
		err := r.publish()
		if err == nil {
			r.log.Info("cluster: lease back; this host's robots are published and take commands again")
			return
		}
		r.log.Warn("cluster: lease back, but this host's robot list is not published yet; retrying", "err", err)
		select {
		case <-time.After(backoff(attempt, 200*time.Millisecond, 5*time.Second)):
		case <-lease.lost:
			return
		case <-r.ctx.Done():
			return
		}
	}
}
