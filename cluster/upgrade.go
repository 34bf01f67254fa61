package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"

	"github.com/google/uuid"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Upgrading a fleet. P/schema says which schema version the cluster's records are at.
// Hosts are upgraded one by one, so for a while newer front ends run beside older ones
// on a graph of the older version:
//
//   - A newer front end (schema M) that finds the graph at an older version N serves it
//     read-only: it fills its replica from the cluster and migrates the replica locally
//     with the migrations package's steps (never shipping the result), so the store code
//     reads it as always; every write is refused naming both versions and what to do.
//     The older front ends keep writing: on each of their commits (P/txn moves) the
//     replica is filled and migrated again from a snapshot, at most one refill at a time
//     and each at the newest revision, so a burst of commits costs one refill. A refill,
//     not a migration of each commit's records: a step is defined over a whole file and
//     may read records the commit did not touch (a step that rebuilds an index from
//     every record), and applying steps to a replica that mixes migrated records with
//     raw ones is only right for steps that happen to be per record and idempotent
//     (1→2 is not: it decodes every event as JSON). A refill is always right.
//   - `devgraph --store … migrate` (Client.Migrate), once no host of an older version is
//     live, migrates the cluster's records: it sets P/schema to "N>M" (so no front end
//     of either version commits meanwhile) with its marker P/migrate in one Txn, reads
//     the graph at that Txn's revision, runs the steps on a scratch copy, and ships the
//     difference in Txns each guarded by the marker; the last sets P/schema to M and
//     moves P/txn. Stopped midway, it is run again: the marker's revision names the
//     snapshot, so the same difference is shipped again (puts and deletes are
//     idempotent). The steps write no changelog event (a file's migration writes none),
//     so the chain is the same chain.
//   - A read-only front end that sees P/schema become M refills its replica as usual and
//     takes writes again, without a restart.

// schemaState is what P/schema holds: a version, or a migration from one to another.
type schemaState struct {
	v, to int // to > 0: a migration from v to to is under way
}

func parseSchema(s string) (schemaState, bool) {
	if from, to, ok := strings.Cut(s, ">"); ok {
		a, err1 := strconv.Atoi(from)
		b, err2 := strconv.Atoi(to)
		if err1 != nil || err2 != nil || a < 1 || b <= a {
			return schemaState{}, false
		}
		return schemaState{v: a, to: b}, true
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return schemaState{}, false
	}
	return schemaState{v: v}, true
}

func (s schemaState) String() string {
	if s.to > 0 {
		return fmt.Sprintf("%d>%d", s.v, s.to)
	}
	return strconv.Itoa(s.v)
}

// readSchema reads P/schema and a marker key (P/migrate, P/import) at one revision: the
// schema (zero when there is no graph) and the marker (nil when there is none).
func readSchema(ctx context.Context, cli *clientv3.Client, t *Target, markerKey string) (schemaState, *mvccpb.KeyValue, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := cli.Txn(gctx).Then(clientv3.OpGet(t.key("schema")), clientv3.OpGet(markerKey)).Commit()
	cancel()
	if err != nil {
		return schemaState{}, nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", t.endpointList(), short(err))
	}
	var marker *mvccpb.KeyValue
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		marker = kvs[0]
	}
	s, err := schemaOf(t, resp.Responses[0].GetResponseRange().Kvs)
	return s, marker, err
}

// schemaOf parses P/schema as read (zero when it is absent), refusing a value that is
// not a devgraph schema version: likely a wrong prefix.
func schemaOf(t *Target, kvs []*mvccpb.KeyValue) (schemaState, error) {
	if len(kvs) == 0 {
		return schemaState{}, nil
	}
	s, ok := parseSchema(string(kvs[0].Value))
	if !ok {
		return schemaState{}, graph.Errorf(graph.EINVALID, "%s under %s is not a devgraph schema version (%q): is --store's prefix right?", t.key("schema"), t.endpointList(), kvs[0].Value)
	}
	return s, nil
}

// olderGraph is checkGraph's refusal of a graph at an older schema version: a front end
// serves it read-only (migrated locally); other callers refuse it with its message.
type olderGraph struct {
	v   int
	err error
}

func (e *olderGraph) Error() string { return e.err.Error() }
func (e *olderGraph) Unwrap() error { return e.err }

