package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
)

type importOptions struct {
	*common
	quiet   bool
	maxSize sizeFlag
	force   bool // with --store: clear a stopped import's leftovers first
}

func newImportCmd(c *common) *cobra.Command {
	o := &importOptions{common: c, maxSize: sizeFlag(graph.DefaultImportMaxSize)}
	cmd := &cobra.Command{
		Use:   "import [FILE]",
		Short: "read an export from FILE or stdin (-, or no FILE with stdin not a terminal)",
		Long:  "read an export from FILE, or from stdin when FILE is - or left out (stdin must then not be a terminal); progress shows records done/total and percent on stderr, redrawn on a terminal, one line at the end elsewhere. With --store it goes into an empty etcd cluster no host serves (offline), the changelog kept byte for byte",
		Example: `  devgraph --db new.db import backup.jsonl
  devgraph export | devgraph --db copy.db import
  ssh studio devgraph export | devgraph --db copy.db import - --max-size 1G
  devgraph --store etcd://etcd1:2379,etcd2:2379,etcd3:2379 import studio.jsonl`,
		Args: nargs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "-"
			if len(args) == 1 {
				name = args[0]
			} else if f, ok := c.e.stdin.(*os.File); ok {
				// No FILE: the export comes on stdin, unless that is a terminal.
				if _, tty := ttyColumns(f); tty {
					return usagef("import: give FILE, or pipe an export into stdin (devgraph export | devgraph --db new.db import)")
				}
			}
			return runImport(cmd.Context(), o, name, c.e.stdout)
		},
	}
	cmd.Flags().BoolVar(&o.quiet, "quiet", false, "no progress line")
	cmd.Flags().BoolVar(&o.force, "force", false, "with --store: first clear what an import into the cluster that did not finish left (its marker names it)")
	cmd.Flags().Var(&o.maxSize, "max-size", "the most a pipe or stdin may carry (it is spooled to $TMPDIR to be read twice): bytes, or with K, M, G or T (powers of 1024), e.g. 512M; a regular FILE is read in place with no limit")
	return cmd
}

func runImport(ctx context.Context, o *importOptions, name string, out io.Writer) error {
	e := o.e
	r, closeIn, err := openInput(ctx, e.stdin, name)
	if err != nil {
		if ctx.Err() != nil {
			return errImportInterrupted
		}
		return err
	}
	defer closeIn()
	// Through a server too: the transport waits for the body's read to end.
	defer endReadsWith(ctx, r)()
	if f, ok := r.(*os.File); ok {
		// A server spools even a regular file (it reaches it as a stream); the file's
		// size bounds it already.
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > int64(o.maxSize) {
			o.maxSize = sizeFlag(fi.Size())
		}
	}
	ctx = graph.WithImportMaxSize(ctx, int64(o.maxSize))
	if o.store != "" {
		return e.importCluster(ctx, o, r, out)
	}
	if o.force {
		return usagef("import: --force clears a stopped import into a cluster; it goes with --store")
	}
	var sent *eofReader // through a server: has all of the input gone to it?
	err = e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		bar := newProgressLine(e.stderr, "import")
		progress := func(done, total int) {
			if !o.quiet {
				bar.update(done, total)
			}
		}
		// r goes as it is: a regular file is read twice in place, anything else spooled.
		if _, ok := svc.(*remote.Client); ok {
			sent = &eofReader{r: r}
			r = sent
		}
		st, err := svc.Import(ctx, r, progress)
		bar.finish(err == nil)
		if err != nil {
			return err
		}
		how := "recorded as import events"
		if st.KeptLog {
			how = "changelog kept byte for byte"
		}
		fmt.Fprintf(out, "imported %s and %s (%s)\n", plural(st.Records, "record", "records"), plural(st.Events, "event", "events"), how)
		return nil
	})
	if err != nil && ctx.Err() != nil {
		if sent != nil && sent.eof.Load() {
			// The server had the whole input: it rolls back when the connection ends,
			// unless it was committing already, and only it knows which.
			return graph.Errorf(graph.EUNAVAILABLE, "import interrupted after the server had all of it; it writes nothing unless it was already committing: `devgraph changelog --limit 1` shows whether it landed")
		}
		// The import writes in one transaction, rolled back when ctx ends.
		return errImportInterrupted
	}
	return err
}
