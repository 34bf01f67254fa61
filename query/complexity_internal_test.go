package query

import (
	"testing"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestComplexity_Traversal: a traversal's selection counts once per vertex its bounds let
// it return, plus one per 10 vertices it may visit; relation lists count like any
// connection.
func TestComplexity_Traversal(t *testing.T) {
	e, err := New(identity.New(storetest.MustOpen(t), nil, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cost := func(q string, vars map[string]any) int {
		t.Helper()
		doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(q)})})
		if err != nil {
			t.Fatalf("parse %q: %v", q, err)
		}
		return complexity(&e.schema, doc, doc.Definitions[0].(*ast.OperationDefinition), vars, e.limits)
	}
	v := graph.MaxNeighborsVertices
	for _, c := range []struct {
		q    string
		vars map[string]any
		want int
	}{
		// subgraph (1) + visits/10 + vertices × (nodes{id} 2 + edges{id} 2)
		{`{ subgraph { nodes { id } edges { id } } }`, nil, 1 + v/10 + v*4},
		{`{ subgraph(around: "jdxi") { nodes { id } } }`, nil, 1 + v/4/10 + v/4*2},
		{`{ subgraph(around: "jdxi", depth: 2) { nodes { id } } }`, nil, 1 + v/2/10 + v/2*2},
		{`query($d: Int){ subgraph(around: "jdxi", depth: $d) { nodes { id } } }`, map[string]any{"d": float64(4)}, 1 + v/10 + v*2},
		{`{ subgraph(around: "jdxi", depth: 99) { nodes { id } } }`, nil, 1 + v/10 + v*2}, // priced at the bound
		// identity (1) + neighbors (1 + visits/10 + vertices × nodes{id})
		{`{ identity(id: "jdxi"){ neighbors(depth: 2){ nodes { id } } } }`, nil, 1 + 1 + v/2/10 + v/2*2},
		// path: maxDepth+1 vertices, MaxPathVisited/10 walk at depth 8
		{`{ path(from: "a", to: "b"){ hops { type } } }`, nil, 1 + graph.MaxPathVisited/10 + (graph.MaxPathDepth+1)*2},
		{`{ path(from: "a", to: "b", maxDepth: 2){ hops { type } } }`, nil, 1 + graph.MaxPathVisited*2/graph.MaxPathDepth/10 + 3*2},
		{`{ trace(from: "a"){ hops { type } ends } }`, nil, 1 + graph.MaxTraceVertices/10 + graph.MaxTraceVertices*(2+1)},
		// a relation list is a connection: first × its selection
		{`{ relations(first: 20){ nodes { id from { id } } } }`, nil, 1 + 20*(1+1+2)},
		{`{ relations { totalCount } }`, nil, 1 + graph.DefaultPageSize*1},
	} {
		if got := cost(c.q, c.vars); got != c.want {
			t.Errorf("%s: complexity %d, want %d", c.q, got, c.want)
		}
	}
	// Deeper costs more; nesting a deep traversal under a page of nodes passes the limit.
	if cost(`{ identity(id: "x"){ neighbors(depth: 1){ nodes { id } } } }`, nil) >= cost(`{ identity(id: "x"){ neighbors(depth: 4){ nodes { id } } } }`, nil) {
		t.Error("neighbors(depth: 4) costs no more than depth 1")
	}
	if c := cost(`{ identities(first: 100){ nodes { neighbors(depth: 4){ nodes { id } } } } }`, nil); c <= e.limits.MaxComplexity {
		t.Errorf("100 × neighbors(depth: 4) costs %d, within the limit %d", c, e.limits.MaxComplexity)
	}
}
