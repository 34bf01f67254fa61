package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

type migrateOptions struct {
	*common
	status bool
}

func newMigrateCmd(c *common) *cobra.Command {
	o := &migrateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "migrate the database or cluster to this version's schema (--status: report only)",
		Long:  "migrate the database file (--db) to this devgraph's schema, with a backup beside it. With --store, migrate the cluster's graph once every host runs this devgraph (refused while a host of an older one is live): the records are migrated in a scratch copy and the difference is written in etcd transactions; front ends of this devgraph, read-only until then, take writes again. A migration that stopped is finished by running it again. --host-name names the host whose devices a graph from before hosts (schema 3) holds.",
		Example: `  devgraph migrate --status
  devgraph migrate
  devgraph --db old.db migrate --json
  devgraph --store etcd://h1:2379,h2:2379,h3:2379 migrate --status
  devgraph --store etcd://h1:2379,h2:2379,h3:2379 migrate`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMigrate(cmd.Context(), o, c.e.stdout)
		},
	}
	cmd.Flags().BoolVar(&o.status, "status", false, "report the schema version and pending steps; change nothing")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runMigrate(ctx context.Context, o *migrateOptions, out io.Writer) error {
	e := o.e
	if o.store != "" {
		return e.migrateCluster(ctx, o, out)
	}
	db := e.dbPath(o.common)
	if cl := dialServer(ctx, db); cl != nil {
		// A running server has already migrated the file when it opened it.
		defer cl.Close()
		st, err := cl.Stats(ctx)
		if err != nil {
			return err
		}
		r := &migrations.StatusReport{Path: db, Version: st.SchemaVersion, Current: migrations.CurrentVersion}
		if o.asJSON() {
			return writeJSON(out, r)
		}
		fmt.Fprintf(out, "%s is at schema version %d (current %d), held by a running server; nothing to do\n", db, r.Version, r.Current)
		return nil
	}
	if o.status {
		r, err := store.SchemaStatus(db)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, r)
		}
		printSchemaStatus(out, db, r.Version, r.Current, r.Pending)
		return nil
	}
	before, _ := store.SchemaStatus(db)
	so, err := o.storeOptions(store.Options{Timeout: lockWait})
	if err != nil {
		return err
	}
	st, err := store.Open(db, so)
	if err != nil {
		return err
	}
	defer st.Close()
	r := &migrations.StatusReport{Path: db, Version: st.Version(), Current: migrations.CurrentVersion}
	if o.asJSON() {
		return writeJSON(out, r)
	}
	switch {
	case before != nil && before.Version != 0 && before.Version < st.Version():
		fmt.Fprintf(out, "migrated %s from schema version %d to %d; backup at %s\n", db, before.Version, st.Version(), st.BackupPath())
	default:
		fmt.Fprintf(out, "%s is at schema version %d (current); nothing to do\n", db, st.Version())
	}
	return nil
}

// printSchemaStatus is migrate --status's line about subject (a file, the cluster's
// graph) at schema version, this devgraph writing current: newer, nothing to do, or the
// steps pending, one a line. It says whether steps are pending.
func printSchemaStatus(out io.Writer, subject string, version, current int, pending []string) bool {
	switch {
	case version > current:
		fmt.Fprintf(out, "%s is at schema version %d, newer than this devgraph (%d); upgrade devgraph\n", subject, version, current)
	case len(pending) == 0:
		fmt.Fprintf(out, "%s is at schema version %d (current); nothing to do\n", subject, version)
	default:
		fmt.Fprintf(out, "%s is at schema version %d (current %d); pending:\n", subject, version, current)
		for _, p := range pending {
			fmt.Fprintf(out, "  %s\n", p)
		}
		return true
	}
	return false
}
