package query

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/devgraph/devgraph/graph"
)

// Limits bound what one request may ask for. They are checked before graphql-go sees the
// document (it overflows its stack on cyclic fragments and has no limits of its own). A
// zero field takes its default; a negative one switches that limit off.
type Limits struct {
	MaxDocumentBytes  int           // document text (default 64 KiB)
	MaxTokens         int           // lexical tokens in the document (default 20,000)
	MaxNesting        int           // brackets open at once: { ( [ (default 64)
	MaxDepth          int           // nested selections, fragments expanded (default 15)
	MaxAliases        int           // aliased fields, fragments expanded (default 100)
	MaxFields         int           // selected fields, fragments expanded (default 5,000)
	MaxFragments      int           // fragment definitions (default 200)
	MaxComplexity     int           // fields weighted by list sizes (first, else 10 per list) (default 50,000)
	MaxVariablesBytes int           // variables, JSON-encoded (default 256 KiB: room for identity data at its 64 KiB limit and more, so the service refuses what is over its own limits, as on every interface)
	MaxPageSize       int           // server-side cap on first (default 100)
	Timeout           time.Duration // per query (default 10 s)
	MutationTimeout   time.Duration // per mutation request; robotNavigate blocks (default 2 min)
	CacheEntries      int           // parsed and validated documents kept (default 256)
}

// DefaultLimits returns the limits a server starts with.
func DefaultLimits() Limits {
	return Limits{
		MaxDocumentBytes:  64 << 10,
		MaxTokens:         20000,
		MaxNesting:        64,
		MaxDepth:          15,
		MaxAliases:        100,
		MaxFields:         5000,
		MaxFragments:      200,
		MaxComplexity:     50000,
		MaxVariablesBytes: 256 << 10,
		MaxPageSize:       100,
		Timeout:           10 * time.Second,
		MutationTimeout:   2 * time.Minute,
		CacheEntries:      256,
	}
}

// withDefaults fills zero fields and turns negative ones into "no limit".
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fix := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = int(^uint(0) >> 2)
		}
	}
	fix(&l.MaxDocumentBytes, d.MaxDocumentBytes)
	fix(&l.MaxTokens, d.MaxTokens)
	fix(&l.MaxNesting, d.MaxNesting)
	fix(&l.MaxDepth, d.MaxDepth)
	fix(&l.MaxAliases, d.MaxAliases)
	fix(&l.MaxFields, d.MaxFields)
	fix(&l.MaxFragments, d.MaxFragments)
	fix(&l.MaxComplexity, d.MaxComplexity)
	fix(&l.MaxVariablesBytes, d.MaxVariablesBytes)
	fix(&l.MaxPageSize, d.MaxPageSize)
	if l.MaxPageSize > graph.MaxPageSize {
		l.MaxPageSize = graph.MaxPageSize
	}
	fix(&l.CacheEntries, d.CacheEntries)
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.MutationTimeout == 0 {
		l.MutationTimeout = d.MutationTimeout
	}
	return l
}

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

func limitf(format string, args ...any) error { return &limitError{fmt.Sprintf(format, args...)} }

// scanDocument checks size, tokens and bracket nesting on the raw text, before the
// recursive-descent parser sees it.
func scanDocument(doc string, l Limits) error {
	if len(doc) > l.MaxDocumentBytes {
		return limitf("the document is %d bytes; the limit is %d. Send a smaller query", len(doc), l.MaxDocumentBytes)
	}
	tokens, depth := 0, 0
	inWord := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case c == '#':
			for i < len(doc) && doc[i] != '\n' && doc[i] != '\r' {
				i++
			}
			inWord = false
		case c == '"':
			tokens++
			inWord = false
			if strings.HasPrefix(doc[i:], `"""`) {
				end := strings.Index(doc[i+3:], `"""`)
				for end >= 0 && doc[i+3+end-1] == '\\' && end > 0 {
					next := strings.Index(doc[i+3+end+1:], `"""`)
					if next < 0 {
						end = -1
						break
					}
					end += 1 + next
				}
				if end < 0 {
					return nil // unterminated: the parser reports it
				}
				i += 3 + end + 2
				continue
			}
			for i++; i < len(doc) && doc[i] != '"' && doc[i] != '\n'; i++ {
				if doc[i] == '\\' {
					pair, err := checkEscape(doc[i:])
					if err != nil {
						return err
					}
					i++
					if pair {
						i += 10 // past the pair's second escape too
					}
				}
			}
		case c == '{' || c == '(' || c == '[':
			tokens++
			depth++
			inWord = false
			if depth > l.MaxNesting {
				return limitf("the document nests brackets %d deep; the limit is %d. Ask for fewer nested levels", depth, l.MaxNesting)
			}
		case c == '}' || c == ')' || c == ']':
			tokens++
			depth--
			inWord = false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			inWord = false
		case c == '.' && strings.HasPrefix(doc[i:], "..."):
			tokens++
			i += 2
			inWord = false
		case c == ':' || c == '$' || c == '!' || c == '=' || c == '@' || c == '|' || c == '&':
			tokens++
			inWord = false
		default:
			if !inWord {
				tokens++
				inWord = true
			}
		}
		if tokens > l.MaxTokens {
			return limitf("the document has more than %d tokens. Send a smaller query", l.MaxTokens)
		}
	}
	return nil
}

