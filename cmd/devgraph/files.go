package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/store"
)

func runBackup(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("backup", "FILE", false)
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	dst := pos[0]
	if _, err := os.Stat(dst); err == nil {
		return graph.FieldErrorf(graph.EINVALID, "file", "%s already exists; back up into a new file", dst)
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		n, err := writeAtomically(dst, func(w io.Writer) (int64, error) { return svc.Backup(ctx, w) })
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "backed up %s to %s (%d bytes)\n", e.dbPath(c), dst, n)
		return nil
	})
}

// writeAtomically writes a temporary file beside dst and renames it into place once the
// write and an fsync succeeded, so dst is never half written.
func writeAtomically(dst string, fn func(w io.Writer) (int64, error)) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return 0, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		if graph.ErrorCode(err) == graph.EINTERNAL {
			return n, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
		}
		return n, err
	}
	return n, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func runExport(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("export", "[FILE] [--format jsonl|dot|mermaid] [--around NODE [--depth N]]  (stdout without FILE)", false)
	format := fs.String("format", "", "jsonl (everything, for import; the default), dot (Graphviz) or mermaid (a flowchart); a FILE ending .dot, .gv or .mmd picks it too")
	around := fs.String("around", "", "draw only what is within --depth of this node (dot, mermaid)")
	depth := fs.Int("depth", 0, fmt.Sprintf("how far from --around to draw, 1..%d (default 1)", graph.MaxSubgraphDepth))
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flagT) { set[f.Name] = true })
	file := ""
	if len(pos) == 1 && pos[0] != "-" {
		file = pos[0]
	}
	if *format == "" {
		*format = formatOf(file)
	}
	var draw func(io.Writer, *graph.Subgraph) error
	switch *format {
	case "jsonl":
		if *around != "" || set["depth"] {
			return usagef("export: --around and --depth draw a picture; give --format dot or --format mermaid with them")
		}
	case "dot":
		draw = writeDOT
	case "mermaid":
		draw = writeMermaid
	default:
		return usagef("export: unknown --format %q; want jsonl, dot or mermaid", *format)
	}
	if set["depth"] && *around == "" {
		return usagef("export: --depth goes with --around NODE (without it the whole graph is drawn)")
	}
	if set["depth"] && *depth < 1 {
		// 0 would mean the default; given, it is out of range on every interface.
		return graph.FieldErrorf(graph.EINVALID, "depth", "--depth %d: want 1-%d hops around the node (leave it out for 1)", *depth, graph.MaxSubgraphDepth)
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		write := func(w io.Writer) error { return svc.Export(ctx, w) }
		if draw != nil {
			node := ""
			if *around != "" {
				if node, err = resolveNode(ctx, svc, *around); err != nil {
					return err
				}
			}
			g, err := svc.Subgraph(ctx, node, graph.NeighborOptions{Depth: *depth})
			if err != nil {
				return err
			}
			// Stopping at --depth is what was asked; another bound cutting it is news.
			if g.Truncated && g.TruncatedBy != graph.TruncDepth {
				fmt.Fprintf(e.stderr, "export: the picture is cut short by %s after %s; draw less with --around NODE --depth N\n", g.TruncatedBy, plural(g.Visited, "vertex", "vertices"))
			}
			write = func(w io.Writer) error { return draw(w, g) }
		}
		if file == "" {
			bw := bufio.NewWriterSize(e.stdout, 1<<20)
			if err := write(bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		cw := &countWriter{}
		if _, err := exportTo(file, func(w io.Writer) (int64, error) {
			cw.w = w
			return 0, write(cw)
		}); err != nil {
			return err
		}
		what := ""
		if draw != nil {
			what = *format + ", "
		}
		fmt.Fprintf(e.stdout, "exported %s to %s (%s%d bytes)\n", e.dbPath(c), file, what, cw.n)
		return nil
	})
}

