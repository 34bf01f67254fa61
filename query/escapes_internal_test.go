package query

import (
	"testing"
	"unicode/utf8"
)

// FuzzJoinSurrogates: any document is handled without a panic, and valid UTF-8 in is
// valid UTF-8 out.
func FuzzJoinSurrogates(f *testing.F) {
	for _, s := range []string{`{ a(x: "\ud83d\ude00") }`, `"\ud800`, `"""\ud800"""`, `# "\ud800`, `"\\ud800"`, `"\u`, `"\uD83D\u`, `""""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		out, _, _, bad := joinSurrogates(doc)
		if !bad && utf8.ValidString(doc) && !utf8.ValidString(out) {
			t.Fatalf("%q → %q", doc, out)
		}
	})
}