// checkEscape refuses a \u escape in a string literal (esc starts at its backslash)
// that graphql-go's lexer would silently turn into U+FFFD, writing each \u as one rune:
// a lone UTF-16 surrogate. A surrogate pair, which the GraphQL spec allows but graphql-go
// garbles, passes: joinSurrogates writes it as the character before the parser runs.
// \u0000 is refused as NUL is everywhere. pair reports a pair (12 bytes) at esc.
func checkEscape(esc string) (pair bool, err error) {
	r, ok := hexEscape(esc)
	switch {
	case !ok:
		return false, nil // not a \u escape, or a malformed one the parser reports
	case r == 0:
		return false, &resolverError{code: graph.EINVALID, field: "query", msg: `query contains a NUL byte (\u0000 in a string); remove it`}
	case r >= 0xd800 && r < 0xdc00:
		if lo, ok := hexEscape(esc[6:]); ok && lo >= 0xdc00 && lo < 0xe000 {
			return true, nil // joinSurrogates spells it as its character
		}
		fallthrough
	case r >= 0xdc00 && r < 0xe000:
		return false, &resolverError{code: graph.EINVALID, field: "query", msg: fmt.Sprintf(`query is not valid UTF-8: %s is half of a UTF-16 surrogate pair; send text as UTF-8`, esc[:6])}
	}
	return false, nil
}

// hexEscape decodes the \uXXXX escape at the start of s.
func hexEscape(s string) (rune, bool) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[2:6], 16, 16)
	return rune(n), err == nil
}

// docStats are the variable-independent measures of a document, fragments expanded.
type docStats struct {
	depth, fields, aliases int
	introLists             int // introspection list fields nested along one path
}

// introspectionLists are the list fields of the introspection types. The devgraph schema
// has no fields of these names (TestSchemaNames keeps it so), so any field named so is
// introspection. Nesting them (types { fields { type { fields { … } } } }) multiplies the
// answer by the size of the schema at each level; the standard introspection query nests
// three (types → fields → args).
var introspectionLists = map[string]bool{
	"types": true, "fields": true, "args": true, "inputFields": true, "interfaces": true,
	"possibleTypes": true, "enumValues": true, "directives": true,
}

const maxIntrospectionLists = 3

const saturate = 1 << 40

func sat(n int) int { return min(n, saturate) }