// formatOf picks the export format from a file's extension: jsonl unless it names a
// picture.
func formatOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".dot", ".gv":
		return "dot"
	case ".mmd", ".mermaid":
		return "mermaid"
	}
	return "jsonl"
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func runImport(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("import", "[FILE]  (- or none for stdin) [--max-size SIZE] [-m WHY]", false)
	quiet := fs.Bool("quiet", false, "no progress line")
	maxSize := sizeFlag(graph.DefaultImportMaxSize)
	fs.Var(&maxSize, "max-size", "`SIZE`: the most a pipe or stdin may carry (it is spooled to $TMPDIR to be read twice): bytes, or with K, M, G or T (powers of 1024), e.g. 512M; a regular FILE is read in place with no limit")
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		// No FILE: the export comes on stdin, unless that is a terminal (nobody types one).
		if f, ok := e.stdin.(*os.File); ok {
			if _, tty := ttyColumns(f); tty {
				return usagef("import: give FILE, or pipe an export into stdin (devgraph export | devgraph import --db new.db)")
			}
		}
		pos = []string{"-"}
	}
	r, closeIn, err := openInput(ctx, e.stdin, pos[0])
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
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > int64(maxSize) {
			maxSize = sizeFlag(fi.Size())
		}
	}
	ctx = graph.WithImportMaxSize(ctx, int64(maxSize))
	var sent *eofReader // through a server: has all of the input gone to it?
	err = e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		bar := newProgressLine(e.stderr, "import")
		progress := func(done, total int) {
			if !*quiet {
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
		fmt.Fprintf(e.stdout, "imported %s and %s (%s)\n", plural(st.Records, "record", "records"), plural(st.Events, "event", "events"), how)
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

// eofReader notes when its reader has been read to the end (by the transport's own
// goroutine).
type eofReader struct {
	r   io.Reader
	eof atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof.Store(true)
	}
	return n, err
}

var errImportInterrupted = graph.Errorf(graph.EUNAVAILABLE, "import interrupted; nothing was imported")

// openInput opens what import (and query -f) reads: stdin for "-", else the file. A
// pipe or FIFO is made pollable, so a read waiting on it ends when ctx does (SIGINT,
// SIGTERM); opening a FIFO that no writer has opened yet waits for one, or for ctx.
func openInput(ctx context.Context, stdin io.Reader, name string) (io.Reader, func(), error) {
	if name == "-" {
		return pollableReader(stdin)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(err))
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(err))
		}
		return f, func() { f.Close() }, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(name) // blocks until a writer opens the FIFO
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(o.err))
		}
		return o.f, func() { o.f.Close() }, nil
	case <-ctx.Done():
		// Be the writer the open waits for, so it returns, then close both ends.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
		return nil, nil, ctx.Err()
	}
}

// endReadsWith makes a read of r waiting on a pipe end when ctx does, for readers that
// take deadlines (a pollable *os.File); the returned func undoes it.
func endReadsWith(ctx context.Context, r io.Reader) func() bool {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		return context.AfterFunc(ctx, func() { _ = d.SetReadDeadline(time.Unix(1, 0)) })
	}
	return func() bool { return true }
}

// sizeFlag is a byte count given as 4294967296, 4G, 4GiB, 512M, 64K …
type sizeFlag int64

func (s *sizeFlag) String() string { return store.FormatSize(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// parseSize reads a positive byte count: digits, optionally followed by K, M, G or T
// (powers of 1024, with or without "iB" or "B").
func parseSize(v string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(v))
	t = strings.TrimSuffix(t, "B")
	if u, ok := strings.CutSuffix(t, "I"); ok && u != "" && strings.IndexByte("KMGT", u[len(u)-1]) >= 0 {
		t = u // KiB, MiB …: an "i" only after a unit
	}
	shift := 0
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size; want bytes or a number with K, M, G or T, e.g. 512M or 4G", v)
	}
	return n << shift, nil
}

func runCompact(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("compact", "", false)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	db := e.dbPath(c)
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
	st, err := store.Open(db, store.Options{Timeout: lockWait})
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
	fmt.Fprintf(e.stdout, "compacted %s: %d → %d bytes\n", db, b, a)
	return nil
}

func runMigrate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("migrate", "[--status] [--json]", false)
	status := fs.Bool("status", false, "report the schema version and pending steps; change nothing")
	jsonOut := fs.Bool("json", false, "print JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	db := e.dbPath(c)
	if cl := dialServer(ctx, db); cl != nil {
		// A running server has already migrated the file when it opened it.
		defer cl.Close()
		st, err := cl.Stats(ctx)
		if err != nil {
			return err
		}
		r := &migrations.StatusReport{Path: db, Version: st.SchemaVersion, Current: migrations.CurrentVersion}
		if *jsonOut {
			return writeJSON(e.stdout, r)
		}
		fmt.Fprintf(e.stdout, "%s is at schema version %d (current %d), held by a running server; nothing to do\n", db, r.Version, r.Current)
		return nil
	}
	if *status {
		r, err := store.SchemaStatus(db)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, r)
		}
		switch {
		case r.Newer:
			fmt.Fprintf(e.stdout, "%s is at schema version %d, newer than this devgraph (%d); upgrade devgraph\n", db, r.Version, r.Current)
		case len(r.Pending) == 0:
			fmt.Fprintf(e.stdout, "%s is at schema version %d (current); nothing to do\n", db, r.Version)
		default:
			fmt.Fprintf(e.stdout, "%s is at schema version %d (current %d); pending:\n", db, r.Version, r.Current)
			for _, p := range r.Pending {
				fmt.Fprintf(e.stdout, "  %s\n", p)
			}
		}
		return nil
	}
	before, _ := store.SchemaStatus(db)
	st, err := store.Open(db, store.Options{Timeout: lockWait})
	if err != nil {
		return err
	}
	defer st.Close()
	r := &migrations.StatusReport{Path: db, Version: st.Version(), Current: migrations.CurrentVersion}
	if *jsonOut {
		return writeJSON(e.stdout, r)
	}
	switch {
	case before != nil && before.Version != 0 && before.Version < st.Version():
		fmt.Fprintf(e.stdout, "migrated %s from schema version %d to %d; backup at %s\n", db, before.Version, st.Version(), st.BackupPath())
	default:
		fmt.Fprintf(e.stdout, "%s is at schema version %d (current); nothing to do\n", db, st.Version())
	}
	return nil
}
