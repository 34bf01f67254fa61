package query

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store/storetest"
)

// FuzzGraphQLGuard feeds arbitrary documents (and variables) to the checks that stand
// before graphql-go: the text scan (size, tokens, nesting), the fragment analysis (count,
// cycles, expanded depth, aliases, fields) and the complexity weighing. None may panic
// or overflow the stack (a fatal error no recover catches); a refusal is a limit error
// or, for a fragment cycle, an EINVALID naming a real cycle; a cycle is found exactly when
// there is one; and the executor's whole check never has to recover from a panic.
// The seed corpus is testdata/fuzz/FuzzGraphQLGuard.
func FuzzGraphQLGuard(f *testing.F) {
	e, err := New(identity.New(storetest.MustOpen(f), nil, nil), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string, vars []byte) {
		l := e.limits
		if err := scanDocument(doc, l); err != nil {
			var le *limitError
			if !errors.As(err, &le) || le.msg == "" {
				t.Fatalf("scan refused with %T %v, want a limit error", err, err)
			}
			return
		}
		if len(doc) > l.MaxDocumentBytes {
			t.Fatalf("a %d-byte document passed the scan", len(doc))
		}
		parsed, perr := parse(doc)
		if perr != nil || parsed == nil {
			return
		}
		err := analyze(parsed, l)
		frags := fragments(parsed)
		cyc := fragmentCycle(frags)
		if hasCycle(frags) != (cyc != nil) {
			t.Fatalf("fragmentCycle says %v; a topological sort says cycle=%v", cyc, hasCycle(frags))
		}
		if cyc != nil {
			checkCycle(t, frags, cyc)
		}
		if err != nil {
			var le *limitError
			var re *resolverError
			switch {
			case errors.As(err, &re):
				if re.code != graph.EINVALID || !(strings.Contains(re.msg, "cycle") && cyc != nil || strings.Contains(re.msg, "twice") || strings.Contains(re.msg, "has no type")) {
					t.Fatalf("analyze: %+v (cycle %v)", re, cyc)
				}
			case !errors.As(err, &le):
				t.Fatalf("analyze refused with %T %v, want a limit error", err, err)
			}
		} else if cyc != nil {
			t.Fatalf("analyze passed a fragment cycle %v", cyc)
		}

		// The whole check the executor runs: it recovers from panics (a library's), and
		// must never need to.
		if _, resp := e.check(doc); resp != nil && len(resp.Errors) > 0 && strings.Contains(resp.Errors[0].Message, "could not be processed") {
			t.Fatalf("the document check panicked: %s", resp.Errors[0].Message)
		}
		if err != nil {
			return
		}
		if vr := graphql.ValidateDocument(&e.schema, parsed, graphql.SpecifiedRules); !vr.IsValid {
			return
		}
		var v map[string]any
		_ = json.Unmarshal(vars, &v)
		for _, d := range parsed.Definitions {
			if op, ok := d.(*ast.OperationDefinition); ok {
				if c := complexity(&e.schema, parsed, op, v, l); c < 0 {
					t.Fatalf("complexity %d", c)
				}
			}
		}
	})
}

// parse parses as the executor does; a parser panic (graphql-go's) counts as a refusal
// here, and the executor's check, which recovers, is asserted on separately.
func parse(doc string) (d *ast.Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, errors.New("parser panicked")
		}
	}()
	return parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(doc), Name: "GraphQL request"})})
}

// fragments returns the document's fragment definitions by name, the first of each name,
// as analyze sees them.
func fragments(doc *ast.Document) map[string]*ast.FragmentDefinition {
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok && f.Name != nil {
			if _, dup := frags[f.Name.Value]; !dup {
				frags[f.Name.Value] = f
			}
		}
	}
	return frags
}

// spreadsOf lists the fragments a selection set spreads, at any depth (not through
// other fragments).
func spreadsOf(ss *ast.SelectionSet) []string {
	var out []string
	stack := []*ast.SelectionSet{ss}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil {
			continue
		}
		for _, sel := range s.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				stack = append(stack, x.SelectionSet)
			case *ast.InlineFragment:
				stack = append(stack, x.SelectionSet)
			case *ast.FragmentSpread:
				if x.Name != nil {
					out = append(out, x.Name.Value)
				}
			}
		}
	}
	return out
}