// analyze checks variable definitions (each has a type), fragments (count, cycles) and the
// expanded depth, field and alias counts of every operation. Fragments are expanded by memoised counting, never by walking the
// expansion, so exponential fragment fan-out costs linear time.
func analyze(doc *ast.Document, l Limits) error {
	frags := map[string]*ast.FragmentDefinition{}
	var ops []*ast.OperationDefinition
	for _, d := range doc.Definitions {
		switch def := d.(type) {
		case *ast.FragmentDefinition:
			if def.Name != nil {
				// graphql-go's validation follows the last definition of a name, these
				// checks the first: a second "fragment A { ...A }" would be a cycle only
				// graphql-go sees, and it overflows the stack (found by FuzzGraphQLGuard).
				if _, dup := frags[def.Name.Value]; dup {
					return &resolverError{code: graph.EINVALID, msg: fmt.Sprintf("the document defines fragment %q twice; give each fragment its own name", def.Name.Value)}
				}
				frags[def.Name.Value] = def
			}
		case *ast.OperationDefinition:
			// graphql-go's parser takes "($a:)", "($a: !)" and "($a: [!])" for variable
			// definitions with a type missing, and its validation then dereferences it
			// (found by FuzzGraphQLGuard).
			for _, v := range def.VariableDefinitions {
				if v != nil && !wholeType(v.Type) {
					name := "a variable"
					if v.Variable != nil && v.Variable.Name != nil {
						name = "variable $" + v.Variable.Name.Value
					}
					return &resolverError{code: graph.EINVALID, msg: name + " has no type; write one after its colon, as in ($id: ID!)"}
				}
			}
			ops = append(ops, def)
		}
	}
	if len(frags) > l.MaxFragments {
		return limitf("the document defines %d fragments; the limit is %d", len(frags), l.MaxFragments)
	}
	if cyc := fragmentCycle(frags); cyc != nil {
		return &resolverError{code: graph.EINVALID, msg: "fragments spread each other in a cycle (" + strings.Join(cyc, " → ") + "); a fragment may not include itself, directly or through others"}
	}
	memo := map[string]docStats{}
	var fragStats func(name string) docStats
	var setStats func(ss *ast.SelectionSet) docStats
	setStats = func(ss *ast.SelectionSet) docStats {
		var s docStats
		if ss == nil {
			return s
		}
		for _, sel := range ss.Selections {
			var c docStats
			switch x := sel.(type) {
			case *ast.Field:
				c = setStats(x.SelectionSet)
				if x.Name == nil || x.Name.Value != "ofType" {
					c.depth++ // ofType is a 1:1 chain in introspection; it adds no fan-out
				}
				c.fields = sat(c.fields + 1)
				if x.Name != nil && introspectionLists[x.Name.Value] {
					c.introLists++
				}
				if x.Alias != nil {
					c.aliases = sat(c.aliases + 1)
				}
			case *ast.InlineFragment:
				c = setStats(x.SelectionSet)
			case *ast.FragmentSpread:
				if x.Name != nil {
					c = fragStats(x.Name.Value)
				}
			}
			s.depth = max(s.depth, c.depth)
			s.introLists = max(s.introLists, c.introLists)
			s.fields = sat(s.fields + c.fields)
			s.aliases = sat(s.aliases + c.aliases)
		}
		return s
	}
	fragStats = func(name string) docStats {
		if s, ok := memo[name]; ok {
			return s
		}
		f := frags[name]
		if f == nil {
			return docStats{} // unknown fragment: validation reports it
		}
		s := setStats(f.SelectionSet)
		memo[name] = s
		return s
	}
	for _, op := range ops {
		s := setStats(op.SelectionSet)
		name := "the operation"
		if op.Name != nil {
			name = "operation " + op.Name.Value
		}
		switch {
		case s.depth > l.MaxDepth:
			return limitf("%s is %d levels deep; the limit is %d. Ask for fewer nested levels and follow links in a second query", name, s.depth, l.MaxDepth)
		case s.aliases > l.MaxAliases:
			return limitf("%s uses %d aliases (fragments expanded); the limit is %d", name, s.aliases, l.MaxAliases)
		case s.introLists > maxIntrospectionLists:
			return limitf("%s nests %d introspection lists (types, fields, args …) in one path; at most %d are allowed, as in the standard introspection query", name, s.introLists, maxIntrospectionLists)
		case s.fields > l.MaxFields:
			return limitf("%s selects %d fields (fragments expanded); the limit is %d. Select fewer fields or split the query", name, s.fields, l.MaxFields)
		}
	}
	return nil
}

