package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// importSource is a database of 12 identities (with hints, tags and notes) and a device,
// exported.
func importSource(t *testing.T) []byte {
	t.Helper()
	ctx := ctxActor("cli:src")
	src := storetest.MustOpen(t)
	for i := range 12 {
		c := graph.IdentityCreate{Name: fmt.Sprintf("Unit %02d", i), Slug: fmt.Sprintf("unit-%02d", i), Tags: []string{"role:synth"},
			Hints: []graph.Fingerprint{fp("usb_serial", fmt.Sprintf("0582:01a9:S%02d", i))}}
		if _, err := src.CreateIdentity(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := src.AddNote(ctx, graph.NoteCreate{Target: c.Slug, Body: "note on " + c.Name}); err != nil {
			t.Fatal(err)
		}
	}
	observe(t, src, dev("sn:0582:01a9:S03", "usb:1-1", fp("usb_serial", "0582:01a9:S03")))
	var exp bytes.Buffer
	if err := src.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	return exp.Bytes()
}

// snapshot is what a failed import must leave exactly as it was.
func snapshot(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := db.VerifyChangelog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids, _, _, err := db.FindIdentities(ctx, graph.IdentityFilter{First: graph.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, id := range ids {
		names = append(names, id.ID)
	}
	return fmt.Sprintf("identities=%d devices=%d notes=%d events=%d head=%d/%s ids=%v",
		st.Identities, st.Devices, st.Notes, st.Events, rep.HeadSeq, rep.HeadHash, names)
}

// onlyReader hides a reader's other methods (a pipe, an HTTP body): the import spools it.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A conflicting or bad import into a non-empty database writes nothing, even when the
// problem sits batches after the start of the file, and names the first problem.
func TestImport_BadInputChangesNothing(t *testing.T) {
	defer store.SetImportBatch(3)() // a dozen identities span several transactions
	exp := importSource(t)
	ctx := ctxActor("cli:dst")
	lines := strings.Split(strings.TrimRight(string(exp), "\n"), "\n")
	lineOf := func(sub string) int {
		for i, l := range lines {
			if strings.Contains(l, sub) {
				return i + 1
			}
		}
		t.Fatalf("no line with %q", sub)
		return 0
	}

	cases := []struct {
		name  string
		setup func(db *store.DB)
		input func() []byte
		code  string
		want  string // in the message
	}{
		{"existing identity late in the file", func(db *store.DB) {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Unit 10", Slug: "unit-10"}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Unit 11", Slug: "unit-11"}); err != nil {
				t.Fatal(err)
			}
		}, func() []byte { return exp }, graph.ECONFLICT, fmt.Sprintf("import line %d: identity:unit-10 already exists", lineOf(`"id":"identity:unit-10"`))},
		{"unit hint held here", func(db *store.DB) {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine", Hints: []graph.Fingerprint{fp("usb_serial", "0582:01a9:S09")}}); err != nil {
				t.Fatal(err)
			}
		}, func() []byte { return exp }, graph.ECONFLICT, "held here by identity:mine"},
		{"note twice in the file", func(db *store.DB) {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
				t.Fatal(err)
			}
		}, func() []byte {
			// the file's last note reappears under another identity's note line
			var notes []string
			for _, l := range lines {
				if strings.Contains(l, `"type":"note"`) {
					notes = append(notes, l)
				}
			}
			return []byte(strings.Join(lines, "\n") + "\n" + notes[0] + "\n")
		}, graph.EINVALID, "each note may appear once"},
		{"malformed last line", func(db *store.DB) {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
				t.Fatal(err)
			}
		}, func() []byte { return append(append([]byte(nil), exp...), "{not json\n"...) }, graph.EINVALID, fmt.Sprintf("import line %d", len(lines)+1)},
		{"bad identity data late in the file", func(db *store.DB) {
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
				t.Fatal(err)
			}
		}, func() []byte {
			return []byte(strings.Replace(string(exp), `"name":"Unit 11"`, `"name":"Unit 11","data":[1,2]`, 1))
		}, graph.EINVALID, "identity:unit-11"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := storetest.MustOpen(t)
			c.setup(db)
			before := snapshot(t, db)
			st, err := db.Import(ctx, onlyReader{bytes.NewReader(c.input())}, nil)
			mustCode(t, err, c.code)
			if msg := graph.ErrorMessage(err); !strings.Contains(msg, c.want) || !strings.Contains(msg, "nothing was imported") {
				t.Errorf("message %q; want it to name %q and say nothing was imported", msg, c.want)
			}
			if st != nil && st.Records+st.Events != 0 {
				t.Errorf("stats %+v after a refused import", st)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("a refused import changed the database:\n before %s\n after  %s", before, after)
			}
		})
	}

	t.Run("a note already here", func(t *testing.T) {
		db := storetest.MustOpen(t)
		// The same notes: import the file once into an empty database, then the notes
		// alone (identities renamed away) again.
		if _, err := db.Import(ctx, bytes.NewReader(exp), nil); err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, l := range lines {
			if !strings.Contains(l, `"type":"identity"`) {
				keep = append(keep, l)
			}
		}
		before := snapshot(t, db)
		_, err := db.Import(ctx, bytes.NewReader([]byte(strings.Join(keep, "\n"))), nil)
		mustCode(t, err, graph.ECONFLICT)
		if !strings.Contains(graph.ErrorMessage(err), "already exists here") || !strings.Contains(graph.ErrorMessage(err), "note:") {
			t.Errorf("message %q does not name the note", graph.ErrorMessage(err))
		}
		if after := snapshot(t, db); after != before {
			t.Fatalf("changed:\n %s\n %s", before, after)
		}
	})

	t.Run("into empty: an altered event late in the changelog", func(t *testing.T) {
		db := storetest.MustOpen(t)
		i := strings.LastIndex(string(exp), `"actor":"cli:src"`)
		tampered := string(exp[:i]) + `"actor":"cli:evil"` + string(exp[i+len(`"actor":"cli:src"`):])
		_, err := db.Import(ctx, onlyReader{strings.NewReader(tampered)}, nil)
		mustCode(t, err, graph.EINVALID)
		if !strings.Contains(graph.ErrorMessage(err), "does not match its hash") {
			t.Errorf("message %q", graph.ErrorMessage(err))
		}
		if st, _ := db.Stats(ctx); st.Identities+st.Notes+st.Devices != 0 || st.Events != 0 {
			t.Fatalf("an empty database took part of a tampered import: %+v", st)
		}
	})
}

