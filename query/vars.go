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
	// A JSON value is checked before decoding: json.Unmarshal would replace invalid UTF-8
	// silently. (Plain text is checked where the request is encoded.)
	if json.Valid([]byte(v)) {
		if f, bad := graph.FindJSONTextFault([]byte(v)); bad {
			return "", nil, f.Refusal(f.Within("variables." + k))
		}
	}
	var j any
	if err := json.Unmarshal([]byte(v), &j); err == nil {
		return k, j, nil
	}
	return k, v, nil
}
