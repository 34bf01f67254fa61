package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

func devKey(id string) string { return strings.TrimPrefix(id, "device:") }

func getDevice(tx *bolt.Tx, key string) (*graph.Device, error) {
	return getRecord[graph.Device](tx, m.BucketDevices, key, "device")
}

func deviceJSON(d *graph.Device) json.RawMessage {
	b, _ := json.Marshal(d)
	return b
}

func (w *wtx) putDevice(d *graph.Device) error {
	return w.put(m.BucketDevices, []byte(d.Key), deviceJSON(d))
}

// boundKeys lists the keys of the devices bound to an identity.
func boundKeys(tx *bolt.Tx, identity string) []string {
	var out []string
	p := prefixKey(identity)
	c := tx.Bucket(m.BucketBindings).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		out = append(out, string(k[len(p):]))
	}
	return out
}

// bind records the device → identity edge (device.bind), replacing any earlier one.
func (w *wtx) bind(key, identity string) error {
	d, err := getDevice(w.tx, key)
	if err != nil {
		return err
	}
	if d == nil {
		return graph.Errorf(graph.ENOTFOUND, "device:%s not found", key)
	}
	if d.IdentityID == identity {
		return nil
	}
	before := deviceJSON(d)
	old := d.IdentityID
	if old != "" {
		if err := w.delete(m.BucketBindings, joinKey(old, key)); err != nil {
			return err
		}
	}
	d.IdentityID = identity
	if err := w.put(m.BucketBindings, joinKey(identity, key), nil); err != nil {
		return err
	}
	if err := w.putDevice(d); err != nil {
		return err
	}
	return w.emit(graph.ActDeviceBind, d.ID, before, deviceJSON(d), identity, old)
}

// unbind removes the device's binding (device.unbind).
func (w *wtx) unbind(key string) (*graph.Device, error) {
	d, err := getDevice(w.tx, key)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, graph.Errorf(graph.ENOTFOUND, "device:%s not found", key)
	}
	if d.IdentityID == "" {
		show := graph.Step{Do: graph.StepShow, ID: d.ID}
		last, err := lastEvent(w.tx, d.ID, graph.ActDeviceUnbind)
		if err != nil {
			return nil, err
		}
		if last != nil {
			// A retried unbind: say when and by whom it was done.
			return nil, graph.Errorf(graph.EINVALID, "%s (%s) is not bound to an identity; it was unbound at %s by %s, nothing to unbind",
				d.ID, d.Ref, last.Time.UTC().Format(time.RFC3339), last.Actor).Next(show)
		}
		return nil, graph.Errorf(graph.EINVALID, "%s (%s) is not bound to an identity; nothing to unbind", d.ID, d.Ref).Next(show, graph.ListStep(graph.ListBound, ""))
	}
	before := deviceJSON(d)
	old := d.IdentityID
	if err := w.delete(m.BucketBindings, joinKey(old, key)); err != nil {
		return nil, err
	}
	d.IdentityID = ""
	if err := w.putDevice(d); err != nil {
		return nil, err
	}
	return d, w.emit(graph.ActDeviceUnbind, d.ID, before, deviceJSON(d), old)
}

func (w *wtx) setPresent(d *graph.Device, present bool) error {
	if d.Present == present {
		return nil
	}
	d.Present = present
	if present {
		w.count(m.CountPresent, 1)
		return w.put(m.BucketPresent, []byte(d.Key), nil)
	}
	w.count(m.CountPresent, -1)
	return w.delete(m.BucketPresent, []byte(d.Key))
}

