package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

// doctorReport is doctor's --json shape.
type doctorReport struct {
	DB            string               `json:"db"`
	Exists        bool                 `json:"exists"`
	Socket        string               `json:"socket"`
	Server        bool                 `json:"server"`
	ServerPID     int                  `json:"server_pid,omitempty"`
	SchemaVersion int                  `json:"schema_version"`
	SchemaCurrent int                  `json:"schema_current"`
	Consistency   string               `json:"consistency"` // bbolt's full check: "ok", what is wrong, or why it did not run
	Stats         *graph.Stats         `json:"stats,omitempty"`
	Chain         *graph.VerifyReport  `json:"chain,omitempty"`
	Relations     []string             `json:"relation_problems"` // the relation indexes and counters: what is wrong, none when whole
	Sources       []graph.SourceStatus `json:"sources"`
	Problems      []string             `json:"problems,omitempty"`
	// With --store: the cluster's health, and how many revisions this host's replica is
	// behind the cluster's last commit (absent when no front end runs here).
	Cluster    *cluster.Health `json:"cluster,omitempty"`
	ReplicaLag *int64          `json:"replica_lag,omitempty"`
	// With --store: the fleet's hosts, online (a live claim) or offline (devices the
	// graph holds of a host with none).
	Hosts []graph.FleetHost `json:"hosts,omitempty"`
	// With --store, through a front end whose host lease is lost: since when, and who
	// holds the name meanwhile (absent once it holds its name again).
	LeaseLoss *graph.LeaseLoss `json:"lease_loss,omitempty"`
}

func newDoctorCmd(c *common) *cobra.Command {
	strict := false
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "check the sources, the database and the server",
		Long:  "check the sources, the database and the server; exit 1 when the database is broken (a damaged file, a broken changelog chain, relation index problems), and with --strict also when a source is unavailable. With --store: the cluster's members, health, limits, schema and live hosts, and this host's replica lag; exit 1 also when a member is down or the cluster cannot hold devgraph's graph",
		Example: `  devgraph doctor
  devgraph doctor --strict
  devgraph --demo doctor --json
  devgraph --store etcd://etcd1:2379,etcd2:2379,etcd3:2379 doctor`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), c, strict, c.e.stdout)
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "also exit 1 when a source is unavailable")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runDoctor(ctx context.Context, o *common, strict bool, out io.Writer) error {
	e := o.e
	if o.store != "" {
		return e.doctorCluster(ctx, o, strict, out)
	}
	db := e.dbPath(o)
	rep := &doctorReport{DB: db, Socket: remote.SocketPath(db), SchemaCurrent: migrations.CurrentVersion}
	_, statErr := os.Stat(db)
	rep.Exists = statErr == nil
	if cl := dialServer(ctx, db); cl != nil {
		if p, err := cl.Ping(ctx); err == nil {
			rep.Server, rep.ServerPID = true, p.PID
		}
		cl.Close()
	}
	// bbolt's full consistency check: of the closed file, or by the server that holds it.
	var damage error
	switch {
	case rep.Server:
		rep.Consistency = "ok"
		err := e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
			return svc.CheckConsistency(ctx)
		})
		if err != nil {
			rep.Consistency = graph.ErrorMessage(err)
			if graph.ErrorCode(err) == graph.EINVALID {
				damage = err
			}
			rep.Problems = append(rep.Problems, rep.Consistency)
		}
	case rep.Exists:
		rep.Consistency = "ok"
		if err := store.CheckConsistency(db); err != nil {
			rep.Consistency = graph.ErrorMessage(err)
			if graph.ErrorCode(err) != graph.ELOCKED {
				damage = err
				rep.Problems = append(rep.Problems, rep.Consistency)
			}
		}
	}
	if damage != nil {
		// the file is damaged: opening it for the other checks would only fail the same way
	} else if !rep.Exists && !rep.Server {
		rep.Problems = append(rep.Problems, "the database does not exist yet; any command that writes creates it")
		// The sources can still be checked without a database.
		live, err := e.live(o, db)
		if err != nil {
			return err
		}
		snap, err := live.Snapshot(ctx)
		if err != nil {
			return err
		}
		rep.Sources = snap.Sources
	} else {
		err := e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
			return rep.checkGraph(ctx, svc)
		})
		if err != nil {
			return err
		}
	}
	for _, s := range rep.Sources {
		if !s.OK {
			rep.Problems = append(rep.Problems, fmt.Sprintf("source %s unavailable: %s", s.Name, s.Error))
		}
	}
	verdict := doctorVerdict(rep, damage, strict)
	if o.asJSON() {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
		return verdict
	}
	t := newTable(out, "CHECK", "STATUS", "DETAIL")
	t.row("database", okIf(rep.Exists || rep.Server, "ok", "missing"), db)
	server := "no server running; commands open the file"
	if p := remote.Probe(rep.Socket, 500*time.Millisecond); !rep.Server && p.Problem() != "" {
		server = p.Problem() + "; until then no server can start"
	}
	if rep.Server {
		server = fmt.Sprintf("pid %d on %s", rep.ServerPID, rep.Socket)
	}
	t.row("server", okIf(rep.Server, "running", "none"), server)
	if rep.Consistency != "" {
		status := okIf(rep.Consistency == "ok", "ok", okIf(damage != nil, "BROKEN", "skipped"))
		t.row("consistency", status, okIf(rep.Consistency == "ok", "every page of the file checked (bbolt)", rep.Consistency))
	}
	rep.graphRows(t)
	if err := t.flush(); err != nil {
		return err
	}
	return verdict
}

