package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

func newCompactCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "rewrite the database file without free pages",
		Example: `  devgraph compact
  devgraph --db studio.db compact`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd.Context(), c, c.e.stdout)
		},
	}
}

func runCompact(ctx context.Context, o *common, out io.Writer) error {
	e := o.e
	db := e.dbPath(o)
	if cl := dialServer(ctx, db); cl != nil {
		p, _ := cl.Ping(ctx)
		cl.Close()
		pid := ""
		if p != nil {
			pid = fmt.Sprintf(" (pid %d)", p.PID)
		}
		return graph.Errorf(graph.ELOCKED, "compact needs %s to itself; stop the devgraph server%s first", db, pid)
	}
	if _, err := os.Stat(db); err != nil {
		return graph.Errorf(graph.ENOTFOUND, "database %s does not exist; nothing to compact", db)
	}
	// The copy is renamed over the real file: over a symlink it would replace the link,
	// splitting the database in two.
	if real, err := filepath.EvalSymlinks(db); err == nil {
		db = real
	}
	// Hold the file exclusively from the copy until the copy has replaced it, so nobody
	// writes behind our back: a server starting meanwhile waits for the lock and then
	// opens the compacted file (store.Open sees the file renamed over the one it waited
	// for), instead of writing to the old one, which no name reaches any more.
	so, err := o.storeOptions(store.Options{Timeout: lockWait})
	if err != nil {
		return err
	}
	st, err := store.Open(db, so)
	if err != nil {
		return err
	}
	defer st.Close()
	before, _ := os.Stat(db)
	tmp := db + ".compact.tmp"
	os.Remove(tmp)
	if err := st.CompactTo(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, db); err != nil {
		os.Remove(tmp)
		return graph.Errorf(graph.EINVALID, "cannot replace %s: %v", db, unwrapPath(err))
	}
	st.Close()
	after, _ := os.Stat(db)
	var b, a int64
	if before != nil {
		b = before.Size()
	}
	if after != nil {
		a = after.Size()
	}
	fmt.Fprintf(out, "compacted %s: %d → %d bytes\n", db, b, a)
	return nil
}