// schemaRefusal explains a P/schema this devgraph cannot use as it is.
func schemaRefusal(t *Target, s schemaState) error {
	cur := migrations.CurrentVersion
	switch {
	case s.to > 0:
		return graph.Errorf(graph.EUNAVAILABLE, "a migration of the cluster's graph from schema version %d to %d is under way: wait for it to finish, or if it stopped, run it again with `devgraph --store %s migrate`", s.v, s.to, t)
	case s.v > cur:
		return graph.Errorf(graph.EINVALID, "the cluster's graph is at schema version %d, newer than this devgraph's %d: upgrade devgraph on this host", s.v, cur)
	case s.v < cur:
		return &olderGraph{v: s.v, err: graph.Errorf(graph.EINVALID, "the cluster's graph is at schema version %d, older than this devgraph's %d: the fleet is mid-upgrade; once every host runs this devgraph, migrate the graph with `devgraph --store %s migrate`", s.v, cur, t)}
	}
	return nil
}

// upgrade is a front end's state while the cluster's graph is not at its schema.
type upgrade struct {
	mu     sync.Mutex
	schema schemaState // the cluster's P/schema as last read; zero when it is this devgraph's
	subs   map[int]func()
	nextID int
}

func (u *upgrade) get() schemaState {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.schema
}

// set records the cluster's schema; when that turns the front end read-only or
// writable, OnReadOnly's subscribers are told, each on its own goroutine.
func (u *upgrade) set(s schemaState) {
	u.mu.Lock()
	changed := (u.schema.v == 0) != (s.v == 0)
	u.schema = s
	var fns []func()
	if changed {
		for _, fn := range u.subs {
			fns = append(fns, fn)
		}
	}
	u.mu.Unlock()
	for _, fn := range fns {
		go fn()
	}
}

// OnReadOnly calls fn, on a goroutine of its own, each time ReadOnly turns "" or stops
// being "" (the graph migrated, or found mid-upgrade); cancel stops the calls. fn reads
// ReadOnly for the state: calls may overtake each other. See graph.WriteState.
func (fe *FrontEnd) OnReadOnly(fn func()) (cancel func()) {
	u := &fe.up
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.subs == nil {
		u.subs = map[int]func(){}
	}
	id := u.nextID
	u.nextID++
	u.subs[id] = fn
	return func() {
		u.mu.Lock()
		delete(u.subs, id)
		u.mu.Unlock()
	}
}

// ReadOnly says why the front end takes no writes ("" when it takes them): the cluster's
// graph is at another schema version than this devgraph's.
func (fe *FrontEnd) ReadOnly() string {
	if err := fe.refuseWrite(); err != nil {
		return graph.ErrorMessage(err)
	}
	return ""
}

// refuseWrite is the one error every write gets while the graph is not at this
// devgraph's schema (nil when it is).
func (fe *FrontEnd) refuseWrite() error {
	s := fe.up.get()
	cur := migrations.CurrentVersion
	switch {
	case s.v == 0:
		return nil
	case s.to > 0:
		return graph.Errorf(graph.EUNAVAILABLE, "this front end is read-only: a migration of the cluster's graph from schema version %d to %d is under way; it takes writes again once that finishes (a stopped migration is resumed with `devgraph --store %s migrate`)", s.v, s.to, fe.target)
	case s.v == cur:
		return graph.Errorf(graph.EUNAVAILABLE, "this front end is read-only for a moment: the cluster's graph was just migrated to schema version %d and the replica is being refilled; try again", cur)
	case s.v < cur:
		return graph.Errorf(graph.EUNAVAILABLE, "this front end is read-only: the cluster's graph is at schema version %d and this devgraph writes version %d (the fleet is mid-upgrade); finish upgrading devgraph on every host, then run `devgraph --store %s migrate`; this front end takes writes again once the graph is at version %d", s.v, cur, fe.target, cur)
	default:
		return graph.Errorf(graph.EUNAVAILABLE, "this front end is read-only: the cluster's graph is now at schema version %d and this devgraph writes version %d; upgrade devgraph on host %s", s.v, cur, fe.cfg.Host)
	}
}

// local says whether the replica is filled by migrating the cluster's records locally:
// the graph is at an older version and no migration is under way.
func (u *upgrade) local() bool {
	s := u.get()
	return s.v != 0 && s.v < migrations.CurrentVersion && s.to == 0
}

