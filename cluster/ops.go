package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	"github.com/google/uuid"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Client is a connection to a fleet's cluster for the verbs that work on it without
// being a host (changelog verify, export, backup, import, doctor): it claims no host
// name and keeps no replica of its own.
type Client struct {
	target *Target
	cli    *clientv3.Client
	name   string
}

// Dial connects to the cluster a --store URL names, trying for up to timeout (10 s when
// zero) before it gives up naming the endpoints.
func Dial(ctx context.Context, storeURL string, timeout time.Duration) (*Client, error) {
	t, err := ParseStore(storeURL)
	if err != nil {
		return nil, err
	}
	cli, name, err := dial(ctx, t, timeout)
	if err != nil {
		return nil, err
	}
	return &Client{target: t, cli: cli, name: name}, nil
}

// Name returns the cluster's name, as a front end's replica records it.
func (c *Client) Name() string { return c.name }

// Close ends the connection.
func (c *Client) Close() error { return c.cli.Close() }

// Serves reports whether a replica's cluster name (store.DB.ReplicaOf) is this
// cluster's graph.
func (c *Client) Serves(replicaOf string) bool { return replicaOf == c.name }

// Snapshot writes the cluster's graph as of one revision into a new replica file at
// path: a consistent copy the store reads like any file, for the verbs that read the
// whole graph without a front end. A graph at an older schema (the fleet mid-upgrade)
// is migrated in the copy, as a read-only front end's replica is (a graph from before
// hosts gives its devices opts.Host); the cluster is not changed. It returns the
// revision of the cluster's last commit the copy holds. opts are the store's (logger,
// timeout, the caller's host); ReplicaOf and Fleet are set here.
func (c *Client) Snapshot(ctx context.Context, path string, opts store.Options) (int64, error) {
	// A first front end claims its host before it seeds the graph: its claim is not
	// someone else's keys.
	seeded, _, err := checkGraph(ctx, c.cli, c.target, c.liveHostKeys(ctx))
	var migrate *migrations.Options // a graph at an older schema: migrated in the copy
	if older := (*olderGraph)(nil); errors.As(err, &older) {
		migrate, err = &migrations.Options{Host: opts.Host}, nil
	}
	if err != nil {
		return 0, err
	}
	if !seeded {
		return 0, c.noGraph()
	}
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	resp, err := c.cli.Get(gctx, c.target.key("txn"))
	cancel()
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", c.target.endpointList(), short(err))
	}
	if len(resp.Kvs) == 0 {
		return 0, c.noGraph()
	}
	rev, txnRev := resp.Header.Revision, resp.Kvs[0].ModRevision
	opts.ReplicaOf, opts.Committer, opts.Fleet = c.name, nil, true
	db, err := store.Open(path, opts)
	if err != nil {
		return 0, err
	}
	err = fillRecords(ctx, c.cli, c.target, db, rev, txnRev, migrate)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return txnRev, nil
}

func (c *Client) noGraph() error {
	return graph.Errorf(graph.ENOTFOUND, "the cluster at %s holds no devgraph graph under %s yet: start a front end (devgraph serve --store %s), or import an export into it", c.target.endpointList(), c.target.Prefix, c.target)
}

