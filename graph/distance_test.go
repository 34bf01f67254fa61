package graph

import "testing"

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b     string
		max, out int
	}{
		{"", "", 0, 0},
		{"jdxi", "jdxi", 0, 0},
		{"jdxi", "jdx1", 0, 1},
		{"kitten", "sitting", 0, 3},
		{"scout", "scuot", 0, 2},
		{"kitten", "sitting", 2, 2}, // cut off at max
		{"a", "abcdef", 3, 3},       // lengths alone exceed max
		{"café", "cafe", 0, 1},      // runes, not bytes
		{"jdxi", "", 0, 4},
	} {
		if got := EditDistance(c.a, c.b, c.max); got != c.out {
			t.Errorf("EditDistance(%q, %q, %d)=%d, want %d", c.a, c.b, c.max, got, c.out)
		}
	}
}