// hasCycle decides by Kahn's topological sort whether fragments spread each other in a
// cycle: an independent reference for fragmentCycle.
func hasCycle(frags map[string]*ast.FragmentDefinition) bool {
	indeg := map[string]int{}
	edges := map[string][]string{}
	for name, f := range frags {
		indeg[name] += 0
		for _, to := range spreadsOf(f.SelectionSet) {
			if _, ok := frags[to]; ok {
				edges[name] = append(edges[name], to)
				indeg[to]++
			}
		}
	}
	var queue []string
	for n, d := range indeg {
		if d == 0 {
			queue = append(queue, n)
		}
	}
	seen := 0
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		seen++
		for _, to := range edges[n] {
			if indeg[to]--; indeg[to] == 0 {
				queue = append(queue, to)
			}
		}
	}
	return seen < len(frags)
}

// checkCycle asserts that cyc (A → B → … → A) is a real cycle of spreads.
func checkCycle(t *testing.T, frags map[string]*ast.FragmentDefinition, cyc []string) {
	t.Helper()
	if len(cyc) < 2 || cyc[0] != cyc[len(cyc)-1] {
		t.Fatalf("cycle %v does not end where it starts", cyc)
	}
	for i := 0; i+1 < len(cyc); i++ {
		f := frags[cyc[i]]
		if f == nil {
			t.Fatalf("cycle %v names an unknown fragment %q", cyc, cyc[i])
		}
		found := false
		for _, s := range spreadsOf(f.SelectionSet) {
			found = found || s == cyc[i+1]
		}
		if !found {
			t.Fatalf("cycle %v: %s does not spread %s", cyc, cyc[i], cyc[i+1])
		}
	}
}

// TestGuard_DuplicateFragment: a document defining one fragment name twice, the second
// spreading itself, crashed the whole server with a stack overflow in graphql-go's
// validation (one POST /graphql; found by FuzzGraphQLGuard). It is refused as EINVALID.
func TestGuard_DuplicateFragment(t *testing.T) {
	t.Parallel()
	e := guardExecutor(t)
	for _, q := range []string{
		`query { ...A } fragment A on Query { stats { identities } } fragment A on Query { ...A }`,
		`query { ...A } fragment A on Query { stats { identities } } fragment A on Query { stats { devices } }`,
	} {
		resp := e.Execute(context.Background(), Request{Query: q}, false)
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != graph.EINVALID || !strings.Contains(resp.Errors[0].Message, `fragment "A" twice`) {
			t.Errorf("%s: %+v", q, resp.Errors)
		}
	}
}

// TestGuard_VariableWithoutType: graphql-go's parser takes a variable definition whose
// type is missing ("$a:", "$a: !", "$a: [!]"), and its validation dereferenced the missing
// type: the check recovered, but answered "could not be processed" (found by
// FuzzGraphQLGuard). It is refused as EINVALID naming the variable; one with its type runs.
func TestGuard_VariableWithoutType(t *testing.T) {
	t.Parallel()
	e := guardExecutor(t)
	for _, q := range []string{
		`query($A:){A}`,
		`query($first: ) { identities(first: $first) { totalCount } }`,
		`query($first: !) { identities(first: $first) { totalCount } }`,
		`query($tags: [!]) { identities(tags: $tags) { totalCount } }`,
	} {
		resp := e.Execute(context.Background(), Request{Query: q}, false)
		if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != graph.EINVALID || !strings.Contains(resp.Errors[0].Message, "has no type") {
			t.Errorf("%s: %+v", q, resp.Errors)
		}
	}
	resp := e.Execute(context.Background(), Request{Query: `query($first: Int) { identities(first: $first) { totalCount } }`, Variables: map[string]any{"first": 2}}, false)
	if len(resp.Errors) != 0 {
		t.Fatalf("a variable with its type: %+v", resp.Errors)
	}
}

// guardExecutor is an executor over an empty store, for the guard's tests.
func guardExecutor(t *testing.T) *Executor {
	t.Helper()
	e, err := New(identity.New(storetest.MustOpen(t), nil, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