// openOld serves a graph at an older schema version read-only: the replica is filled and
// migrated locally, and followOld keeps it so until the cluster is migrated.
// checked is the revision P/schema was read at: what changes after it is followed (a
// commit or a migration between that read and the refill costs a second refill).
func (fe *FrontEnd) openOld(ctx context.Context, v int, checked int64) error {
	fe.up.set(schemaState{v: v})
	fe.log.Warn("cluster: the cluster's graph is at an older schema version; serving it read-only until it is migrated", "cluster", fe.name, "schema", v, "this", migrations.CurrentVersion)
	if _, err := fe.rebuild(ctx); err != nil {
		return err
	}
	fe.wg.Add(1)
	go fe.followOld(checked + 1)
	return nil
}

// followOld watches P/schema and P/txn while the graph is at an older schema: each
// commit of an older front end refills the replica (migrated); a migration under way
// holds it as it is; the graph at this devgraph's schema ends read-only and starts the
// ordinary feed.
func (fe *FrontEnd) followOld(from int64) {
	defer fe.wg.Done()
	ctx, cancel := context.WithCancel(fe.ctx)
	defer cancel()
	var feedFrom int64
	// refresh reads the schema and refills the replica as it says; at this devgraph's
	// schema it ends the following, and the feed starts from next.
	refresh := func() (int64, error) {
		next, done, err := fe.refreshOld()
		if done {
			feedFrom = next
			cancel()
		}
		return next, err
	}
	start, end := fe.target.key("schema"), fe.target.key("txn")+"\x00"
	fe.follow(ctx, start, end, from, func(context.Context) (int64, error) {
		// The watch ended (cut off, or its history compacted): read the state now.
		next, err := refresh()
		return next - 1, err
	}, func([]*clientv3.Event) error {
		// A batch needs one refill: it reads the newest.
		if _, err := refresh(); err != nil {
			fe.log.Warn("cluster: could not refill the read-only replica; trying again", "err", err)
			return err
		}
		return nil
	})
	if feedFrom != 0 {
		fe.wg.Add(1)
		go fe.feed(feedFrom)
	}
}

// refreshOld reads P/schema and acts on it: an older version refills the replica
// (migrated); a migration under way, or a newer version, leaves it as it is; this
// devgraph's version refills it as usual and ends read-only (done). It returns the
// revision to watch from next.
func (fe *FrontEnd) refreshOld() (next int64, done bool, err error) {
	gctx, cancel := context.WithTimeout(fe.ctx, 5*time.Second)
	resp, err := fe.cli.Get(gctx, fe.target.key("schema"))
	cancel()
	if err != nil {
		return 0, false, err
	}
	var s schemaState
	if len(resp.Kvs) > 0 {
		s, _ = parseSchema(string(resp.Kvs[0].Value))
	}
	if s.v == 0 {
		return 0, false, fmt.Errorf("the cluster's schema key holds %q", kvValue(resp.Kvs))
	}
	fe.up.set(s)
	switch {
	case s.to > 0 || s.v > migrations.CurrentVersion:
		return resp.Header.Revision + 1, false, nil
	case s.v < migrations.CurrentVersion:
		next, err := fe.rebuild(fe.ctx)
		return next, false, err
	}
	next, err = fe.rebuild(fe.ctx)
	if err != nil {
		return 0, false, err
	}
	fe.up.set(schemaState{})
	fe.log.Info("cluster: the cluster's graph was migrated to this devgraph's schema version; this front end takes writes again", "cluster", fe.name, "schema", s.v)
	return next, true, nil
}

func kvValue(kvs []*mvccpb.KeyValue) string {
	if len(kvs) == 0 {
		return ""
	}
	return string(kvs[0].Value)
}

// migrateMarker is P/migrate: written with P/schema "N>M" and removed with P/schema M;
// its revision is the revision the migration read the graph at.
type migrateMarker struct {
	ID        string    `json:"id"`
	From      int       `json:"from"`
	To        int       `json:"to"`
	Host      string    `json:"host"`
	MachineID string    `json:"machine_id"`
	Started   time.Time `json:"started"`
}

// MigrateOptions say who migrates and where its scratch file goes.
type MigrateOptions struct {
	Host      string // who migrates, for the marker; also the host an old graph's devices get (3→4)
	MachineID string
	Scratch   string // a path for the scratch file (must not exist)
	Progress  func(done, total int)
}

// MigrateStats says what Migrate did.
type MigrateStats struct {
	From    int  `json:"from"`
	To      int  `json:"to"`
	Puts    int  `json:"puts"`    // records written
	Deletes int  `json:"deletes"` // records removed
	Txns    int  `json:"txns"`
	Resumed bool `json:"resumed,omitempty"` // a stopped migration was carried on
	Already bool `json:"already,omitempty"` // the graph was at this devgraph's schema: nothing to do
}

