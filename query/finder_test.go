package query_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
)

func TestFinder_KeepsUp(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	for _, c := range []struct {
		name   string
		finder graph.Finder
	}{
		{"own finder", search.NewFinder(e.db)},
		{"executor's finder", e.exec.Finder()},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.finder
			find := func(text string, tags ...string) []graph.FindHit {
				t.Helper()
				hits, err := f.Find(e.ctx, graph.FindQuery{Text: text, Tags: tags})
				if err != nil {
					t.Fatal(err)
				}
				return hits
			}
			has := func(hits []graph.FindHit, id string) bool {
				for _, h := range hits {
					if h.ID == id {
						return true
					}
				}
				return false
			}
			if hits := find("jdxi"); !has(hits, "identity:jdxi") {
				t.Fatalf("jdxi: %v", hits)
			}
			slug := "wobble-" + map[string]string{"own finder": "n", "executor's finder": "v"}[c.name]
			id := "identity:" + slug
			if _, err := e.svc.CreateIdentity(e.ctx, graph.IdentityCreate{Name: "Wobblefrog Sampler", Slug: slug}); err != nil {
				t.Fatal(err)
			}
			if hits := find("wobblefrog"); !has(hits, id) {
				t.Errorf("a new identity is not found: %v", hits)
			}
			if _, err := e.svc.RenameIdentity(e.ctx, id, "Quaxle Drum Machine"); err != nil {
				t.Fatal(err)
			}
			if hits := find("wobblefrog"); has(hits, id) {
				t.Errorf("the old name still finds it: %v", hits)
			}
			if hits := find("quaxle"); !has(hits, id) || hits[0].Name != "Quaxle Drum Machine" {
				t.Errorf("the new name does not find it: %v", hits)
			}
			if _, err := e.svc.UpdateTags(e.ctx, id, []string{"role:drum-machine"}, nil); err != nil {
				t.Fatal(err)
			}
			if hits := find("", "role:drum-machine"); len(hits) != 1 || hits[0].ID != id {
				t.Errorf("tag filter after tagging: %v", hits)
			}
			if err := e.svc.DeleteIdentity(e.ctx, id); err != nil {
				t.Fatal(err)
			}
			if hits := find("quaxle"); has(hits, id) {
				t.Errorf("a deleted identity is still found: %v", hits)
			}
			if hits, err := f.Find(e.ctx, graph.FindQuery{Text: "scout", Kind: "robot"}); err != nil || len(hits) == 0 || hits[0].Kind != "robot" {
				t.Errorf("robot kind: %v %v", hits, err)
			}
			hits, err := f.Find(e.ctx, graph.FindQuery{Text: "filler", First: 5})
			if err != nil || len(hits) != 5 {
				t.Errorf("first 5: %v %v", hits, err)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("not best first: %v", hits)
				}
			}
		})
	}
}

// TestIntrospection: the standard introspection query (what GraphiQL sends) fits the limits.
func TestIntrospection(t *testing.T) {
	e := newEnv(t, query.Options{})
	d := e.ok(introspectionQuery, nil)
	types := getList(d, "__schema.types")
	names := map[string]bool{}
	for _, x := range types {
		names[get(x, "name").(string)] = true
	}
	for _, n := range []string{"Identity", "Device", "Tag", "Note", "Event", "Robot", "Int64", "JSON", "Time", "Node", "IdentityConnection"} {
		if !names[n] {
			t.Errorf("introspection lacks %s", n)
		}
	}
}

const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }
}`

// TestFinder_ReadYourWrites: find through GraphQL sees a mutation made just before it.
func TestFinder_ReadYourWrites(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	e.ok(`{ find(text: "jdxi"){ edges { name } } }`, nil) // builds the index
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("Zephyr Looper %d", i)
		e.ok(`mutation($n: String!){ createIdentity(name: $n){ id } }`, map[string]any{"n": name})
		d := e.ok(`query($t: String){ find(text: $t, first: 1){ edges { name } } }`, map[string]any{"t": name})
		if get(d, "find.edges.0.name") != name {
			t.Fatalf("find right after create %q: %v", name, d)
		}
	}
}

// TestSchemaNames: no devgraph field shares a name with an introspection list field (the
// document checks count those by name).
func TestSchemaNames(t *testing.T) {
	e := newEnv(t, query.Options{})
	for _, name := range []string{"types", "fields", "args", "inputFields", "interfaces", "possibleTypes", "enumValues", "directives"} {
		if strings.Contains(e.exec.SDL(), "  "+name+":") || strings.Contains(e.exec.SDL(), "  "+name+"(") {
			t.Errorf("the schema has a field named %q", name)
		}
	}
}
