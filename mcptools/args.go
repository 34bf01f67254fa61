package mcptools

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// param describes one tool argument. The same list produces the tool's JSON input
// schema and checks the arguments a call brings, so the two cannot drift apart and a
// bad argument is reported as a sentence that names the field, the expected form and
// an example (mcp-go's own schema validation reports "/limit: &{…}"-style dumps, so it
// stays off).
type param struct {
	name     string
	typ      string // string, integer, number, boolean, object, array (of strings)
	required bool
	desc     string
	example  string // a JSON value shown in error messages
	enum     []string
	min, max *float64
	// exclusiveMin: the value must be above min, not equal to it.
	exclusiveMin bool
	maxLen       int // strings: bytes; arrays: items
	// service marks limits (maxLen, min, max, enum, an object's type) the service
	// enforces for every interface: here they are schema hints only, so a model sees the
	// numbers and an over-limit call gets the service's own problem text, the same as
	// the CLI and GraphQL give.
	service bool
}

func f64(v float64) *float64 { return &v }

// schemaType is the JSON type name a model reads in messages.
func (p param) typeWords() string {
	switch p.typ {
	case "string":
		return "a string"
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "object":
		return "a JSON object"
	case "array":
		return "an array of strings"
	}
	return p.typ
}

func (p param) schema() map[string]any {
	s := map[string]any{"type": p.typ}
	if p.desc != "" {
		s["description"] = p.desc
	}
	if p.typ == "array" {
		s["items"] = map[string]any{"type": "string"}
		if p.maxLen > 0 {
			s["maxItems"] = p.maxLen
		}
	}
	if p.typ == "string" && p.maxLen > 0 {
		s["maxLength"] = p.maxLen
	}
	if len(p.enum) > 0 {
		s["enum"] = p.enum
	}
	if p.min != nil && p.exclusiveMin {
		s["exclusiveMinimum"] = *p.min
	} else if p.min != nil {
		s["minimum"] = *p.min
	}
	if p.max != nil {
		s["maximum"] = *p.max
	}
	return s
}

func inputSchema(params []param) mcp.ToolInputSchema {
	props := make(map[string]any, len(params))
	var req, order []string
	for _, p := range params {
		props[p.name] = p.schema()
		order = append(order, p.name)
		if p.required {
			req = append(req, p.name)
		}
	}
	// No additionalProperties: false: checkArgs refuses unknown arguments by name, and
	// every tool list a model reads pays for the bytes.
	return mcp.ToolInputSchema{Type: "object", Properties: props, Required: req, PropertyOrder: order}
}

// args are a call's checked arguments.
type args map[string]any

// checkArgs validates raw call arguments against params. The error is a sentence for
// the model: which argument, what it must be, an example, and what to do next.
func checkArgs(tool string, params []param, raw any) (args, error) {
	var in map[string]any
	switch v := raw.(type) {
	case nil:
		in = map[string]any{}
	case map[string]any:
		in = v
	case json.RawMessage:
		if len(v) == 0 || string(v) == "null" {
			in = map[string]any{}
		} else if err := json.Unmarshal(v, &in); err != nil {
			return nil, fmt.Errorf("%s: the arguments must be a JSON object of named arguments, e.g. %s", tool, exampleCall(params))
		}
	default:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &in) != nil {
			return nil, fmt.Errorf("%s: the arguments must be a JSON object of named arguments, e.g. %s", tool, exampleCall(params))
		}
	}
	byName := make(map[string]param, len(params))
	for _, p := range params {
		byName[p.name] = p
	}
	var unknown []string
	for k := range in {
		if _, ok := byName[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("%s does not take the argument %q; its arguments are %s", tool, unknown[0], paramNames(params))
	}
	out := args{}
	for _, p := range params {
		v, ok := in[p.name]
		if !ok || v == nil {
			if p.required {
				what := ""
				if p.desc != "" {
					what = ": " + p.desc
				}
				return nil, fmt.Errorf("%s needs the argument %q (%s)%s. Example: %q: %s", tool, p.name, p.typeWords(), what, p.name, p.exampleValue())
			}
			continue
		}
		cv, err := p.check(tool, v)
		if err != nil {
			return nil, err
		}
		out[p.name] = cv
	}
	return out, nil
}

func paramNames(params []param) string {
	ss := make([]string, len(params))
	for i, p := range params {
		ss[i] = p.name
		if p.required {
			ss[i] += " (required)"
		}
	}
	return strings.Join(ss, ", ")
}

