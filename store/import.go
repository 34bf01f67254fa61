package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// importBatch is how many lines an import writes between progress calls (a variable for
// tests).
var importBatch = 20000

// MaxImportLine bounds one line of an import. The longest record devgraph writes is an
// identity.delete event whose before carries the identity (data ≤ 64 KiB), all of its
// notes (≤ 500 of ≤ 16 KiB each) and the ids of its relations (≤ 1,000). JSON escaping
// can make one byte six ("<" is written \u003c), so that record stays under 49 MiB;
// 64 MiB leaves room for some 100,000 hints and tags besides. A longer line is not an
// export and is refused as soon as it passes the bound, unread beyond it.
const MaxImportLine = 64 << 20

// importLines splits an import into lines. Each line is bounded by max: one that grows
// past it is ELIMIT at once, and one whose first byte other than a space is not '{' is
// EINVALID at its first fragment, so endless or binary input is refused without being
// read to its end (bufio.Scanner would buffer up to its limit and then fail vaguely).
type importLines struct {
	br   *bufio.Reader
	max  int
	line int // number of the line next returned
}

func newImportLines(r io.Reader, max int) *importLines {
	return &importLines{br: bufio.NewReaderSize(r, 1<<20), max: max}
}

// next returns the next line, trimmed of spaces (possibly empty), and its 1-based
// number; io.EOF after the last. The slice is the caller's.
func (l *importLines) next() ([]byte, int, error) {
	l.line++
	var out []byte
	checked := false
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(out) == 0 && err == nil {
			out = frag // the whole line in one piece: copied below
		} else {
			out = append(out, frag...)
		}
		body := bytes.TrimRight(out, "\r\n")
		if len(body) > l.max {
			return nil, l.line, graph.Errorf(graph.ELIMIT, "import line %d is longer than %d MiB, more than any record devgraph writes: not an export", l.line, l.max>>20)
		}
		if !checked {
			if t := bytes.TrimLeft(body, " \t\r\v\f"); len(t) > 0 {
				checked = true
				if t[0] != '{' {
					return nil, l.line, graph.Errorf(graph.EINVALID, "import line %d is not an export record (a record is a JSON object); give a file made by devgraph export", l.line)
				}
			}
		}
		switch {
		case err == nil:
			return bytes.Clone(bytes.TrimSpace(out)), l.line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue // out holds a copy: frag is the reader's buffer
		case errors.Is(err, io.EOF):
			if len(bytes.TrimSpace(out)) == 0 {
				return nil, l.line, io.EOF
			}
			return bytes.Clone(bytes.TrimSpace(out)), l.line, nil
		default:
			return nil, l.line, err
		}
	}
}

