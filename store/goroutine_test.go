package store_test

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// storeGoroutines returns the stacks of running goroutines started by package store (test
// functions, which run package store's internal tests too, aside).
func storeGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "devgraph/devgraph/store.") && !strings.Contains(g, "testing.tRunner") {
			out = append(out, g)
		}
	}
	return out
}

// Every goroutine the store starts (the commit loop, subscriptions, import's readers and
// decoders) has ended when the call that started it returns or when Close returns. Not
// parallel: it looks at every goroutine of the process.
func TestGoroutines_NoneOutliveClose(t *testing.T) {
	if gs := storeGoroutines(); len(gs) > 0 {
		t.Fatalf("store goroutines running before the test:\n%s", strings.Join(gs, "\n\n"))
	}
	var exp []byte
	t.Run("export", func(t *testing.T) { exp = importSource(t) }) // its database closes with the subtest
	ctx := ctxActor("cli:test")
	db, err := store.Open(filepath.Join(t.TempDir(), "devgraph.db"), store.Options{NoBackup: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Subscribe(func([]*graph.Event) {})
	cancel := db.Subscribe(func([]*graph.Event) {})
	if _, err := db.Import(ctx, bytes.NewReader(exp), nil); err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte(nil), exp...), "{not json\n"...)
	if _, err := db.Import(ctx, bytes.NewReader(bad), nil); err == nil {
		t.Fatal("a malformed import succeeded")
	}
	if _, err := db.CreateIdentity(ctx, graph.IdentityCreate{Name: "after the imports"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if gs := storeGoroutines(); len(gs) > 0 {
		t.Fatalf("%d store goroutines outlived Close:\n%s", len(gs), strings.Join(gs, "\n\n"))
	}
}
