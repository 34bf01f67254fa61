package mcptools

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tool inputs are Go structs; their tags give the JSON input schema and drive the
// argument check (checkArgs), so the schema a model reads and the check a call meets
// cannot drift apart. Tags:
//
//	json:"name"              the argument's name
//	jsonschema:"…"           its description (omitted when the name says it all)
//	mcp:"required,svc,max=300,min=1,enum=a|b,type=object"
//	(xmin: an exclusive minimum)
//
// max is a string's maxLength, an array's maxItems or a number's maximum; max=page is
// the server's page cap. svc marks a bound the service enforces on every interface: the
// schema shows it, and an over-limit call gets the service's own problem text (the same
// the CLI and GraphQL give) rather than ours.
//
// Why not mcp-go's WithInputSchema[T] and typed handlers: its generator
// (google/jsonschema-go) takes only a description and enums from tags, so it cannot state
// maxLength, maxItems, minimum or maximum — and a schema bound must equal the service's
// limit (TestSchema_BoundsMatchService holds them equal); it also writes a bigger schema
// (additionalProperties as {"not": {}}, nullable types) on a tool list whose size the
// model pays for, and its typed handlers answer a bad argument with "failed to bind
// arguments: json: cannot unmarshal …", where checkArgs names the field, the expected
// form and an example. Outputs do use mcp-go's derived schemas (typedSchema).

// inputParams derives a tool's params from its input struct, flattening embedded
// structs (the shared why and paging arguments).
func inputParams(t reflect.Type, maxPage int) []param {
	var out []param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, inputParams(f.Type, maxPage)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := param{name: name, desc: f.Tag.Get("jsonschema"), example: f.Tag.Get("example"), typ: jsonType(f.Type)}
		for _, opt := range strings.Split(f.Tag.Get("mcp"), ",") {
			key, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
			switch key {
			case "":
			case "required":
				p.required = true
			case "svc":
				p.service = true
			case "type":
				p.typ = val
			case "enum":
				p.enum = strings.Split(val, "|")
			case "min", "xmin":
				p.min = f64(mustFloat(t, name, val))
				p.exclusiveMin = key == "xmin"
			case "max":
				n := float64(maxPage)
				if val != "page" {
					n = mustFloat(t, name, val)
				}
				if p.typ == "integer" || p.typ == "number" {
					p.max = f64(n)
				} else {
					p.maxLen = int(n)
				}
			default:
				panic(fmt.Sprintf("mcptools: %s.%s: unknown mcp tag option %q", t.Name(), name, key))
			}
		}
		if p.typ == "" {
			panic(fmt.Sprintf("mcptools: %s.%s: no JSON type for %s", t.Name(), name, f.Type))
		}
		out = append(out, p)
	}
	return out
}

func mustFloat(t reflect.Type, name, s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("mcptools: %s.%s: bound %q is not a number", t.Name(), name, s))
	}
	return v
}

func jsonType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "array"
		}
	case reflect.Map:
		return "object"
	}
	return "" // any: the tag says (type=object)
}

// decodeInput fills the input struct v points at from checked arguments (checkArgs has
// made every value its param's Go form: string, float64, bool, []string, an object).
func decodeInput(a args, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			decodeInput(a, fv)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := a[name]
		if !ok || raw == nil {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.New(f.Type.Elem()))
			fv = fv.Elem()
		}
		switch fv.Kind() {
		case reflect.String:
			s, _ := raw.(string)
			fv.SetString(s)
		case reflect.Bool:
			b, _ := raw.(bool)
			fv.SetBool(b)
		case reflect.Int, reflect.Int64:
			x, _ := raw.(float64)
			fv.SetInt(int64(x))
		case reflect.Float64:
			x, _ := raw.(float64)
			fv.SetFloat(x)
		default:
			if rv := reflect.ValueOf(raw); rv.Type().AssignableTo(fv.Type()) {
				fv.Set(rv)
			}
		}
	}
}

// typed makes d's params from In and its handler from h, which gets the call's
// arguments decoded into an In.
func typed[In any](s *Server, d *toolDef, h func(ctx context.Context, c *call, in In) (*mcp.CallToolResult, error)) *toolDef {
	d.params = inputParams(reflect.TypeFor[In](), s.opts.MaxPage)
	d.handler = func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
		var in In
		decodeInput(c.args, reflect.ValueOf(&in).Elem())
		return h(ctx, c, in)
	}
	return d
}

// whyIn is the argument every write takes (the server's instructions say what it is).
type whyIn struct {
	Why string `json:"why" mcp:"max=1024,svc"`
}

// pageIn are the paging arguments every listing takes.
type pageIn struct {
	Limit  int    `json:"limit" mcp:"max=page"`
	Cursor string `json:"cursor" mcp:"max=512"`
}

// detailIn asks for the full records (raw attrs, per-boot values, times).
type detailIn struct {
	Detail bool `json:"detail"`
}