// scanExport reads Export's lines, calling fn for each record after the header (and for
// the header itself when it carries a checkpoint and withCheckpoint is set), in order.
// Malformed input is EINVALID naming the line, a line past MaxImportLine ELIMIT; a
// cancelled ctx stops it with ctx.Err(). Lines are decoded in parallel chunks (JSON
// decoding is most of an import's CPU); fn runs on the caller's goroutine.
func scanExport(ctx context.Context, r io.Reader, withCheckpoint bool, fn func(line int, l exportLine) error) (int, error) {
	type chunk struct {
		nums  []int
		raw   [][]byte
		lines []exportLine
		bad   int // index of the first line that failed to decode, -1 for none
		err   error
		done  chan struct{}
	}
	const chunkLines = 512
	work := make(chan *chunk, 8)
	order := make(chan *chunk, 8)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	var decoders sync.WaitGroup
	defer func() { // r is not read, and no goroutine of this call runs, once it returns
		close(stop)
		<-readerDone // the reader closed work: the decoders end after their chunk
		decoders.Wait()
	}()
	var scanErr error
	last := 0
	go func() { // reader: split into chunks, in order
		defer close(readerDone)
		defer close(work)
		defer close(order)
		lines := newImportLines(r, MaxImportLine)
		c := &chunk{done: make(chan struct{})}
		flush := func() bool {
			if len(c.raw) == 0 {
				return true
			}
			select {
			case order <- c:
			case <-stop:
				return false
			}
			select {
			case work <- c:
			case <-stop:
				return false
			}
			c = &chunk{done: make(chan struct{})}
			return true
		}
		for {
			b, line, err := lines.next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					scanErr = err
				}
				last = line - 1
				if scanErr != nil {
					last = line
				}
				break
			}
			if len(b) == 0 {
				continue
			}
			c.nums = append(c.nums, line)
			c.raw = append(c.raw, b)
			if len(c.raw) == chunkLines && !flush() {
				return
			}
		}
		flush()
	}()
	workers := max(1, min(runtime.GOMAXPROCS(0), 4))
	for range workers {
		decoders.Add(1)
		go func() {
			defer decoders.Done()
			for c := range work {
				c.lines, c.bad = make([]exportLine, len(c.raw)), -1
				for i, b := range c.raw {
					if err := lineDecoder(b, &c.lines[i]); err != nil {
						c.bad, c.err = i, err
						break
					}
				}
				c.raw = nil
				close(c.done)
			}
		}()
	}
	sawHeader := false
	line := 0
	for c := range order {
		<-c.done
		if ctx.Err() != nil {
			return line, ctx.Err()
		}
		for i, l := range c.lines {
			line = c.nums[i]
			if i == c.bad {
				return line, graph.Errorf(graph.EINVALID, "import line %d is not an export record: %v", line, c.err)
			}
			if !sawHeader {
				if l.Type != "header" || l.Format != m.FormatName {
					return line, graph.Errorf(graph.EINVALID, "import line %d: not a devgraph export (it must start with a header line); make one with devgraph export", line)
				}
				sawHeader = true
				if l.Checkpoint != nil && withCheckpoint {
					cp, err := hex.DecodeString(l.Checkpoint.Hash)
					if err != nil || len(cp) != 32 {
						return line, graph.Errorf(graph.EINVALID, "import line %d: bad checkpoint hash", line)
					}
					if err := fn(line, l); err != nil {
						return line, err
					}
				}
				continue
			}
			if err := fn(line, l); err != nil {
				return line, err
			}
		}
	}
	// order is closed: the reader has finished and set scanErr and last.
	if ctx.Err() != nil {
		return last, ctx.Err()
	}
	if scanErr != nil {
		var ge *graph.Error
		if errors.As(scanErr, &ge) {
			return last, scanErr
		}
		return last, graph.Errorf(graph.EINVALID, "read import at line %d: %v", last, scanErr)
	}
	if !sawHeader {
		return last, graph.Errorf(graph.EINVALID, "the import is empty; give a file made by devgraph export")
	}
	return last, nil
}

// importSource is an import's input, read twice: first by the check, then again by the
// write. A regular file is read in place from its offset; any other reader (a pipe,
// stdin, a socket body) is copied as the check reads it into an unlinked temporary file
// of at most max bytes, which the write then reads back.
type importSource struct {
	first io.Reader     // what the check reads
	again io.ReadSeeker // what the write reads, after rewinding
	done  func()        // releases the spool
}

// openImportSource makes r readable twice (see importSource). The spool lives in
// os.TempDir ($TMPDIR), not beside the database: a runaway input then fills no disk the
// database needs, and a user can point it elsewhere. It is unlinked as soon as it is
// made, so nothing is left behind on any exit, SIGKILL included.
func openImportSource(r io.Reader, max int64) (*importSource, error) {
	if f, ok := r.(*os.File); ok {
		if pos, err := f.Seek(0, io.SeekCurrent); err == nil {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				o := &offsetFile{f, pos}
				return &importSource{first: o, again: o, done: func() {}}, nil
			}
		}
	}
	dir := os.TempDir()
	tmp, err := os.CreateTemp(dir, "devgraph-import-*")
	if err != nil {
		return nil, graph.Errorf(graph.EINVALID, "cannot spool the import in %s: %v; set TMPDIR to a writable directory, or import a regular file", dir, unwrapPathErr(err))
	}
	name := tmp.Name()
	unlinked := os.Remove(name) == nil
	done := func() {
		tmp.Close()
		if !unlinked {
			os.Remove(name)
		}
	}
	return &importSource{first: &spooler{r: r, f: tmp, dir: dir, max: max}, again: &offsetFile{tmp, 0}, done: done}, nil
}

// spooler copies what is read from r into f, refusing input past max bytes (ELIMIT).
type spooler struct {
	r      io.Reader
	f      *os.File
	dir    string
	n, max int64
}

