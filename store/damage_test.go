package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// The damaged-file matrix (issue 11, defect 3): a database cut at every page boundary,
// cut at random offsets, with bytes flipped in its meta pages, in branch and leaf pages
// and in stored values. Each copy is opened and read in full (export, changelog verify,
// relation check; then CheckFile, which runs bbolt's consistency check); each outcome must
// be a clear error (the damaged-file error, or verify naming the broken event) or the
// original data, never a panic or a signal. DEVGRAPH_DAMAGE=full runs a bigger matrix.

var damageNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func damageFull() bool { return os.Getenv("DEVGRAPH_DAMAGE") == "full" }

// buildSmallDB writes a small database through the store API: identities with hints and
// tags, notes and relations.
func buildSmallDB(t *testing.T, path string) {
	t.Helper()
	db := openFile(t, path, store.Options{Now: func() time.Time { return damageNow }})
	ctx := ctxActor("cli:damage")
	for i := 0; i < 12; i++ {
		_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: fmt.Sprintf("Synth %02d", i),
			Hints: []graph.Fingerprint{fp("usb_serial", fmt.Sprintf("0582:01a9:D%03d", i))},
			Tags:  []string{"role:synth", fmt.Sprintf("location:desk-%d", i%3)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.AddNote(ctx, graph.NoteCreate{Target: fmt.Sprintf("identity:synth-%02d", i), Kind: "info", Body: strings.Repeat("patched through the desk; ", 1+i*4)}); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			_, err := db.Relate(ctx, graph.RelationCreate{From: fmt.Sprintf("identity:synth-%02d", i-1), To: fmt.Sprintf("identity:synth-%02d", i),
				Type: "cable", FromPort: "MIDI OUT", ToPort: "MIDI IN", Attrs: map[string]string{"kind": "midi-din"}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// fullRead opens path as the CLI does and reads everything: the export, the changelog
// chain and the relation indexes. errDetected wraps what verify or the relation check
// found.
func fullRead(path string) (string, error) {
	ctx := context.Background()
	db, err := store.Open(path, store.Options{NoBackup: true, Now: func() time.Time { return damageNow }, Timeout: time.Second, Logger: quiet})
	if err != nil {
		return "", err
	}
	defer db.Close()
	var buf bytes.Buffer
	if err := db.Export(ctx, &buf); err != nil {
		return "", err
	}
	r, err := db.VerifyChangelog(ctx)
	if err != nil {
		return "", err
	}
	if !r.OK {
		return "", fmt.Errorf("%w: changelog broken at seq %d: %s", errDetected, r.BrokenSeq, r.Problem)
	}
	problems, err := db.CheckRelations(ctx)
	if err != nil {
		return "", err
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("%w: relations: %s", errDetected, problems[0])
	}
	return buf.String(), nil
}

var errDetected = errors.New("detected")

// quiet drops what the store logs (a damaged DB failing, a stale meta page): hundreds of
// cases would flood the test output.
var quiet = slog.New(slog.DiscardHandler)

// outcomes counts how the cases of one matrix ended.
type outcomes map[string]int

func (o outcomes) String() string {
	var parts []string
	for _, k := range []string{"equal", "damaged", "detected", "check", "undetected"} {
		parts = append(parts, fmt.Sprintf("%s %d", k, o[k]))
	}
	return strings.Join(parts, ", ")
}

// probe writes data to a fresh file and reads it in full twice: as the CLI opens it, and
// through CheckFile (bbolt's consistency check first). Each must give the original data or
// a clear error.
func probe(t *testing.T, dir, name string, data []byte, want string, o outcomes) {
	t.Helper()
	probeOr(t, dir, name, data, []string{want}, false, o)
}

// probeOr is probe accepting any of wants as the original data; with silent, a read of
// other data is counted (as "undetected", or "check" when CheckFile finds the damage)
// instead of failing the test.
func probeOr(t *testing.T, dir, name string, data []byte, wants []string, silent bool, o outcomes) {
	t.Helper()
	path := filepath.Join(dir, "case.db")
	os.Remove(path)
	os.Remove(path + ".pid")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := fullRead(path)
	other := false
	switch {
	case err == nil && slices.Contains(wants, got):
		o["equal"]++
	case err == nil:
		other = true
		if !silent {
			t.Errorf("%s: read succeeded with different data", name)
		}
	default:
		o[clearError(t, name, err)]++
	}
	// CheckFile on the same bytes (the read above may have written: a fresh copy).
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cerr := store.CheckFile(path)
	if cerr != nil {
		clearError(t, name+" (CheckFile)", cerr)
	}
	if other {
		if cerr != nil {
			o["check"]++
		} else {
			o["undetected"]++
			if testing.Verbose() {
				t.Logf("undetected: %s", name)
			}
		}
	}
}

// clearError fails the test unless err is the damaged-file error, or a problem verify or
// the relation check named; it returns which.
func clearError(t *testing.T, name string, err error) string {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", name)
		return "none"
	}
	if errors.Is(err, errDetected) {
		return "detected"
	}
	var ge *graph.Error
	if errors.As(err, &ge) && strings.HasPrefix(ge.Message, "changelog event ") && strings.HasSuffix(ge.Message, "restore from a backup") {
		return "damaged" // the changelog's own words for an event it cannot decode
	}
	if !errors.As(err, &ge) || ge.Code != graph.EINVALID || !strings.HasSuffix(ge.Message, "restore a backup; devgraph backup makes one") {
		if strings.HasPrefix(err.Error(), "changelog:") || strings.HasPrefix(err.Error(), "relation") {
			return "detected" // CheckFile's own words for a broken chain or index
		}
		t.Errorf("%s: not the damaged-file error: %v (%T)", name, err, err)
		return "other"
	}
	if strings.Contains(ge.Message, "\n") {
		t.Errorf("%s: error spans lines: %q", name, ge.Message)
	}
	return "damaged"
}

// layout is what a test needs of a bbolt file: its page size and high-water mark, from
// the newest meta page.
func layout(t *testing.T, b []byte) (pageSize, hwm int) {
	t.Helper()
	ne := binary.NativeEndian
	var txid uint64
	for _, off := range []int{0, int(ne.Uint32(b[16+8:]))} {
		if tx := ne.Uint64(b[off+16+48:]); tx >= txid {
			txid = tx
			pageSize, hwm = int(ne.Uint32(b[off+16+8:])), int(ne.Uint64(b[off+16+40:]))
		}
	}
	return pageSize, hwm
}

// pagesOf returns the ids of the pages under the high-water mark whose header carries
// their own id and the given type flag (0x01 branch, 0x02 leaf).
func pagesOf(b []byte, pageSize, hwm int, flag uint16) []int {
	ne := binary.NativeEndian
	var ids []int
	for id := 2; id < hwm && (id+1)*pageSize <= len(b); id++ {
		p := b[id*pageSize:]
		if ne.Uint64(p) == uint64(id) && ne.Uint16(p[8:]) == flag {
			ids = append(ids, id)
		}
	}
	return ids
}

func flipped(b []byte, off int, mask byte) []byte {
	c := append([]byte(nil), b...)
	c[off] ^= mask
	return c
}

func smallDamageDB(t *testing.T) (dir string, data []byte, want string) {
	dir, data, want, _ = smallDamageDBPrev(t)
	return dir, data, want
}

// smallDamageDBPrev also returns what the file read before its last write: bbolt falls
// back to the older of its two meta pages when the newer is damaged, which is that state.
func smallDamageDBPrev(t *testing.T) (dir string, data []byte, want, prev string) {
	t.Helper()
	dir = t.TempDir()
	src := filepath.Join(dir, "small.db")
	buildSmallDB(t, src)
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	db := openFile(t, src, store.Options{Now: func() time.Time { return damageNow }})
	if _, err := db.UpdateTags(ctxActor("cli:damage"), "identity:synth-00", []string{"status:last-write"}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if data, err = os.ReadFile(src); err != nil {
		t.Fatal(err)
	}
	if want, err = fullRead(src); err != nil {
		t.Fatal(err)
	}
	prevPath := filepath.Join(dir, "prev.db")
	os.WriteFile(prevPath, before, 0o600)
	if prev, err = fullRead(prevPath); err != nil {
		t.Fatal(err)
	}
	return dir, data, want, prev
}

func TestDamage_TruncatedAtEveryPage(t *testing.T) {
	t.Parallel()
	dir, data, want := smallDamageDB(t)
	pageSize, hwm := layout(t, data)
	o := outcomes{}
	for off := 0; off <= len(data); off += pageSize {
		probe(t, dir, fmt.Sprintf("cut at %d", off), data[:off], want, o)
	}
	for _, off := range []int{1, pageSize - 1, pageSize + 80, hwm*pageSize - 1} {
		probe(t, dir, fmt.Sprintf("cut at %d", off), data[:off], want, o)
	}
	if o["damaged"] == 0 || o["equal"] == 0 {
		t.Fatalf("outcomes %v: want both damaged and whole files", o)
	}
	t.Logf("%d pages (%d used): %v", len(data)/pageSize, hwm, o)
}

func TestDamage_TruncatedAtRandom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "large.db")
	n := 2000 // about 3 MB of pages
	storetest.BuildIdentities(t, src, n, 5)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fullRead(src)
	if err != nil {
		t.Fatal(err)
	}
	cuts := 200
	if damageFull() {
		cuts = 2000
	}
	rng := rand.New(rand.NewPCG(11, uint64(len(data))))
	o := outcomes{}
	for i := 0; i < cuts; i++ {
		off := rng.IntN(len(data))
		probe(t, dir, fmt.Sprintf("cut at %d", off), data[:off], want, o)
	}
	t.Logf("%d bytes, %d cuts: %v", len(data), cuts, o)
}

func TestDamage_FlippedMeta(t *testing.T) {
	t.Parallel()
	dir, data, want, prev := smallDamageDBPrev(t)
	pageSize, _ := layout(t, data)
	o := outcomes{}
	for _, page := range []int{0, 1} {
		for i := 0; i < 16+64; i++ { // the page header and the meta
			off := page*pageSize + i
			// the newer meta damaged, bbolt reads the state before the last write
			probeOr(t, dir, fmt.Sprintf("meta %d byte %d", page, i), flipped(data, off, 0xff), []string{want, prev}, false, o)
		}
	}
	// both metas at once: nothing left to fall back on
	both := flipped(flipped(data, 16+56, 0x01), pageSize+16+56, 0x01)
	probe(t, dir, "both checksums", both, want, o)
	t.Logf("%v", o)
}

func TestDamage_FlippedPages(t *testing.T) {
	t.Parallel()
	dir, data, want := smallDamageDB(t)
	pageSize, hwm := layout(t, data)
	ne := binary.NativeEndian
	rng := rand.New(rand.NewPCG(3, 11))
	o := outcomes{}
	for _, kind := range []struct {
		name string
		flag uint16
	}{{"branch", 0x01}, {"leaf", 0x02}} {
		ids := pagesOf(data, pageSize, hwm, kind.flag)
		if len(ids) == 0 {
			t.Fatalf("no %s pages in the test database", kind.name)
		}
		for _, id := range ids {
			base := id * pageSize
			count := int(ne.Uint16(data[base+10:]))
			var offs []int
			offs = append(offs, base+8, base+10, base+11, base+12) // flags, count, overflow
			elems, fields := uniq(0, count-1), []int{4, 11, 15}    // pos, ksize's top byte, vsize's or pgid's top byte
			extra := 1
			if damageFull() {
				elems, fields, extra = uniq(0, 1, count/2, count-1), []int{0, 3, 4, 7, 8, 11, 12, 15}, 64
			}
			for _, e := range elems {
				el := base + 16 + 16*e // each element is 16 bytes
				// leaf: flags, pos, ksize, vsize; branch: pos, ksize, pgid
				for _, f := range fields {
					offs = append(offs, el+f)
				}
			}
			for i := 0; i < extra; i++ {
				offs = append(offs, base+16+rng.IntN(pageSize-16))
			}
			for _, off := range offs {
				probeOr(t, dir, fmt.Sprintf("%s page %d byte %d", kind.name, id, off-base), flipped(data, off, 0xff), []string{want}, true, o)
			}
		}
		t.Logf("%s pages %v: %v", kind.name, ids, o)
		// A damaged branch page misleads the reads, but bbolt's consistency check (doctor,
		// CheckFile, Open after an unclean shutdown) finds every such case. In a leaf, a
		// flipped key or value length moves what the reads see inside the page, which
		// leaves it well-formed: bbolt keeps no checksums, so some of those read back as
		// other data (counted as undetected; see TestDamage_FlippedValues).
		if kind.flag == 0x01 && o["undetected"] > 0 {
			t.Errorf("%d branch page flips went undetected even by the consistency check", o["undetected"])
		}
		o = outcomes{}
	}
}

// TestDamage_FlippedValues flips bytes in the stored values (records, index entries,
// events, counters). bbolt keeps no checksum of its values, and devgraph's records carry
// none either: a flip that leaves a record valid JSON reads back as a different record.
// What must hold: never a panic, an undecodable value gives the damaged-file error, an
// altered event breaks the chain (verify names it). The flips here land on structural
// bytes (the value's first byte, a JSON brace or quote) and on an event body's middle.
func TestDamage_FlippedValues(t *testing.T) {
	t.Parallel()
	dir, data, want := smallDamageDB(t)
	pageSize, hwm := layout(t, data)
	ne := binary.NativeEndian
	o := outcomes{}
	cases := 0
	for _, id := range pagesOf(data, pageSize, hwm, 0x02) {
		base := id * pageSize
		count := int(ne.Uint16(data[base+10:]))
		for e := 0; e < count; e++ {
			el := base + 16 + 16*e
			if ne.Uint32(data[el:])&0x01 != 0 { // a bucket, not a value
				continue
			}
			pos, ksize, vsize := int(ne.Uint32(data[el+4:])), int(ne.Uint32(data[el+8:])), int(ne.Uint32(data[el+12:]))
			v := el + pos + ksize
			if vsize == 0 || v+vsize > len(data) {
				continue
			}
			val := data[v : v+vsize]
			offs := []int{v}
			if i := bytes.IndexAny(val, `"}`); i > 0 && val[0] == '{' {
				offs = append(offs, v+i) // a structural byte of a JSON record
			}
			if bytes.Contains(val, []byte(`"prev_hash"`)) || bytes.Contains(val, []byte(`"action"`)) {
				offs = append(offs, v+vsize/2) // anywhere in an event
			}
			for _, off := range offs {
				cases++
				probeOr(t, dir, fmt.Sprintf("leaf page %d value %d byte %d", id, e, off-v), flipped(data, off, 0xff), []string{want}, true, o)
			}
		}
	}
	if cases < 20 {
		t.Fatalf("only %d value cases", cases)
	}
	if o["damaged"]+o["detected"] == 0 {
		t.Errorf("no value flip was found")
	}
	t.Logf("%d value flips: %v", cases, o)
}

func uniq(xs ...int) []int {
	seen := map[int]bool{}
	var out []int
	for _, x := range xs {
		if x >= 0 && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TestDamage_FailedDBStaysFailed cuts an open database's file behind its back: the read
// that faults gives the damaged-file error, and so does every later call, without
// touching the memory map again; Close still works.
func TestDamage_FailedDBStaysFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "d.db")
	storetest.BuildIdentities(t, path, 2000, 4)
	db, err := store.Open(path, store.Options{NoBackup: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := os.Truncate(path, 16384); err != nil {
		t.Fatal(err)
	}
	err = db.Export(ctx, &bytes.Buffer{})
	if clearError(t, "export of a cut file", err) != "damaged" {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(err.Error(), "faulted") {
		t.Fatalf("export: %v; want the fault named", err)
	}
	_, _, _, err2 := db.FindIdentities(ctx, graph.IdentityFilter{First: 5})
	if err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("later read: %v; want the same error %v", err2, err)
	}
}

// TestDamage_UncleanShutdown: a pid file left beside the database (the last writer did
// not Close) makes Open run bbolt's consistency check, which finds what a plain open
// would not: an unreachable page.
func TestDamage_UncleanShutdown(t *testing.T) {
	t.Parallel()
	dir, data, want := smallDamageDB(t)
	pageSize, hwm := layout(t, data)
	path := filepath.Join(dir, "unclean.db")
	// Make one branch element point at the page the one before it points at: the page it
	// pointed at is lost (reachable from nowhere, not free), which only a walk of every
	// page finds. Some branch pages are stale copies nothing reaches: use a live one.
	ne := binary.NativeEndian
	var bad []byte
	for _, id := range pagesOf(data, pageSize, hwm, 0x01) {
		base := id * pageSize
		if ne.Uint16(data[base+10:]) < 2 {
			continue
		}
		c := append([]byte(nil), data...)
		copy(c[base+16+16+8:base+16+16+16], data[base+16+8:base+16+16]) // element 1's pgid := element 0's
		if err := os.WriteFile(path, c, 0o600); err != nil {
			t.Fatal(err)
		}
		if store.CheckConsistency(path) != nil {
			bad = c
			break
		}
	}
	if bad == nil {
		t.Fatal("no live branch page with two elements")
	}
	// clean: the plain open does not look at every page
	if db, err := store.Open(path, store.Options{NoBackup: true}); err == nil {
		db.Close()
	} else {
		clearError(t, "clean open", err)
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pid", []byte(strconv.Itoa(1<<22)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(path, store.Options{NoBackup: true})
	if clearError(t, "open after an unclean shutdown", err) != "damaged" || !strings.Contains(err.Error(), "consistency check") {
		t.Fatalf("open after an unclean shutdown: %v; want the consistency check's error", err)
	}
	// and a whole file after an unclean shutdown opens, and clears the mark on Close
	good := filepath.Join(dir, "good.db")
	os.WriteFile(good, data, 0o600)
	os.WriteFile(good+".pid", []byte("1"), 0o600)
	got, err := fullRead(good)
	if err != nil || got != want {
		t.Fatalf("whole file after an unclean shutdown: %v", err)
	}
	if _, err := os.Stat(good + ".pid"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pid file left after Close: %v", err)
	}
}

// TestDamage_Header: what the cheap checks before bbolt maps the file say, one case each;
// "resealed" cases change a meta field and write a valid checksum over it, so only the
// field's own check can catch them.
func TestDamage_Header(t *testing.T) {
	t.Parallel()
	dir, data, _ := smallDamageDB(t)
	pageSize, hwm := layout(t, data)
	ne := binary.NativeEndian
	// reseal changes both metas with fn and writes their checksums again.
	reseal := func(fn func(meta []byte)) []byte {
		c := append([]byte(nil), data...)
		for _, off := range []int{0, pageSize} {
			meta := c[off+16 : off+16+64]
			fn(meta)
			h := fnv.New64a()
			h.Write(meta[:56])
			ne.PutUint64(meta[56:], h.Sum64())
		}
		return c
	}
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"empty", "is empty (0 bytes)", []byte{}},
		{"tiny", "is too short", []byte("x")},
		{"text", "is not a devgraph database (it has no bbolt header)", bytes.Repeat([]byte("hello world\n"), 1000)},
		{"checksums", "has a damaged header (neither meta page passes its checksum)", flipped(flipped(data, 16+60, 0x10), pageSize+16+60, 0x10)},
		{"version", "has an unknown bbolt file format (version 3)", reseal(func(m []byte) { ne.PutUint32(m[4:], 3) })},
		{"page size", "page size 3000", reseal(func(m []byte) { ne.PutUint32(m[8:], 3000) })},
		{"root past the end", "has a damaged header (root page", reseal(func(m []byte) { ne.PutUint64(m[16:], uint64(hwm)+5) })},
		{"more pages than the file", "is truncated", reseal(func(m []byte) { ne.PutUint64(m[40:], uint64(len(data)/pageSize)+1) })},
	}
	for _, c := range cases {
		path := filepath.Join(dir, "header.db")
		if err := os.WriteFile(path, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, open := range []struct {
			name string
			fn   func() error
		}{
			{"Open", func() error { db, err := store.Open(path, store.Options{NoBackup: true}); closeIf(db); return err }},
			{"Open read-only", func() error {
				db, err := store.Open(path, store.Options{ReadOnly: true})
				closeIf(db)
				return err
			}},
			{"CheckFile", func() error { return store.CheckFile(path) }},
			{"SchemaStatus", func() error { _, err := store.SchemaStatus(path); return err }},
			{"Compact", func() error { return store.Compact(path, filepath.Join(t.TempDir(), "c.db")) }},
		} {
			err := open.fn()
			if clearError(t, c.name+": "+open.name, err) != "damaged" || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: %v; want %q", c.name, open.name, err, c.want)
			}
		}
	}
	_, err := store.Open("/dev/null", store.Options{})
	if mustCode(t, err, graph.EINVALID); !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/null: %v", err)
	}
}

func closeIf(db *store.DB) {
	if db != nil {
		db.Close()
	}
}
