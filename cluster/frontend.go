// Package cluster keeps devgraph's graph on an etcd cluster, for a fleet of hosts: each
// host runs a front end (devgraph serve --store etcd://…) that reads a local bbolt replica
// of the whole graph, kept current by etcd Watch, and writes by shipping the store's own
// write sets to etcd as one Txn fenced on the shared store's last commit. etcd's client is
// used here and nowhere else.
//
// Keys, under the target's prefix P:
//
//	P/schema            the schema version of the records (written when the cluster is seeded; "N>M" while a migration runs, upgrade.go)
//	P/migrate           a migration's marker, while it runs (upgrade.go)
//	P/txn               the id of the newest commit; every commit writes it, so its ModRevision is the fence
//	P/req/<id>          one per commit, so a retried Txn whose first try committed is known (leased, ≤ 2 min)
//	P/d/<bucket>/<key>  the records: exactly the keys and values of one bbolt file's buckets
//	P/hosts/<name>      a live host's claim of its name (leased, 10 s)
//	P/live/<name>       a live host's published state (leased)
//	P/robot/<name>/...  the robots a host drives, and commands for them from other hosts (robots.go)
package cluster

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	"github.com/google/uuid"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// What devgraph needs of a cluster: with the store's per-node caps every change fits one
// Txn of this many operations and bytes (etcd's --max-txn-ops and --max-request-bytes).
const (
	NeedTxnOps       = 16384
	NeedRequestBytes = 10 << 20
)

// HostTTL is how long a host that stopped renewing its lease still shows as live.
const HostTTL = 10

// Config opens a front end.
type Config struct {
	Store     string // the --store URL
	Replica   string // the replica's path; "" for the default cache file
	Host      string // this host's name (a slug)
	MachineID string // this machine's id (/etc/machine-id), so a restarted host takes its name back
	Version   string // devgraph's version, published with the host's claim
	Logger    *slog.Logger
	Store0    store.Options // options for the replica (clock, logger); ReplicaOf and Committer are set here

	// ConnectTimeout bounds how long Open tries to reach the cluster; 10 s when zero.
	ConnectTimeout time.Duration

	dialOptions []grpc.DialOption // tests: to lose an answer on its way back
}

// FrontEnd is one host's connection to the fleet's graph.
type FrontEnd struct {
	cfg    Config
	target *Target
	cli    *clientv3.Client
	db     *store.DB
	log    *slog.Logger
	name   string // the cluster's name: "etcd:<cluster id><prefix>"

	leaseMu sync.Mutex
	lease   *leaseEpoch // the host's lease (lease.go): hostLease()
	reqs    reqLeases   // the lease new request keys ride on (lease.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	watchRev atomic.Int64 // the newest revision the feed has seen
	headRev  atomic.Int64 // the cluster's revision when last asked

	// Taking turns with the other front ends that write (committer.Pace).
	ownRev  atomic.Int64 // the revision of this front end's newest commit
	otherAt atomic.Int64 // when the feed last applied another front end's commit (Unix ns)
	txnTime atomic.Int64 // a commit's round trip, a moving average (ns)

	stats Stats

	up upgrade // the cluster's schema while it is not this devgraph's (upgrade.go)

	view fleetView // the fleet's live hosts and their live state (live.go)
	pub  publisher // this host's live state (live.go)
}

// Stats counts what the committer did, for the load command and doctor.
type Stats struct {
	Commits, Conflicts, Retries, Ambiguous, Rebuilds atomic.Int64
}

// Open connects to the cluster, checks its limits and schema, claims the host name, and
// opens (filling or catching up) the local replica. The returned front end's DB is the
// store every edge reads and writes, exactly as a single file's.
func Open(ctx context.Context, cfg Config) (*FrontEnd, error) {
	t, err := ParseStore(cfg.Store)
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if err := validHost(cfg.Host); err != nil {
		return nil, err
	}
	fe := &FrontEnd{cfg: cfg, target: t, log: cfg.Logger, reqs: reqLeases{ttl: reqLeaseTTL, use: reqLeaseUse}}
	fe.ctx, fe.cancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			fe.Close()
		}
	}()
	if err := fe.connect(ctx); err != nil {
		return nil, err
	}
	if err := fe.probeLimits(ctx); err != nil {
		return nil, err
	}
	if err := fe.claimHost(ctx); err != nil {
		return nil, err
	}
	if err := fe.openReplica(ctx); err != nil {
		return nil, err
	}
	if err := fe.startLive(ctx); err != nil {
		return nil, err
	}
	ok = true
	return fe, nil
}