func (s *spooler) Read(p []byte) (int, error) {
	if room := s.max - s.n; int64(len(p)) > room {
		p = p[:room+1] // one byte past max tells a stream of exactly max from a longer one
	}
	n, err := s.r.Read(p)
	if n > 0 {
		if s.n+int64(n) > s.max {
			return 0, graph.FieldErrorf(graph.ELIMIT, "max-size", "the import stream is larger than --max-size %s; give a larger --max-size, or import a regular file (read in place, with no size limit)", FormatSize(s.max))
		}
		if _, werr := s.f.Write(p[:n]); werr != nil {
			return 0, graph.Errorf(graph.EINVALID, "cannot spool the import in %s: %v; set TMPDIR to a directory with room, or import a regular file", s.dir, unwrapPathErr(werr))
		}
		s.n += int64(n)
	}
	return n, err
}

// FormatSize writes n bytes the way --max-size takes it: 4G, 512M, 64K, or bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// interruptible makes a read of r that blocks (an idle pipe) end when ctx is done, for
// readers that take deadlines (a pollable *os.File, a net.Conn); it returns the undo.
func interruptible(ctx context.Context, r io.Reader) func() {
	d, ok := r.(interface{ SetReadDeadline(time.Time) error })
	if !ok {
		return func() {}
	}
	stop := context.AfterFunc(ctx, func() { _ = d.SetReadDeadline(time.Unix(1, 0)) })
	return func() {
		if !stop() {
			_ = d.SetReadDeadline(time.Time{})
		}
	}
}

// offsetFile reads a file from start; Seek(0, io.SeekStart) goes back to start.
type offsetFile struct {
	f     *os.File
	start int64
}

func (o *offsetFile) Read(p []byte) (int, error) { return o.f.Read(p) }

func (o *offsetFile) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart {
		off += o.start
	}
	n, err := o.f.Seek(off, whence)
	return n - o.start, err
}

