package query

import (
	"encoding/json"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// ParseVar parses a `--var k=v` value: v is JSON when it parses as JSON, else a string.
func ParseVar(s string) (key string, value any, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", nil, graph.FieldErrorf(graph.EINVALID, "var", "--var %q: want name=value, e.g. --var id=identity:jdxi or --var first=10", truncate(s, 60))
	}
	k = strings.TrimPrefix(k, "$")
	// Checked before decoding: encoding/json would read these as U+FFFD.
	if f, bad := graph.FindJSONTextFault([]byte(v)); bad {
		return "", nil, graph.FieldErrorf(graph.EINVALID, "var", "--var %s: %s", truncate(k, 60), graph.ErrorMessage(f.RefusalIn(k)))
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		return k, j, nil
	}
	return k, v, nil
}