// DB returns the store on the replica.
func (fe *FrontEnd) DB() *store.DB { return fe.db }

// Name returns the cluster's name, as the replica records it.
func (fe *FrontEnd) Name() string { return fe.name }

// Host returns this front end's host name.
func (fe *FrontEnd) Host() string { return fe.cfg.Host }

// Stats returns the committer's counters.
func (fe *FrontEnd) Stats() *Stats { return &fe.stats }

// Lost is closed when the lease the host holds now is lost (the cluster unreachable past
// its TTL); the host then claims its name again under a new lease (lease.go).
func (fe *FrontEnd) Lost() <-chan struct{} { return fe.hostLease().lost }

// Close stops the feed, gives up the host's lease and closes the replica.
func (fe *FrontEnd) Close() error {
	fe.cancel()
	fe.wg.Wait()
	var err error
	if fe.db != nil {
		err = fe.db.Close()
	}
	if fe.cli != nil {
		if ep := fe.hostLease(); ep != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			fe.cli.Revoke(ctx, ep.id)
			cancel()
		}
		fe.cli.Close()
	}
	return err
}

func (fe *FrontEnd) connect(ctx context.Context) error {
	cli, name, err := dial(ctx, fe.target, fe.cfg.ConnectTimeout, fe.cfg.dialOptions...)
	if err != nil {
		return err
	}
	fe.cli, fe.name = cli, name
	return nil
}

// dial connects to the cluster at t and waits (up to timeout, retrying with backoff)
// until one of its endpoints answers; it returns the client and the cluster's name,
// "etcd:<cluster id><prefix>". What the front end and the offline verbs share.
func dial(ctx context.Context, t *Target, timeout time.Duration, opts ...grpc.DialOption) (*clientv3.Client, string, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          t.Endpoints,
		DialTimeout:        2 * time.Second,
		TLS:                t.TLS,
		MaxCallSendMsgSize: NeedRequestBytes + 1<<20,
		MaxCallRecvMsgSize: 256 << 20,
		Logger:             zap.NewNop(),
		// Keep the connection honest: a dead member is noticed in seconds.
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		DialOptions:          opts,
	})
	if err != nil {
		return nil, "", graph.Errorf(graph.EUNAVAILABLE, "cannot use etcd at %s: %v", t.endpointList(), err)
	}
	deadline := time.Now().Add(timeout)
	var last error
	for attempt := 0; ; attempt++ {
		for _, ep := range t.Endpoints {
			wait := min(2*time.Second, max(time.Until(deadline), 100*time.Millisecond))
			actx, cancel := context.WithTimeout(ctx, wait)
			st, err := cli.Status(actx, ep)
			cancel()
			if err == nil {
				return cli, fmt.Sprintf("etcd:%x%s", st.Header.ClusterId, t.Prefix), nil
			}
			last = err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(min(backoff(attempt, 200*time.Millisecond, 2*time.Second), max(time.Until(deadline), 0))):
		case <-ctx.Done():
		}
	}
	cli.Close()
	return nil, "", graph.Errorf(graph.EUNAVAILABLE, "cannot reach etcd at %s within %s (%v); %s", t.endpointList(), timeout, short(last), tlsHint(t))
}

// tlsHint says what to check when no endpoint answered: a TLS handshake with the first
// endpoint tells a plain etcd:// aimed at a TLS member, and a certificate that cacert
// does not trust, from a member that is not there.
func tlsHint(t *Target) string {
	d := &net.Dialer{Timeout: time.Second}
	if t.TLS == nil {
		// Only to learn whether it speaks TLS: nothing is sent over it.
		conn, err := tls.DialWithDialer(d, "tcp", t.Endpoints[0], &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			conn.Close()
			return "the cluster speaks TLS: use etcds://…?cacert=&cert=&key="
		}
		return "check --store and that etcd runs there"
	}
	cfg := t.TLS.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(t.Endpoints[0])
	}
	conn, err := tls.DialWithDialer(d, "tcp", t.Endpoints[0], cfg)
	switch {
	case err == nil:
		conn.Close()
	case strings.Contains(err.Error(), "certificate"):
		return fmt.Sprintf("its TLS: %v; check cacert, cert and key", err)
	default:
		// A plain member answers etcd's /version over HTTP.
		hc := &http.Client{Timeout: time.Second}
		if resp, err := hc.Get("http://" + t.Endpoints[0] + "/version"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "the cluster does not speak TLS there: use etcd://"
			}
		}
	}
	return "check --store, that etcd runs there, and its TLS (cacert, cert, key)"
}

