package query

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"
)

// The one response encoder. graphql-go returns every object as a Go map, and encoding/json
// writes map keys sorted, so an answer would come back in alphabetical order. The spec asks
// for the order the query selected (GraphQL spec, "Serialized Map Ordering"): the encoder
// walks the result beside the operation's selection sets, collecting each object's fields
// as the spec's CollectFields does (aliases, fragment spreads, inline fragments matched
// against the object's runtime type, @skip and @include with variables and their
// defaults; a response key selected twice is written once, in its first place).
//
// An object whose field has an abstract type (node, find, …) needs its runtime type to
// decide which fragments apply; the executor asks graphql-go for it under a hidden alias
// (typeKey, see addTypeKeys) in those selection sets only, and the encoder never writes it.

// typeKey is the response key under which the executor asks for __typename where the
// encoder needs an object's runtime type.
const typeKey = "__devgraphType"

// order is what the encoder needs to order one response.
type order struct {
	schema *graphql.Schema
	frags  map[string]*ast.FragmentDefinition
	op     *ast.OperationDefinition
	vars   map[string]any
	// hidden is set when the executor asked for typeKey (addTypeKeys changed the
	// document); otherwise typeKey is an alias of the caller's, written like any other.
	hidden bool
}

// collected is one response key of an object, with every field node selected under it.
type collected struct {
	key    string
	name   string
	fields []*ast.Field
}

// slot is one place in the result: the type the schema gives it and the selection sets
// selected under it. Its plans are built on first use and shared by every object in the
// same place (the items of a list), so a page of 100 nodes collects its fields once.
type slot struct {
	t      graphql.Type
	sets   []*ast.SelectionSet
	plan   *plan            // t is an object type
	byType map[string]*plan // t is abstract: per runtime type ("" when unknown)
}

// plan is an object's response keys in query order, each with its slot.
type plan struct {
	keys  []string
	heads [][]byte // "key":
	slots []slot
}

// encodeData writes data (graphql-go's result) as JSON with each object's fields in query
// order. Keys the selection does not explain (none, unless graphql-go and this walk
// disagree) follow in sorted order, so nothing is ever dropped but a hidden typeKey.
func (o *order) encodeData(data any) ([]byte, error) {
	var root graphql.Type = o.schema.QueryType()
	if o.op.Operation == ast.OperationTypeMutation {
		root = o.schema.MutationType()
	}
	buf := bytes.NewBuffer(make([]byte, 0, 4096))
	if err := o.value(buf, data, &slot{t: root, sets: []*ast.SelectionSet{o.op.SelectionSet}}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (o *order) value(buf *bytes.Buffer, v any, s *slot) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case map[string]any:
		return o.object(buf, x, s)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := o.value(buf, e, s); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return writeScalar(buf, v)
	}
	return nil
}

