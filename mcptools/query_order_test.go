package mcptools

import (
	"strings"
	"testing"
)

// TestQueryTool_FieldOrder: graph_query answers with the fields in the order the query
// selected them, in the text a model reads (the encoder's bytes, as on HTTP).
func TestQueryTool_FieldOrder(t *testing.T) {
	e := newEnv(t, envOpts{})
	cn := e.dial("http", true, "order")
	res := cn.call("graph_query", map[string]any{"query": `{ stats { relations identities devices } devices(first: 2) { totalCount nodes { present ref name } } }`})
	if res.IsError {
		t.Fatalf("graph_query: %s", text(res))
	}
	got := text(res)
	at := 0
	for _, p := range []string{`{"data":{"stats":{"relations":`, `"identities":`, `"devices":`, `"devices":{"totalCount":`, `"nodes":[{"present":`, `"ref":`, `"name":`} {
		i := strings.Index(got[at:], p)
		if i < 0 {
			t.Fatalf("%q is not after byte %d of %s", p, at, got)
		}
		at += i + len(p)
	}
}