// A clean import still writes everything, from a spooled stream and from a file read
// from where its offset stands.
func TestImport_CleanAfterCheck(t *testing.T) {
	defer store.SetImportBatch(3)()
	exp := importSource(t)
	ctx := ctxActor("cli:dst")

	db := storetest.MustOpen(t)
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
		t.Fatal(err)
	}
	st, err := db.Import(ctx, onlyReader{bytes.NewReader(exp)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := db.Stats(ctx); s.Identities != 13 || s.Notes != 12 || s.Devices != 1 || st.Records != 12+12+1 {
		t.Fatalf("stats %+v, import %+v", s, st)
	}
	entries, _ := os.ReadDir(filepath.Dir(db.Path()))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".devgraph-import-") {
			t.Errorf("spool file %s left behind", e.Name())
		}
	}

	// A file whose offset is past a preamble: the check and the import both start there.
	path := filepath.Join(t.TempDir(), "exp.jsonl")
	if err := os.WriteFile(path, append([]byte("PREAMBLE\n"), exp...), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(len("PREAMBLE\n")), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	empty := storetest.MustOpen(t)
	st, err = empty.Import(ctx, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !st.KeptLog || st.Records != 12+12+1 {
		t.Fatalf("import from a file: %+v", st)
	}
	if r, _ := empty.VerifyChangelog(ctx); !r.OK {
		t.Fatalf("verify %+v", r)
	}
}

// endless reads prefix, then fill forever, counting the bytes handed out.
type endless struct {
	prefix []byte
	fill   byte
	n      int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := copy(p, e.prefix)
	e.prefix = e.prefix[k:]
	for i := k; i < len(p); i++ {
		p[i] = e.fill
	}
	e.n += int64(len(p))
	return len(p), nil
}

// Defect 2 (issue 11): endless input is refused once a bound is passed, having read no
// more than that bound and a buffer beyond it, and changes nothing.
func TestImport_EndlessInputRefused(t *testing.T) {
	exp := importSource(t)
	header := exp[:bytes.IndexByte(exp, '\n')+1]
	robot := []byte(`{"type":"robot","robot":{"ref":"x"}}` + "\n")
	const buf = 2 << 20 // the line reader's buffer and the spooler's read, with room
	cases := []struct {
		name    string
		in      *endless
		maxSize int64
		code    string
		want    string
		bound   int64 // the most that may be read
	}{
		{"zeros", &endless{fill: 0}, 0, graph.EINVALID, "import line 1 is not an export record", buf},
		{"one endless line", &endless{prefix: []byte("{"), fill: 'a'}, 0, graph.ELIMIT, "import line 1 is longer than 64 MiB", store.MaxImportLine + buf},
		{"endless records past --max-size", &endless{prefix: append(append([]byte(nil), header...), bytes.Repeat(robot, 1000)...), fill: '\n'}, 1 << 20, graph.ELIMIT, "larger than --max-size 1M", 1<<20 + buf},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			db := storetest.MustOpen(t)
			ctx := ctxActor("cli:dst")
			if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, db)
			if c.maxSize > 0 {
				ctx = graph.WithImportMaxSize(ctx, c.maxSize)
			}
			_, err := db.Import(ctx, c.in, nil)
			mustCode(t, err, c.code)
			if msg := graph.ErrorMessage(err); !strings.Contains(msg, c.want) || !strings.Contains(msg, "nothing was imported") {
				t.Errorf("message %q; want %q and nothing was imported", msg, c.want)
			}
			if c.in.n > c.bound {
				t.Errorf("read %d bytes before refusing; the bound is %d", c.in.n, c.bound)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("changed:\n %s\n %s", before, after)
			}
			if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
		})
	}
}