func short(err error) string {
	if err == nil {
		return "no answer"
	}
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}

func (fe *FrontEnd) probeLimits(ctx context.Context) error {
	return probeLimits(ctx, fe.cli, fe.target)
}

// probeLimits asks the cluster to take a Txn of NeedTxnOps operations and one of
// NeedRequestBytes, each guarded by a comparison that is never true, so nothing is
// written: etcd checks both limits before it looks at the comparison. A cluster whose
// limits are too small gives an ELIMIT error naming the flags it needs.
func probeLimits(ctx context.Context, cli *clientv3.Client, t *Target) error {
	never := clientv3.Compare(clientv3.CreateRevision(t.key("probe")), "<", 0)
	ops := make([]clientv3.Op, NeedTxnOps)
	for i := range ops {
		ops[i] = clientv3.OpPut(t.key("probe", strconv.Itoa(i)), "")
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := cli.Txn(actx).If(never).Then(ops...).Commit()
	cancel()
	if err != nil {
		if errors.Is(err, rpctypes.ErrTooManyOps) || strings.Contains(err.Error(), "too many operations") {
			return graph.Errorf(graph.ELIMIT, "the etcd cluster at %s allows fewer than %d operations in one transaction; devgraph needs every member started with --max-txn-ops=%d --max-request-bytes=%d", t.endpointList(), NeedTxnOps, NeedTxnOps, NeedRequestBytes)
		}
		return graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer the limits probe: %v", t.endpointList(), short(err))
	}
	big := make([]byte, NeedRequestBytes-64<<10)
	actx, cancel = context.WithTimeout(ctx, 10*time.Second)
	_, err = cli.Txn(actx).If(never).Then(clientv3.OpPut(t.key("probe"), string(big))).Commit()
	cancel()
	if err != nil {
		if isTooBig(err) {
			return graph.Errorf(graph.ELIMIT, "the etcd cluster at %s refuses requests of %d bytes; devgraph needs every member started with --max-request-bytes=%d --max-txn-ops=%d", t.endpointList(), NeedRequestBytes, NeedRequestBytes, NeedTxnOps)
		}
		return graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer the limits probe: %v", t.endpointList(), short(err))
	}
	return nil
}

func isTooBig(err error) bool {
	if errors.Is(err, rpctypes.ErrRequestTooLarge) || errors.Is(err, rpctypes.ErrTooManyOps) {
		return true
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "request is too large") || strings.Contains(msg, "too many operations") || strings.Contains(msg, "larger than max")
}

// hostClaim is the value of P/hosts/<name>.
type hostClaim struct {
	MachineID string    `json:"machine_id"`
	Version   string    `json:"version"`
	Schema    int       `json:"schema"`
	Since     time.Time `json:"since"`
}

// validHost checks a host name: a slug of lowercase letters, digits and inner dashes.
func validHost(h string) error {
	ok := h != "" && len(h) <= 63 && h[0] != '-' && h[len(h)-1] != '-'
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			ok = false
		}
	}
	if !ok {
		return graph.FieldErrorf(graph.EINVALID, "host-name", "host name %q is not a slug (lowercase letters, digits and inner dashes, at most 63); pass --host-name", h)
	}
	return nil
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	if s == "" {
		return "unknown"
	}
	return s
}

// DefaultReplica is where a front end keeps its replica when --db names none.
func DefaultReplica(name string) string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(dir, "devgraph", "replica-"+hex.EncodeToString(sum[:6])+".db")
}