// importCheck reads the whole input without writing and returns the first problem, so a
// bad import changes nothing: every line must decode into a valid record; into an empty
// database the changelog must chain from the header's checkpoint; into a non-empty one no
// identity slug, unit-class hint or note id of the file may be taken here already. A slug
// or note id given twice in the file is EINVALID.
func (db *DB) importCheck(ctx context.Context, r io.Reader, empty bool, host string) (lines int, err error) {
	type pending struct {
		line int
		what string // identity slug, "hint" fingerprint or note local id
		fp   graph.Fingerprint
		slug string
	}
	var idents, notes, hints, rels []pending
	slugLine := map[string]int{}
	noteLine := map[string]int{}
	relLine := map[string]int{}
	hintLine := map[graph.Fingerprint]pending{}
	// Into an empty database relation records are written as they are, so the check
	// refuses what the store could never hold: a tuple twice, an end the file does not
	// have, a node past the cap.
	nodes := map[string]bool{}
	tupleLine := map[string]int{}
	perNode := map[string]int{}
	notesOn := map[string]int{}
	type relEnds struct {
		line         int
		id, from, to string
	}
	var ends []relEnds
	var head m.Head
	_, err = scanExport(ctx, r, empty, func(line int, l exportLine) error {
		lines++
		qualifyLine(host, &l)
		bad := func(format string, args ...any) error {
			return graph.Errorf(graph.EINVALID, "import line %d: "+format+"; nothing was imported", append([]any{line}, args...)...)
		}
		switch l.Type {
		case "header":
			cp, _ := hex.DecodeString(l.Checkpoint.Hash)
			head.Seq = l.Checkpoint.Seq
			copy(head.Hash[:], cp)
		case "identity":
			id := l.Identity
			if id == nil || graph.KindOf(id.ID) != graph.KindIdentity || graph.ValidateSlug(slugOf(id.ID)) != nil {
				return bad("an identity record without a valid id")
			}
			slug := slugOf(id.ID)
			if prev, dup := slugLine[slug]; dup {
				return bad("%s is also on line %d; each identity may appear once", id.ID, prev)
			}
			slugLine[slug] = line
			if empty {
				nodes[id.ID] = true
				return nil
			}
			if err := graph.ValidateText("name", strings.TrimSpace(id.Name), 1, graph.MaxNameLen); err != nil {
				return bad("%s: %s", id.ID, graph.ErrorMessage(err))
			}
			if _, err := validateData(id.Data); err != nil {
				return bad("%s: %s", id.ID, graph.ErrorMessage(err))
			}
			fps, err := graph.NormalizeHintSet(id.Hints)
			if err != nil {
				return bad("%s: %s", id.ID, graph.ErrorMessage(err))
			}
			if _, err := graph.NormalizeTagSet(id.Tags); err != nil {
				return bad("%s: %s", id.ID, graph.ErrorMessage(err))
			}
			idents = append(idents, pending{line: line, slug: slug})
			for _, f := range fps {
				if f.Class() != graph.ClassUnit {
					continue
				}
				if prev, dup := hintLine[f]; dup {
					return bad("unit hint %s is held by identity:%s (line %d) and %s; a unit fingerprint belongs to one identity", f, prev.slug, prev.line, id.ID)
				}
				p := pending{line: line, fp: f, slug: slug}
				hintLine[f] = p
				hints = append(hints, p)
			}
		case "device":
			if l.Device == nil || l.Device.Key == "" {
				return bad("a device record without a key")
			}
			nodes[graph.DeviceID(l.Device.Key)] = true
		case "note":
			n := l.Note
			if n == nil || graph.KindOf(n.ID) != graph.KindNote {
				return bad("a note record without a valid id")
			}
			local := noteLocal(n.ID)
			if prev, dup := noteLine[local]; dup {
				return bad("%s is also on line %d; each note may appear once", n.ID, prev)
			}
			noteLine[local] = line
			if !empty {
				notes = append(notes, pending{line: line, what: local})
			} else if notesOn[n.Target]++; notesOn[n.Target] > graph.MaxNotesPerNode {
				return bad("%s gives %s more than %d notes, the most a node may hold", n.ID, n.Target, graph.MaxNotesPerNode)
			}
		case "robot":
			if l.Robot == nil || l.Robot.Ref == "" {
				return bad("a robot record without a ref")
			}
		case "relation":
			r := l.Relation
			if err := checkImportedRelation(r); err != nil {
				return bad("%s", graph.ErrorMessage(err))
			}
			local := relLocal(r.ID)
			if prev, dup := relLine[local]; dup {
				return bad("%s is also on line %d; each relation may appear once", r.ID, prev)
			}
			relLine[local] = line
			if !empty {
				rels = append(rels, pending{line: line, what: local})
				return nil
			}
			tk := string(relTupleKey(r))
			if prev, dup := tupleLine[tk]; dup {
				return bad("%s relates %s to %s as %s on the same ports as the relation on line %d; each tuple may appear once", r.ID, r.From, r.To, r.Type, prev)
			}
			tupleLine[tk] = line
			for _, n := range []string{r.From, r.To} {
				if perNode[n]++; perNode[n] > graph.MaxRelationsPerNode {
					return bad("%s gives %s more than %d relations, the most a node may hold", r.ID, n, graph.MaxRelationsPerNode)
				}
			}
			ends = append(ends, relEnds{line, r.ID, r.From, r.To})
		case "event":
			if !empty {
				return nil
			}
			e := l.Event
			if e == nil {
				return bad("an event line without an event")
			}
			if e.Seq != head.Seq+1 {
				return bad("event %d does not follow event %d; the export's changelog is incomplete", e.Seq, head.Seq)
			}
			if e.PrevHash != hex.EncodeToString(head.Hash[:]) {
				return bad("event %d does not link to the one before it; the export was altered", e.Seq)
			}
			e.Time = e.Time.UTC()
			sum := graph.ChainHash(head.Hash, e)
			if hex.EncodeToString(sum[:]) != e.Hash {
				return bad("event %d (%s) does not match its hash; the export was altered", e.Seq, e.ID)
			}
			head = m.Head{Seq: e.Seq, Hash: sum}
		default:
			return bad("unknown record type %q", l.Type)
		}
		return nil
	})
	if err != nil {
		var ge *graph.Error
		if errors.As(err, &ge) && !strings.HasSuffix(ge.Message, "nothing was imported") {
			return lines, &graph.Error{Code: ge.Code, Field: ge.Field, Message: ge.Message + "; nothing was imported"}
		}
		return lines, err
	}
	if empty {
		for _, e := range ends {
			for _, n := range []string{e.from, e.to} {
				if !nodes[n] {
					return lines, graph.Errorf(graph.EINVALID, "import line %d: %s relates %s, which the file does not have; nothing was imported", e.line, e.id, n)
				}
			}
		}
		return lines, nil
	}
	// Against the database: the first clash in file order.
	type clash struct {
		line int
		msg  string
	}
	var first *clash
	note := func(line int, format string, args ...any) {
		if first == nil || line < first.line {
			first = &clash{line, fmt.Sprintf(format, args...)}
		}
	}
	err = db.view(ctx, func(tx *bolt.Tx) error {
		ib, nb := tx.Bucket(m.BucketIdentities), tx.Bucket(m.BucketNotes)
		for _, p := range idents {
			if ib.Get([]byte(p.slug)) != nil {
				note(p.line, "identity:%s already exists here", p.slug)
				break
			}
		}
		for _, p := range hints {
			if hs := holders(tx, p.fp); len(hs) > 0 {
				note(p.line, "unit hint %s of identity:%s is held here by %s (a unit fingerprint belongs to one identity)", p.fp, p.slug, hs[0])
				break
			}
		}
		for _, p := range notes {
			if nb.Get([]byte(p.what)) != nil {
				note(p.line, "note:%s already exists here", p.what)
				break
			}
		}
		if rb := tx.Bucket(m.BucketRelations); rb != nil {
			for _, p := range rels {
				if rb.Get([]byte(p.what)) != nil {
					note(p.line, "rel:%s already exists here", p.what)
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return lines, err
	}
	if first != nil {
		return lines, graph.Errorf(graph.ECONFLICT, "import line %d: %s; nothing was imported. Import into an empty database, or remove or rename the clashing records on one side first", first.line, first.msg)
	}
	return lines, nil
}

// Import checks the whole input first (importCheck: bad or clashing input changes
// nothing), then reads Export's lines again and writes them in one transaction, so an
// error or a cancelled ctx (SIGINT, SIGTERM, a client gone) rolls everything back. Into
// an empty database it writes the records as they are and the changelog byte for byte
// (each event's hash checked); into a non-empty one it creates identities (with hints
// and tags), devices and notes through the ordinary paths, recording its own events, and
// skips the file's changelog. Devices known here already keep this database's record.
// A regular file is read twice in place; other input is spooled (openImportSource). The
// write reads only the bytes the check read, and refuses them if they differ (a file
// truncated or rewritten between the passes); what was appended meanwhile is not read.
func (db *DB) Import(ctx context.Context, r io.Reader, progress func(done, total int)) (*graph.ImportStats, error) {
	return db.ImportWith(ctx, r, progress, ImportOptions{})
}

// ImportOptions change how ImportWith reads an export.
type ImportOptions struct {
	// QualifyHost imports a single-host export (a bbolt file's, whose ids and refs carry
	// no host) into an empty fleet store (Options.Fleet) as the devices of this host:
	// every device key, id, ref and alias, every usb_path fingerprint (devices' and
	// identities' hints), the device ends of relations, the device targets of notes and
	// tags, and the changelog's target index take the qualified form
	// ("device:studio-a/path:…", "studio-a/usb:3-3.2", "studio-a/3-3.2"). The events
	// themselves are stored exactly as exported: their payloads are hashed into the
	// chain, so rewriting them would break it; the chain verifies as it did, and the
	// target index maps the qualified ids to those events, so a node's history is found
	// by its qualified id.
	QualifyHost string
}

// ImportWith is Import with options (see ImportOptions).
func (db *DB) ImportWith(ctx context.Context, r io.Reader, progress func(done, total int), o ImportOptions) (*graph.ImportStats, error) {
	if db.viewOf(ctx) != nil {
		return nil, errInView()
	}
	if o.QualifyHost != "" {
		if err := graph.ValidateHost(o.QualifyHost); err != nil {
			return nil, err
		}
		if !db.opts.Fleet {
			return nil, graph.Errorf(graph.EINVALID, "qualifying an import with host %s needs a fleet store; a bbolt file keeps ids and refs without a host", o.QualifyHost)
		}
	}
	st := &graph.ImportStats{}
	empty := true
	err := db.view(ctx, func(tx *bolt.Tx) error {
		for _, b := range [][]byte{m.BucketIdentities, m.BucketDevices, m.BucketNotes, m.BucketEvents, m.BucketRobots, m.BucketRelations} {
			if tx.Bucket(b) == nil {
				continue
			}
			if k, _ := tx.Bucket(b).Cursor().First(); k != nil {
				empty = false
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if db.opts.ReadOnly {
		return nil, graph.Errorf(graph.EINVALID, "database %s is open read-only; an import needs it read-write", db.path)
	}
	if o.QualifyHost != "" && !empty {
		return nil, graph.Errorf(graph.EINVALID, "an import qualified with host %s goes only into an empty store; this one holds records already", o.QualifyHost)
	}
	st.KeptLog = empty
	defer interruptible(ctx, r)()
	src, err := openImportSource(r, graph.ImportMaxSizeFrom(ctx))
	if err != nil {
		return nil, err
	}
	defer src.done()
	// The write reads no more than the check read, and refuses bytes that differ from
	// them: a regular file read twice in place may be appended to, truncated or
	// rewritten between the passes.
	seed := maphash.MakeSeed()
	checked := &readSum{r: src.first}
	checked.h.SetSeed(seed)
	total, err := db.importCheck(ctx, checked, empty, o.QualifyHost)
	if err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		return st, err
	}
	var recs, evs int
	_, err = db.update(ctx, func(w *wtx) error {
		recs, evs = 0, 0 // fn may run again when a write grouped with it fails
		if err := w.hook("import.write"); err != nil {
			return err
		}
		if _, err := src.again.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("rewind import: %w", err)
		}
		if empty {
			w.deferPuts() // raw records and indexes go in key order at the end
		} else {
			// bbolt splits a node only at commit, so one transaction of unsorted puts
			// into a bucket costs quadratic time: these indexes, which the ordinary
			// paths write but do not read back during an import (hints only to find a
			// unit hint's holder, and importCheck refused any clash), go in key order at
			// the end.
			w.deferPutsIn(m.BucketNames, m.BucketTags, m.BucketHints, m.BucketEvTarget)
		}
		again := &readSum{r: io.LimitReader(src.again, checked.n)}
		again.h.SetSeed(seed)
		n := 0
		_, err := scanExport(ctx, again, empty, func(line int, l exportLine) error {
			qualifyLine(o.QualifyHost, &l)
			r, e, err := w.importLine(l, empty, o.QualifyHost)
			if err != nil {
				return fmt.Errorf("import line %d: %w", line, err)
			}
			recs += r
			evs += e
			if n++; progress != nil && n%importBatch == 0 {
				progress(n, total)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if again.n != checked.n || again.h.Sum64() != checked.h.Sum64() {
			how := fmt.Sprintf("%d bytes when checked, %d when written", checked.n, again.n)
			if again.n == checked.n {
				how = "other bytes when written than when checked"
			}
			return graph.Errorf(graph.EINVALID, "the import file changed while it was imported (%s); nothing was imported. Import a file nothing else writes to", how)
		}
		if err := w.hook("import.flush"); err != nil {
			return err
		}
		if empty {
			err = w.flushPending()
		} else {
			err = w.flushPuts()
		}
		if err != nil {
			return err
		}
		// An interrupt (or a client gone) during the flush still rolls back; only one
		// arriving during bbolt's commit comes too late.
		return ctx.Err()
	})
	if err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		return st, err
	}
	st.Records, st.Events = recs, evs
	if progress != nil {
		progress(total, total)
	}
	return st, nil
}

// readSum counts and hashes what is read through it.
type readSum struct {
	r io.Reader
	h maphash.Hash
	n int64
}

func (s *readSum) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	return n, err
}

// importLine writes one line; it returns how many records and events it wrote.
func (w *wtx) importLine(l exportLine, raw bool, host string) (int, int, error) {
	switch l.Type {
	case "header":
		cp, _ := hex.DecodeString(l.Checkpoint.Hash)
		var h m.Head
		h.Seq = l.Checkpoint.Seq
		copy(h.Hash[:], cp)
		w.head = h
		return 0, 0, w.put(m.BucketMeta, m.KeyCheckpoint, m.EncodeHead(h))
	case "identity":
		id := l.Identity
		if id == nil || graph.KindOf(id.ID) != graph.KindIdentity || graph.ValidateSlug(slugOf(id.ID)) != nil {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: an identity record without a valid id")
		}
		if !raw {
			_, err := w.createIdentity(graph.IdentityCreate{Name: id.Name, Slug: slugOf(id.ID), Data: id.Data, Hints: id.Hints, Tags: id.Tags})
			return 1, 0, err
		}
		id.Notes, id.Devices = nil, nil
		if err := w.putIdentity(id); err != nil {
			return 0, 0, err
		}
		if err := w.put(m.BucketNames, nameKey(id.Name, slugOf(id.ID)), nil); err != nil {
			return 0, 0, err
		}
		for _, f := range id.Hints {
			if err := w.put(m.BucketHints, joinKey(string(f.Kind), f.Value, id.ID), nil); err != nil {
				return 0, 0, err
			}
		}
		if err := w.indexTags(id.ID, id.Tags); err != nil {
			return 0, 0, err
		}
		w.count(m.CountIdentities, 1)
		return 1, 0, nil
	case "device":
		d := l.Device
		if d == nil || d.Key == "" {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: a device record without a key")
		}
		if !raw {
			if w.b(m.BucketDevices).Get([]byte(d.Key)) != nil {
				return 0, 0, nil // known here already; this database's own record wins
			}
			if d.IdentityID != "" && w.b(m.BucketIdentities).Get([]byte(slugOf(d.IdentityID))) == nil {
				d.IdentityID = ""
			}
		}
		d.ID = graph.DeviceID(d.Key)
		tags := d.Tags
		wasPresent := d.Present
		d.Present = false
		if err := w.setPresent(d, wasPresent); err != nil {
			return 0, 0, err
		}
		if err := w.putDevice(d); err != nil {
			return 0, 0, err
		}
		for _, r := range append(append([]string(nil), d.Aliases...), d.Ref) {
			if r != "" {
				if err := w.put(m.BucketRefs, []byte(r), []byte(d.Key)); err != nil {
					return 0, 0, err
				}
			}
		}
		if d.IdentityID != "" {
			if err := w.put(m.BucketBindings, joinKey(d.IdentityID, d.Key), nil); err != nil {
				return 0, 0, err
			}
		}
		if err := w.indexTags(d.ID, tags); err != nil {
			return 0, 0, err
		}
		w.count(m.CountDevices, 1)
		if !raw {
			return 1, 0, w.emit(graph.ActDeviceAppear, d.ID, nil, deviceJSON(d), d.IdentityID)
		}
		return 1, 0, nil
	case "note":
		n := l.Note
		if n == nil || graph.KindOf(n.ID) != graph.KindNote {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: a note record without a valid id")
		}
		if !raw {
			if _, err := w.db.resolve(w.tx, n.Target); err != nil {
				return 0, 0, nil // its target was not imported
			}
			if len(noteIDs(w.tx, n.Target)) >= graph.MaxNotesPerNode {
				w.db.log.Warn("import: note skipped; its node holds the most notes it may", "note", n.ID, "target", n.Target)
				return 0, 0, nil
			}
		}
		if _, err := w.putNote(n); err != nil {
			return 0, 0, err
		}
		if err := w.put(m.BucketNotesBy, joinKey(n.Target, noteLocal(n.ID)), nil); err != nil {
			return 0, 0, err
		}
		w.count(m.CountNotes, 1)
		if !raw {
			return 1, 0, w.emit(graph.ActNoteAdd, n.ID, nil, n, n.Target, ownerOf(w.tx, n.Target))
		}
		return 1, 0, nil
	case "robot":
		if l.Robot == nil || l.Robot.Ref == "" {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: a robot record without a ref")
		}
		b, _ := json.Marshal(l.Robot)
		return 1, 0, w.put(m.BucketRobots, []byte(l.Robot.Ref), b)
	case "relation":
		r := l.Relation
		if err := checkImportedRelation(r); err != nil {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: %s", graph.ErrorMessage(err))
		}
		if raw {
			return 1, 0, w.putRelation(r)
		}
		return w.importRelation(r)
	case "event":
		if !raw {
			return 0, 0, nil // a non-empty database records its own events instead
		}
		e := l.Event
		if e == nil {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: an event line without an event")
		}
		if e.Seq != w.head.Seq+1 {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: event %d does not follow event %d; the export's changelog is incomplete", e.Seq, w.head.Seq)
		}
		if e.PrevHash != hex.EncodeToString(w.head.Hash[:]) {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: event %d does not link to the one before it; the export was altered", e.Seq)
		}
		e.Time = e.Time.UTC()
		sum := graph.ChainHash(w.head.Hash, e)
		if hex.EncodeToString(sum[:]) != e.Hash {
			return 0, 0, graph.Errorf(graph.EINVALID, "import: event %d (%s) does not match its hash; the export was altered", e.Seq, e.ID)
		}
		targets := append([]string{e.Target}, l.Also...)
		for i, t := range targets {
			targets[i] = graph.QualifyDeviceID(host, t) // the event itself stays as hashed
		}
		if err := w.putEventAt(e, targets); err != nil {
			return 0, 0, err
		}
		w.head = m.Head{Seq: e.Seq, Hash: sum}
		return 0, 1, nil
	}
	return 0, 0, graph.Errorf(graph.EINVALID, "import: unknown record type %q", l.Type)
}

// checkImportedRelation checks a relation line's record: a rel: id, a valid declarable
// type, node ends that are not the same, ports and attrs within the limits.
func checkImportedRelation(r *graph.Relation) error {
	if r == nil || graph.KindOf(r.ID) != graph.KindRelation || relLocal(r.ID) == "" {
		return graph.Errorf(graph.EINVALID, "a relation record without a valid id (rel:<uuid>)")
	}
	if r.Observed {
		return graph.Errorf(graph.EINVALID, "%s is marked observed; exports carry declared relations only", r.ID)
	}
	c, err := graph.NormalizeRelationCreate(graph.RelationCreate{From: r.From, FromPort: r.FromPort, Type: r.Type, To: r.To, ToPort: r.ToPort, Attrs: maps.Clone(r.Attrs)})
	if err != nil {
		return graph.Errorf(graph.EINVALID, "%s: %s", r.ID, graph.ErrorMessage(err))
	}
	if c.From != r.From || c.To != r.To || c.Type != r.Type || c.FromPort != r.FromPort || c.ToPort != r.ToPort || !maps.Equal(c.Attrs, r.Attrs) {
		return graph.Errorf(graph.EINVALID, "%s is not in normal form (ends, type, ports and attrs as devgraph writes them)", r.ID)
	}
	for _, n := range []string{r.From, r.To} {
		if k := graph.KindOf(n); k != graph.KindIdentity && k != graph.KindDevice {
			return graph.Errorf(graph.EINVALID, "%s: %q is not an identity or device id", r.ID, n)
		}
	}
	return nil
}

// importRelation adds a relation of the file into a non-empty database through the
// ordinary path (relation.add), keeping its id, author and time. One whose end was not
// imported, whose tuple exists here already or that would pass a node's cap is skipped.
func (w *wtx) importRelation(r *graph.Relation) (int, int, error) {
	for _, n := range []string{r.From, r.To} {
		k, local, _ := graph.SplitID(n)
		if !exists(w.tx, k, local) {
			return 0, 0, nil // its end was not imported
		}
	}
	if dup, err := tupleRelation(w.tx, r); err != nil || dup != nil {
		return 0, 0, err
	}
	if w.checkRelCap("from", r.From, 1) != nil || w.checkRelCap("to", r.To, 1) != nil {
		w.db.log.Warn("import: relation skipped; a node holds the most relations it may", "relation", r.ID)
		return 0, 0, nil
	}
	if err := w.putRelation(r); err != nil {
		return 0, 0, err
	}
	return 1, 0, w.emit(graph.ActRelationAdd, r.ID, nil, r, relRelated(w.tx, r)...)
}

// qualifyLine rewrites an export line's records to the qualified form of host (see
// ImportOptions.QualifyHost); host "" leaves it as it is. Event lines are left whole: their
// payloads are hashed into the chain (importLine qualifies only their index entries).
func qualifyLine(host string, l *exportLine) {
	if host == "" {
		return
	}
	hints := func(fps []graph.Fingerprint) {
		for i, f := range fps {
			fps[i] = graph.QualifyFingerprint(host, f)
		}
	}
	switch {
	case l.Identity != nil:
		hints(l.Identity.Hints)
	case l.Device != nil:
		d := l.Device
		if h, _ := graph.SplitHost(d.Key); h != "" {
			break // a fleet's export: the device is its host's already
		}
		d.Key, d.Ref, d.Host = graph.QualifyHost(host, d.Key), graph.QualifyHost(host, d.Ref), host
		d.ID = graph.DeviceID(d.Key)
		for i, a := range d.Aliases {
			d.Aliases[i] = graph.QualifyHost(host, a)
		}
		hints(d.Fingerprints)
	case l.Note != nil:
		l.Note.Target = graph.QualifyDeviceID(host, l.Note.Target)
	case l.Robot != nil:
		if h, _ := graph.SplitHost(l.Robot.Ref); h != "" {
			break
		}
		l.Robot.Ref, l.Robot.Host = graph.QualifyHost(host, l.Robot.Ref), host
	case l.Relation != nil:
		l.Relation.From, l.Relation.To = graph.QualifyDeviceID(host, l.Relation.From), graph.QualifyDeviceID(host, l.Relation.To)
	}
}
