package query

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/store/storetest"
)

// BenchmarkResponse_Marshal encodes a page of 100 identities as graphql-go returns it
// (nested maps): "sorted" is the encoding before the field-order encoder
// (encoding/json, keys alphabetical), "ordered" is encodeData (keys in query order).
func BenchmarkResponse_Marshal(b *testing.B) {
	e, err := New(identity.New(storetest.MustOpen(b), nil, nil), Options{})
	if err != nil {
		b.Fatal(err)
	}
	doc, err := parser.Parse(parser.ParseParams{Source: `{ identities(first: 100) { totalCount nodes { slug name id updatedAt tags { namespace name } } } }`})
	if err != nil {
		b.Fatal(err)
	}
	nodes := make([]any, 100)
	for i := range nodes {
		nodes[i] = map[string]any{
			"slug": fmt.Sprintf("b%06d", i), "name": fmt.Sprintf("Amber Falcon Mk II %d", i),
			"id": fmt.Sprintf("identity:b%06d", i), "updatedAt": "2026-11-28T07:00:00Z",
			"tags": []any{
				map[string]any{"namespace": "role", "name": "role:synth"},
				map[string]any{"namespace": "project", "name": fmt.Sprintf("project:p%d", i%50)},
			},
		}
	}
	data := map[string]any{"identities": map[string]any{"totalCount": 100000, "nodes": nodes}}
	o := order{schema: &e.schema, frags: docFragments(doc), op: doc.Definitions[0].(*ast.OperationDefinition)}
	b.Run("sorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ordered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := o.encodeData(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