// openReplica opens the replica (creating it), seeds an empty cluster from it, fills or
// catches it up, and starts the feed.
func (fe *FrontEnd) openReplica(ctx context.Context) error {
	path := fe.cfg.Replica
	if path == "" {
		path = DefaultReplica(fe.name)
	}
	// Ours and the claims of front ends starting with us: a prefix being seeded right now
	// holds those and nothing else until the seed commits.
	seeded, rev, err := checkGraph(ctx, fe.cli, fe.target, allHostClaims)
	var older *olderGraph
	if errors.As(err, &older) {
		seeded, err = true, nil // served read-only, migrated locally (upgrade.go)
	}
	if err != nil {
		return err
	}
	fe.headRev.Store(rev)
	opts := fe.cfg.Store0
	opts.ReplicaOf = fe.name
	opts.ReplicaURL = fe.target.String()
	opts.Committer = (*committer)(fe)
	// A fleet's refs, device keys, usb_path fingerprints and actors carry their host; a
	// bare ref is this host's (store.Options.Fleet).
	opts.Host, opts.Fleet = fe.cfg.Host, true
	// A replica is a cache of what etcd holds: it skips fsync (a crash of the process loses
	// nothing; after a power cut a damaged replica is refilled from the cluster).
	opts.NoSync = true
	sidecar := path + ".replica"
	db, err := store.Open(path, opts)
	if err != nil && graph.ErrorCode(err) != graph.ELOCKED && graph.ErrorField(err) != "db" {
		if b, rerr := os.ReadFile(sidecar); rerr == nil && string(b) == fe.name {
			fe.log.Warn("cluster: the replica cannot be opened; refilling it from the cluster", "path", path, "err", err)
			os.Remove(path)
			os.Remove(path + ".pid")
			db, err = store.Open(path, opts)
		}
	}
	if err != nil {
		return err
	}
	fe.db = db
	if err := os.WriteFile(sidecar, []byte(fe.name), 0o600); err != nil {
		return graph.Errorf(graph.EINVALID, "cannot write %s beside the replica: %v", sidecar, err)
	}
	if !seeded {
		if err := fe.seed(ctx); err != nil {
			return err
		}
	}
	if older != nil {
		return fe.openOld(ctx, older.v, rev)
	}
	from, err := fe.catchUp(ctx)
	if err != nil {
		return err
	}
	fe.wg.Add(1)
	go fe.feed(from)
	return nil
}

// seed writes a fresh replica's records (format, version, counters) as the cluster's
// first commit, unless another front end seeded it first.
// allHostClaims, as checkGraph's own, counts every host claim (P/hosts/) as the caller's.
const allHostClaims = -1

// checkGraph reads what the target's prefix holds: whether it holds a devgraph graph
// (P/schema) and the revision it read at. A graph of another schema version is refused;
// so is a prefix without one that holds keys (a wrong prefix, another tool's keys, or an
// import that did not finish, which is named) beyond the own keys the caller put there.
func checkGraph(ctx context.Context, cli *clientv3.Client, t *Target, own int64) (seeded bool, rev int64, err error) {
	schemaKey := t.key("schema")
	// The schema, the keys under the prefix and the host claims, read at one revision.
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	txn, err := cli.Txn(gctx).Then(clientv3.OpGet(schemaKey),
		clientv3.OpGet(t.Prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly()),
		clientv3.OpGet(t.key("hosts")+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())).Commit()
	cancel()
	if err != nil {
		return false, 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", t.endpointList(), short(err))
	}
	rev = txn.Header.Revision
	if resp := txn.Responses[0].GetResponseRange(); len(resp.Kvs) > 0 {
		s, err := schemaOf(t, resp.Kvs)
		if err != nil {
			return false, rev, err
		}
		if err := schemaRefusal(t, s); err != nil {
			return true, rev, err
		}
		return true, rev, nil
	}
	// No schema: the prefix must hold nothing but the caller's own keys (a wrong prefix, or another tool's keys, is not ours to write into).
	if own == allHostClaims {
		own = txn.Responses[2].GetResponseRange().Count
	}
	if n := txn.Responses[1].GetResponseRange().Count - own; n > 0 {
		if m, err := readImportMarker(ctx, cli, t); err == nil && m != nil {
			return false, rev, m.unfinished(t)
		}
		return false, rev, graph.Errorf(graph.EINVALID, "the prefix %s on etcd at %s holds %d keys but no devgraph graph: is --store's prefix right?", t.Prefix, t.endpointList(), n)
	}
	return false, rev, nil
}