func (p param) exampleValue() string {
	if p.example != "" {
		return p.example
	}
	switch p.typ {
	case "string":
		if len(p.enum) > 0 {
			return strconv.Quote(p.enum[0])
		}
		return `"…"`
	case "integer":
		return "10"
	case "number":
		return "1.5"
	case "boolean":
		return "true"
	case "object":
		return "{}"
	case "array":
		return `["…"]`
	}
	return "…"
}

func exampleCall(params []param) string {
	var parts []string
	for _, p := range params {
		if p.required {
			parts = append(parts, strconv.Quote(p.name)+": "+p.exampleValue())
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "the string " + strconv.Quote(x)
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

func (p param) wrongType(tool string, v any) error {
	return fmt.Errorf("%s: argument %q must be %s, but got %s. Example: %q: %s", tool, p.name, p.typeWords(), describeValue(v), p.name, p.exampleValue())
}

func (p param) check(tool string, v any) (any, error) {
	switch p.typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, p.wrongType(tool, v)
		}
		if p.maxLen > 0 && len(s) > p.maxLen && !p.service {
			return nil, fmt.Errorf("%s: argument %q is %d bytes; the limit is %d", tool, p.name, len(s), p.maxLen)
		}
		if len(p.enum) > 0 && !p.service {
			found := false
			for _, e := range p.enum {
				if s == e {
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("%s: argument %q is %q, but must be one of %s", tool, p.name, s, strings.Join(p.enum, ", "))
			}
		}
		return s, nil
	case "integer", "number":
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case json.Number:
			var err error
			if f, err = x.Float64(); err != nil {
				return nil, p.wrongType(tool, v)
			}
		case int:
			f = float64(x)
		case int64:
			f = float64(x)
		default:
			return nil, p.wrongType(tool, v)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: argument %q must be a finite number", tool, p.name)
		}
		if p.typ == "integer" && f != math.Trunc(f) {
			return nil, fmt.Errorf("%s: argument %q must be a whole number, but got %g. Example: %q: %s", tool, p.name, f, p.name, p.exampleValue())
		}
		if p.service {
			return f, nil
		}
		if p.min != nil && (f < *p.min || p.exclusiveMin && f == *p.min) {
			return nil, fmt.Errorf("%s: argument %q is %g, below the minimum of %g", tool, p.name, f, *p.min)
		}
		if p.max != nil && f > *p.max {
			msg := fmt.Sprintf("%s: argument %q is %g, above the maximum of %g", tool, p.name, f, *p.max)
			if p.name == "limit" {
				msg += "; ask for at most that many and fetch the rest with the cursor the result returns"
			}
			return nil, fmt.Errorf("%s", msg)
		}
		return f, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, p.wrongType(tool, v)
		}
		return b, nil
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			if p.service {
				return v, nil // the service says what it wants instead
			}
			return nil, p.wrongType(tool, v)
		}
		return m, nil
	case "array":
		list, ok := v.([]any)
		if !ok {
			// A lone string where a list was expected is what a model most often
			// sends; accept it as a one-element list.
			if s, isStr := v.(string); isStr {
				return []string{s}, nil
			}
			return nil, p.wrongType(tool, v)
		}
		if p.maxLen > 0 && len(list) > p.maxLen && !p.service {
			return nil, fmt.Errorf("%s: argument %q has %d items; at most %d are allowed per call", tool, p.name, len(list), p.maxLen)
		}
		out := make([]string, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: argument %q must be an array of strings, but item %d is %s. Example: %q: %s", tool, p.name, i, describeValue(e), p.name, p.exampleValue())
			}
			out[i] = s
		}
		return out, nil
	}
	return v, nil
}

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) has(name string) bool {
	_, ok := a[name]
	return ok
}

func (a args) integer(name string, def int) int {
	f, ok := a[name].(float64)
	if !ok {
		return def
	}
	return int(f)
}

func (a args) list(name string) []string {
	l, _ := a[name].([]string)
	return l
}

// outSchema builds an output schema from loosely typed top-level properties: accurate
// for what the tools return (clients validate structured results against it) without
// restating every nested graph type.
type outProp struct {
	name, typ, desc string
	required        bool
}

func outputSchema(props ...outProp) func() json.RawMessage {
	m := make(map[string]any, len(props))
	var req []string
	for _, p := range props {
		s := map[string]any{"description": p.desc}
		if strings.Contains(p.typ, "|") {
			s["type"] = strings.Split(p.typ, "|")
		} else {
			s["type"] = p.typ
		}
		m[p.name] = s
		if p.required {
			req = append(req, p.name)
		}
	}
	b, err := json.Marshal(mcp.ToolOutputSchema{Type: "object", Properties: m, Required: req})
	if err != nil {
		panic(err)
	}
	return func() json.RawMessage { return b }
}
