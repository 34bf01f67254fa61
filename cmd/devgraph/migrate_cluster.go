package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
)

// migrateCluster is `devgraph --store URL migrate`: the cluster's graph carried to this
// devgraph's schema once every host runs it (cluster.Client.Migrate), or with --status
// its schema, the pending steps and the hosts still on an older devgraph. --host-name
// names the host a graph from before hosts (schema 3) gives its devices.
func (e *env) migrateCluster(ctx context.Context, o *migrateOptions, out io.Writer) error {
	cc, err := cluster.Dial(ctx, o.store, o.connectTimeout)
	if err != nil {
		return err
	}
	defer cc.Close()
	if o.status {
		st, err := cc.SchemaStatus(ctx)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, st)
		}
		switch {
		case st.Version == 0:
			fmt.Fprintf(out, "the cluster %s holds no graph yet\n", o.store)
		case st.MigratingTo > 0:
			fmt.Fprintf(out, "the cluster's graph is being migrated from schema version %d to %d (started %s); run migrate again if it stopped\n", st.Version, st.MigratingTo, st.Started)
		default:
			if printSchemaStatus(out, "the cluster's graph", st.Version, st.Current, st.Pending) && len(st.OldHosts) > 0 {
				fmt.Fprintf(out, "still on an older devgraph (upgrade them first): %s\n", strings.Join(st.OldHosts, ", "))
			}
		}
		return nil
	}
	host, err := o.host()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "devgraph-migrate-")
	if err != nil {
		return graph.Errorf(graph.EUNAVAILABLE, "migrate: cannot make a scratch file: %v", err)
	}
	defer os.RemoveAll(dir)
	bar := newProgressLine(e.stderr, "migrate")
	st, err := cc.Migrate(ctx, cluster.MigrateOptions{Host: host, MachineID: e.machineID(), Scratch: filepath.Join(dir, "migrate.db"),
		Progress: bar.update})
	bar.finish(err == nil)
	if err != nil {
		return err
	}
	if o.asJSON() {
		return writeJSON(out, st)
	}
	switch {
	case st.Already:
		fmt.Fprintf(out, "the cluster's graph is at schema version %d (current); nothing to do\n", st.To)
	default:
		how := "migrated"
		if st.Resumed {
			how = "finished migrating"
		}
		fmt.Fprintf(out, "%s the cluster's graph from schema version %d to %d: %s written, %s removed, in %s; the changelog is unchanged, and front ends of this devgraph take writes again\n",
			how, st.From, st.To, plural(st.Puts, "record", "records"), plural(st.Deletes, "record", "records"), plural(st.Txns, "etcd transaction", "etcd transactions"))
	}
	return nil
}
