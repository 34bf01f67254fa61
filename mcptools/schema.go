package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// typedSchema is the output schema of a tool whose handler returns T (see
// deriveSchema), encoded, derived when first asked for: the robot tools are listed only
// once a robot exists. Each (T, enums) is derived once per process.
func typedSchema[T any](enums map[string][]string) func() json.RawMessage {
	key := schemaKey{reflect.TypeFor[T](), fmt.Sprint(enums)}
	return func() json.RawMessage {
		if b, ok := schemas.Load(key); ok {
			return b.(json.RawMessage)
		}
		v, _ := schemas.LoadOrStore(key, deriveSchema[T](enums))
		return v.(json.RawMessage)
	}
}

type schemaKey struct {
	t     reflect.Type
	enums string // fmt.Sprint of the enums map: its keys sorted
}

// schemas holds the encoded schemas typedSchema derived: schemaKey → json.RawMessage.
var schemas sync.Map

// deriveSchema derives a tool's output schema, encoded, from the Go type its handler
// returns (the type carries the schema, so the two cannot drift apart), then tightens
// it: the handlers never send null for a list, a map or an object, so the schema says
// so, and enums names the values a field may take ("properties.action" → its enum; a
// path goes through "items" for arrays). The top level is what mcp.WithOutputSchema
// keeps of the generated schema (type "object", $defs, properties, required,
// additionalProperties), keys sorted as mcp-go encodes a ToolOutputSchema: one decode
// and one encode of mcp.SchemaForRaw's bytes, where going through mcp.Tool's schema type
// took five (a server derives a dozen of these before it answers initialize). A type
// the generator cannot describe is a programming error caught by the registration
// test, so it panics.
func deriveSchema[T any](enums map[string][]string) json.RawMessage {
	raw, err := mcp.SchemaForRaw[T]()
	if err != nil {
		panic(fmt.Sprintf("mcptools: no output schema derived from %T: %v", *new(T), err))
	}
	var gen map[string]any
	if err := json.Unmarshal(raw, &gen); err != nil {
		panic(err)
	}
	props, _ := gen["properties"].(map[string]any)
	if len(props) == 0 {
		panic(fmt.Sprintf("mcptools: no output schema derived from %T", *new(T)))
	}
	if _, ok := gen["definitions"]; ok {
		panic(fmt.Sprintf("mcptools: the schema of %T has draft-07 definitions, which mcp-go rewrites", *new(T)))
	}
	root := map[string]any{"type": "object", "properties": props, "required": []any{}}
	if req, ok := gen["required"].([]any); ok && len(req) > 0 {
		root["required"] = req
	}
	if defs, ok := gen["$defs"]; ok && defs != nil {
		root["$defs"] = defs
	}
	if ap, ok := gen["additionalProperties"]; ok && ap != nil {
		root["additionalProperties"] = ap
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
	b, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return b
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