func (fe *FrontEnd) seed(ctx context.Context) error {
	var ops []clientv3.Op
	err := fe.db.Records(ctx, func(bucket, key, value []byte) error {
		ops = append(ops, clientv3.OpPut(fe.target.dataKey(bucket, key), string(value)))
		return nil
	})
	if err != nil {
		return err
	}
	id := uuid.NewString()
	ops = append(ops, clientv3.OpPut(fe.target.key("schema"), strconv.Itoa(migrations.CurrentVersion)), clientv3.OpPut(fe.target.key("txn"), id))
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := fe.cli.Txn(sctx).If(clientv3.Compare(clientv3.CreateRevision(fe.target.key("schema")), "=", 0)).Then(ops...).Commit()
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", fe.target.endpointList(), short(err))
	}
	if resp.Succeeded {
		fe.log.Info("cluster: seeded an empty cluster", "cluster", fe.name)
	}
	return nil
}

// catchUp makes the replica hold the cluster as of now: a replica that holds a revision
// etcd still has history for is left for the feed to catch up; any other is refilled from
// a snapshot. It returns the revision the feed starts watching from.
func (fe *FrontEnd) catchUp(ctx context.Context) (int64, error) {
	have := fe.db.ReplicaRev()
	if have > 0 {
		// Is the history after `have` still there? Ask for one revision of it.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := fe.cli.Get(wctx, fe.target.key("txn"), clientv3.WithRev(have))
		cancel()
		if err == nil && len(resp.Kvs) == 1 && resp.Kvs[0].ModRevision == have {
			return have + 1, nil
		}
	}
	return fe.rebuild(ctx)
}

// rebuild refills the replica from a consistent snapshot of the cluster, read page by
// page at one revision; it returns the revision to watch from.
func (fe *FrontEnd) rebuild(ctx context.Context) (int64, error) {
	fe.stats.Rebuilds.Add(1)
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	resp, err := fe.cli.Get(gctx, fe.target.key("txn"))
	cancel()
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", fe.target.endpointList(), short(err))
	}
	if len(resp.Kvs) == 0 {
		return 0, graph.Errorf(graph.EINVALID, "the cluster at %s has no devgraph graph under %s", fe.target.endpointList(), fe.target.Prefix)
	}
	rev, txnRev := resp.Header.Revision, resp.Kvs[0].ModRevision
	if fe.up.local() {
		// A graph at an older schema, served read-only (upgrade.go).
		if err := fillRecords(ctx, fe.cli, fe.target, fe.db, rev, txnRev, &migrations.Options{Host: fe.cfg.Host}); err != nil {
			return 0, err
		}
		fe.log.Info("cluster: replica filled from a snapshot and migrated locally", "cluster", fe.name, "revision", rev, "path", fe.db.Path())
		return rev + 1, nil
	}
	if err := fillRecords(ctx, fe.cli, fe.target, fe.db, rev, txnRev, nil); err != nil {
		return 0, err
	}
	fe.log.Info("cluster: replica filled from a snapshot", "cluster", fe.name, "revision", rev, "path", fe.db.Path())
	return rev + 1, nil
}

// fillRecords replaces the replica db with the cluster's records at revision rev (txnRev
// is the revision of its last commit there), inside the replica's one transaction:
// readers see the old graph or the new, never a mix. With migrate set (a graph at an
// older schema), the records are migrated to this devgraph's schema on the way, in a
// scratch file beside the replica, as a file's migration would; the cluster is not
// changed.
func fillRecords(ctx context.Context, cli *clientv3.Client, t *Target, db *store.DB, rev, txnRev int64, migrate *migrations.Options) error {
	fill := func(put func(bucket, key, value []byte) error) error {
		return scan(ctx, cli, t, rev, func(k, v []byte) error {
			b, key, err := t.splitDataKey(k)
			if err != nil {
				return err
			}
			return put(b, key, v)
		})
	}
	if migrate == nil {
		return db.ResetReplica(txnRev, fill)
	}
	scratch := db.Path() + ".migrating"
	os.Remove(scratch) // a leftover of a fill that died midway
	return db.ResetReplica(txnRev, func(put func(bucket, key, value []byte) error) error {
		_, err := migrations.MigrateRecords(scratch, *migrate, fill, put)
		return err
	})
}

// scanPage is how many records scan asks etcd for at once. etcd counts every key left in
// the range to answer each page (the response's Count), so a scan costs pages × keys left:
// scan reads bucket by bucket, in pages of 100,000, which keeps that count to the bucket.
// (One range of pages of 10,000 over a graph of 100,000 identities, some 2.7 million
// records, had etcd count through hundreds of millions of keys, and took over a minute.)
const scanPage = 100_000