// fragmentCycle returns the names along a cycle of fragment spreads, or nil. Iterative, so
// a long chain of fragments cannot exhaust the stack.
func fragmentCycle(frags map[string]*ast.FragmentDefinition) []string {
	spreads := make(map[string][]string, len(frags))
	for name, f := range frags {
		var out []string
		stack := []*ast.SelectionSet{f.SelectionSet}
		for len(stack) > 0 {
			ss := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if ss == nil {
				continue
			}
			for _, sel := range ss.Selections {
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
		spreads[name] = out
	}
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(frags))
	type frame struct {
		name string
		next int
	}
	names := make([]string, 0, len(frags))
	for n := range frags {
		names = append(names, n)
	}
	slices.Sort(names) // the same cycle is named the same way every time
	for _, start := range names {
		if color[start] != white {
			continue
		}
		path := []frame{{name: start}}
		color[start] = grey
		for len(path) > 0 {
			top := &path[len(path)-1]
			kids := spreads[top.name]
			if top.next >= len(kids) {
				color[top.name] = black
				path = path[:len(path)-1]
				continue
			}
			kid := kids[top.next]
			top.next++
			if _, known := frags[kid]; !known {
				continue
			}
			switch color[kid] {
			case grey:
				cyc := []string{}
				for i := len(path) - 1; i >= 0; i-- {
					cyc = append([]string{path[i].name}, cyc...)
					if path[i].name == kid {
						break
					}
				}
				return append(cyc, kid)
			case white:
				color[kid] = grey
				path = append(path, frame{name: kid})
			}
		}
	}
	return nil
}

// complexity weighs an operation's fields by the list sizes they fan out to: a field with
// a first argument multiplies its selection by first (clamped to the page cap), a list
// without one by 10, connection wrappers (edges, nodes) by 1.
func complexity(schema *graphql.Schema, doc *ast.Document, op *ast.OperationDefinition, vars map[string]any, l Limits) int {
	frags := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok && f.Name != nil {
			if _, dup := frags[f.Name.Value]; !dup {
				frags[f.Name.Value] = f
			}
		}
	}
	memo := map[string]int{}
	var setCost func(ss *ast.SelectionSet, parent graphql.Type) int
	fragCost := func(name string) int {
		if c, ok := memo[name]; ok {
			return c
		}
		f := frags[name]
		if f == nil {
			return 0
		}
		memo[name] = 0
		c := setCost(f.SelectionSet, namedType(schema, f.TypeCondition))
		memo[name] = c
		return c
	}
	setCost = func(ss *ast.SelectionSet, parent graphql.Type) int {
		if ss == nil {
			return 0
		}
		total := 0
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				def := fieldDef(schema, parent, x.Name.Value)
				var child graphql.Type
				mult, work := 1, 0
				if def != nil {
					child = unwrap(def.Type)
					mult = multiplier(def, x, parent, vars, l)
					if m, w, ok := traversalCost(child, x, vars); ok {
						mult, work = m, w
					}
				}
				total = sat(total + 1 + work + sat(mult*setCost(x.SelectionSet, child)))
			case *ast.InlineFragment:
				t := parent
				if x.TypeCondition != nil {
					t = namedType(schema, x.TypeCondition)
				}
				total = sat(total + setCost(x.SelectionSet, t))
			case *ast.FragmentSpread:
				if x.Name != nil {
					total = sat(total + fragCost(x.Name.Value))
				}
			}
		}
		return total
	}
	var root graphql.Type = schema.QueryType()
	if op.Operation == ast.OperationTypeMutation {
		root = schema.MutationType()
	}
	return setCost(op.SelectionSet, root)
}

func namedType(schema *graphql.Schema, n *ast.Named) graphql.Type {
	if n == nil || n.Name == nil {
		return nil
	}
	return schema.Type(n.Name.Value)
}

func fieldDef(schema *graphql.Schema, parent graphql.Type, name string) *graphql.FieldDefinition {
	switch name {
	case "__schema":
		return graphql.SchemaMetaFieldDef
	case "__type":
		return graphql.TypeMetaFieldDef
	case "__typename":
		return nil
	}
	switch t := parent.(type) {
	case *graphql.Object:
		return t.Fields()[name]
	case *graphql.Interface:
		return t.Fields()[name]
	}
	return nil
}

func unwrap(t graphql.Type) graphql.Type {
	for {
		switch w := t.(type) {
		case *graphql.NonNull:
			t = w.OfType
		case *graphql.List:
			t = w.OfType
		default:
			return t
		}
	}
}

func isList(t graphql.Type) bool {
	for {
		switch w := t.(type) {
		case *graphql.NonNull:
			t = w.OfType
		case *graphql.List:
			return true
		default:
			return false
		}
	}
}

