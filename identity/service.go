package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

var (
	_ graph.Service  = (*Service)(nil)
	_ graph.Notifier = (*Service)(nil)
	_ graph.Hosted   = (*Service)(nil)
)

// Service is graph.Service over a local store: the store answers identities, hints, tags,
// notes, the changelog and the database directly (the embedded interfaces); Live, Fleet
// and the matcher add devices with their matches, binding and robots. The store's
// plumbing (graph.DeviceStore, graph.RobotStore) stays inside: Service does not offer it,
// so no edge can record devices or robot events of its choosing. Build it with New, set
// the other fields, then Open; Close stops the poll loop.
type Service struct {
	graph.Resolver
	graph.IdentityService
	graph.HintService
	graph.TagService
	graph.NoteService
	graph.ChangelogService
	graph.DatabaseService
	Live  graph.Live  // nil: no hardware (device lists come from the store alone)
	Fleet graph.Fleet // nil: robots unavailable in this process
	// Hosts is the rest of a fleet (an etcd store): which hosts are live, merged into
	// every read's live view with the live state they publish. nil on one machine.
	Hosts graph.FleetLive
	Now   func() time.Time
	// PollInterval is how often the background loop reads the sources and records
	// appear/disappear events; 0 disables it (requests still observe their snapshot).
	PollInterval time.Duration
	// AutoBind binds devices whose match is high and unambiguous, as discovery:<source>.
	AutoBind bool
	Logger   *slog.Logger

	syncMu   sync.Mutex
	observed *graph.Snapshot // the last snapshot reconciled into the store
	// observeErr is the graph error code of the last reconcile's error, logged once
	// until the code changes (a fleet front end that is read-only mid-upgrade refuses
	// every one, for minutes, in words that change as the upgrade goes on).
	observeErr string

	qualMu             sync.Mutex
	qualRaw, qualified *graph.Snapshot // the last snapshot Live gave, as a fleet records it

	store graph.Store

	lifeMu sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a Service over st, reading hardware from live (may be nil) and driving
// robots through fleet (may be nil). Set the other fields before Open.
func New(st graph.Store, live graph.Live, fleet graph.Fleet) *Service {
	return &Service{
		Resolver: st, IdentityService: st, HintService: st, TagService: st, NoteService: st,
		ChangelogService: st, DatabaseService: st,
		store: st, Live: live, Fleet: fleet,
	}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Open starts the background poll loop when PollInterval > 0 and Live is set.
func (s *Service) Open() error {
	if s.store == nil {
		return graph.Errorf(graph.EINVALID, "identity.Service needs a Store")
	}
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.cancel != nil || s.PollInterval <= 0 || s.Live == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.poll(ctx, s.done)
	return nil
}

// Close stops the poll loop and waits for it. Safe to call twice; it does not close
// the Store, which the caller owns.
func (s *Service) Close() error {
	s.lifeMu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.lifeMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

func (s *Service) poll(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.PollInterval)
	defer t.Stop()
	for {
		if _, err := s.sync(ctx); err != nil && ctx.Err() == nil {
			s.logger().Warn("poll sources", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Subscribe forwards to the store when it tells of committed changes (graph.Notifier);
// otherwise nobody is ever told and cancel does nothing.
func (s *Service) Subscribe(fn func(events []*graph.Event)) (cancel func()) {
	if n, ok := s.store.(graph.Notifier); ok {
		return n.Subscribe(fn)
	}
	return func() {}
}

// Observe takes a snapshot and reconciles it into the store; see sync. Inside a read view
// (BeginRead) it writes nothing and returns the snapshot the view was opened with.
func (s *Service) Observe(ctx context.Context) (*graph.Snapshot, error) { return s.sync(ctx) }

// svcViewKey marks a context carrying a read view begun through this service.
type svcViewKey struct{ s *Service }

// svcView is the snapshot reconciled into the store when the view began: reads inside
// the view match devices against it instead of observing (a write) again.
type svcView struct{ snap *graph.Snapshot }

// BeginRead forwards to the store's graph.ReadViewer (the embedded interfaces do not
// promote it), remembering the last reconciled snapshot: reads with the returned context
// see one snapshot of the store and of the hardware, and never observe. Refresh live state
// first (Observe) when the reads need it. Without a ReadViewer store the context comes
// back as it is.
func (s *Service) BeginRead(ctx context.Context) (context.Context, func(), error) {
	if _, ok := ctx.Value(svcViewKey{s}).(*svcView); ok {
		return ctx, func() {}, nil
	}
	rv, ok := s.store.(graph.ReadViewer)
	if !ok {
		return ctx, func() {}, nil
	}
	// Under syncMu no observe is half-way: the snapshot and the store agree.
	s.syncMu.Lock()
	snap := s.observed
	vctx, release, err := rv.BeginRead(ctx)
	s.syncMu.Unlock()
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(vctx, svcViewKey{s}, &svcView{snap: snap}), release, nil
}

// sync takes a snapshot (Live shares recent ones) and, unless it is the one already
// reconciled, records it with DeviceStore.ObserveDevices (events under discovery:<source>). It
// returns the snapshot reads should use, nil without hardware.
func (s *Service) sync(ctx context.Context) (*graph.Snapshot, error) {
	if s.Live == nil {
		return nil, nil
	}
	if v, ok := ctx.Value(svcViewKey{s}).(*svcView); ok {
		// Inside a read view: never write (the write could wait on this very view) and
		// never wait for the poller's observe (it could be waiting on the view too).
		if v.snap != nil {
			return v.snap, nil
		}
		snap, err := s.Live.Snapshot(ctx)
		return s.onHost(snap), err
	}
	snap, err := s.Live.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	snap = s.onHost(snap)
	if snap == nil {
		return nil, nil
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if snap == s.observed {
		return snap, nil
	}
	if s.observed != nil && snap.Taken.Before(s.observed.Taken) {
		return s.observed, nil // a newer reading is already in the store
	}
	err = s.observe(ctx, snap)
	if err == nil {
		// Other requests take s.observed as in the store: a commit the request's edge
		// holds (graph.WithCommitHold) must have ended, and not failed, first.
		err = graph.SettleCommits(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Reads still get the live snapshot; the store catches up on the next one.
		if code := graph.ErrorCode(err); code != s.observeErr {
			s.observeErr = code
			s.logger().Warn("record snapshot", "err", err)
		}
		return snap, nil
	}
	s.observeErr = ""
	s.observed = snap
	return snap, nil
}

// Host is the host name of the store's machine ("" when the store does not say): the
// devices this process observes and the robots it drives are attached to it.
func (s *Service) Host() string {
	if h, ok := s.store.(graph.Hosted); ok {
		return h.Host()
	}
	return ""
}

// MultiHost reports whether the store is a fleet's (refs, keys and usb_path
// fingerprints carry their host).
func (s *Service) MultiHost() bool {
	h, ok := s.store.(graph.Hosted)
	return ok && h.MultiHost()
}

// onHost is snap as the store records it: on a fleet, qualified with this host
// (graph.QualifySnapshot), so the store, the matcher and every read see one form. The
// same snapshot from Live gives the same copy, so a shared snapshot is reconciled once.
func (s *Service) onHost(snap *graph.Snapshot) *graph.Snapshot {
	if snap == nil || !s.MultiHost() {
		return snap
	}
	s.qualMu.Lock()
	defer s.qualMu.Unlock()
	if snap != s.qualRaw {
		s.qualRaw, s.qualified = snap, graph.QualifySnapshot(s.Host(), snap)
	}
	return s.qualified
}

func (s *Service) observe(ctx context.Context, snap *graph.Snapshot) error {
	cp := *snap
	if cp.Taken.IsZero() {
		cp.Taken = s.now().UTC()
	}
	cp.Devices = nil
	for _, od := range snap.Devices {
		if od == nil || od.Key == "" {
			s.logger().Warn("observed device without a key skipped", "device", od)
			continue
		}
		cp.Devices = append(cp.Devices, od)
	}
	snap = &cp
	// With no Actor on the snapshot the store records each appear/disappear as
	// discovery:<that device's source> (graph.DeviceStore.ObserveDevices).
	dctx := graph.WithMessage(graph.WithRequestID(ctx, graph.NewRequestID()), "")
	evs, err := s.store.ObserveDevices(dctx, snap)
	if err != nil {
		return fmt.Errorf("observe devices: %w", err)
	}
	if len(evs) > 0 {
		s.logger().Info("devices changed", "actor", "discovery", "events", len(evs))
	}
	if s.AutoBind {
		if err := s.autoBind(ctx, snap); err != nil {
			return fmt.Errorf("auto-bind: %w", err)
		}
	}
	return nil
}

// autoBind binds present, unbound devices whose match is high and unambiguous.
func (s *Service) autoBind(ctx context.Context, snap *graph.Snapshot) error {
	devs, err := s.allDevices(ctx, graph.DeviceFilter{})
	if err != nil {
		return err
	}
	views, err := s.views(ctx, NewScene(s.withFleet(snap)), devs)
	if err != nil {
		return err
	}
	for _, v := range views {
		if v.Infra || v.IdentityID != "" || v.BoundBy != "match" {
			continue
		}
		bctx := graph.WithRequestID(graph.WithActor(ctx, "discovery:"+v.Source), graph.NewRequestID())
		bctx = graph.WithMessage(bctx, graph.ClipMessage("auto-bind: "+v.Match.Summary))
		if _, err := s.store.BindDevice(bctx, graph.BindRequest{DeviceID: v.ID, IdentityID: v.BoundTo, Hints: v.Fingerprints}); err != nil {
			if graph.ErrorCode(err) == graph.EINTERNAL {
				return err
			}
			s.logger().Warn("auto-bind skipped", "device", v.Ref, "identity", v.BoundTo, "why", graph.ErrorMessage(err))
		}
	}
	return nil
}

// allDevices pages through the store's devices.
func (s *Service) allDevices(ctx context.Context, f graph.DeviceFilter) ([]*graph.Device, error) {
	var out []*graph.Device
	f.First, f.After = graph.MaxPageSize, ""
	for {
		page, _, next, err := s.store.FindDevices(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == "" || len(page) == 0 {
			return out, nil
		}
		f.After = next
	}
}

// views matches devices in the scene and says what each is bound to.
func (s *Service) views(ctx context.Context, scene *Scene, devs []*graph.Device) ([]*graph.DeviceView, error) {
	var subjects []Subject
	var idx []int
	for i, d := range devs {
		if d.Infra {
			continue
		}
		// Every stored record counts as possibly one of the present devices: an offline
		// record of a unit that moved is that unit, not a twin of it.
		subjects = append(subjects, Subject{Fingerprints: append([]graph.Fingerprint(nil), d.Fingerprints...), InScene: true})
		idx = append(idx, i)
	}
	m := Matcher{Store: s.store}
	matches, err := m.MatchSubjects(ctx, scene, subjects)
	if err != nil {
		return nil, err
	}
	out := make([]*graph.DeviceView, len(devs))
	for i, d := range devs {
		out[i] = &graph.DeviceView{Device: *d}
		// Live: the nodes the snapshot shows now, never a record's. A present device
		// without nodes gets an empty, non-nil list: this view has read the snapshot.
		out[i].Nodes = nil
		if s.hostOffline(d) {
			// Remembered as its host last recorded it; nothing of it is live.
			out[i].HostOffline = true
		} else if d.Present {
			out[i].Nodes = scene.Nodes(d.Key)
			if out[i].Nodes == nil {
				out[i].Nodes = []graph.DeviceNode{}
			}
		}
	}
	names := map[string]string{}
	var need []string
	for j, i := range idx {
		v := out[i]
		v.Match = matches[j]
		if v.Match.IdentityID != "" && v.Match.Name != "" {
			names[v.Match.IdentityID] = v.Match.Name
		}
		switch {
		case v.IdentityID != "":
			v.BoundTo, v.BoundBy = v.IdentityID, "explicit"
		case v.Match.Confidence == graph.High && !v.Match.Ambiguous:
			v.BoundTo, v.BoundBy = v.Match.IdentityID, "match"
		}
		if v.BoundTo != "" && names[v.BoundTo] == "" {
			need = append(need, v.BoundTo)
		}
	}
	for _, v := range out {
		if v.BoundTo == "" && v.IdentityID != "" { // infra bound by hand long ago
			v.BoundTo, v.BoundBy = v.IdentityID, "explicit"
			need = append(need, v.IdentityID)
		}
	}
	if len(need) > 0 {
		loaded, err := loadIdentities(ctx, s.store, uniq(need))
		if err != nil {
			return nil, err
		}
		for id, x := range loaded {
			names[id] = x.Name
		}
	}
	for _, v := range out {
		v.Identity = names[v.BoundTo]
	}
	return out, nil
}

func (s *Service) scene(ctx context.Context) (*Scene, error) {
	snap, err := s.sync(ctx)
	if err != nil {
		return nil, err
	}
	if snap != nil && !s.MultiHost() {
		return NewScene(snap), nil
	}
	devs, err := s.allDevices(ctx, graph.DeviceFilter{})
	if err != nil {
		return nil, err
	}
	if snap != nil {
		// On a fleet "shown only by this device" is fleet-wide: the other hosts' present
		// devices count too (this host's are the snapshot's; the live hosts' published
		// ones bring their /dev nodes).
		sc := NewScene(s.withFleet(snap))
		host := s.Host()
		for _, d := range devs {
			if d.Host != host {
				sc.add(&graph.ObservedDevice{Key: d.Key, Ref: d.Ref, Source: d.Source, Fingerprints: d.Fingerprints, Infra: d.Infra})
			}
		}
		return sc, nil
	}
	return sceneOf(nil, devs), nil
}

// sceneOf is the scene of snap, or with no hardware in this process (snap nil) the
// store's devices.
func sceneOf(snap *graph.Snapshot, devs []*graph.Device) *Scene {
	if snap == nil {
		snap = &graph.Snapshot{}
		for _, d := range devs {
			snap.Devices = append(snap.Devices, &graph.ObservedDevice{Key: d.Key, Ref: d.Ref, Source: d.Source, Fingerprints: d.Fingerprints, Infra: d.Infra})
		}
	}
	return NewScene(snap)
}

// Devices lists devices with their match (present only unless f.All). With
// f.IdentityID it lists the devices bound to that identity explicitly or by a high,
// unambiguous match.
func (s *Service) Devices(ctx context.Context, f graph.DeviceFilter) ([]*graph.DeviceView, int, string, error) {
	sc, err := s.scene(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	if f.IdentityID == "" {
		devs, total, next, err := s.store.FindDevices(ctx, f)
		if err != nil {
			return nil, 0, "", err
		}
		views, err := s.views(ctx, sc, devs)
		return views, total, next, err
	}
	id, err := s.store.ResolveID(ctx, f.IdentityID, graph.KindIdentity)
	if err != nil {
		return nil, 0, "", err
	}
	g := f
	g.IdentityID = ""
	devs, err := s.allDevices(ctx, g)
	if err != nil {
		return nil, 0, "", err
	}
	views, err := s.views(ctx, sc, devs)
	if err != nil {
		return nil, 0, "", err
	}
	var bound []*graph.DeviceView
	for _, v := range views {
		if v.BoundTo == id {
			bound = append(bound, v)
		}
	}
	sort.Slice(bound, func(i, j int) bool { return bound[i].ID < bound[j].ID })
	first := graph.ClampFirst(f.First)
	out := []*graph.DeviceView{}
	next := ""
	for _, v := range bound {
		if f.After != "" && v.ID <= f.After {
			continue
		}
		if len(out) == first {
			next = out[len(out)-1].ID
			break
		}
		out = append(out, v)
	}
	return out, len(bound), next, nil
}

// Device finds one device by id or ref, with its match.
func (s *Service) Device(ctx context.Context, idOrRef string) (*graph.DeviceView, error) {
	sc, err := s.scene(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.findDevice(ctx, idOrRef, true)
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, sc, []*graph.Device{d})
	if err != nil {
		return nil, err
	}
	return views[0], nil
}

// Unbound lists present, non-infrastructure devices with neither an explicit binding nor
// a high, unambiguous match, each with its best candidate and explanation.
func (s *Service) Unbound(ctx context.Context) ([]*graph.DeviceView, error) {
	sc, err := s.scene(ctx)
	if err != nil {
		return nil, err
	}
	devs, err := s.allDevices(ctx, graph.DeviceFilter{})
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, sc, devs)
	if err != nil {
		return nil, err
	}
	out := []*graph.DeviceView{}
	for _, v := range views {
		if !v.Infra && v.BoundTo == "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// Match reads fingerprints against the identities, in the context of the devices
// present now (so evidence two present devices show counts as twins'). At most
// graph.MaxFingerprintsPerMatch fingerprints, checked before anything is read.
func (s *Service) Match(ctx context.Context, fps []graph.Fingerprint) (*graph.Match, error) {
	norm, err := graph.NormalizeMatchFingerprints(fps)
	if err != nil {
		return nil, err
	}
	sc, err := s.scene(ctx)
	if err != nil {
		return nil, err
	}
	m := Matcher{Store: s.store}
	ms, err := m.MatchSubjects(ctx, sc, []Subject{{Fingerprints: norm, InScene: true}})
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// Bind binds the device at in.Ref to an existing identity or a new one, copying the
// device's fingerprints in as hints, in one transaction with its events. With DryRun it
// reports what would change — hints added, conflicts, and how the match would read —
// and writes nothing.
func (s *Service) Bind(ctx context.Context, in graph.BindInput) (*graph.BindResult, error) {
	in.Ref = strings.TrimSpace(in.Ref)
	in.IdentityID = strings.TrimSpace(in.IdentityID)
	in.NewName = strings.TrimSpace(in.NewName)
	in.Slug = strings.TrimSpace(in.Slug)
	switch {
	case in.Ref == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "ref", "no device ref given; give a ref such as usb:3-3.2").Next(graph.ListStep(graph.ListUnbound, ""))
	case in.IdentityID != "" && in.NewName != "":
		return nil, graph.FieldErrorf(graph.EINVALID, "identity", "both an identity and a new name given; bind to one or the other, not both")
	case in.IdentityID == "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "identity", "name the identity to bind %s to, or give a new name to create one", in.Ref).Next(graph.ListStep(graph.ListIdentities, ""))
	case in.Slug != "" && in.NewName == "":
		return nil, graph.FieldErrorf(graph.EINVALID, "slug", "slug only applies with a new name").Next(graph.PassStep("slug", ""))
	}
	req := graph.BindRequest{Move: in.Move, Force: in.Force, DryRun: in.DryRun}
	if in.NewName != "" {
		if err := graph.ValidateText("new_name", in.NewName, 1, graph.MaxNameLen); err != nil {
			return nil, err
		}
		if in.Slug != "" {
			if err := graph.ValidateSlug(in.Slug); err != nil {
				return nil, err
			}
		}
		req.New = &graph.IdentityCreate{Name: in.NewName, Slug: in.Slug}
	}
	sc, err := s.scene(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.findDevice(ctx, in.Ref, false)
	if err != nil {
		return nil, err
	}
	if d.Infra {
		return nil, graph.FieldErrorf(graph.EINVALID, "ref", "%s is infrastructure (a hub or controller): shown, never bound; bind the devices behind it", d.Ref)
	}
	if in.IdentityID != "" {
		id, err := s.store.ResolveID(ctx, in.IdentityID, graph.KindIdentity)
		if err != nil {
			return nil, err
		}
		req.IdentityID = id
	}
	req.DeviceID = d.ID
	req.Hints = append([]graph.Fingerprint(nil), d.Fingerprints...)
	res, err := s.store.BindDevice(ctx, req)
	if req.New != nil && graph.ErrorCode(err) == graph.ECONFLICT && graph.ErrorField(err) == "slug" {
		// Two identical binds racing: the other may have taken the name in a group commit
		// that had not landed when this one read. Asked once more, the store sees it
		// committed and answers already_bound when it is the same binding.
		res, err = s.store.BindDevice(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	subject := []Subject{{Fingerprints: append([]graph.Fingerprint(nil), d.Fingerprints...), InScene: true}}
	m := Matcher{Store: s.store}
	var ov *overlay
	if in.DryRun && res.Identity != nil {
		ov = &overlay{ident: res.Identity, moved: map[graph.Fingerprint]bool{}}
		for _, f := range d.Fingerprints {
			if graph.ContainsFingerprint(res.Identity.Hints, f) {
				ov.add = append(ov.add, f)
			}
		}
		for _, f := range res.HintsMoved {
			ov.moved[f] = true
		}
	}
	ms, err := m.match(ctx, sc, subject, ov)
	if err != nil {
		return nil, err
	}
	res.Match = ms[0]
	return res, nil
}

// Unbind removes the explicit binding of the device at ref.
func (s *Service) Unbind(ctx context.Context, ref string) (*graph.Device, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "ref", "no device ref given; give a ref such as usb:3-3.2").Next(graph.ListStep(graph.ListBound, ""))
	}
	if _, err := s.sync(ctx); err != nil {
		return nil, err
	}
	d, err := s.findDevice(ctx, strings.TrimSpace(ref), true)
	if err != nil {
		return nil, err
	}
	return s.store.UnbindDevice(ctx, d.ID)
}

// Sources reports each source's status from the latest snapshot (none without hardware).
func (s *Service) Sources(ctx context.Context) ([]graph.SourceStatus, error) {
	snap, err := s.sync(ctx)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return []graph.SourceStatus{}, nil
	}
	return append([]graph.SourceStatus(nil), snap.Sources...), nil
}

// findDevice finds a device by id, key or ref; a miss suggests the closest present ref,
// at equal distance a bound one when bound (unbind, show) and else an unbound one (bind),
// and advises the listing that shows such devices.
func (s *Service) findDevice(ctx context.Context, idOrRef string, bound bool) (*graph.Device, error) {
	d, err := s.store.FindDeviceByID(ctx, idOrRef)
	if err == nil {
		return d, nil
	}
	if graph.ErrorCode(err) != graph.ENOTFOUND {
		return nil, err
	}
	devs, lerr := s.allDevices(ctx, graph.DeviceFilter{})
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	// The closest ref wins; at equal distance the likelier target: a device without a
	// binding for a bind, a bound one for an unbind.
	best, bestD := "", 1<<30
	list := graph.ListUnbound
	if bound {
		list = graph.ListBound
	}
	for _, d := range devs {
		if d.Infra {
			continue
		}
		for _, r := range []string{d.Ref, d.ID} {
			dist := 2 * graph.EditDistance(idOrRef, r, 0)
			if (d.IdentityID != "") != bound {
				dist++
			}
			if dist < bestD {
				best, bestD = d.Ref, dist
			}
		}
	}
	what := "device ref"
	if !graph.IsRef(idOrRef) {
		what = "device"
	}
	if best == "" {
		return nil, graph.FieldErrorf(graph.ENOTFOUND, "ref", "unknown %s %s; no devices are present — plug one in, or look among the unplugged ones", what, idOrRef).Next(graph.ListStep(graph.ListDevices, ""))
	}
	return nil, graph.FieldErrorf(graph.ENOTFOUND, "ref", "unknown %s %s; did you mean %s?", what, idOrRef, best).Next(graph.ListStep(list, ""))
}

var _ graph.ReadViewer = (*Service)(nil)

// hostOffline reports whether d's host is a fleet host that is not live.
func (s *Service) hostOffline(d *graph.Device) bool {
	return s.Hosts != nil && !s.Hosts.HostOnline(d.Host)
}

// withFleet returns this host's reading with the live state every other live host of
// the fleet published added: their present devices (for the scene and their nodes),
// observed relations and clients. The reading itself is what discovery records; this
// is only ever read. Without a fleet it is snap.
func (s *Service) withFleet(snap *graph.Snapshot) *graph.Snapshot {
	if s.Hosts == nil || snap == nil {
		return snap
	}
	others := s.Hosts.Elsewhere()
	if len(others) == 0 {
		return snap
	}
	cp := *snap
	cp.Devices = slices.Clip(snap.Devices)
	cp.Relations = slices.Clip(snap.Relations)
	cp.Clients = slices.Clip(snap.Clients)
	for _, h := range others {
		cp.Devices = append(cp.Devices, h.Devices...)
		cp.Relations = append(cp.Relations, h.Relations...)
		cp.Clients = append(cp.Clients, h.Clients...)
	}
	return &cp
}
