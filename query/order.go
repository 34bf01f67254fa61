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

// write appends v to b as JSON, every object's keys in the order sets select them. It
// writes one buffer in one pass (leaves through json.Marshal), so a deep response costs
// no more than encoding it plainly.
func (s *selection) write(b *bytes.Buffer, v any, sets []*ast.SelectionSet) error {
	switch x := v.(type) {
	case map[string]any:
		keys, subs := s.responseKeys(sets)
		seen := make(map[string]bool, len(x))
		b.WriteByte('{')
		n := 0
		field := func(k string, val any, sub []*ast.SelectionSet) error {
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			kb, err := json.Marshal(k)
			if err != nil {
				return err
			}
			b.Write(kb)
			b.WriteByte(':')
			return s.write(b, val, sub)
		}
		for _, k := range keys {
			if val, ok := x[k]; ok && !seen[k] {
				seen[k] = true
				if err := field(k, val, subs[k]); err != nil {
					return err
				}
			}
		}
		// Keys no selection names: a JSON scalar's own object (attrs), in sorted order as
		// encoding/json writes them.
		var rest []string
		for k := range x {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			if err := field(k, x[k], nil); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := s.write(b, e, sets); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	vb, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(vb)
	return nil
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