// ObserveDevices reconciles a snapshot with the stored devices. See graph.DeviceStore.
func (db *DB) ObserveDevices(ctx context.Context, snap *graph.Snapshot) ([]*graph.Event, error) {
	if snap == nil {
		return nil, graph.FieldErrorf(graph.EINVALID, "snapshot", "no snapshot given")
	}
	for _, od := range snap.Devices {
		if od == nil || od.Key == "" || strings.IndexByte(od.Key, 0) >= 0 {
			return nil, graph.FieldErrorf(graph.EINVALID, "key", "an observed device has an empty or invalid key")
		}
	}
	if db.opts.Fleet {
		// A host records only its own devices, under its own name (the identity service
		// hands them over qualified already; qualifying again changes nothing).
		snap = graph.QualifySnapshot(db.host, snap)
		for _, od := range snap.Devices {
			if h, _ := graph.SplitHost(od.Key); h != db.host {
				return nil, graph.FieldErrorf(graph.EINVALID, "key", "observed device %s is host %s's; host %s records only its own devices", od.Key, h, db.host)
			}
		}
	}
	if quiet, err := db.observeQuiet(ctx, snap); err != nil || quiet {
		return nil, err
	}
	return db.update(ctx, func(w *wtx) error {
		taken := snap.Taken.UTC()
		if snap.Taken.IsZero() {
			taken = w.now
		}
		// With no actor on the snapshot each event names the source of its own
		// device: discovery:<device's Source>. The context's actor is not used.
		perSource := snap.Actor == ""
		saved := w.actor
		if !perSource {
			w.actor = w.db.actorAt(snap.Actor)
		}
		actorFor := func(d *graph.Device) {
			if perSource {
				w.actor = w.db.actorAt(discoveryActorOf(d.Source))
			}
		}
		defer func() { w.actor = saved }()
		seen := map[string]bool{}
		for _, od := range snap.Devices {
			if seen[od.Key] {
				continue
			}
			seen[od.Key] = true
			d, err := getDevice(w.tx, od.Key)
			if err != nil {
				return err
			}
			isNew := d == nil
			var before json.RawMessage
			if isNew {
				d = &graph.Device{ID: graph.DeviceID(od.Key), Key: od.Key, FirstSeen: taken}
				w.count(m.CountDevices, 1)
			} else {
				before = deviceJSON(d)
			}
			wasPresent := d.Present
			if d.Ref != od.Ref && d.Ref != "" && !contains(d.Aliases, d.Ref) {
				d.Aliases = append(d.Aliases, d.Ref)
			}
			d.Aliases = removeStr(d.Aliases, od.Ref)
			if len(d.Aliases) == 0 {
				d.Aliases = nil
			}
			seenAt := d.LastSeen
			d.Ref, d.Source, d.Sources, d.Name, d.Host = od.Ref, od.Source, od.Sources, od.Name, w.db.host
			d.Fingerprints, d.Attrs, d.Infra = od.Fingerprints, od.Attrs, od.Infra
			if !isNew && wasPresent && w.db.replicaOf != "" && bytes.Equal(deviceJSON(d), before) &&
				(od.Ref == "" || bytes.Equal(w.b(m.BucketRefs).Get([]byte(od.Ref)), []byte(od.Key))) {
				// On a fleet's store a device seen again unchanged is not rewritten to
				// move its last seen: its host's lease says it is live (lastSeenEvery).
				d.LastSeen = seenAt
				continue
			}
			d.LastSeen = taken
			if od.Ref != "" {
				if err := w.put(m.BucketRefs, []byte(od.Ref), []byte(od.Key)); err != nil {
					return err
				}
			}
			if err := w.setPresent(d, true); err != nil {
				return err
			}
			if err := w.putDevice(d); err != nil {
				return err
			}
			if isNew || !wasPresent {
				actorFor(d)
				if err := w.emit(graph.ActDeviceAppear, d.ID, before, deviceJSON(d), d.IdentityID); err != nil {
					return err
				}
			}
		}
		var gone []string
		c := w.b(m.BucketPresent).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if !seen[string(k)] {
				gone = append(gone, string(k))
			}
		}
		for _, key := range gone {
			d, err := getDevice(w.tx, key)
			if err != nil {
				return err
			}
			if d == nil || !w.db.ownDevice(d) {
				continue // another host's device: only its own scans say it is gone
			}
			if !allAnswered(d, snap) {
				continue // a source that saw it did not answer: it may still be there
			}
			before := deviceJSON(d)
			if err := w.setPresent(d, false); err != nil {
				return err
			}
			if w.db.replicaOf != "" {
				d.LastSeen = taken // not refreshed while present (lastSeenEvery): when its absence was noticed
			}
			if err := w.putDevice(d); err != nil {
				return err
			}
			actorFor(d)
			if err := w.emit(graph.ActDeviceDisappear, d.ID, before, deviceJSON(d), d.IdentityID); err != nil {
				return err
			}
		}
		return nil
	})
}

