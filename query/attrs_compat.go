package query

import (
	"encoding/json"

	"github.com/devgraph/devgraph/graph"
)

// decodeRelationAttrs stands in for graph.DecodeRelationAttrs until the store's validation
// lands (TODO(gql): remove on merging h/store).
func decodeRelationAttrs(raw []byte) (map[string]string, error) {
	var m map[string]string
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, graph.FieldErrorf(graph.EINVALID, "attrs", `attrs must be a JSON object of strings, e.g. {"kind": "midi-din", "length": "1.5m"}`)
	}
	return m, nil
}
