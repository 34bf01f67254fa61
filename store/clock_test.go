package store_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// Every time the store records comes from Options.Now.
func TestClock_OneSource(t *testing.T) {
	t.Parallel()
	at := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	clock := &storetest.Clock{T: at}
	db := storetest.MustOpen(t, store.Options{Now: clock.Now})
	ctx := ctxActor("cli:test")
	id, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "Roland JD-Xi", Tags: []string{"role:synth"}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.AddNote(ctx, graph.NoteCreate{Target: id.ID, Body: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ObserveDevices(ctx, &graph.Snapshot{Devices: []*graph.ObservedDevice{dev("sn:1", "usb:1-1")}, Sources: []graph.SourceStatus{{Name: "usb", OK: true}}}); err != nil {
		t.Fatal(err)
	}
	d, err := db.FindDeviceByID(ctx, "usb:1-1")
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]time.Time{"identity created_at": id.CreatedAt, "identity updated_at": id.UpdatedAt,
		"note time": n.Time, "device first_seen": d.FirstSeen, "device last_seen": d.LastSeen} {
		if !got.Equal(at) {
			t.Errorf("%s=%v, want the clock's %v", what, got, at)
		}
	}
	for _, e := range allEvents(t, db, graph.EventFilter{}) {
		if !e.Time.Equal(at) {
			t.Errorf("event %d (%s) time=%v, want the clock's %v", e.Seq, e.Action, e.Time, at)
		}
	}
	var exp bytes.Buffer
	if err := db.Export(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		Exported time.Time `json:"exported_at"`
	}
	if err := json.Unmarshal(bytes.SplitN(exp.Bytes(), []byte("\n"), 2)[0], &hdr); err != nil || !hdr.Exported.Equal(at) {
		t.Errorf("export header exported_at=%v (%v), want the clock's %v", hdr.Exported, err, at)
	}
}

// No store or migrations code reads the wall clock itself (bbolt's lock timeout aside).
func TestClock_NoOtherTimeSource(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{".", "../migrations"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" {
				if filepath.Base(name) == "replica.go" && sel.Sel.Name == "Sleep" {
					return true // pauseBeforeRetry: a pause between tries, not a time read
				}
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker", "Sleep":
					t.Errorf("%s: time.%s: take time from Options.Now", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
