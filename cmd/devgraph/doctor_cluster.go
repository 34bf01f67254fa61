package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

// doctorCluster is doctor with --store: the cluster's members (name, endpoint, leader,
// db size, raft index), their health and alarms, the limits devgraph needs, the graph's
// schema, the live hosts and this host's replica lag; then the graph's own checks,
// through this host's front end when one runs, else on a snapshot of the cluster.
// Exit 1 on any cluster problem, and as doctor does for the graph.
func (e *env) doctorCluster(ctx context.Context, o *common, strict bool, out io.Writer) error {
	t, err := cluster.ParseStore(o.store)
	if err != nil {
		return err
	}
	cc, err := cluster.Dial(ctx, o.store, o.connectTimeout)
	if err != nil {
		return err
	}
	defer cc.Close()
	h, err := cc.Health(ctx)
	if err != nil {
		return err
	}
	replica := e.dbPath(o)
	if o.db == "" && e.getenv("DEVGRAPH_DB") == "" {
		replica = cluster.DefaultReplica(cc.Name())
	}
	rep := &doctorReport{DB: replica, Socket: remote.SocketPath(replica), SchemaCurrent: migrations.CurrentVersion, Cluster: h, SchemaVersion: h.Schema}
	rep.Problems = append(rep.Problems, h.Problems...)
	snapshotRev := int64(0)
	s, err := e.frontEnd(ctx, t, replica)
	if err != nil {
		return err
	}
	if s != nil {
		defer s.Close()
		if p, err := s.client.Ping(ctx); err == nil {
			rep.Server, rep.ServerPID = true, p.PID
			if rep.LeaseLoss = p.LeaseLoss; p.LeaseLoss != nil {
				rep.Problems = append(rep.Problems, p.LeaseLoss.String())
			}
		}
		rep.Exists = true
		if err := rep.checkGraph(ctx, s.svc); err != nil {
			return err
		}
		if err := rep.fleetHosts(ctx, s.svc); err != nil {
			return err
		}
		lag := max(h.Head-rep.Stats.ReplicaRev, 0)
		rep.ReplicaLag = &lag
	} else if h.Graph == "ok" {
		snap, err := e.openSnapshot(ctx, o, cc)
		if err != nil {
			return err
		}
		defer snap.Close()
		if err := rep.checkGraph(ctx, snap.svc); err != nil {
			return err
		}
		if err := rep.fleetHosts(ctx, snap.svc); err != nil {
			return err
		}
		snapshotRev = rep.Stats.ReplicaRev
	}
	for _, s := range rep.Sources {
		if !s.OK {
			rep.Problems = append(rep.Problems, fmt.Sprintf("source %s unavailable: %s", s.Name, s.Error))
		}
	}
	verdict := clusterVerdict(h)
	if verdict == nil {
		verdict = doctorVerdict(rep, nil, strict)
	}
	if o.asJSON() {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
		return verdict
	}
	tb := newTable(out, "CHECK", "STATUS", "DETAIL")
	tb.row("cluster", "ok", fmt.Sprintf("%s at %s", h.Name, strings.Join(h.Endpoints, ", ")))
	for _, m := range h.Members {
		detail := m.Error
		at := m.Endpoint
		if m.Advertised != "" {
			at += " (advertises " + m.Advertised + ")"
		}
		if m.Healthy {
			detail = fmt.Sprintf("%s, %s, db %s, raft index %d, etcd %s", at, okIf(m.Leader, "leader", "follower"), store.FormatSize(m.DBSize), m.RaftIndex, m.Version)
		} else if m.Endpoint != "" {
			detail = at + ": " + m.Error
		}
		tb.row("member "+m.Name, okIf(m.Healthy, "ok", "DOWN"), detail)
	}
	for _, a := range h.Alarms {
		tb.row("alarm", "BROKEN", a)
	}
	tb.row("limits", okIf(h.Limits == "ok", "ok", "TOO SMALL"), okIf(h.Limits == "ok", fmt.Sprintf("takes %d operations and %s in one transaction", cluster.NeedTxnOps, store.FormatSize(cluster.NeedRequestBytes)), h.Limits))
	switch h.Graph {
	case "ok":
		tb.row("graph", "ok", fmt.Sprintf("schema version %d under %s (this devgraph writes %d)", h.Schema, h.Prefix, rep.SchemaCurrent))
	case "none":
		tb.row("graph", "none", fmt.Sprintf("no graph under %s yet: the first front end (devgraph serve --store) or an import makes one", h.Prefix))
	default:
		tb.row("graph", "BROKEN", h.Graph)
	}
	hosts := rep.Hosts
	if hosts == nil { // no graph to count devices in: the live hosts alone
		hosts, _ = cluster.JoinHosts[*graph.DeviceView](ctx, h.Hosts, "", nil)
	}
	online, offline := 0, 0
	for _, x := range hosts {
		if x.Online {
			online++
		} else {
			offline++
		}
	}
	tb.row("hosts", fmt.Sprintf("%d online, %d offline", online, offline), "")
	for _, x := range hosts {
		devs := plural(x.Devices, "device", "devices")
		if x.Online {
			tb.row("host "+x.Name, "online", fmt.Sprintf("devgraph %s (schema %d), since %s, %s", okIf(x.Version == "", "unknown", x.Version), x.Schema, fmtTime(x.Since), devs))
		} else {
			tb.row("host "+x.Name, "offline", devs+" remembered, not unplugged")
		}
	}
	if rep.LeaseLoss != nil {
		tb.row("host lease", "LOST", rep.LeaseLoss.String())
	}
	switch {
	case rep.ReplicaLag != nil:
		tb.row("replica", okIf(*rep.ReplicaLag == 0, "current", "behind"), fmt.Sprintf("%s, served by pid %d: %d revisions behind the cluster's last commit (%d)", replica, rep.ServerPID, *rep.ReplicaLag, h.Head))
	case rep.Stats != nil:
		tb.row("replica", "none", fmt.Sprintf("no front end runs beside %s; the graph below was checked on a snapshot of the cluster at revision %d", replica, snapshotRev))
	default:
		tb.row("replica", "none", fmt.Sprintf("no front end runs beside %s", replica))
	}
	rep.graphRows(tb)
	if err := tb.flush(); err != nil {
		return err
	}
	return verdict
}

// clusterVerdict is doctor's exit for the cluster itself: 1 with the first problem (a
// member down, an alarm, limits too small, a graph this devgraph cannot use).
func clusterVerdict(h *cluster.Health) error {
	if len(h.Problems) == 0 {
		return nil
	}
	more := ""
	if n := len(h.Problems) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more problems)", n)
	}
	return graph.Errorf(graph.EUNAVAILABLE, "the cluster is not healthy: %s%s", h.Problems[0], more)
}

// fleetHosts fills the report's hosts as GraphQL's hosts lists them (cluster.JoinHosts):
// the live hosts' claims joined with the devices svc's graph holds of each host, and
// this host offline while its server's lease is lost.
func (rep *doctorReport) fleetHosts(ctx context.Context, svc graph.Service) (err error) {
	lost := ""
	if rep.LeaseLoss != nil {
		lost = rep.LeaseLoss.Host
	}
	rep.Hosts, err = cluster.JoinHosts(ctx, rep.Cluster.Hosts, lost, svc.Devices)
	return err
}
