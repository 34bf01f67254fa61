package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/store"
)

// serveCluster serves a fleet's graph from an etcd cluster: the front end keeps a local
// replica (--db, else a cache file) that every part reads and writes as it would a file.
func (e *env) serveCluster(ctx context.Context, f *serveFlags, log *slog.Logger) error {
	replica := ""
	if f.db != "" || e.getenv("DEVGRAPH_DB") != "" {
		replica = e.dbPath(f.common)
	}
	host, err := f.host()
	if err != nil {
		return err
	}
	fe, err := cluster.Open(ctx, cluster.Config{
		Store:     f.store,
		Replica:   replica,
		Host:      host,
		MachineID: e.machineID(),
		Version:   Version,
		Logger:    log,
		Store0:    store.Options{Logger: log, Timeout: lockWait},
	})
	if err != nil {
		return err
	}
	defer fe.Close()
	return e.serveDB(ctx, f, fe.DB(), fe.DB().Path(), fe, log)
}

// machineID identifies this machine to the cluster's host-name claims: the same machine
// takes its name back after a restart, another is refused it.
func (e *env) machineID() string {
	if id := e.getenv("DEVGRAPH_MACHINE_ID"); id != "" {
		return id
	}
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	h, _ := os.Hostname()
	return "host:" + h
}
