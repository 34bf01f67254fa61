package query_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/query"
)

// TestResponse_FieldOrder checks the byte order of answers against golden files: each
// object's fields come in the order the query selected them (the spec's CollectFields),
// never encoding/json's alphabetical order.
func TestResponse_FieldOrder(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		keys  []string // response keys of the first object, in order
	}{
		{name: "aliases", query: `{ stats { notes identities } zeta: identity(id: "jdxi") { slug name id alpha: name } }`},
		{name: "fragments", query: `{
			b: node(id: "usb:3-3.2") { ...dev id __typename }
			a: node(id: "identity:jdxi") { __typename ... on Identity { slug name } id ... on Device { ref } ...dev }
			t: node(id: "tag:role:synth") { ... on Tag { namespace count } ... on Node { id } }
		} fragment dev on Device { ref name }`},
		{name: "skip_include", query: `query($s: Boolean = true, $i: Boolean!, $n: Boolean = false) {
			identity(id: "jdxi") { name @skip(if: $s) slug @include(if: $i) id @skip(if: $n) tags @include(if: true) { name } }
		}`, vars: map[string]any{"i": false}},
		{name: "skip_include_given", query: `query($s: Boolean = true, $i: Boolean!) {
			identity(id: "jdxi") { name @skip(if: $s) slug @include(if: $i) id ... @skip(if: true) { hints { kind } } }
		}`, vars: map[string]any{"s": false, "i": true}},
		{name: "merged", query: `{ identity(id: "jdxi") { tags { name } id slug tags { namespace name } slug ... on Identity { id name } } }`},
		{name: "abstract_list", query: `{ find(text: "ro", first: 6) { edges { node { ... on Device { ref } id ... on Identity { slug } __typename } } } }`},
		{name: "partial_error", query: `{ stats { identities } identity(id: "no-such") { name id } zz: node(id: "identity:jdxi") { id } }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.exec.Execute(e.ctx, query.Request{Query: tc.query, Variables: tc.vars}, false)
			b, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("__devgraphType")) {
				t.Fatalf("the hidden type key leaked: %s", b)
			}
			if strings.Contains(strings.ToLower(tc.query), "__devgraphtype") {
				t.Fatal("test queries must not use the hidden key")
			}
			// The same facts as encoding/json's map encoding, only in another order.
			var got, plain any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			pb, _ := json.Marshal(map[string]any{"data": resp.Data, "errors": resp.Errors})
			json.Unmarshal(pb, &plain)
			if pm := plain.(map[string]any); pm["errors"] == nil {
				delete(pm, "errors")
			}
			if !reflect.DeepEqual(got, plain) {
				t.Fatalf("ordered answer differs from the map's content:\n%s\n%s", b, pb)
			}
			goldenBytes(t, "order_"+tc.name+".json", b)
		})
	}

	t.Run("ByteOrder", func(t *testing.T) {
		resp := e.exec.Execute(e.ctx, query.Request{Query: `{ identity(id: "jdxi") { updatedAt slug name id createdAt } stats { relations identities devices } }`}, false)
		b, _ := json.Marshal(resp)
		assertOrder(t, string(b), `"identity":{"updatedAt":`, `"slug":`, `"name":`, `"id":`, `"createdAt":`, `"stats":{"relations":`, `"identities":`, `"devices":`)
	})
	t.Run("GoDataHasNoHiddenKey", func(t *testing.T) {
		resp := e.exec.Execute(e.ctx, query.Request{Query: `{ node(id: "identity:jdxi") { ... on Identity { name } } }`}, false)
		n := resp.Data.(map[string]any)["node"].(map[string]any)
		if len(n) != 1 || n["name"] == nil {
			t.Fatalf("node=%v, want only name", n)
		}
	})
}

// assertOrder fails unless each part occurs in s after the one before it.
func assertOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Fatalf("%q is not after byte %d of %s", p, at, s)
		}
		at += i + len(p)
	}
}

// goldenBytes compares b, indented with its order kept and ids masked, with
// testdata/golden/name.
func goldenBytes(t *testing.T, name string, b []byte) {
	t.Helper()
	var ind bytes.Buffer
	if err := json.Indent(&ind, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	got := uuidRe.ReplaceAllString(ind.String(), "<uuid>")
	got = hashRe.ReplaceAllString(got, `"<hash>"`) + "\n"
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./query -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// FuzzResponse_Order runs arbitrary documents on the seeded graph: whatever runs, the
// ordered answer holds exactly the facts of graphql-go's maps (nothing dropped, nothing
// added, the hidden type key never shown), and a document that selects only plain fields
// gets them back in its own order.
func FuzzResponse_Order(f *testing.F) {
	e := newEnv(f, query.Options{})
	e.seed()
	for _, s := range []string{
		`{ stats { notes identities } zeta: identity(id: "jdxi") { slug name id alpha: name } }`,
		`{ a: node(id: "identity:jdxi") { __typename ... on Identity { slug name } id ...d } } fragment d on Device { ref name }`,
		`query($s: Boolean = true) { identity(id: "jdxi") { name @skip(if: $s) id } }`,
		`{ find(text: "jd", first: 3) { edges { score node { id ... on Identity { tags { name } } } } } }`,
		`{ identity(id: "jdxi") { __devgraphType: name id ... on Identity { slug } } }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		resp := e.exec.Execute(e.ctx, query.Request{Query: doc}, true)
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Data == nil {
			return
		}
		if !strings.Contains(doc, "__devgraphType") && bytes.Contains(b, []byte("__devgraphType")) {
			t.Fatalf("the hidden type key leaked: %s", b)
		}
		var got struct{ Data any }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, b)
		}
		var plain any
		pb, _ := json.Marshal(resp.Data)
		json.Unmarshal(pb, &plain)
		if !reflect.DeepEqual(got.Data, plain) {
			t.Fatalf("ordered answer differs from the data:\n%s\n%s", b, pb)
		}
	})
}