// migrateBatch is the most operations Migrate puts in one Txn (tests make it small);
// stopMigrate, when set, is called after each of its record Txns and stops it with its
// error (tests stop one halfway).
var (
	migrateBatch = NeedTxnOps
	stopMigrate  func(txns int) error
)

// Migrate carries the cluster's graph from its schema version to this devgraph's (see
// the top of this file). It refuses while a host of an older devgraph is live, and
// resumes a migration that stopped.
func (c *Client) Migrate(ctx context.Context, o MigrateOptions) (*MigrateStats, error) {
	t := c.target
	schemaKey, markerKey := t.key("schema"), t.key("migrate")
	s, mkv, err := readSchema(ctx, c.cli, t, markerKey)
	if err != nil {
		return nil, err
	}
	if s.v == 0 {
		return nil, c.noGraph()
	}
	cur := migrations.CurrentVersion
	st := &MigrateStats{From: s.v, To: cur}
	var markerRaw string
	var rev int64
	switch {
	case s.to > 0:
		if mkv == nil {
			return nil, graph.Errorf(graph.EINVALID, "the cluster's graph says a migration from %d to %d is under way, but its marker %s is gone: restore the graph from a backup (devgraph backup)", s.v, s.to, markerKey)
		}
		if s.to != cur {
			return nil, graph.Errorf(graph.EINVALID, "a migration of the cluster's graph from %d to %d is under way, started by another devgraph version; run that version's migrate to finish it", s.v, s.to)
		}
		markerRaw, rev, st.Resumed = string(mkv.Value), mkv.ModRevision, true
	case s.v > cur:
		return nil, schemaRefusal(t, s)
	case s.v == cur:
		st.Already = true
		return st, nil
	default:
		if err := c.checkNoOldHosts(ctx); err != nil {
			return nil, err
		}
		raw, _ := json.Marshal(migrateMarker{ID: uuid.NewString(), From: s.v, To: cur, Host: o.Host, MachineID: o.MachineID, Started: time.Now().UTC()})
		markerRaw = string(raw)
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		tr, err := c.cli.Txn(tctx).If(clientv3.Compare(clientv3.Value(schemaKey), "=", s.String()), clientv3.Compare(clientv3.CreateRevision(markerKey), "=", 0)).
			Then(clientv3.OpPut(schemaKey, schemaState{v: s.v, to: cur}.String()), clientv3.OpPut(markerKey, markerRaw)).Commit()
		cancel()
		if err != nil {
			return nil, graph.Errorf(graph.EUNAVAILABLE, "migrate: etcd at %s did not answer: %v; nothing was changed unless `devgraph --store %s doctor` says a migration is under way (then run migrate again)", t.endpointList(), short(err), t)
		}
		if !tr.Succeeded {
			return nil, graph.Errorf(graph.ECONFLICT, "migrate: the cluster's schema changed while starting (another migrate?); run it again")
		}
		rev = tr.Header.Revision
		st.Txns++
	}
	// The graph as of the marker's revision, migrated in a scratch file; the difference
	// from what the cluster held then is what to ship.
	held := map[string][16]byte{}
	type op struct {
		k, v string
		del  bool
	}
	var diff []op
	_, err = migrations.MigrateRecords(o.Scratch, migrations.Options{Host: o.Host}, func(put func(b, k, v []byte) error) error {
		return scan(ctx, c.cli, t, rev, func(k, v []byte) error {
			b, key, err := t.splitDataKey(k)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(v)
			held[string(k)] = [16]byte(sum[:16])
			return put(b, key, v)
		})
	}, func(b, k, v []byte) error {
		dk := t.dataKey(b, k)
		sum := sha256.Sum256(v)
		if h, ok := held[dk]; !ok || h != [16]byte(sum[:16]) {
			diff = append(diff, op{k: dk, v: string(v)})
		}
		delete(held, dk)
		return nil
	})
	if err != nil {
		if strings.Contains(err.Error(), "compacted") {
			return nil, graph.Errorf(graph.EINVALID, "migrate: the graph as it was when this migration started (revision %d) was compacted away in etcd, so the stopped migration cannot be finished: restore the cluster from a backup", rev)
		}
		return nil, err
	}
	for k := range held {
		diff = append(diff, op{k: k, del: true})
	}
	sh := &shipper{ctx: ctx, cli: c.cli, batch: migrateBatch, txns: st.Txns,
		guard: []clientv3.Cmp{
			clientv3.Compare(clientv3.Value(schemaKey), "=", schemaState{v: s.v, to: cur}.String()),
			clientv3.Compare(clientv3.Value(markerKey), "=", markerRaw),
		},
		failed: func(what string, err error) error {
			if err != nil {
				return graph.Errorf(graph.EUNAVAILABLE, "migrate: etcd at %s did not take %s: %v; the migration stopped halfway (no front end writes meanwhile): run `devgraph --store %s migrate` again to finish it", t.endpointList(), what, short(err), t)
			}
			return graph.Errorf(graph.ECONFLICT, "migrate: the cluster's schema or migration marker changed before %s (another migrate finished it?); check with `devgraph --store %s doctor`", what, t)
		},
	}
	sh.shipped = func(done int) error {
		if o.Progress != nil {
			o.Progress(done, len(diff))
		}
		if stopMigrate != nil {
			return stopMigrate(sh.txns)
		}
		return nil
	}
	for _, d := range diff {
		op := clientv3.OpPut(d.k, d.v)
		if d.del {
			op = clientv3.OpDelete(d.k)
			st.Deletes++
		} else {
			st.Puts++
		}
		if err := sh.add(op); err != nil {
			return nil, err
		}
	}
	// The schema at cur with the marker gone says the last Txn was made.
	err = sh.finish("the schema key that ends it", t, strconv.Itoa(cur), markerKey, func(s schemaState, marker *mvccpb.KeyValue) bool {
		return marker == nil && s == schemaState{v: cur}
	})
	if err != nil {
		return nil, err
	}
	st.Txns = sh.txns
	return st, nil
}