// ownDevice reports whether d is attached to this store's host, so this host's scans
// decide whether it is present. A record without a host predates hosts: in a bbolt file
// it is this machine's; a fleet gives every device its host.
func (db *DB) ownDevice(d *graph.Device) bool {
	if d.Host == "" {
		return !db.opts.Fleet
	}
	return d.Host == db.host
}

// discoveryActorOf is the actor for a device seen by source ("discovery:live" when the
// device names none).
func discoveryActorOf(source string) string {
	if source == "" {
		source = "live"
	}
	return "discovery:" + source
}

// allAnswered reports whether every source that saw d answered in snap, so its absence
// means it is gone.
func allAnswered(d *graph.Device, snap *graph.Snapshot) bool {
	srcs := d.Sources
	if len(srcs) == 0 && d.Source != "" {
		srcs = []string{d.Source}
	}
	for _, s := range srcs {
		if !snap.SourceOK(s) {
			return false
		}
	}
	return len(srcs) > 0
}

// lastSeenEvery is how stale a present device's last seen may grow before a snapshot that
// changes nothing else writes it anyway: polling every few seconds should not fsync each time.
// On a fleet's store (a replica) it is never refreshed for its own sake — every host
// doing so would be a write per host per minute to the whole fleet, and the host's lease
// already says its devices are live: there last seen moves when a device appears, changes
// or is noticed gone.
const lastSeenEvery = time.Minute

// observeQuiet reports, from a read transaction, whether snap would change nothing but
// recent last-seen times, so ObserveDevices can skip its write.
func (db *DB) observeQuiet(ctx context.Context, snap *graph.Snapshot) (bool, error) {
	taken := snap.Taken
	if taken.IsZero() {
		taken = db.now()
	}
	quiet := true
	err := db.view(ctx, func(tx *bolt.Tx) error {
		seen := make(map[string]bool, len(snap.Devices))
		for _, od := range snap.Devices {
			seen[od.Key] = true
			d, err := getDevice(tx, od.Key)
			if err != nil {
				return err
			}
			if d == nil || !d.Present || d.Ref != od.Ref || d.Source != od.Source || d.Name != od.Name || d.Infra != od.Infra ||
				!slices.Equal(d.Sources, od.Sources) || !slices.Equal(d.Fingerprints, od.Fingerprints) ||
				!maps.Equal(d.Attrs, od.Attrs) || taken.Sub(d.LastSeen) >= lastSeenEvery && db.replicaOf == "" {
				quiet = false
				return nil
			}
		}
		c := tx.Bucket(m.BucketPresent).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if seen[string(k)] {
				continue
			}
			d, err := getDevice(tx, string(k))
			if err != nil {
				return err
			}
			if d != nil && db.ownDevice(d) && allAnswered(d, snap) {
				quiet = false // gone: the write records it
				return nil
			}
		}
		return nil
	})
	return quiet, err
}

func (db *DB) FindDeviceByID(ctx context.Context, idOrRef string) (*graph.Device, error) {
	var out *graph.Device
	err := db.view(ctx, func(tx *bolt.Tx) error {
		full, err := db.resolve(tx, idOrRef, graph.KindDevice)
		if err != nil {
			return err
		}
		out, err = getDevice(tx, devKey(full))
		return err
	})
	return out, err
}