func multiplier(def *graphql.FieldDefinition, f *ast.Field, parent graphql.Type, vars map[string]any, l Limits) int {
	for _, a := range def.Args {
		if a.Name() != "first" {
			continue
		}
		n := graph.DefaultPageSize
		for _, arg := range f.Arguments {
			if arg.Name == nil || arg.Name.Value != "first" {
				continue
			}
			switch v := arg.Value.(type) {
			case *ast.IntValue:
				if x, err := strconv.Atoi(v.Value); err == nil {
					n = x
				}
			case *ast.Variable:
				if v.Name != nil {
					switch x := vars[v.Name.Value].(type) {
					case float64:
						n = int(min(x, 1e9))
					case int:
						n = x
					}
				}
			}
		}
		return max(1, min(n, l.MaxPageSize))
	}
	if isList(def.Type) {
		if p, ok := parent.(*graphql.Object); ok && (strings.HasSuffix(p.Name(), "Connection") || strings.HasPrefix(p.Name(), "__") || traversalResults[p.Name()]) {
			// Connection wrappers repeat their field's page; introspection lists are
			// bounded by the schema and by maxIntrospectionLists; a traversal's lists are
			// counted by its traversalCost.
			return 1
		}
		return 10
	}
	return 1
}

// traversalResults are the types traversals return; their lists (nodes, edges, hops) are
// bounded by the traversal that made them.
var traversalResults = map[string]bool{"Subgraph": true, "PathResult": true, "TraceResult": true}

// traversalCost prices a field returning a traversal by its bounds: its selection counts
// once per vertex the bounds let it return, and the walk itself adds one per 10 vertices
// it may visit. neighbors and subgraph scale with depth (MaxNeighborsVertices at the
// deepest; the whole-graph subgraph at that cap); path returns at most maxDepth+1 vertices
// but may visit MaxPathVisited; trace has no depth argument and may reach
// MaxTraceVertices. Arguments out of range are priced at the nearest bound (the service
// refuses them anyway).
func traversalCost(result graphql.Type, f *ast.Field, vars map[string]any) (mult, work int, ok bool) {
	t, isObj := result.(*graphql.Object)
	if !isObj || !traversalResults[t.Name()] {
		return 0, 0, false
	}
	switch t.Name() {
	case "Subgraph":
		d := clampInt(intArg(f, "depth", vars, 1), 1, graph.MaxNeighborsDepth)
		visits := graph.MaxNeighborsVertices * d / graph.MaxNeighborsDepth
		if f.Name != nil && f.Name.Value == "subgraph" && !hasArg(f, "around", vars) {
			visits = graph.MaxNeighborsVertices
		}
		return visits, visits / 10, true
	case "PathResult":
		m := clampInt(intArg(f, "maxDepth", vars, graph.MaxPathDepth), 1, graph.MaxPathDepth)
		return m + 1, graph.MaxPathVisited * m / graph.MaxPathDepth / 10, true
	default: // TraceResult
		return graph.MaxTraceVertices, graph.MaxTraceVertices / 10, true
	}
}

func clampInt(n, lo, hi int) int { return max(lo, min(n, hi)) }

// argValue returns a field argument's value (a literal or a variable's), and whether it
// was given (and not null).
func argValue(f *ast.Field, name string, vars map[string]any) (any, bool) {
	for _, arg := range f.Arguments {
		if arg.Name == nil || arg.Name.Value != name {
			continue
		}
		switch v := arg.Value.(type) {
		case *ast.Variable:
			if v.Name == nil {
				return nil, false
			}
			x, ok := vars[v.Name.Value]
			return x, ok && x != nil
		case nil:
			return nil, false
		default:
			return v.GetValue(), true
		}
	}
	return nil, false
}

func hasArg(f *ast.Field, name string, vars map[string]any) bool {
	_, ok := argValue(f, name, vars)
	return ok
}

// intArg reads an Int argument (literal or variable), def when absent or not a number.
func intArg(f *ast.Field, name string, vars map[string]any, def int) int {
	v, ok := argValue(f, name, vars)
	if !ok {
		return def
	}
	switch x := v.(type) {
	case string: // a literal's text
		if n, err := strconv.Atoi(x); err == nil {
			return n
		}
	case float64:
		return int(max(min(x, 1e9), -1e9))
	case int:
		return x
	}
	return def
}

// wholeType says whether t names a type all the way down (no list or non-null wrapper
// around nothing).
func wholeType(t ast.Type) bool {
	switch x := t.(type) {
	case *ast.Named:
		return x != nil && x.Name != nil && x.Name.Value != ""
	case *ast.List:
		return x != nil && wholeType(x.Type)
	case *ast.NonNull:
		return x != nil && wholeType(x.Type)
	}
	return false
}