// checkNoOldHosts refuses a migration while a host of an older devgraph is live: it
// would go on writing the old schema.
func (c *Client) checkNoOldHosts(ctx context.Context) error {
	hosts, err := c.LiveHosts(ctx)
	if err != nil {
		return err
	}
	old := oldHosts(hosts)
	if len(old) == 0 {
		return nil
	}
	return graph.Errorf(graph.ECONFLICT, "migrate: %s still %s an older devgraph on the cluster at %s; upgrade devgraph there (or stop it) and run migrate again", strings.Join(old, ", "), okIf(len(old) > 1, "run", "runs"), c.target.endpointList())
}

// oldHosts names the live hosts of an older devgraph, with their version and schema.
func oldHosts(hosts []LiveHost) []string {
	var old []string
	for _, h := range hosts {
		if h.Schema < migrations.CurrentVersion {
			old = append(old, fmt.Sprintf("%s (devgraph %s, schema %d)", h.Name, okIf(h.Version == "", "unknown", h.Version), h.Schema))
		}
	}
	return old
}

// SchemaStatus is the cluster's graph's schema as `migrate --status` and doctor show it.
type SchemaStatus struct {
	Version     int      `json:"version"`                // the records' version (0: no graph)
	MigratingTo int      `json:"migrating_to,omitempty"` // a migration to this version is under way
	Current     int      `json:"current"`                // what this devgraph writes
	Pending     []string `json:"pending,omitempty"`      // the steps a migration would run
	Started     string   `json:"started,omitempty"`      // when and where the migration under way started
	OldHosts    []string `json:"old_hosts,omitempty"`    // live hosts of an older devgraph, which keep migrate from running
}

// SchemaStatus reads the graph's schema, a migration under way and the live hosts of an
// older devgraph, changing nothing.
func (c *Client) SchemaStatus(ctx context.Context) (*SchemaStatus, error) {
	s, marker, err := readSchema(ctx, c.cli, c.target, c.target.key("migrate"))
	if err != nil {
		return nil, err
	}
	st := &SchemaStatus{Version: s.v, MigratingTo: s.to, Current: migrations.CurrentVersion}
	if marker != nil {
		var m migrateMarker
		json.Unmarshal(marker.Value, &m)
		st.Started = fmt.Sprintf("%s on host %s", m.Started.Format(time.RFC3339), okIf(m.Host == "", "unknown", m.Host))
	}
	if st.Version > 0 {
		st.Pending = migrations.PendingSteps(st.Version)
	}
	hosts, err := c.LiveHosts(ctx)
	if err != nil {
		return nil, err
	}
	st.OldHosts = oldHosts(hosts)
	return st, nil
}