// FindDevices pages devices sorted by key; present ones only unless f.All.
func (db *DB) FindDevices(ctx context.Context, f graph.DeviceFilter) ([]*graph.Device, int, string, error) {
	first := graph.ClampFirst(f.First)
	after := devKey(f.After)
	out := []*graph.Device{}
	var total int
	var next string
	err := db.view(ctx, func(tx *bolt.Tx) error {
		tags, err := graph.NormalizeTagSet(f.Tags)
		if err != nil {
			return err
		}
		var keys []string
		counted := false
		switch {
		case f.IdentityID != "":
			full, err := db.resolve(tx, f.IdentityID, graph.KindIdentity)
			if err != nil {
				return err
			}
			keys = boundKeys(tx, full)
			sort.Strings(keys)
		case len(tags) > 0:
			p := joinKey(tags[0], "device:")
			c := tx.Bucket(m.BucketTags).Cursor()
			for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
				keys = append(keys, string(k[len(p):]))
			}
		default:
			b := tx.Bucket(m.BucketPresent)
			if f.All {
				b = tx.Bucket(m.BucketDevices)
			}
			if f.Source == "" {
				counted = true
				if f.All {
					total = int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountDevices)))
				} else {
					total = int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountPresent)))
				}
				// page straight off the index
				c := b.Cursor()
				k, _ := c.First()
				if after != "" {
					k, _ = c.Seek([]byte(after))
					if k != nil && string(k) == after {
						k, _ = c.Next()
					}
				}
				for ; k != nil; k, _ = c.Next() {
					if len(out) == first {
						next = out[len(out)-1].ID
						break
					}
					d, err := getDevice(tx, string(k))
					if err != nil {
						return err
					}
					if d != nil {
						out = append(out, d)
					}
				}
				return nil
			}
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				keys = append(keys, string(k))
			}
		}
		_ = counted
		for _, k := range keys {
			d, err := getDevice(tx, k)
			if err != nil {
				return err
			}
			if d == nil || (!f.All && !d.Present) || (f.Source != "" && d.Source != f.Source && !contains(d.Sources, f.Source)) {
				continue
			}
			ok := true
			for _, t := range tags {
				ok = ok && contains(d.Tags, t)
			}
			if !ok {
				continue
			}
			total++
			if after != "" && k <= after {
				continue
			}
			if len(out) < first {
				out = append(out, d)
			} else if next == "" {
				next = out[len(out)-1].ID
			}
		}
		return nil
	})
	return out, total, next, err
}

