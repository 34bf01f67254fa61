package query_test

import (
	"fmt"
	"strings"
	"testing"

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