// A regular file is read twice in place: with no usable TMPDIR it still imports, while
// a stream, which must be spooled, is refused with the reason.
func TestImport_RegularFileNotCopied(t *testing.T) {
	exp := importSource(t)
	ctx := ctxActor("cli:dst")
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	path := filepath.Join(t.TempDir(), "exp.jsonl")
	if err := os.WriteFile(path, exp, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	db := storetest.MustOpen(t)
	if st, err := db.Import(ctx, f, nil); err != nil || st.Records != 12+12+1 {
		t.Fatalf("import of a regular file with no TMPDIR: %+v %v", st, err)
	}
	other := storetest.MustOpen(t)
	_, err = other.Import(ctx, onlyReader{bytes.NewReader(exp)}, nil)
	if msg := graph.ErrorMessage(err); !strings.Contains(msg, "cannot spool the import in") || !strings.Contains(msg, "TMPDIR") {
		t.Fatalf("a stream with no TMPDIR: %v", err)
	}
}

// SIGINT or SIGTERM while the import writes (its ctx cancelled from the progress call,
// which runs inside the write transaction) leaves the database exactly as it was: the
// whole import is one transaction.
func TestImport_CancelledWhileWritingChangesNothing(t *testing.T) {
	defer store.SetImportBatch(3)()
	exp := importSource(t)
	for _, empty := range []bool{true, false} {
		t.Run(fmt.Sprintf("empty=%v", empty), func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			db := storetest.MustOpen(t)
			if !empty {
				if _, err := db.CreateIdentity(ctxActor("cli:dst"), graph.IdentityCreate{Name: "Mine"}); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, db)
			ctx, cancel := context.WithCancel(ctxActor("cli:dst"))
			defer cancel()
			calls := 0
			_, err := db.Import(ctx, onlyReader{bytes.NewReader(exp)}, func(int, int) { calls++; cancel() })
			if !errors.Is(err, context.Canceled) || calls == 0 {
				t.Fatalf("err %v after %d progress calls; want context.Canceled from inside the write", err, calls)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("an interrupted import changed the database:\n before %s\n after  %s", before, after)
			}
			if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			// And the same import, not interrupted, goes through afterwards.
			if _, err := db.Import(ctxActor("cli:dst"), onlyReader{bytes.NewReader(exp)}, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A pipe that sends the header and then nothing: cancelling ctx ends the waiting read
// (the pipe takes deadlines) and the import returns ctx.Err().
func TestImport_CancelWhileWaitingOnAPipe(t *testing.T) {
	exp := importSource(t)
	t.Setenv("TMPDIR", t.TempDir())
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	db := storetest.MustOpen(t)
	before := snapshot(t, db)
	ctx, cancel := context.WithCancel(ctxActor("cli:dst"))
	done := make(chan error, 1)
	go func() {
		_, err := db.Import(ctx, pr, nil)
		done <- err
	}()
	// 4 MiB through a 64 KiB pipe: once written, the import has read most of it and
	// waits for more (or soon will).
	robots := bytes.Repeat([]byte(`{"type":"robot","robot":{"ref":"x"}}`+"\n"), (4<<20)/37)
	if _, err := pw.Write(append(exp[:bytes.IndexByte(exp, '\n')+1], robots...)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if after := snapshot(t, db); after != before {
		t.Fatalf("changed:\n %s\n %s", before, after)
	}
}

// Into a non-empty database the indexes the import writes in key order at the end
// (names, tags, hints, events by target) find what it imported, in the same transaction
// as the records.
func TestImport_NonEmptyIndexes(t *testing.T) {
	exp := importSource(t)
	ctx := ctxActor("cli:dst")
	db := storetest.MustOpen(t)
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine", Tags: []string{"role:synth"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Import(ctx, onlyReader{bytes.NewReader(exp)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, n, _, err := db.FindIdentities(ctx, graph.IdentityFilter{Tags: []string{"role:synth"}}); err != nil || n != 13 {
		t.Errorf("by tag: %d, %v; want 13", n, err)
	}
	hint := fp("usb_serial", "0582:01a9:S07")
	if ids, _, _, err := db.FindIdentities(ctx, graph.IdentityFilter{Hint: &hint}); err != nil || len(ids) != 1 || ids[0].ID != "identity:unit-07" {
		t.Errorf("by hint: %v, %v", ids, err)
	}
	if _, n, _, err := db.FindIdentities(ctx, graph.IdentityFilter{Name: "unit 1"}); err != nil || n != 2 {
		t.Errorf("by name prefix: %d, %v; want 2", n, err)
	}
	if evs, _, err := db.FindEvents(ctx, graph.EventFilter{Target: "identity:unit-03"}); err != nil || len(evs) == 0 {
		t.Errorf("events of identity:unit-03: %d, %v", len(evs), err)
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Thief", Hints: []graph.Fingerprint{hint}}); graph.ErrorCode(err) != graph.ECONFLICT {
		t.Errorf("an imported unit hint taken again: %v, want CONFLICT", err)
	}
}

// A regular file is read twice in place; the write must not take in anything the check
// did not see. Between the two passes the file is appended to (the extra identity is
// not imported: the write reads what was checked), truncated at a line boundary, or has
// a record changed at the same size (both refused, nothing written).
func TestImport_FileChangedBetweenPasses(t *testing.T) {
	exp := importSource(t)
	extra := []byte(`{"type":"identity","identity":{"id":"identity:late","name":"Late"}}` + "\n")
	i := bytes.LastIndex(exp[:len(exp)-1], []byte("\n")) + 1 // start of the last line
	cases := []struct {
		name   string
		change func(path string) error
		refuse bool
	}{
		{"appended", func(path string) error {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write(extra)
			return err
		}, false},
		{"truncated", func(path string) error { return os.Truncate(path, int64(i)) }, true},
		{"rewritten", func(path string) error {
			return os.WriteFile(path, bytes.Replace(exp, []byte(`"Unit 05"`), []byte(`"Unit X5"`), 1), 0o600)
		}, true},
	}
	for _, empty := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/empty=%v", c.name, empty), func(t *testing.T) {
				ctx := ctxActor("cli:dst")
				path := filepath.Join(t.TempDir(), "exp.jsonl")
				if err := os.WriteFile(path, exp, 0o600); err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				db := storetest.MustOpen(t)
				if !empty {
					if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Mine"}); err != nil {
						t.Fatal(err)
					}
				}
				before := snapshot(t, db)
				changed := false
				store.SetTestHook(db, func(point string) error {
					if point == "import.write" && !changed {
						changed = true
						return c.change(path)
					}
					return nil
				})
				_, err = db.Import(ctx, f, nil)
				store.SetTestHook(db, nil)
				if !changed {
					t.Fatal("the hook between the passes was not called")
				}
				if c.refuse {
					if msg := graph.ErrorMessage(err); !strings.Contains(msg, "changed while") {
						t.Fatalf("err %v; want the file refused as changed", err)
					}
					if after := snapshot(t, db); after != before {
						t.Fatalf("the import changed the database:\n before %s\n after  %s", before, after)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.FindIdentityByID(ctx, "identity:late", graph.IdentityParts{}); graph.ErrorCode(err) != graph.ENOTFOUND {
					t.Fatalf("an identity appended after the check was imported (err %v)", err)
				}
				if r, _ := db.VerifyChangelog(ctx); !r.OK {
					t.Fatalf("verify %+v", r)
				}
			})
		}
	}
}

// SIGINT or SIGTERM (or a client leaving the server) after the last line was read but
// before the commit still leaves the database as it was: the sorted puts of the flush
// are no reason to go on.
func TestImport_CancelledAtFlushChangesNothing(t *testing.T) {
	exp := importSource(t)
	for _, empty := range []bool{true, false} {
		t.Run(fmt.Sprintf("empty=%v", empty), func(t *testing.T) {
			db := storetest.MustOpen(t)
			if !empty {
				if _, err := db.CreateIdentity(ctxActor("cli:dst"), graph.IdentityCreate{Name: "Mine"}); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, db)
			ctx, cancel := context.WithCancel(ctxActor("cli:dst"))
			defer cancel()
			store.SetTestHook(db, func(point string) error {
				if point == "import.flush" {
					cancel()
				}
				return nil
			})
			_, err := db.Import(ctx, onlyReader{bytes.NewReader(exp)}, nil)
			store.SetTestHook(db, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v; want context.Canceled", err)
			}
			if after := snapshot(t, db); after != before {
				t.Fatalf("an import interrupted at its flush changed the database:\n before %s\n after  %s", before, after)
			}
		})
	}
}