// Head returns the revision of the cluster's last commit (P/txn's ModRevision; 0 when
// the cluster holds no graph): a replica holding it is current.
func (c *Client) Head(ctx context.Context) (int64, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := c.cli.Get(gctx, c.target.key("txn"))
	cancel()
	if err != nil {
		return 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", c.target.endpointList(), short(err))
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	return resp.Kvs[0].ModRevision, nil
}

// Member is one etcd member as doctor shows it.
type Member struct {
	Name       string `json:"name"`
	ID         string `json:"id"`
	Endpoint   string `json:"endpoint"`             // where doctor reached it: an endpoint --store gave, else its advertised client URL
	Advertised string `json:"advertised,omitempty"` // the client URL it advertises, when that is not Endpoint
	Healthy    bool   `json:"healthy"`
	Leader     bool   `json:"leader"`
	Version    string `json:"version,omitempty"`
	DBSize     int64  `json:"db_size"`
	RaftIndex  uint64 `json:"raft_index"`
	Error      string `json:"error,omitempty"`
}

// LiveHost is a host whose claim (P/hosts/<name>) is live.
type LiveHost struct {
	Name      string    `json:"name"`
	MachineID string    `json:"machine_id"`
	Version   string    `json:"version"`
	Schema    int       `json:"schema"`
	Since     time.Time `json:"since"`
}

// Health is the cluster as doctor reports it.
type Health struct {
	Name      string     `json:"name"`
	Endpoints []string   `json:"endpoints"`
	Prefix    string     `json:"prefix"`
	Members   []Member   `json:"members"`
	Alarms    []string   `json:"alarms,omitempty"`
	Limits    string     `json:"limits"` // "ok", or what is too small
	Schema    int        `json:"schema"` // the graph's schema version; 0 when there is no graph
	Graph     string     `json:"graph"`  // "ok", "none" (no graph yet), or what is wrong
	Hosts     []LiveHost `json:"hosts"`
	Head      int64      `json:"head_revision"` // the revision of the last commit
	Problems  []string   `json:"problems,omitempty"`
}

// Health checks the cluster: every member's status, alarms, the limits devgraph needs,
// the graph's schema, the live hosts and the last commit's revision. What is wrong is
// in Problems; an error means the cluster could not be asked at all.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	h := &Health{Name: c.name, Endpoints: c.target.Endpoints, Prefix: c.target.Prefix, Hosts: []LiveHost{}}
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	ml, err := c.cli.MemberList(mctx)
	cancel()
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not list its members: %v", c.target.endpointList(), short(err))
	}
	// The endpoints --store gave are asked first: the URLs members advertise may not be
	// reachable from this host (another network's names, a NAT).
	given := map[uint64]string{}                      // member id → the endpoint given that reached it
	statuses := map[uint64]*clientv3.StatusResponse{} // by member id
	unreached := map[string]error{}                   // endpoints given that did not answer
	for _, ep := range c.target.Endpoints {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := c.cli.Status(sctx, ep)
		cancel()
		if err != nil {
			unreached[ep] = err
			continue
		}
		if _, dup := given[st.Header.MemberId]; !dup {
			given[st.Header.MemberId], statuses[st.Header.MemberId] = ep, st
		}
	}
	for _, m := range ml.Members {
		mem := Member{Name: m.Name, ID: fmt.Sprintf("%x", m.ID)}
		if len(m.ClientURLs) > 0 {
			mem.Endpoint = m.ClientURLs[0]
		}
		st, err := statuses[m.ID], error(nil)
		if ep, ok := given[m.ID]; ok {
			if mem.Endpoint != "" && hostPort(mem.Endpoint) != ep {
				mem.Advertised = mem.Endpoint
			}
			mem.Endpoint = ep
		} else if mem.Endpoint == "" {
			mem.Error = "not started yet (no client URL)"
			h.Members = append(h.Members, mem)
			continue
		} else {
			if e, ok := unreached[hostPort(mem.Endpoint)]; ok {
				err = e // given, and it did not answer: no need to ask again
				delete(unreached, hostPort(mem.Endpoint))
			} else {
				sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				st, err = c.cli.Status(sctx, mem.Endpoint)
				cancel()
			}
		}
		if err != nil {
			mem.Error = short(err)
		} else {
			mem.Healthy = len(st.Errors) == 0 && st.Leader != 0
			mem.Leader = st.Leader == m.ID
			mem.Version, mem.DBSize, mem.RaftIndex = st.Version, st.DbSize, st.RaftIndex
			switch {
			case len(st.Errors) > 0:
				mem.Error = strings.Join(st.Errors, "; ")
			case st.Leader == 0:
				mem.Error = "it knows no leader (no quorum, or cut off from the others)"
			}
		}
		if !mem.Healthy {
			h.Problems = append(h.Problems, fmt.Sprintf("etcd member %s (%s) is unhealthy: %s", mem.Name, mem.Endpoint, mem.Error))
		}
		h.Members = append(h.Members, mem)
	}
	for _, ep := range c.target.Endpoints {
		if err, ok := unreached[ep]; ok {
			h.Problems = append(h.Problems, fmt.Sprintf("the endpoint %s that --store gives does not answer (%s): is it right, and is its member up?", ep, short(err)))
		}
	}
	sort.Slice(h.Members, func(i, j int) bool { return h.Members[i].Name < h.Members[j].Name })
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	al, err := c.cli.AlarmList(actx)
	cancel()
	if err == nil {
		for _, a := range al.Alarms {
			s := fmt.Sprintf("member %x: %s", a.MemberID, a.Alarm)
			h.Alarms = append(h.Alarms, s)
			h.Problems = append(h.Problems, "etcd alarm on "+s)
		}
	}
	h.Limits = "ok"
	if err := probeLimits(ctx, c.cli, c.target); err != nil {
		h.Limits = graph.ErrorMessage(err)
		h.Problems = append(h.Problems, h.Limits)
	}
	h.Graph = "ok"
	seeded, _, err := checkGraph(ctx, c.cli, c.target, c.liveHostKeys(ctx))
	switch {
	case err != nil:
		h.Graph = graph.ErrorMessage(err)
		h.Problems = append(h.Problems, h.Graph)
	case !seeded:
		h.Graph = "none"
	}
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	if resp, err := c.cli.Get(gctx, c.target.key("schema")); err == nil && len(resp.Kvs) > 0 {
		s, _ := parseSchema(string(resp.Kvs[0].Value))
		h.Schema = s.v
	}
	cancel()
	if h.Hosts, err = c.LiveHosts(ctx); err != nil {
		return nil, err
	}
	if h.Head, err = c.Head(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// liveHostKeys counts the keys live hosts hold under the prefix (their claims), which a
// prefix without a graph may hold while its first front end starts.
func (c *Client) liveHostKeys(ctx context.Context) int64 {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.cli.Get(gctx, c.target.key("hosts")+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0
	}
	return resp.Count
}

// LiveHosts returns the hosts whose claims are live, by name.
func (c *Client) LiveHosts(ctx context.Context) ([]LiveHost, error) {
	return liveHosts(ctx, c.cli, c.target)
}

// FleetHosts lists the live hosts (their claims) and the hosts this front end's replica
// holds devices of, online or not, by name: GraphQL's hosts. See graph.FleetHosts and
// JoinHosts. This host is offline while its lease is lost.
func (fe *FrontEnd) FleetHosts(ctx context.Context) ([]graph.FleetHost, error) {
	live, err := liveHosts(ctx, fe.cli, fe.target)
	if err != nil {
		return nil, err
	}
	lost := ""
	if fe.leaseLost() {
		lost = fe.cfg.Host
	}
	return JoinHosts(ctx, live, lost, fe.db.FindDevices)
}

// JoinHosts is a fleet's hosts as GraphQL's hosts and doctor show them, by name: the live
// hosts' claims joined with how many devices a graph holds of each host, present or
// remembered (a host with devices and no claim is offline). devices pages through the
// graph's devices (a store's FindDevices, a service's Devices; nil: no graph, the live
// hosts alone). lost, when not "", is a host whose lease is lost: it is offline, even
// without devices, and a claim under its name (another machine's meanwhile) is not its.
func JoinHosts[D *graph.Device | *graph.DeviceView](ctx context.Context, live []LiveHost, lost string, devices func(context.Context, graph.DeviceFilter) ([]D, int, string, error)) ([]graph.FleetHost, error) {
	counts := map[string]int{}
	for after := ""; devices != nil; {
		devs, _, next, err := devices(ctx, graph.DeviceFilter{All: true, First: graph.MaxPageSize, After: after})
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			switch d := any(d).(type) {
			case *graph.Device:
				counts[d.Host]++
			case *graph.DeviceView:
				counts[d.Host]++
			}
		}
		if next == "" || len(devs) == 0 {
			break
		}
		after = next
	}
	return fleetHosts(live, counts, lost), nil
}