// scan reads every record at revision rev, bucket by bucket, a page at a time. The next
// page is asked for while fn works through this one, so etcd's reading and the caller's
// writing overlap (a fresh replica's build is about half each).
func scan(ctx context.Context, cli *clientv3.Client, t *Target, rev int64, fn func(k, v []byte) error) error {
	type page struct {
		kvs []*mvccpb.KeyValue
		err error
	}
	pages := make(chan page, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(pages)
		for _, b := range migrations.AllBuckets {
			p := t.dataPrefix() + string(b) + "/"
			err := scanRange(ctx, cli, rev, p, clientv3.GetPrefixRangeEnd(p), func(kvs []*mvccpb.KeyValue) bool {
				select {
				case pages <- page{kvs: kvs}:
					return true
				case <-done:
					return false
				}
			})
			if err != nil {
				select {
				case pages <- page{err: err}:
				case <-done:
				}
				return
			}
			select {
			case <-done: // the reader gave up
				return
			default:
			}
		}
	}()
	for p := range pages {
		if p.err != nil {
			return p.err
		}
		for _, kv := range p.kvs {
			if err := fn(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// scanRange hands the keys in [start, end) at revision rev to page, a page at a time in
// key order, until page returns false or the range is read.
func scanRange(ctx context.Context, cli *clientv3.Client, rev int64, start, end string, page func([]*mvccpb.KeyValue) bool) error {
	for {
		gctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := cli.Get(gctx, start, clientv3.WithRange(end), clientv3.WithRev(rev), clientv3.WithLimit(scanPage), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
		cancel()
		if err != nil {
			return graph.Errorf(graph.EUNAVAILABLE, "reading the cluster's records at revision %d: %v", rev, short(err))
		}
		if len(resp.Kvs) > 0 && !page(resp.Kvs) {
			return nil
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// feed applies the cluster's commits to the replica as etcd's Watch delivers them, one
// revision per transaction, and rebuilds the replica when it missed one.
func (fe *FrontEnd) feed(from int64) {
	defer fe.wg.Done()
	for attempt := 0; fe.ctx.Err() == nil; attempt++ {
		next, ok := fe.watch(from)
		from = next
		if ok {
			attempt = 0
		}
		select {
		case <-time.After(backoff(attempt, 50*time.Millisecond, 2*time.Second)):
		case <-fe.ctx.Done():
			return
		}
	}
}

// watch applies what one Watch delivers until it ends; it returns the revision to watch
// from next and whether it applied anything.
func (fe *FrontEnd) watch(from int64) (int64, bool) {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(fe.ctx))
	defer cancel()
	progressed := false
	wch := fe.cli.Watch(ctx, fe.target.dataPrefix(), clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify())
	for resp := range wch {
		if resp.CompactRevision != 0 || errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			fe.log.Warn("cluster: the replica's history was compacted away; refilling it", "from", from)
			if next, err := fe.rebuild(fe.ctx); err == nil {
				return next, true
			}
			return from, false
		}
		if err := resp.Err(); err != nil {
			fe.log.Warn("cluster: watch interrupted", "err", short(err))
			return from, progressed
		}
		if resp.Header.Revision > 0 {
			fe.watchRev.Store(resp.Header.Revision)
		}
		evs := resp.Events
		for len(evs) > 0 {
			rev := evs[0].Kv.ModRevision
			n := 1
			for n < len(evs) && evs[n].Kv.ModRevision == rev {
				n++
			}
			if err := fe.apply(rev, evs[:n]); err != nil {
				if fe.ctx.Err() != nil || graph.ErrorCode(err) == graph.EUNAVAILABLE {
					return from, false // shutting down: the replica is closed
				}
				fe.log.Warn("cluster: the replica missed a commit; refilling it", "revision", rev, "err", err)
				if next, err := fe.rebuild(fe.ctx); err == nil {
					return next, true
				}
				return from, false
			}
			progressed = true
			from = rev + 1
			evs = evs[n:]
		}
	}
	return from, progressed
}

func (fe *FrontEnd) apply(rev int64, evs []*clientv3.Event) error {
	changes := make([]store.Change, 0, len(evs))
	for _, ev := range evs {
		b, k, err := fe.target.splitDataKey(ev.Kv.Key)
		if err != nil {
			return err
		}
		changes = append(changes, store.Change{Bucket: b, Key: k, Value: ev.Kv.Value, Deleted: ev.Type == clientv3.EventTypeDelete})
	}
	if err := fe.db.ApplyReplicated(rev, changes); err != nil {
		return err
	}
	// ApplyReplicated waited for a write of ours still committing, so one of our commits
	// has set ownRev by now: a newer revision is another front end's.
	if rev > fe.ownRev.Load() {
		fe.otherAt.Store(time.Now().UnixNano())
	}
	return nil
}

func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base << min(attempt, 10)
	if d > max || d <= 0 {
		d = max
	}
	return d/2 + rand.N(d/2+1)
}

// committer is the FrontEnd seen as the store's Committer.
type committer FrontEnd

// RefuseWrite (store.WriteRefuser) refuses a write before the store builds it while the
// front end is read-only; Commit refuses it too, as the answer may change in between.
func (c *committer) RefuseWrite() error { return (*FrontEnd)(c).refuseWrite() }

// Commit ships changes as one Txn: if no commit came after fence (P/txn's ModRevision)
// and this commit's request key is not there, make every change, write P/txn and the
// request key. A Txn that timed out may have committed: it is sent again, identical, and
// the request key (or P/txn still naming it) says whether the first one did, so a commit
// is never made twice nor reported lost.
func (c *committer) Commit(ctx context.Context, fence int64, changes []store.Change) (int64, error) {
	fe := (*FrontEnd)(c)
	if err := fe.refuseWrite(); err != nil {
		return 0, err
	}
	id := uuid.NewString()
	txnKey, reqKey := fe.target.key("txn"), fe.target.key("req", id)
	// One operation per key, its last change, in the order of first change (a Txn may not
	// name a key twice).
	ops := make([]clientv3.Op, 0, len(changes)+2)
	at := make(map[string]int, len(changes))
	size := 0
	for _, ch := range changes {
		k := fe.target.dataKey(ch.Bucket, ch.Key)
		var op clientv3.Op
		if ch.Deleted {
			op = clientv3.OpDelete(k)
		} else {
			op = clientv3.OpPut(k, string(ch.Value))
		}
		if i, ok := at[k]; ok {
			size -= len(ops[i].ValueBytes())
			ops[i] = op
		} else {
			at[k] = len(ops)
			ops = append(ops, op)
			size += len(k) + 16
		}
		size += len(ch.Value)
	}
	// The request key's lease is added when the Txn is sent (below): a short one (lease.go).
	ops = append(ops, clientv3.OpPut(txnKey, id), clientv3.OpPut(reqKey, ""))
	if len(ops) > NeedTxnOps || size > NeedRequestBytes-64<<10 {
		return 0, &store.TooBigError{Err: graph.Errorf(graph.ELIMIT, "this change is too big for one etcd transaction (%d operations, %d bytes; the cluster takes %d and %d): nothing was written; make it in smaller steps", len(ops), size, NeedTxnOps, NeedRequestBytes)}
	}
	schemaKey, schema := fe.target.key("schema"), strconv.Itoa(migrations.CurrentVersion)
	cmp := []clientv3.Cmp{
		clientv3.Compare(clientv3.ModRevision(txnKey), "=", fence),
		clientv3.Compare(clientv3.CreateRevision(reqKey), "=", 0),
		clientv3.Compare(clientv3.Value(schemaKey), "=", schema),
	}
	deadline := time.Now().Add(30 * time.Second)
	ambiguous, freshLease := false, false // a try's answer was lost; etcd no longer has the request lease
	for attempt := 0; ; attempt++ {
		lease, err := fe.requestLease(fe.ctx, freshLease)
		if err == nil {
			freshLease = false
			ops[len(ops)-1] = clientv3.OpPut(reqKey, strconv.FormatInt(fence, 10), clientv3.WithLease(lease))
			actx, cancel := context.WithTimeout(fe.ctx, 2*time.Second)
			var resp *clientv3.TxnResponse
			sent := time.Now()
			resp, err = fe.cli.Txn(actx).If(cmp...).Then(ops...).Else(clientv3.OpGet(reqKey), clientv3.OpGet(txnKey), clientv3.OpGet(schemaKey)).Commit()
			cancel()
			if err == nil {
				if resp.Succeeded {
					fe.stats.Commits.Add(1)
					if ambiguous {
						fe.stats.Ambiguous.Add(1)
					}
					fe.committed(resp.Header.Revision, time.Since(sent))
					return resp.Header.Revision, nil
				}
				if rev, ok := committedBefore(resp, id); ok {
					// An earlier try of this very Txn committed.
					fe.stats.Commits.Add(1)
					fe.stats.Ambiguous.Add(1)
					fe.committed(rev, 0)
					return rev, nil
				}
				return 0, fe.refused(resp, schema)
			}
			if isLeaseNotFound(err) {
				// The request lease is gone (this process stalled past it): nothing was
				// written; send the Txn again on a new one.
				freshLease = true
			} else {
				ambiguous = true
			}
		}
		if isTooBig(err) {
			return 0, &store.TooBigError{Err: graph.Errorf(graph.ELIMIT, "the etcd cluster refused this change as too big (%v): nothing was written; make it in smaller steps", short(err))}
		}
		if fe.ctx.Err() != nil {
			return 0, graph.Errorf(graph.EUNAVAILABLE, "the front end is shutting down; the change may have been made: look for it in the changelog")
		}
		if time.Now().After(deadline) {
			if !ambiguous { // no Txn was sent: it did not grant a request lease
				return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s has not answered for 30s (%v); nothing was written: try again once the cluster is back", fe.target.endpointList(), short(err))
			}
			return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s has not answered for 30s (%v); the change may have been made: look for it in the changelog once the cluster is back", fe.target.endpointList(), short(err))
		}
		fe.stats.Retries.Add(1)
		time.Sleep(backoff(attempt, 20*time.Millisecond, 500*time.Millisecond))
	}
}

// committed notes a commit of this front end's, and how long its Txn took (0: unknown).
func (fe *FrontEnd) committed(rev int64, took time.Duration) {
	if rev > fe.ownRev.Load() {
		fe.ownRev.Store(rev)
	}
	if took > 0 {
		if avg := time.Duration(fe.txnTime.Load()); avg > 0 {
			took = (7*avg + took) / 8
		}
		fe.txnTime.Store(int64(took))
	}
}

// Pace (store.Pacer) has the front ends that write take turns: commits are serial across
// the cluster (each is fenced on the one before), so two front ends that send at once
// race for the same fence, and the loser's Txn (a raft round of every member) is wasted,
// then made again. When the newest commit the replica holds is this front end's own and
// another front end committed lately, the next batch waits for that front end's commit,
// up to two round trips of a Txn, and is made on top of it (with the writes that queued
// meanwhile). A lone front end, or one whose newest commit is another's, never waits.
func (c *committer) Pace(ctx context.Context, held int64) {
	fe := (*FrontEnd)(c)
	rt := time.Duration(fe.txnTime.Load())
	if fe.db == nil || held == 0 || held != fe.ownRev.Load() || rt <= 0 {
		return
	}
	lately := min(max(16*rt, 20*time.Millisecond), time.Second)
	if time.Since(time.Unix(0, fe.otherAt.Load())) > lately {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, min(max(2*rt, time.Millisecond), 50*time.Millisecond))
	fe.db.WaitReplica(wctx, held+1)
	cancel()
}

// committedBefore reads a refused Txn's answer (the request key, P/txn) for an earlier
// try of the commit id: its request key, or P/txn still naming it, says it committed, and
// at which revision.
func committedBefore(resp *clientv3.TxnResponse, id string) (int64, bool) {
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return kvs[0].CreateRevision, true
	}
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 && string(kvs[0].Value) == id {
		return kvs[0].ModRevision, true
	}
	return 0, false
}

// refused says why a Txn that did not commit was refused: the schema moved (this front
// end is now read-only, and ReadOnly's subscribers are told), or another commit came
// first (a conflict, to make again on top).
func (fe *FrontEnd) refused(resp *clientv3.TxnResponse, schema string) error {
	if kvs := resp.Responses[2].GetResponseRange().Kvs; len(kvs) == 0 || string(kvs[0].Value) != schema {
		s, err := schemaOf(fe.target, kvs)
		if err != nil {
			return err
		}
		if s.v == 0 {
			return graph.Errorf(graph.EUNAVAILABLE, "this front end takes no writes: %s under %s is gone, so the cluster holds no devgraph graph there; check it with `devgraph --store %s doctor`", fe.target.key("schema"), fe.target.endpointList(), fe.target)
		}
		fe.up.set(s)
		return fe.refuseWrite()
	}
	var head int64
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		head = kvs[0].ModRevision
	}
	fe.stats.Conflicts.Add(1)
	return &store.ConflictError{Rev: head}
}
