package mcptools

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
)

// allToolDefs is every tool's definition (their params only are read; the handlers are
// bound to a service that is never called).
func allToolDefs() []*toolDef {
	s := Server{svc: &identity.Service{}, opts: Options{MaxPage: DefaultMaxPage}}
	return append(s.graphTools(), s.robotTools()...)
}

// FuzzCheckArgs feeds arbitrary JSON arguments to checkArgs for every tool's params, in
// both forms a transport hands over (raw JSON, and JSON already decoded into Go values).
// It never panics; the two forms get the same answer; what it accepts keeps every rule
// of the params (declared names only, required ones present, types, lengths, enums,
// ranges, whole numbers, finite numbers) except the limits a param leaves to the service
// (param.service), which refuses them in the words every interface shares; what it
// refuses is one line naming the tool.
// The seed corpus is testdata/fuzz/FuzzCheckArgs.
func FuzzCheckArgs(f *testing.F) {
	tools := allToolDefs()
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		td := tools[int(which)%len(tools)]
		a, err := checkArgs(td.name, td.params, json.RawMessage(raw))
		checkArgsResult(t, td, a, err)
		var decoded any
		if json.Unmarshal(raw, &decoded) != nil {
			return
		}
		b, err2 := checkArgs(td.name, td.params, decoded)
		checkArgsResult(t, td, b, err2)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s %s: raw %v %v; decoded %v %v", td.name, raw, a, err, b, err2)
		}
		if err != nil && err.Error() != err2.Error() {
			t.Fatalf("%s %s: raw says %q, decoded says %q", td.name, raw, err, err2)
		}
	})
}

func checkArgsResult(t *testing.T, td *toolDef, a args, err error) {
	t.Helper()
	if err != nil {
		msg := err.Error()
		var ge *graph.Error
		if errors.As(err, &ge) && ge.Code == "" {
			t.Fatalf("%s: a graph.Error without a code: %v", td.name, err)
		}
		if msg == "" || strings.Contains(msg, "\n") || !strings.Contains(msg, td.name) {
			t.Fatalf("%s: error %q: want one line naming the tool", td.name, msg)
		}
		if a != nil {
			t.Fatalf("%s: arguments %v beside error %v", td.name, a, err)
		}
		return
	}
	for name := range a {
		if !slices.ContainsFunc(td.params, func(p param) bool { return p.name == name }) {
			t.Fatalf("%s: accepted an undeclared argument %q", td.name, name)
		}
	}
	for _, p := range td.params {
		v, ok := a[p.name]
		if !ok {
			if p.required {
				t.Fatalf("%s: accepted without the required %q", td.name, p.name)
			}
			continue
		}
		switch p.typ {
		case "string":
			s, isStr := v.(string)
			if !isStr || !p.service && (p.maxLen > 0 && len(s) > p.maxLen || len(p.enum) > 0 && !slices.Contains(p.enum, s)) {
				t.Fatalf("%s: accepted %q = %#v (max %d bytes, enum %v)", td.name, p.name, v, p.maxLen, p.enum)
			}
		case "integer", "number":
			x, isNum := v.(float64)
			if !isNum || math.IsNaN(x) || math.IsInf(x, 0) || p.typ == "integer" && x != math.Trunc(x) ||
				!p.service && (p.min != nil && x < *p.min || p.max != nil && x > *p.max) {
				t.Fatalf("%s: accepted %q = %#v", td.name, p.name, v)
			}
		case "boolean":
			if _, isBool := v.(bool); !isBool {
				t.Fatalf("%s: accepted %q = %#v", td.name, p.name, v)
			}
		case "object":
			if _, isObj := v.(map[string]any); !isObj && !p.service {
				t.Fatalf("%s: accepted %q = %#v", td.name, p.name, v)
			}
		case "array":
			l, isList := v.([]string)
			if !isList || !p.service && p.maxLen > 0 && len(l) > p.maxLen {
				t.Fatalf("%s: accepted %q = %#v (max %d items)", td.name, p.name, v, p.maxLen)
			}
		}
	}
}
