package query

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/graphql-go/graphql/language/ast"
)

// graphql-go returns a response's data as Go maps, which encoding/json writes with their
// keys sorted; the spec asks for the fields in the order the query selected them. The
// response keeps the operation's selection set and writes each object's keys in that
// order (fields, aliases, fragments and inline fragments merged in document order).

// selection is an operation's selection set with the document's fragments.
type selection struct {
	set   *ast.SelectionSet
	frags map[string]*ast.FragmentDefinition
}

func newSelection(doc *ast.Document, op *ast.OperationDefinition) *selection {
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok && f.Name != nil {
			frags[f.Name.Value] = f
		}
	}
	return &selection{set: op.SelectionSet, frags: frags}
}

// orderedObject is a JSON object written with its keys in the order given.
type orderedObject struct {
	keys []string
	vals []any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// order returns v with every object's keys in the order sets select them.
func (s *selection) order(v any, sets []*ast.SelectionSet) any {
	switch x := v.(type) {
	case map[string]any:
		keys, subs := s.responseKeys(sets)
		o := orderedObject{keys: make([]string, 0, len(x)), vals: make([]any, 0, len(x))}
		seen := make(map[string]bool, len(x))
		for _, k := range keys {
			if val, ok := x[k]; ok {
				o.keys = append(o.keys, k)
				o.vals = append(o.vals, s.order(val, subs[k]))
				seen[k] = true
			}
		}
		var rest []string // none in practice; kept rather than dropped
		for k := range x {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, x[k])
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.order(e, sets)
		}
		return out
	}
	return v
}

// responseKeys lists the response keys sets select, first occurrence first, with the
// selection sets under each key (a key selected twice merges its sub-selections).
func (s *selection) responseKeys(sets []*ast.SelectionSet) ([]string, map[string][]*ast.SelectionSet) {
	var keys []string
	subs := map[string][]*ast.SelectionSet{}
	seen := map[string]bool{}
	visiting := map[string]bool{} // fragment cycles are refused before execution; guard anyway
	var walk func(ss *ast.SelectionSet)
	walk = func(ss *ast.SelectionSet) {
		if ss == nil {
			return
		}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name == nil {
					continue
				}
				k := x.Name.Value
				if x.Alias != nil && x.Alias.Value != "" {
					k = x.Alias.Value
				}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
				if x.SelectionSet != nil {
					subs[k] = append(subs[k], x.SelectionSet)
				}
			case *ast.InlineFragment:
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				if x.Name == nil || visiting[x.Name.Value] {
					continue
				}
				if f := s.frags[x.Name.Value]; f != nil {
					visiting[x.Name.Value] = true
					walk(f.SelectionSet)
					visiting[x.Name.Value] = false
				}
			}
		}
	}
	for _, ss := range sets {
		walk(ss)
	}
	return keys, subs
}
