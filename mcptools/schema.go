package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// typedSchema is the output schema of a tool whose handler returns T (see
// deriveSchema), encoded, derived when first asked for: deriving costs about a
// millisecond a type, which a server would otherwise spend before it answers
// initialize, and the robot tools are listed only once a robot exists. Each (T, enums)
// is derived once per process.
func typedSchema[T any](enums map[string][]string) func() json.RawMessage {
	key := schemaKey{reflect.TypeFor[T](), fmt.Sprint(enums)}
	return func() json.RawMessage {
		if b, ok := schemas.Load(key); ok {
			return b.(json.RawMessage)
		}
		b, err := json.Marshal(deriveSchema[T](enums))
		if err != nil {
			panic(err)
		}
		v, _ := schemas.LoadOrStore(key, json.RawMessage(b))
		return v.(json.RawMessage)
	}
}

type schemaKey struct {
	t     reflect.Type
	enums string // fmt.Sprint of the enums map: its keys sorted
}

// schemas holds the encoded schemas typedSchema derived: schemaKey → json.RawMessage.
var schemas sync.Map

// deriveSchema derives a tool's output schema from the Go type its handler returns (the
// type carries the schema, so the two cannot drift apart), then tightens it: the
// handlers never send null for a list, a map or an object, so the schema says so, and
// enums names the values a field may take ("properties.action" → its enum; a path goes
// through "items" for arrays). A type the generator cannot describe is a programming
// error caught by the registration test, so it panics.
func deriveSchema[T any](enums map[string][]string) mcp.ToolOutputSchema {
	tool := mcp.NewTool("schema", mcp.WithOutputSchema[T]())
	if len(tool.OutputSchema.Properties) == 0 {
		panic(fmt.Sprintf("mcptools: no output schema derived from %T", *new(T)))
	}
	b, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		panic(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		panic(err)
	}
	dropNull(root)
	for at, values := range enums {
		node := root
		for _, key := range splitPath(at) {
			next, ok := node[key].(map[string]any)
			if !ok {
				panic(fmt.Sprintf("mcptools: enum path %q of %T does not exist", at, *new(T)))
			}
			node = next
		}
		node["enum"] = values
	}
	b, _ = json.Marshal(root)
	var out mcp.ToolOutputSchema
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	out.Type = "object"
	out.PropertyOrder = nil
	return out
}

// dropNull turns every ["null", T] type into T, recursively.
func dropNull(v any) {
	switch x := v.(type) {
	case map[string]any:
		if types, ok := x["type"].([]any); ok && len(types) == 2 {
			for i, t := range types {
				if t == "null" {
					x["type"] = types[1-i]
				}
			}
		}
		for _, c := range x {
			dropNull(c)
		}
	case []any:
		for _, c := range x {
			dropNull(c)
		}
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}
