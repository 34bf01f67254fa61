package remote

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// nopService is never called: the test only reads the handler's routes.
type nopService struct{ graph.Service }

// The socket serves exactly graph.Service: one table row per method, no plumbing.
func TestMethodTable(t *testing.T) {
	t.Parallel()
	svc := reflect.TypeFor[graph.Service]()
	var want []string
	for i := range svc.NumMethod() {
		want = append(want, svc.Method(i).Name)
	}
	var got []string
	for _, m := range methods {
		got = append(got, m.name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the method table names %v,\ngraph.Service has %v", got, want)
	}
	h := NewHandler(nopService{}, Options{}).(*handler)
	if len(h.routes) != len(methods) {
		t.Fatalf("handler serves %d routes, table has %d rows", len(h.routes), len(methods))
	}
	for _, plumbing := range []string{"ObserveDevices", "SaveRobot", "FindRobotRecords", "BindDevice", "UnbindDevice", "FindDevices", "FindDeviceByID"} {
		if _, ok := h.routes[plumbing]; ok {
			t.Errorf("the socket serves store plumbing %s", plumbing)
		}
	}
}

// Every Client method calls the row of its own name (a copy-paste slip would call
// another method and answer with the wrong thing).
func TestClientCallsItsRow(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "client.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || methodByName[fn.Name.Name] == nil {
			continue
		}
		seen[fn.Name.Name] = true
		calls := false
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); s == fn.Name.Name {
					calls = true
				}
			}
			return true
		})
		if !calls {
			t.Errorf("Client.%s does not call the %q row", fn.Name.Name, fn.Name.Name)
		}
	}
	for _, m := range methods {
		if !seen[m.name] {
			t.Errorf("client.go has no Client.%s", m.name)
		}
	}
}

// A read-only server answers exactly the reads; every change has words for the refusal.
func TestWriteNames_CoverEveryWrite(t *testing.T) {
	t.Parallel()
	reads := []string{"ResolveID", "FindIdentityByID", "FindIdentities", "FindHintHolders",
		"FindTags", "FindTagged", "FindNotes", "FindNoteByID", "FindEvents", "VerifyChangelog", "Stats", "CheckRelations", "CheckConsistency",
		"Backup", "Export", "Devices", "Device", "Unbound", "Match", "Sources", "Robots", "Robot", "RobotDetect",
		"FindRelationByID", "FindRelations", "RelationTypes", "Clients", "Client", "Neighbors", "Path", "Trace", "Subgraph"}
	var got []string
	for _, m := range methods {
		if m.write == "" {
			got = append(got, m.name)
		}
	}
	slices.Sort(reads)
	slices.Sort(got)
	if !slices.Equal(got, reads) {
		t.Fatalf("reads %v, want %v", got, reads)
	}
}
