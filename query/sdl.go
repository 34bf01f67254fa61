package query

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphql-go/graphql"
)

// printSDL renders the schema in GraphQL SDL, types sorted by name (graphql-go v0.8.1 has
// no schema printer).
func printSDL(s *graphql.Schema) string {
	var sb strings.Builder
	sb.WriteString("schema {\n  query: Query\n  mutation: Mutation\n}\n")
	names := make([]string, 0, len(s.TypeMap()))
	for name := range s.TypeMap() {
		if strings.HasPrefix(name, "__") {
			continue
		}
		switch name {
		case "String", "Int", "Float", "Boolean", "ID":
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sb.WriteByte('\n')
		switch t := s.TypeMap()[name].(type) {
		case *graphql.Scalar:
			desc(&sb, "", t.Description())
			fmt.Fprintf(&sb, "scalar %s\n", name)
		case *graphql.Object:
			desc(&sb, "", t.Description())
			fmt.Fprintf(&sb, "type %s", name)
			if ifs := t.Interfaces(); len(ifs) > 0 {
				in := make([]string, len(ifs))
				for i, x := range ifs {
					in[i] = x.Name()
				}
				fmt.Fprintf(&sb, " implements %s", strings.Join(in, " & "))
			}
			printFields(&sb, t.Fields())
		case *graphql.Interface:
			desc(&sb, "", t.Description())
			fmt.Fprintf(&sb, "interface %s", name)
			printFields(&sb, t.Fields())
		case *graphql.InputObject:
			desc(&sb, "", t.Description())
			fmt.Fprintf(&sb, "input %s {\n", name)
			fields := t.Fields()
			keys := make([]string, 0, len(fields))
			for k := range fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				f := fields[k]
				desc(&sb, "  ", f.PrivateDescription)
				fmt.Fprintf(&sb, "  %s: %s\n", k, f.Type)
			}
			sb.WriteString("}\n")
		case *graphql.Enum:
			desc(&sb, "", t.Description())
			fmt.Fprintf(&sb, "enum %s {\n", name)
			for _, v := range t.Values() {
				fmt.Fprintf(&sb, "  %s\n", v.Name)
			}
			sb.WriteString("}\n")
		}
	}
	return sb.String()
}

func printFields(sb *strings.Builder, fields graphql.FieldDefinitionMap) {
	sb.WriteString(" {\n")
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fields[k]
		desc(sb, "  ", f.Description)
		sb.WriteString("  " + k)
		if len(f.Args) > 0 {
			args := make([]string, len(f.Args))
			for i, a := range f.Args {
				args[i] = a.Name() + ": " + a.Type.String()
			}
			sort.Strings(args)
			sb.WriteString("(" + strings.Join(args, ", ") + ")")
		}
		fmt.Fprintf(sb, ": %s\n", f.Type)
	}
	sb.WriteString("}\n")
}

func desc(sb *strings.Builder, indent, d string) {
	if d == "" {
		return
	}
	fmt.Fprintf(sb, "%s\"\"\"%s\"\"\"\n", indent, strings.ReplaceAll(d, `"""`, `\"""`))
}
