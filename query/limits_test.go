package query_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// TestMutation_Limits: GraphQL gives the service's own text for the shared limits (the
// message and the tags per call), which it no longer checks itself.
func TestMutation_Limits(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	tags := make([]any, 33)
	for i := range tags {
		tags[i] = fmt.Sprintf("bulk:t%d", i)
	}
	const tag = `mutation($add: [String!], $m: String) { tag(target: "jdxi", add: $add, message: $m) { tags { name } } }`
	if msg := e.fail("LIMIT", tag, map[string]any{"add": tags}); !strings.Contains(msg, "add has 33 tags; the limit is 32 per call") {
		t.Errorf("33 tags: %q", msg)
	}
	if msg := e.fail("INVALID", tag, map[string]any{"add": []any{"role:keyboard"}, "m": strings.Repeat("m", 2048)}); !strings.Contains(msg, "message is 2048 bytes; the limit is 1024") {
		t.Errorf("2 KB message: %q", msg)
	}
	if msg := e.fail("INVALID", tag, map[string]any{"add": []any{"role:keyboard"}, "m": "a\x00b"}); !strings.Contains(msg, "message contains a NUL byte") {
		t.Errorf("NUL in message: %q", msg)
	}
	e.ok(tag, map[string]any{"add": tags[:32], "m": strings.Repeat("m", 1024)})
}

// TestDocument_UnicodeEscapes: graphql-go's lexer writes a \u escape as one rune, so a lone
// surrogate (\ud800) became U+FFFD and a surrogate pair (\ud83d\ude00, 😀) two U+FFFD,
// silently, in the stored name and the changelog message. A lone surrogate, and \u0000,
// are refused with the document named; the character itself, \u00e9 or a pair (as the
// character it spells: escapes_test.go) goes through.
func TestDocument_UnicodeEscapes(t *testing.T) {
	e := newEnv(t, query.Options{})
	for _, c := range []struct{ name, want string }{
		{`Syn\ud800th`, "not valid UTF-8"},
		{`Syn\uDC00th`, "not valid UTF-8"},
		{`Syn\u0000th`, "NUL"},
	} {
		q := `mutation { createIdentity(name: "` + c.name + `", message: "why") { id name } }`
		out := e.do(q, nil)
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			t.Errorf("%s: accepted: %v", c.name, out["data"])
			continue
		}
		first := errs[0].(map[string]any)
		ext, _ := first["extensions"].(map[string]any)
		if msg, _ := first["message"].(string); ext["code"] != "INVALID" || ext["field"] != "query" || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %v %v, want INVALID naming the query and %q", c.name, ext, first["message"], c.want)
		}
	}
	if _, n, _, err := e.db.FindIdentities(e.ctx, graph.IdentityFilter{}); err != nil || n != 0 {
		t.Fatalf("identities after the refusals: %d (%v), want none", n, err)
	}
	out := e.ok(`mutation { createIdentity(name: "Caf\u00e9 😀", message: "why") { name } }`, nil)
	if got := out["createIdentity"].(map[string]any)["name"]; got != "Café 😀" {
		t.Fatalf("name=%q, want %q", got, "Café 😀")
	}
}
