package query

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A GraphQL string may spell a character as \uXXXX. graphql-go decodes each escape on
// its own, so a UTF-16 surrogate pair (\ud83d\ude00, how characters beyond U+FFFF are
// spelled) became two U+FFFD and a lone surrogate one: text silently replaced.
// joinSurrogates runs before the parser: it rewrites each pair into the character it
// spells and reports a lone surrogate, which is refused like invalid UTF-8. Columns
// after a rewritten pair on its line shift left in later error locations.

// joinSurrogates returns doc with every surrogate pair escape in its (non-block) string
// literals replaced by the character, or bad with the line and column of the first lone
// surrogate escape.
func joinSurrogates(doc string) (out string, line, col int, bad bool) {
	if !strings.Contains(doc, `\u`) {
		return doc, 0, 0, false
	}
	var sb strings.Builder
	last := 0
	for i := 0; i < len(doc); i++ {
		switch {
		case doc[i] == '#':
			for i < len(doc) && doc[i] != '\n' && doc[i] != '\r' {
				i++
			}
		case strings.HasPrefix(doc[i:], `"""`):
			// Block strings decode no escapes; \""" is an escaped delimiter.
			j := i + 3
			for j < len(doc) && !(strings.HasPrefix(doc[j:], `"""`) && doc[j-1] != '\\') {
				j++
			}
			i = j + 2
		case doc[i] == '"':
			j := i + 1
			for ; j < len(doc) && doc[j] != '"' && doc[j] != '\n' && doc[j] != '\r'; j++ {
				if doc[j] != '\\' {
					continue
				}
				r, ok := hexEscape(doc[j:])
				if !ok || !utf16.IsSurrogate(r) {
					j++ // skip the escaped character
					continue
				}
				lo, ok := hexEscape(doc[j+6:])
				pair := utf16.DecodeRune(r, lo)
				if !ok || pair == utf8.RuneError {
					line, col = position(doc, j)
					return "", line, col, true
				}
				sb.WriteString(doc[last:j])
				sb.WriteRune(pair)
				j += 11
				last = j + 1
			}
			i = j
		}
	}
	if last == 0 {
		return doc, 0, 0, false
	}
	sb.WriteString(doc[last:])
	return sb.String(), 0, 0, false
}

// position is the 1-based line and column (in characters) of doc[i].
func position(doc string, i int) (line, col int) {
	start := strings.LastIndexAny(doc[:i], "\n\r") + 1
	return strings.Count(doc[:start], "\n") + 1, utf8.RuneCountInString(doc[start:i]) + 1
}
