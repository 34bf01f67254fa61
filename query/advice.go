package query

import (
	"encoding/json"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// advisedField is one GraphQL field an error advises, with its arguments (in order) and,
// for a list or a look, the selection that answers it.
type advisedField struct {
	op    string // "query" or "mutation"
	field string
	args  []arg
	sel   string // e.g. "detect"
}

type arg struct {
	name string
	v    any
}

func (f advisedField) String() string {
	var b strings.Builder
	b.WriteString(f.field)
	if len(f.args) > 0 {
		b.WriteByte('(')
		for i, a := range f.args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.name)
			b.WriteString(": ")
			b.WriteString(gqlValue(a.v))
		}
		b.WriteByte(')')
	}
	if f.sel != "" {
		b.WriteString(" { " + f.sel + " }")
	}
	return b.String()
}

func (f advisedField) ext(do string) map[string]any {
	args := map[string]any{}
	for _, a := range f.args {
		args[a.name] = a.v
	}
	m := map[string]any{"do": do, "operation": f.op, "field": f.field, "args": args}
	if f.sel != "" {
		m["select"] = f.sel
	}
	return m
}

// gqlValue writes a value in GraphQL's literal syntax: strings quoted, input objects
// with bare keys.
func gqlValue(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+": "+gqlValue(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// stepField renders one step as the field that takes it, or as words when no field does
// (pass an argument to the same field, retry).
func stepField(s graph.Step) (f *advisedField, words string) {
	q := func(field string, args ...arg) *advisedField {
		return &advisedField{op: "query", field: field, args: args}
	}
	mu := func(field string, args ...arg) *advisedField {
		return &advisedField{op: "mutation", field: field, args: args}
	}
	switch s.Do {
	case graph.StepList:
		switch s.Kind {
		case graph.ListIdentities:
			return q("identities"), ""
		case graph.ListDevices:
			return q("devices", arg{"filter", map[string]any{"all": true}}), ""
		case graph.ListBound:
			return q("devices"), ""
		case graph.ListUnbound:
			return q("unbound"), ""
		case graph.ListRobots:
			return q("robots"), ""
		case graph.ListRelationTypes:
			return q("relationTypes"), ""
		case graph.ListTags:
			return q("tags"), ""
		case graph.ListNotes:
			if s.ID != "" {
				return q("notes", arg{"target", s.ID}), ""
			}
			return q("notes"), ""
		case graph.ListChangelog:
			if s.ID != "" {
				return q("changelog", arg{"filter", map[string]any{"target": s.ID}}), ""
			}
			return q("changelog"), ""
		case graph.ListRelations, graph.ListClients:
			if s.ID != "" {
				return q("relations", arg{"filter", map[string]any{"node": s.ID}}), ""
			}
			if s.Kind == graph.ListClients {
				return q("devices"), "and their relations"
			}
			return q("relations"), ""
		}
	case graph.StepShow:
		return q("node", arg{"id", s.ID}), ""
	case graph.StepBind:
		f := mu("bind", arg{"ref", s.Ref})
		if s.Identity != "" {
			f.args = append(f.args, arg{"identity", s.Identity})
		} else {
			f.args = append(f.args, arg{"newName", s.Name})
		}
		if s.Arg != "" {
			f.args = append(f.args, arg{camelField(s.Arg), graph.StepValue(s.Value)})
		}
		return f, ""
	case graph.StepPass:
		if s.Value == "" {
			return nil, "leave out " + camelField(s.Arg)
		}
		return nil, "pass " + camelField(s.Arg) + ": " + gqlValue(graph.StepValue(s.Value))
	case graph.StepUpdate:
		return mu("updateRelation", arg{"id", s.ID}), ""
	case graph.StepRemove:
		if s.ID == "" {
			return mu("unrelate"), ""
		}
		return mu("unrelate", arg{"id", s.ID}), ""
	case graph.StepDelNote:
		return q("notes", arg{"target", s.ID}), "then deleteNote(id: …) the old ones"
	case graph.StepArm:
		return mu("robotArm", arg{"robot", s.Robot}), ""
	case graph.StepStop:
		return mu("robotStop", arg{"robot", s.Robot}), ""
	case graph.StepRelease:
		return mu("robotRelease", arg{"robot", s.Robot}), ""
	case graph.StepDetect:
		f := q("robot", arg{"id", s.Robot})
		f.sel = "detect { id x y distance }"
		return f, ""
	case graph.StepGrasp:
		obj := s.Object
		if obj == "" {
			obj = "<an object id detect lists>"
		}
		return mu("robotGrasp", arg{"robot", s.Robot}, arg{"object", obj}), ""
	case graph.StepNavigate:
		f := mu("robotNavigate", arg{"robot", s.Robot})
		if s.X != nil && s.Y != nil {
			f.args = append(f.args, arg{"x", *s.X}, arg{"y", *s.Y})
		}
		return f, ""
	case graph.StepPage:
		return nil, "ask for less (a smaller first, fewer fields, a narrower filter) and page with after"
	case graph.StepRetry:
		return nil, "retry in a moment"
	case graph.StepServe:
		return nil, "start `devgraph serve` (robots live in the serving process)"
	}
	return nil, ""
}

// graphqlAdvice appends an error's next steps to its problem as fields and arguments
// ("…; next: query `identities`") and returns them for extensions.next as well.
func graphqlAdvice(msg string, steps []graph.Step) (string, []map[string]any) {
	var parts []string
	var next []map[string]any
	for _, s := range steps {
		f, words := stepField(s)
		var p []string
		if f != nil {
			p = append(p, f.op+" `"+f.String()+"`")
			next = append(next, f.ext(s.Do))
		} else if words != "" {
			next = append(next, map[string]any{"do": s.Do, "advice": words})
		}
		if words != "" {
			p = append(p, words)
		}
		if len(p) > 0 {
			parts = append(parts, strings.Join(p, ", "))
		}
	}
	if len(parts) == 0 {
		return msg, nil
	}
	if strings.HasSuffix(msg, "?") { // "did you mean …?": the advice is a sentence of its own
		return msg + " Next: " + strings.Join(parts, " or "), next
	}
	return strings.TrimRight(msg, ".") + "; next: " + strings.Join(parts, " or "), next
}
