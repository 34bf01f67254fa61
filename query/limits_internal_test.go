package query

import (
	"strconv"
	"strings"
	"testing"

	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store/storetest"
)

func TestScanDocument(t *testing.T) {
	l := DefaultLimits()
	for _, c := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"plain", `{ stats { identities } }`, true},
		{"braces inside a string", `{ find(text: "` + strings.Repeat("{[(", 200) + `"){ edges { name } } }`, true},
		{"braces inside a block string", "{ find(text: \"\"\"" + strings.Repeat("{", 200) + "\\\"\"\" still inside \"\"\"){ edges { name } } }", true},
		{"braces inside a comment", "# " + strings.Repeat("{", 200) + "\n{ stats { identities } }", true},
		{"escaped quote in a string", `{ find(text: "a\"{{{{"){ edges { name } } }`, true},
		{"nesting at the limit", strings.Repeat("{", 64) + strings.Repeat("}", 64), true},
		{"nesting past the limit", strings.Repeat("{", 65) + strings.Repeat("}", 65), false},
		{"list nesting", "{ find(tags: " + strings.Repeat("[", 80) + strings.Repeat("]", 80) + ") { edges { name } } }", false},
		{"too many tokens", "{ find(tags: [" + strings.Repeat("a ", 20001) + "]) { edges { name } } }", false},
		{"too big", "{ find(text: \"" + strings.Repeat("x", 64<<10) + "\") { edges { name } } }", false},
	} {
		err := scanDocument(c.doc, l)
		if (err == nil) != c.ok {
			t.Errorf("%s: err=%v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestAnalyze(t *testing.T) {
	l := DefaultLimits()
	check := func(q string) error {
		t.Helper()
		doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(q)})})
		if err != nil {
			t.Fatalf("parse %q: %v", q, err)
		}
		return analyze(doc, l)
	}
	if err := check(`query { ...A ...A } fragment A on Query { stats { identities } } fragment B on Query { ...A }`); err != nil {
		t.Errorf("a DAG of fragments: %v", err)
	}
	err := check(`query { ...A } fragment A on Query { ...B } fragment B on Query { x { ...C } } fragment C on Q { ...A }`)
	if err == nil || !strings.Contains(err.Error(), "A → B → C → A") {
		t.Errorf("cycle: %v", err)
	}
	// 2^30 fields by doubling: counted without expanding.
	var sb strings.Builder
	sb.WriteString("query { ...F0 }\n")
	for i := 0; i < 30; i++ {
		sb.WriteString("fragment F" + itoa(i) + " on Query { ...F" + itoa(i+1) + " ...F" + itoa(i+1) + " }\n")
	}
	sb.WriteString("fragment F30 on Query { a }")
	if err := check(sb.String()); err == nil || !strings.Contains(err.Error(), "fields") {
		t.Errorf("exponential: %v", err)
	}
	// ofType chains (introspection) add no depth; other fields do.
	if err := check("{ __schema { types { " + strings.Repeat("ofType { ", 30) + "name" + strings.Repeat(" }", 30) + " } } }"); err != nil {
		t.Errorf("ofType chain: %v", err)
	}
	if err := check(`{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }`); err == nil || !strings.Contains(err.Error(), "introspection") {
		t.Errorf("introspection bomb: %v", err)
	}
	if err := check("{ " + strings.Repeat("a { ", 16) + "b" + strings.Repeat(" }", 16) + " }"); err == nil {
		t.Error("depth 17 accepted")
	}
	if err := check("{ " + strings.Repeat("x: a ", 101) + " }"); err == nil {
		t.Error("101 aliases accepted")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDocCache(t *testing.T) {
	c := newDocCache(2)
	a, b, d := &cached{key: "a"}, &cached{key: "b"}, &cached{key: "d"}
	c.put(a)
	c.put(b)
	if c.get("a") != a { // a is now the most recent
		t.Fatal("a missing")
	}
	c.put(d) // evicts b, the least recently used
	if c.get("b") != nil || c.get("a") != a || c.get("d") != d {
		t.Errorf("LRU eviction wrong: b=%v a=%v d=%v", c.get("b"), c.get("a"), c.get("d"))
	}
}

// TestPrepareOnce: a document is parsed, checked and validated once; a rejected one is
// remembered with its error.
func TestPrepareOnce(t *testing.T) {
	e, err := New(identity.New(storetest.MustOpen(t), nil, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := `{ stats { identities } }`
	first := e.prepare(q)
	if first.doc == nil || first.resp != nil {
		t.Fatalf("valid document rejected: %+v", first.resp)
	}
	if again := e.prepare(q); again != first {
		t.Error("the same document was prepared twice")
	}
	bad := e.prepare(`query { ...A } fragment A on Query { ...A }`)
	if bad.resp == nil || e.prepare(`query { ...A } fragment A on Query { ...A }`) != bad {
		t.Errorf("a rejected document is not cached with its error: %+v", bad)
	}
}
