package mcptools

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// Offset cursors page lists that the service returns whole (unbound devices, tags,
// find results); they are opaque to the model.
func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(n)))
}

func decodeOffset(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && strings.HasPrefix(string(b), "o:") {
		if n, err := strconv.Atoi(string(b[2:])); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, graph.FieldErrorf(graph.EINVALID, "cursor", "cursor %q is not one this tool returned; pass next_cursor from the previous page unchanged, or omit it for the first page", c)
}

func pageOf[T any](list []T, off, limit int) ([]T, string) {
	if off > len(list) {
		off = len(list)
	}
	end := off + limit
	if end >= len(list) {
		return list[off:], ""
	}
	return list[off:end], encodeOffset(end)
}

func nonNil[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// tidyTag trims the spaces models put around the colon ("Role: Synth"): graph's
// NormalizeTag turns inner spaces into dashes before it splits namespace from value,
// which would make that "role:-synth".
func tidyTag(t string) string {
	ns, val, ok := strings.Cut(t, ":")
	if !ok {
		return t
	}
	return strings.TrimSpace(ns) + ":" + strings.TrimSpace(val)
}