func (o *order) object(buf *bytes.Buffer, m map[string]any, s *slot) error {
	var p *plan
	if rt, ok := s.t.(*graphql.Object); ok {
		if s.plan == nil {
			s.plan = o.newPlan(rt, rt, s.sets)
		}
		p = s.plan
	} else {
		var rt *graphql.Object
		if o.hidden {
			if name, ok := m[typeKey].(string); ok {
				rt, _ = o.schema.Type(name).(*graphql.Object)
			}
		}
		name := ""
		if rt != nil {
			name = rt.Name()
		}
		if p = s.byType[name]; p == nil {
			var parent graphql.Type = rt
			if rt == nil {
				parent = s.t
			}
			p = o.newPlan(rt, parent, s.sets)
			if s.byType == nil {
				s.byType = map[string]*plan{}
			}
			s.byType[name] = p
		}
	}
	buf.WriteByte('{')
	n := 0
	for i, k := range p.keys {
		v, ok := m[k]
		if !ok {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		buf.Write(p.heads[i])
		if err := o.value(buf, v, &p.slots[i]); err != nil {
			return err
		}
	}
	if len(m) > n {
		var rest []string
		for k := range m {
			if (k != typeKey || !o.hidden) && !slices.Contains(p.keys, k) {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range rest {
			if n > 0 {
				buf.WriteByte(',')
			}
			n++
			writeString(buf, k)
			buf.WriteByte(':')
			b, err := json.Marshal(m[k])
			if err != nil {
				return err
			}
			buf.Write(b)
		}
	}
	buf.WriteByte('}')
	return nil
}

// newPlan collects the fields of an object of type runtime (nil: unknown) whose field
// definitions are looked up on parent.
func (o *order) newPlan(runtime *graphql.Object, parent graphql.Type, sets []*ast.SelectionSet) *plan {
	fields := o.collect(runtime, sets, nil)
	p := &plan{keys: make([]string, len(fields)), heads: make([][]byte, len(fields)), slots: make([]slot, len(fields))}
	for i, c := range fields {
		p.keys[i] = c.key
		var head bytes.Buffer
		writeString(&head, c.key)
		head.WriteByte(':')
		p.heads[i] = head.Bytes()
		if fd := fieldDef(o.schema, parent, c.name); fd != nil {
			p.slots[i].t = unwrap(fd.Type)
		}
		for _, f := range c.fields {
			if f.SelectionSet != nil {
				p.slots[i].sets = append(p.slots[i].sets, f.SelectionSet)
			}
		}
	}
	return p
}

// collect is the spec's CollectFields over several selection sets (a response key's
// fields merged): response keys in first-selected order. runtime is nil when the object's
// type is unknown; then every fragment is taken to apply, and keys the object lacks are
// skipped by the caller.
func (o *order) collect(runtime *graphql.Object, sets []*ast.SelectionSet, out []collected) []collected {
	var visited map[string]bool
	var walk func(ss *ast.SelectionSet)
	walk = func(ss *ast.SelectionSet) {
		if ss == nil {
			return
		}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name == nil || !o.included(x.Directives) {
					continue
				}
				key := x.Name.Value
				if x.Alias != nil && x.Alias.Value != "" {
					key = x.Alias.Value
				}
				if key == typeKey && o.hidden {
					continue
				}
				if i := slices.IndexFunc(out, func(c collected) bool { return c.key == key }); i >= 0 {
					out[i].fields = append(out[i].fields, x)
					continue
				}
				out = append(out, collected{key: key, name: x.Name.Value, fields: []*ast.Field{x}})
			case *ast.InlineFragment:
				if !o.included(x.Directives) || !o.applies(x.TypeCondition, runtime) {
					continue
				}
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				if x.Name == nil || !o.included(x.Directives) {
					continue
				}
				name := x.Name.Value
				if visited[name] {
					continue
				}
				if visited == nil {
					visited = map[string]bool{}
				}
				visited[name] = true
				f := o.frags[name]
				if f == nil || !o.applies(f.TypeCondition, runtime) {
					continue
				}
				walk(f.SelectionSet)
			}
		}
	}
	for _, ss := range sets {
		visited = nil // CollectSubfields collects each field's selection set on its own
		walk(ss)
	}
	return out
}

// applies is DoesFragmentTypeApply.
func (o *order) applies(cond *ast.Named, runtime *graphql.Object) bool {
	if cond == nil || cond.Name == nil || runtime == nil {
		return true
	}
	switch t := o.schema.Type(cond.Name.Value).(type) {
	case *graphql.Object:
		return t.Name() == runtime.Name()
	case *graphql.Interface:
		return o.schema.IsPossibleType(t, runtime)
	case *graphql.Union:
		return o.schema.IsPossibleType(t, runtime)
	}
	return false
}

// included applies @skip and @include (skip wins), reading variables as the request gave
// them, else the operation's default.
func (o *order) included(dirs []*ast.Directive) bool {
	for _, d := range dirs {
		if d == nil || d.Name == nil || (d.Name.Value != "skip" && d.Name.Value != "include") {
			continue
		}
		var arg ast.Value
		for _, a := range d.Arguments {
			if a.Name != nil && a.Name.Value == "if" {
				arg = a.Value
			}
		}
		b, ok := o.boolean(arg)
		if !ok {
			continue
		}
		if d.Name.Value == "skip" && b || d.Name.Value == "include" && !b {
			return false
		}
	}
	return true
}

func (o *order) boolean(v ast.Value) (bool, bool) {
	switch x := v.(type) {
	case *ast.BooleanValue:
		return x.Value, true
	case *ast.Variable:
		if x.Name == nil {
			return false, false
		}
		if b, ok := o.vars[x.Name.Value].(bool); ok {
			return b, true
		}
		if _, given := o.vars[x.Name.Value]; given {
			return false, false
		}
		for _, vd := range o.op.VariableDefinitions {
			if vd.Variable != nil && vd.Variable.Name != nil && vd.Variable.Name.Value == x.Name.Value {
				if b, ok := vd.DefaultValue.(*ast.BooleanValue); ok {
					return b.Value, true
				}
			}
		}
	}
	return false, false
}

// writeScalar writes a leaf as encoding/json would (HTML characters escaped, like every
// response devgraph has written).
func writeScalar(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case string:
		writeString(buf, x)
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case int:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(x), 10))
	case int32:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), int64(x), 10))
	case int64:
		buf.Write(strconv.AppendInt(buf.AvailableBuffer(), x, 10))
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	return nil
}