// BindDevice binds a device to an existing or new identity, copying hints it lacks, in one
// transaction (identity.create?, hint.add/hint.move ×n, device.bind). DryRun does the same
// and rolls back, reporting conflicts instead of failing on them.
func (db *DB) BindDevice(ctx context.Context, r graph.BindRequest) (*graph.BindResult, error) {
	if r.New != nil {
		if err := checkDataText(r.New.Data); err != nil {
			return nil, err
		}
	}
	var res *graph.BindResult
	fn := func(w *wtx) error {
		res = &graph.BindResult{DryRun: r.DryRun, HintsAdded: []graph.Fingerprint{}}
		full, err := w.db.resolve(w.tx, r.DeviceID, graph.KindDevice)
		if err != nil {
			return err
		}
		d, err := getDevice(w.tx, devKey(full))
		if err != nil {
			return err
		}
		if d.Infra {
			return graph.FieldErrorf(graph.EINVALID, "device", "%s (%s) is infrastructure (a hub or controller); bind the devices behind it instead", d.ID, d.Ref)
		}
		hints := r.Hints
		if hints == nil {
			hints = d.Fingerprints
		}
		hints, err = graph.NormalizeHintSet(dedupe(hints))
		if err != nil {
			return err
		}
		if cur := w.boundAlready(d, r, hints); cur != nil {
			// A retried bind: nothing would change, so nothing is written.
			res.AlreadyBound, res.Device, res.Identity = true, d, cur
			return nil
		}
		var id *graph.Identity
		switch {
		case r.New != nil && r.IdentityID != "":
			return graph.FieldErrorf(graph.EINVALID, "identity", "give either an existing identity or a new one, not both")
		case r.New != nil:
			if id, err = w.createIdentity(*r.New); err != nil {
				var ge *graph.Error
				if errors.As(err, &ge) && ge.Code == graph.ECONFLICT {
					// The name is taken: binding to the identity that has it may be meant.
					for _, s := range ge.Steps {
						if s.Do == graph.StepShow {
							ge.Steps = append([]graph.Step{{Do: graph.StepBind, Ref: d.Ref, Identity: s.ID}}, ge.Steps...)
							break
						}
					}
				}
				return err
			}
			res.Created = true
		case r.IdentityID != "":
			if id, err = w.mustIdentity(r.IdentityID); err != nil {
				return err
			}
		default:
			return graph.FieldErrorf(graph.EINVALID, "identity", "name the identity to bind to, or ask for a new one").Next(graph.ListStep(graph.ListIdentities, ""))
		}
		if r.New == nil {
			if c := contradictions(id, hints); len(c) > 0 && !r.Force {
				msg := fmt.Sprintf("%s contradicts %s's hints: %s; bind it only if it is truly the same thing", d.Ref, id.ID, strings.Join(c, ", and "))
				if !r.DryRun {
					e := graph.FieldErrorf(graph.ECONFLICT, "identity", "%s", msg).Next(graph.Step{Do: graph.StepShow, ID: id.ID},
						graph.Step{Do: graph.StepBind, Ref: d.Ref, Identity: id.ID, Arg: "force", Value: "true"})
					if d.Name != "" {
						e.Next(graph.Step{Do: graph.StepBind, Ref: d.Ref, Name: d.Name})
					}
					return e
				}
				res.Conflicts = append(res.Conflicts, msg)
			}
		}
		var lack []graph.Fingerprint
		for _, f := range hints {
			if !graph.ContainsFingerprint(id.Hints, f) {
				lack = append(lack, f)
			}
		}
		moved, conflicts, err := w.addHints(id, lack, r.Move, r.DryRun)
		if err != nil {
			return err
		}
		for _, f := range lack {
			if graph.ContainsFingerprint(id.Hints, f) && !graph.ContainsFingerprint(moved, f) {
				res.HintsAdded = append(res.HintsAdded, f)
			}
		}
		res.HintsMoved, res.Conflicts = moved, append(res.Conflicts, conflicts...)
		if err := w.putIdentity(id); err != nil {
			return err
		}
		if err := w.hook("bind.hints"); err != nil {
			return err
		}
		if err := w.bind(d.Key, id.ID); err != nil {
			return err
		}
		d.IdentityID = id.ID
		res.Device, res.Identity = d, id
		res.Events = len(w.r.events)
		return nil
	}
	if r.DryRun {
		if err := db.dryRun(ctx, fn); err != nil {
			return nil, err
		}
		return res, nil
	}
	_, err := db.update(ctx, fn)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// boundAlready returns the identity d is bound to when r asks for that very binding (the
// identity by id, or a new one by the name and slug it already has) and d would bring it
// no new hint: a retried bind. nil otherwise.
func (w *wtx) boundAlready(d *graph.Device, r graph.BindRequest, hints []graph.Fingerprint) *graph.Identity {
	if d.IdentityID == "" {
		return nil
	}
	cur, err := getIdentity(w.tx, slugOf(d.IdentityID))
	if err != nil || cur == nil {
		return nil
	}
	switch {
	case r.New != nil:
		if !strings.EqualFold(strings.TrimSpace(r.New.Name), cur.Name) || (r.New.Slug != "" && r.New.Slug != slugOf(cur.ID)) {
			return nil
		}
	case r.IdentityID != "":
		full, err := w.db.resolve(w.tx, r.IdentityID, graph.KindIdentity)
		if err != nil || full != cur.ID {
			return nil
		}
	default:
		return nil
	}
	for _, f := range hints {
		if !graph.ContainsFingerprint(cur.Hints, f) {
			return nil
		}
	}
	return cur
}

// contradictions lists where a device's evidence contradicts an identity's hints: another
// model (usb_id), or another unit (usb_serial, mac, robot_serial), where the identity
// holds hints of that kind and the device shows none of them.
func contradictions(id *graph.Identity, hints []graph.Fingerprint) []string {
	var out []string
	for _, k := range []graph.FingerprintKind{graph.FPUSBID, graph.FPUSBSerial, graph.FPMAC, graph.FPRobotSerial} {
		var shows, holds []string
		for _, f := range hints {
			if f.Kind == k {
				shows = append(shows, f.Value)
			}
		}
		for _, f := range id.Hints {
			if f.Kind == k {
				holds = append(holds, f.Value)
			}
		}
		if len(shows) == 0 || len(holds) == 0 {
			continue
		}
		shared := false
		for _, v := range shows {
			shared = shared || slices.Contains(holds, v)
		}
		if shared {
			continue
		}
		what := "another unit"
		if k == graph.FPUSBID {
			what = "another model"
		}
		out = append(out, fmt.Sprintf("it shows %s %s where the identity holds %s (%s)", k, strings.Join(shows, " and "), strings.Join(holds, " and "), what))
	}
	return out
}

func dedupe(fps []graph.Fingerprint) []graph.Fingerprint {
	var out []graph.Fingerprint
	for _, f := range fps {
		if !graph.ContainsFingerprint(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func (db *DB) UnbindDevice(ctx context.Context, deviceID string) (*graph.Device, error) {
	var out *graph.Device
	_, err := db.update(ctx, func(w *wtx) error {
		full, err := w.db.resolve(w.tx, deviceID, graph.KindDevice)
		if err != nil {
			return err
		}
		out, err = w.unbind(devKey(full))
		return err
	})
	return out, err
}