// fleetHosts joins the live hosts' claims with the device counts by host: a host with
// devices and no claim is offline, and so is lost (see JoinHosts).
func fleetHosts(live []LiveHost, devices map[string]int, lost string) []graph.FleetHost {
	out := []graph.FleetHost{}
	seen := map[string]bool{}
	for _, h := range live {
		if h.Name == lost {
			continue
		}
		seen[h.Name] = true
		out = append(out, graph.FleetHost{Name: h.Name, Online: true, Since: h.Since, Version: h.Version, Schema: h.Schema, Devices: devices[h.Name]})
	}
	for name, n := range devices {
		if !seen[name] && name != "" {
			out = append(out, graph.FleetHost{Name: name, Devices: n})
		}
	}
	if _, ok := devices[lost]; lost != "" && !ok {
		out = append(out, graph.FleetHost{Name: lost})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// liveHosts returns the hosts whose claims are live, by name.
func liveHosts(ctx context.Context, cli *clientv3.Client, t *Target) ([]LiveHost, error) {
	p := t.key("hosts") + "/"
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := cli.Get(gctx, p, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", t.endpointList(), short(err))
	}
	hosts := []LiveHost{}
	for _, kv := range resp.Kvs {
		var cl hostClaim
		json.Unmarshal(kv.Value, &cl)
		hosts = append(hosts, LiveHost{Name: strings.TrimPrefix(string(kv.Key), p), MachineID: cl.MachineID, Version: cl.Version, Schema: cl.Schema, Since: cl.Since})
	}
	return hosts, nil
}

// importMarker is P/import: written before an import's first record and removed with
// its last, so an import that did not finish is known and explained.
type importMarker struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	MachineID string    `json:"machine_id"`
	Started   time.Time `json:"started"`
	rev       int64
}

func readImportMarker(ctx context.Context, cli *clientv3.Client, t *Target) (*importMarker, error) {
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := cli.Get(gctx, t.key("import"))
	cancel()
	if err != nil {
		return nil, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", t.endpointList(), short(err))
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	m := &importMarker{rev: resp.Kvs[0].ModRevision}
	json.Unmarshal(resp.Kvs[0].Value, m)
	return m, nil
}

// unfinished explains an import marker found where a graph should be.
func (m *importMarker) unfinished(t *Target) error {
	host := m.Host
	if host == "" {
		host = "an unknown host"
	}
	return graph.Errorf(graph.ECONFLICT, "an import into %s on etcd at %s, started %s on %s, has not finished (it is still running, or it stopped and left part of a graph no front end will use): wait for it, or clear it and import again with `devgraph --store %s import --force FILE`", t.Prefix, t.endpointList(), m.Started.Format(time.RFC3339), host, t)
}

// loadBatch is the most records Load writes in one Txn (tests make it small); stopLoad,
// when set, is called after each of its Txns of records with how many Txns it made, and
// stops the import with its error (tests stop one halfway).
var (
	loadBatch = NeedTxnOps
	stopLoad  func(txns int) error
)

// ImportOptions say who imports and whether a stopped import's leftovers are cleared.
type ImportOptions struct {
	Force     bool   // clear what an import that did not finish left (its marker names it)
	Host      string // who imports, for the marker
	MachineID string
	Progress  func(keys int) // when set, called after each Txn of records with how many are written
}

// ImportStats says what Load wrote.
type ImportStats struct {
	Keys int `json:"keys"` // records written
	Txns int `json:"txns"` // etcd transactions, the last one making the graph visible
}

// CheckImportable says whether an import may go into the cluster now: its limits are
// devgraph's, no host is live on it, and its prefix is empty (with Force: or holds only
// what an import that did not finish left). Load checks the same again, inside its
// transactions.
func (c *Client) CheckImportable(ctx context.Context, o ImportOptions) error {
	if err := probeLimits(ctx, c.cli, c.target); err != nil {
		return err
	}
	hosts, err := c.LiveHosts(ctx)
	if err != nil {
		return err
	}
	if len(hosts) > 0 {
		names := make([]string, len(hosts))
		for i, h := range hosts {
			names[i] = h.Name
		}
		which := "host " + names[0] + " is"
		if len(names) > 1 {
			which = "hosts " + strings.Join(names, ", ") + " are"
		}
		return graph.Errorf(graph.ECONFLICT, "%s live on the cluster at %s: an import goes only into a cluster no front end serves; stop %s (devgraph serve --store …) and import again", which, c.target.endpointList(), okIf(len(names) > 1, "them", "it"))
	}
	seeded, _, err := checkGraph(ctx, c.cli, c.target, 0)
	if err != nil {
		if m, _ := readImportMarker(ctx, c.cli, c.target); m != nil && o.Force {
			return nil
		}
		return err
	}
	if seeded {
		return graph.Errorf(graph.ECONFLICT, "the cluster at %s holds a devgraph graph under %s already: an import goes only into an empty cluster; import into another prefix (etcd://…/newprefix), or add the export's records through a running front end (devgraph --db REPLICA import FILE)", c.target.endpointList(), c.target.Prefix)
	}
	return nil
}

// Load writes the records of src (an ordinary database the store's import filled) into
// the empty cluster, in transactions of at most NeedTxnOps operations, so the cluster
// then holds exactly that graph, its changelog byte for byte. Nothing is seen as a graph
// until the last transaction writes P/schema and P/txn: every earlier one is guarded by
// P/schema being absent and this import's marker (P/import) being there, so a front end
// starting meanwhile is refused with the marker's explanation, and an import that stops
// halfway leaves the marker for the next import (with Force) to clear.
func (c *Client) Load(ctx context.Context, src *store.DB, o ImportOptions) (*ImportStats, error) {
	if err := c.CheckImportable(ctx, o); err != nil {
		return nil, err
	}
	t := c.target
	markerKey := t.key("import")
	noGraph := clientv3.Compare(clientv3.CreateRevision(t.key("schema")), "=", 0)
	noHosts := clientv3.Compare(clientv3.CreateRevision(t.key("hosts")+"/"), "=", 0).WithPrefix()
	sh := &shipper{ctx: ctx, cli: c.cli, batch: loadBatch,
		failed: func(what string, err error) error {
			if err != nil {
				return graph.Errorf(graph.EUNAVAILABLE, "import: etcd at %s did not take %s: %v; no graph is visible; import again with --force", t.endpointList(), what, short(err))
			}
			return graph.Errorf(graph.ECONFLICT, "import: the cluster at %s changed while importing (a front end started, or another import ran) before %s; no graph is visible; stop the others and import again with --force", t.endpointList(), what)
		},
	}
	old, err := readImportMarker(ctx, c.cli, t)
	if err != nil {
		return nil, err
	}
	if old != nil {
		if !o.Force {
			return nil, old.unfinished(t)
		}
		// Clear the stopped import: everything under the prefix (there is no graph and no
		// live host, and the marker says these keys are that import's).
		cmps := []clientv3.Cmp{noGraph, noHosts, clientv3.Compare(clientv3.ModRevision(markerKey), "=", old.rev)}
		if err := sh.txn("clearing the stopped import", cmps, []clientv3.Op{clientv3.OpDelete(t.Prefix+"/", clientv3.WithPrefix())}); err != nil {
			return nil, err
		}
	}
	mk := importMarker{ID: uuid.NewString(), Host: o.Host, MachineID: o.MachineID, Started: time.Now().UTC()}
	raw, _ := json.Marshal(mk)
	if err := sh.txn("its marker", []clientv3.Cmp{noGraph, noHosts, clientv3.Compare(clientv3.CreateRevision(markerKey), "=", 0)}, []clientv3.Op{clientv3.OpPut(markerKey, string(raw))}); err != nil {
		return nil, err
	}
	sh.guard = []clientv3.Cmp{noGraph, noHosts, clientv3.Compare(clientv3.Value(markerKey), "=", string(raw))}
	sh.shipped = func(keys int) error {
		if o.Progress != nil {
			o.Progress(keys)
		}
		if stopLoad != nil {
			return stopLoad(sh.txns)
		}
		return nil
	}
	err = src.Records(ctx, func(bucket, key, value []byte) error {
		return sh.add(clientv3.OpPut(t.dataKey(bucket, key), string(value)))
	})
	if err == nil {
		// The marker gone with the schema there says the last Txn was made.
		err = sh.finish("the schema key that makes the graph visible", t, strconv.Itoa(migrations.CurrentVersion), markerKey, func(schema schemaState, marker *mvccpb.KeyValue) bool {
			return schema.v != 0 && marker == nil
		})
	}
	if err != nil {
		return nil, err
	}
	return &ImportStats{Keys: sh.done, Txns: sh.txns}, nil
}

// hostPort is a client URL without its scheme: the form --store's endpoints take.
func hostPort(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		return strings.TrimSuffix(rest, "/")
	}
	return u
}

func okIf(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