// checkGraph fills the report's graph checks from svc: counters, the changelog chain,
// the relation indexes and the sources.
func (rep *doctorReport) checkGraph(ctx context.Context, svc graph.Service) error {
	var err error
	if rep.Stats, err = svc.Stats(ctx); err != nil {
		return err
	}
	rep.SchemaVersion = rep.Stats.SchemaVersion
	if rep.Chain, err = svc.VerifyChangelog(ctx); err != nil {
		return err
	}
	if !rep.Chain.OK {
		rep.Problems = append(rep.Problems, fmt.Sprintf("changelog broken at seq %d: %s", rep.Chain.BrokenSeq, rep.Chain.Problem))
	}
	if rep.Relations, err = svc.CheckRelations(ctx); err != nil {
		return err
	}
	rep.Relations = append([]string{}, rep.Relations...) // [] in --json when whole
	for _, p := range rep.Relations {
		rep.Problems = append(rep.Problems, "relations: "+p)
	}
	rep.Sources, err = svc.Sources(ctx)
	return err
}

// graphRows prints the graph checks' rows: schema, contents, relations, changelog, sources.
func (rep *doctorReport) graphRows(t *table) {
	if rep.Stats != nil {
		t.row("schema", okIf(rep.SchemaVersion == rep.SchemaCurrent, "ok", "old"), fmt.Sprintf("version %d (this devgraph writes %d)", rep.SchemaVersion, rep.SchemaCurrent))
		t.row("contents", "ok", fmt.Sprintf("%d identities, %d devices, %d notes, %d relations, %d events, %d bytes", rep.Stats.Identities, rep.Stats.Devices, rep.Stats.Notes, rep.Stats.Relations, rep.Stats.Events, rep.Stats.FileBytes))
		detail := "indexes and counters agree with the records"
		if len(rep.Relations) > 0 {
			detail = fmt.Sprintf("%d problem(s), first: %s; restore a backup, or export and import into a new file", len(rep.Relations), rep.Relations[0])
		}
		t.row("relations", okIf(len(rep.Relations) == 0, "ok", "BROKEN"), detail)
	}
	if rep.Chain != nil {
		detail := fmt.Sprintf("%d events verified, head seq %d", rep.Chain.Checked, rep.Chain.HeadSeq)
		if !rep.Chain.OK {
			detail = fmt.Sprintf("broken at seq %d: %s", rep.Chain.BrokenSeq, rep.Chain.Problem)
		}
		t.row("changelog", okIf(rep.Chain.OK, "ok", "BROKEN"), detail)
	}
	for _, s := range rep.Sources {
		detail := fmt.Sprintf("%d devices in %s", s.Devices, s.Duration.Round(10*time.Microsecond))
		if s.Root != "" {
			detail += " from " + s.Root
		}
		if !s.OK {
			detail = s.Error
		}
		t.row("source "+s.Name, okIf(s.OK, "ok", "unavailable"), detail)
	}
}

// doctorVerdict is doctor's exit: 1 (with the first problem) when the database is broken
// — a damaged file, a broken changelog chain, relation indexes or counters that disagree
// with the records — and with strict also when a source is unavailable; else nil (0).
func doctorVerdict(rep *doctorReport, damage error, strict bool) error {
	if damage != nil {
		return damage
	}
	if rep.Chain != nil && !rep.Chain.OK {
		return graph.Errorf(graph.EINVALID, "the database is broken: the changelog chain breaks at seq %d (%s); restore a backup, or see `devgraph changelog verify`", rep.Chain.BrokenSeq, rep.Chain.Problem)
	}
	if len(rep.Relations) > 0 {
		return graph.Errorf(graph.EINVALID, "the database is broken: %s (and %d more relation problems); restore a backup, or export and import into a new file", rep.Relations[0], len(rep.Relations)-1)
	}
	if strict {
		for _, s := range rep.Sources {
			if !s.OK {
				return graph.Errorf(graph.EUNAVAILABLE, "source %s is unavailable (--strict): %s", s.Name, s.Error)
			}
		}
	}
	return nil
}

func okIf(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
