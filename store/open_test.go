package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"

	bolt "go.etcd.io/bbolt"
)

func TestOpen_Locked(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	defer db.Close()
	start := time.Now()
	_, err := store.Open(path, store.Options{Timeout: 200 * time.Millisecond})
	mustCode(t, err, graph.ELOCKED)
	if !strings.Contains(err.Error(), "in use by another devgraph process") || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("message %q", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("lock wait did not time out")
	}
}

func TestOpen_CloseTwice(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := db.CreateIdentity(context.Background(), graph.IdentityCreate{Name: "x"})
	mustCode(t, err, graph.EUNAVAILABLE)
	_, _, _, err = db.FindIdentities(context.Background(), graph.IdentityFilter{})
	mustCode(t, err, graph.EUNAVAILABLE)
}

func TestOpen_BadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// a real bbolt file that is someone else's
	other := filepath.Join(dir, "other.db")
	b, err := bolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("widgets")); return err })
	b.Close()
	// a devgraph file cut in half
	good := filepath.Join(dir, "good.db")
	db := openFile(t, good, store.Options{})
	seed(t, db, 200)
	db.Close()
	full, _ := os.ReadFile(good)
	corrupt := append([]byte(nil), full...)
	for i := 0; i < 2*4096 && i < len(corrupt); i++ { // both meta pages
		corrupt[i] ^= 0x5a
	}
	// a devgraph file cut just before the page its newest meta names as the freelist, which
	// bbolt reads while opening (through its memory map: past the end it faults)
	var cutAtFreelist []byte
	{
		var fl, txid uint64
		for off := 0; off < 2*4096; off += 4096 { // meta pages: header 16 bytes, freelist at +32, txid at +48
			if t := binary.LittleEndian.Uint64(full[off+16+48:]); t >= txid {
				txid, fl = t, binary.LittleEndian.Uint64(full[off+16+32:])
			}
		}
		cutAtFreelist = full[:min(int(fl)*4096, len(full))]
	}
	cases := map[string]string{
		"cut before its freelist": write("cutfl.db", cutAtFreelist),
		"text file":               write("notes.txt", bytes.Repeat([]byte("hello world\n"), 1000)),
		"tiny file":               write("tiny.db", []byte("x")),
		"other bolt":              other,
		"truncated":               write("trunc.db", full[:len(full)/2]),
		"corrupt":                 write("corrupt.db", corrupt),
		"directory":               dir,
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := store.Open(p, store.Options{NoBackup: true})
			mustCode(t, err, graph.EINVALID)
			if msg := graph.ErrorMessage(err); !strings.Contains(msg, p) {
				t.Fatalf("message %q does not name the file", msg)
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d.db")
	db := openFile(t, path, store.Options{})
	seed(t, db, 1)
	db.Close()
	ro, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.FindIdentityByID(context.Background(), "unit-0", graph.IdentityParts{}); err != nil {
		t.Fatal(err)
	}
	_, err = ro.CreateIdentity(context.Background(), graph.IdentityCreate{Name: "x"})
	mustCode(t, err, graph.EINVALID)
}

func TestBackupExportImport(t *testing.T) {
	t.Parallel()
	ctx := ctxActor("cli:t")
	src := storetest.MustOpen(t)
	seed(t, src, 30)
	observe(t, src, dev("sn:1", "usb:1-1", fp("usb_serial", "0582:01a9:S1")), dev("path:x", "usb:2-2", fp("usb_id", "1234:5678")))
	if _, err := src.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:1-1", IdentityID: "unit-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.UpdateTags(ctx, "usb:2-2", []string{"location:desk"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddNote(ctx, graph.NoteCreate{Target: "unit-2", Body: "hello <world> & co", Kind: "success"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.MergeIdentities(ctx, "unit-3", "unit-4"); err != nil {
		t.Fatal(err)
	}
	if err := src.SaveRobot(ctx, &graph.RobotRecord{Ref: "robot:scout", Serial: "S", Name: "scout"}, "", nil, nil); err != nil {
		t.Fatal(err)
	}

	t.Run("backup while writing", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 20; i++ {
				src.CreateIdentity(ctx, graph.IdentityCreate{Name: "during backup " + string(rune('a'+i))})
			}
		}()
		p := filepath.Join(t.TempDir(), "backup.db")
		f, _ := os.Create(p)
		n, err := src.Backup(ctx, f)
		f.Close()
		<-done
		if err != nil || n == 0 {
			t.Fatalf("backup %d %v", n, err)
		}
		if err := store.CheckFile(p); err != nil {
			t.Fatal(err)
		}
	})

	var exp bytes.Buffer
	if err := src.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	srcEvents := allEvents(t, src, graph.EventFilter{})

	t.Run("into empty keeps the chain", func(t *testing.T) {
		dst := storetest.MustOpen(t)
		var calls int
		st, err := dst.Import(ctx, bytes.NewReader(exp.Bytes()), func(int, int) { calls++ })
		if err != nil {
			t.Fatal(err)
		}
		if !st.KeptLog || st.Events != len(srcEvents) || calls == 0 {
			t.Fatalf("stats %+v calls %d", st, calls)
		}
		got := allEvents(t, dst, graph.EventFilter{})
		for i := range got {
			a, b := got[i], srcEvents[i]
			if a.Hash != b.Hash || a.ID != b.ID || string(a.After) != string(b.After) || !a.Time.Equal(b.Time) {
				t.Fatalf("event %d differs:\n%+v\n%+v", b.Seq, a, b)
			}
		}
		var again bytes.Buffer
		if err := dst.Export(ctx, &again); err != nil {
			t.Fatal(err)
		}
		// byte for byte apart from the header's export time
		strip := func(b []byte) string { return string(b[bytes.IndexByte(b, '\n'):]) }
		if strip(again.Bytes()) != strip(exp.Bytes()) {
			t.Fatal("re-export differs from the original export")
		}
		s1, _ := src.Stats(ctx)
		s2, _ := dst.Stats(ctx)
		if s1.Identities != s2.Identities || s1.Devices != s2.Devices || s1.Notes != s2.Notes || s1.Events != s2.Events {
			t.Fatalf("stats %+v vs %+v", s1, s2)
		}
		// indexes were rebuilt
		if h, _ := dst.FindHintHolders(ctx, []graph.Fingerprint{fp("usb_serial", "0582:01a9:S7")}); len(h[fp("usb_serial", "0582:01a9:S7")]) != 1 {
			t.Fatal("hint index not rebuilt")
		}
		if ids, total, _, _ := dst.FindTagged(ctx, "location:desk", 10, ""); total != 1 || ids[0] != "device:path:x" {
			t.Fatal("tag index not rebuilt")
		}
		if evs, _, _ := dst.FindEvents(ctx, graph.EventFilter{Target: "identity:unit-1", Action: "device.bind"}); len(evs) != 1 {
			t.Fatal("related target index not rebuilt")
		}
		if r, _ := dst.VerifyChangelog(ctx); !r.OK {
			t.Fatalf("verify %+v", r)
		}
	})
	t.Run("into non-empty records its own events", func(t *testing.T) {
		dst := storetest.MustOpen(t)
		if _, err := dst.CreateIdentity(ctx, graph.IdentityCreate{Name: "mine"}); err != nil {
			t.Fatal(err)
		}
		st, err := dst.Import(graph.WithRequestID(ctx, "imp"), bytes.NewReader(exp.Bytes()), nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.KeptLog || st.Events != 0 {
			t.Fatalf("stats %+v", st)
		}
		if _, total, _, _ := dst.FindIdentities(ctx, graph.IdentityFilter{}); total != 1+30+20-1 {
			t.Fatalf("identities %d", total)
		}
		evs := allEvents(t, dst, graph.EventFilter{Action: "identity.create"})
		if len(evs) != 1+50-1 || evs[0].Actor != "cli:t" {
			t.Fatalf("creates %d", len(evs))
		}
		if r, _ := dst.VerifyChangelog(ctx); !r.OK {
			t.Fatalf("verify %+v", r)
		}
	})
	t.Run("bad import", func(t *testing.T) {
		dst := storetest.MustOpen(t)
		_, err := dst.Import(ctx, strings.NewReader(`{"type":"identity"}`), nil)
		mustCode(t, err, graph.EINVALID)
		tampered := strings.Replace(exp.String(), `"actor":"cli:t"`, `"actor":"cli:x"`, 1)
		_, err = dst.Import(ctx, strings.NewReader(tampered), nil)
		mustCode(t, err, graph.EINVALID)
	})
	t.Run("compact", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.db")
		db := openFile(t, path, store.Options{})
		if _, err := db.Import(ctx, bytes.NewReader(exp.Bytes()), nil); err != nil {
			t.Fatal(err)
		}
		db.Close()
		out := path + ".compact"
		if err := store.Compact(path, out); err != nil {
			t.Fatal(err)
		}
		if err := store.CheckFile(out); err != nil {
			t.Fatal(err)
		}
		mustCode(t, store.Compact(path, out), graph.EINVALID)
	})
}
