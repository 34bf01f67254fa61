package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"

	bolt "go.etcd.io/bbolt"
)

// fileContents is every bucket of a database: bucket → key → value.
type fileContents map[string]map[string]string

// dump reads every bucket of db from a consistent copy (Backup), while db stays open.
func dump(t *testing.T, db *store.DB) fileContents {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Backup(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out := fileContents{}
	err = b.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			m := map[string]string{}
			out[string(name)] = m
			return bk.ForEach(func(k, v []byte) error { m[string(k)] = string(v); return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c fileContents) apply(ops []store.WriteOp) {
	for _, op := range ops {
		b := c[string(op.Bucket)]
		if op.Delete {
			delete(b, string(op.Key))
		} else {
			b[string(op.Key)] = string(op.Value)
		}
	}
}

func (c fileContents) diff(o fileContents) string {
	var sb strings.Builder
	for name, b := range c {
		for k, v := range b {
			if ov, ok := o[name][k]; !ok {
				fmt.Fprintf(&sb, "%s %q: not in the file\n", name, k)
			} else if ov != v {
				fmt.Fprintf(&sb, "%s %q: %q, the file has %q\n", name, k, v, ov)
			}
		}
		for k := range o[name] {
			if _, ok := b[k]; !ok {
				fmt.Fprintf(&sb, "%s %q: only in the file\n", name, k)
			}
		}
	}
	for name := range o {
		if _, ok := c[name]; !ok {
			fmt.Fprintf(&sb, "bucket %s only in the file\n", name)
		}
	}
	return sb.String()
}

// capture records the write sets db's transactions commit.
type capture struct {
	mu  sync.Mutex
	ops []store.WriteOp
	err error // returned to the transaction, when set
}

func captureWrites(db *store.DB) *capture {
	c := &capture{}
	store.SetBeforeCommit(db, func(ops []store.WriteOp) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil {
			return c.err
		}
		c.ops = append(c.ops, ops...)
		return nil
	})
	return c
}

func (c *capture) take() []store.WriteOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := c.ops
	c.ops = nil
	return ops
}

// Every write goes through one put/delete path: the write set a transaction hands over
// before it commits, applied to the file as it was, gives the file as it is after.
func TestWriteSet_IsTheFilesChange(t *testing.T) {
	t.Parallel()
	ctx := ctxActor("cli:test")
	db := storetest.MustOpen(t)
	c := captureWrites(db)
	check := func(t *testing.T, db *store.DB, c *capture, do func() error) {
		t.Helper()
		before := dump(t, db)
		c.take()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		ops := c.take()
		if len(ops) == 0 {
			t.Fatal("the write handed over an empty write set")
		}
		after := dump(t, db)
		before.apply(ops)
		if d := before.diff(after); d != "" {
			t.Fatalf("the write set (%d ops) applied to the file before is not the file after:\n%s", len(ops), d)
		}
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"create identity", func() error {
			_, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth", "location:desk"},
				Hints: []graph.Fingerprint{fp("usb_serial", "0582:0160:SN1"), fp("usb_id", "0582:0160")}})
			return err
		}},
		{"note", func() error {
			_, err := db.AddNote(ctx, graph.NoteCreate{Target: "roland-jd-xi", Body: "firmware 1.02"})
			return err
		}},
		{"tag", func() error {
			_, err := db.UpdateTags(ctx, "roland-jd-xi", []string{"status:ok"}, []string{"location:desk"})
			return err
		}},
		{"observe", func() error {
			_, err := db.ObserveDevices(ctx, &graph.Snapshot{Taken: time.Now(), Devices: []*graph.ObservedDevice{dev("sn:0582:0160:SN1", "usb:3-3.2", fp("usb_serial", "0582:0160:SN1"))},
				Sources: []graph.SourceStatus{{Name: "usb", OK: true}}})
			return err
		}},
		{"bind", func() error {
			_, err := db.BindDevice(ctx, graph.BindRequest{DeviceID: "usb:3-3.2", IdentityID: "roland-jd-xi"})
			return err
		}},
		{"delete with cascade", func() error { return db.DeleteIdentity(ctx, "roland-jd-xi") }},
		{"restore", func() error { _, err := db.RestoreIdentity(ctx, "roland-jd-xi"); return err }},
		{"prune", func() error { _, err := db.PruneChangelog(graph.WithPrunePermission(ctx), time.Now()); return err }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { check(t, db, c, s.do) })
	}
	t.Run("import into an empty database (puts deferred and sorted)", func(t *testing.T) {
		var exp bytes.Buffer
		if err := db.Export(ctx, &exp); err != nil {
			t.Fatal(err)
		}
		empty := storetest.MustOpen(t)
		ce := captureWrites(empty)
		check(t, empty, ce, func() error { _, err := empty.Import(ctx, &exp, nil); return err })
	})
	t.Run("a refused write set rolls the transaction back", func(t *testing.T) {
		before := dump(t, db)
		c.mu.Lock()
		c.err = errors.New("committer refused")
		c.mu.Unlock()
		if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Korg Minilogue"}); err == nil {
			t.Fatal("the write succeeded though its write set was refused")
		}
		c.mu.Lock()
		c.err = nil
		c.mu.Unlock()
		if d := before.diff(dump(t, db)); d != "" {
			t.Fatalf("a refused write changed the file:\n%s", d)
		}
	})
}

// No store code writes to bbolt except txw: a Put or Delete on anything else would
// bypass the write set.
func TestWriteSet_OnePath(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "txw.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			switch sel.Sel.Name {
			case "Put", "Delete", "CreateBucket", "CreateBucketIfNotExists", "DeleteBucket", "SetSequence", "NextSequence":
				t.Errorf("%s: %s.%s writes around txw's put/delete", fset.Position(sel.Pos()), exprName(sel.X), sel.Sel.Name)
			}
			return true
		})
	}
}

func exprName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "…"
}
