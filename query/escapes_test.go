package query_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// TestDocument_SurrogateEscapes: a GraphQL string literal may spell a character as
// \uXXXX. graphql-go decodes each escape on its own, so a lone surrogate (\ud800) was
// stored as U+FFFD and a valid pair (\ud83d\ude00, 😀) as two of them — text silently
// replaced, on every interface that runs a document (GraphQL over HTTP, devgraph query
// on the file or through the socket). A lone surrogate is refused like invalid UTF-8,
// naming the query; a pair is the character it spells; nothing is written on a refusal.
func TestDocument_SurrogateEscapes(t *testing.T) {
	e := newEnv(t, query.Options{})
	e.seed()
	head := func() uint64 {
		evs, _, err := e.svc.FindEvents(e.ctx, graph.EventFilter{First: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return 0
		}
		return evs[0].Seq
	}
	before := head()
	for _, doc := range []string{
		`mutation { createIdentity(name: "lone \ud800") { id } }`,
		`mutation { createIdentity(name: "low first \udc00\ud800") { id } }`,
		`mutation { createIdentity(name: "high at the end \uD83D") { id } }`,
		`mutation { addNote(target: "jdxi", body: "x", message: "why \udfff") { id } }`,
	} {
		msg := e.fail("INVALID", doc, nil)
		if !strings.Contains(msg, "query is not valid UTF-8") {
			t.Errorf("%s: %q; want the query named as not valid UTF-8", doc, msg)
		}
	}
	if got := head(); got != before {
		t.Fatalf("a refused document wrote events: head %d → %d", before, got)
	}
	// Escapes that are text still work, and a block string keeps its backslashes.
	data := e.ok(`mutation { createIdentity(name: "smile \ud83d\ude00 \u00e9 \\ud800") { name } }`, nil)
	if got := get(data, "createIdentity.name"); got != `smile 😀 é \ud800` {
		t.Errorf("name %q; want %q", got, `smile 😀 é \ud800`)
	}
	data = e.ok(`mutation { createIdentity(name: """block \ud800""") { name } } # "\ud800"`, nil)
	if got := get(data, "createIdentity.name"); got != `block \ud800` {
		t.Errorf("block string name %q", got)
	}
}