// writeString writes s quoted; anything encoding/json would escape goes through it.
func writeString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			buf.Write(b)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// addTypeKeys returns doc with "typeKey: __typename" added to every field's selection set
// that holds a fragment (where the runtime type decides which fields apply). Selection
// sets are copied, never changed: doc stays as validation and the limits saw it. It
// returns doc itself when nothing needs the key, or when the document uses typeKey as an
// alias of its own (then fragments on unknown types are taken to apply).
func addTypeKeys(doc *ast.Document) *ast.Document {
	need, clash := false, false
	var scan func(ss *ast.SelectionSet)
	scan = func(ss *ast.SelectionSet) {
		if ss == nil {
			return
		}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Alias != nil && x.Alias.Value == typeKey {
					clash = true
				}
				if x.SelectionSet != nil && hasFragment(x.SelectionSet) {
					need = true
				}
				scan(x.SelectionSet)
			case *ast.InlineFragment:
				scan(x.SelectionSet)
			}
		}
	}
	for _, d := range doc.Definitions {
		switch def := d.(type) {
		case *ast.OperationDefinition:
			scan(def.SelectionSet)
		case *ast.FragmentDefinition:
			scan(def.SelectionSet)
		}
	}
	if !need || clash {
		return doc
	}
	var rewrite func(ss *ast.SelectionSet, field bool) *ast.SelectionSet
	rewrite = func(ss *ast.SelectionSet, field bool) *ast.SelectionSet {
		if ss == nil {
			return nil
		}
		out := &ast.SelectionSet{Kind: ss.Kind, Loc: ss.Loc, Selections: make([]ast.Selection, 0, len(ss.Selections)+1)}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.SelectionSet != nil {
					c := *x
					c.SelectionSet = rewrite(x.SelectionSet, true)
					sel = &c
				}
			case *ast.InlineFragment:
				c := *x
				c.SelectionSet = rewrite(x.SelectionSet, false)
				sel = &c
			}
			out.Selections = append(out.Selections, sel)
		}
		if field && hasFragment(ss) {
			out.Selections = append(out.Selections, ast.NewField(&ast.Field{
				Alias: ast.NewName(&ast.Name{Value: typeKey}),
				Name:  ast.NewName(&ast.Name{Value: "__typename"}),
			}))
		}
		return out
	}
	nd := *doc
	nd.Definitions = make([]ast.Node, len(doc.Definitions))
	for i, d := range doc.Definitions {
		switch def := d.(type) {
		case *ast.OperationDefinition:
			c := *def
			c.SelectionSet = rewrite(def.SelectionSet, false)
			d = &c
		case *ast.FragmentDefinition:
			c := *def
			c.SelectionSet = rewrite(def.SelectionSet, false)
			d = &c
		}
		nd.Definitions[i] = d
	}
	return &nd
}

// hasFragment reports whether ss selects through a fragment spread or an inline fragment
// with a type condition, directly or inside inline fragments.
func hasFragment(ss *ast.SelectionSet) bool {
	for _, sel := range ss.Selections {
		switch x := sel.(type) {
		case *ast.FragmentSpread:
			return true
		case *ast.InlineFragment:
			if x.TypeCondition != nil || x.SelectionSet != nil && hasFragment(x.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// stripTypeKeys removes typeKey from every object of data, so Go callers of Response.Data
// see only what the query asked.
func stripTypeKeys(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, typeKey)
		for _, e := range x {
			stripTypeKeys(e)
		}
	case []any:
		for _, e := range x {
			stripTypeKeys(e)
		}
	}
}
