package graph

import (
	"strings"
	"unicode/utf8"
)

// EditDistance is the Levenshtein distance between a and b, counted in runes (bytes when
// both are ASCII, which gives the same answer faster). When max > 0 it stops early and
// returns max once the distance is known to be at least max, so a caller looking for
// near misses among many names pays only for the close ones. It is the one edit
// distance devgraph uses: "did you mean" suggestions for ids, robot names and slugs.
func EditDistance(a, b string, max int) int {
	if isASCII(a) && isASCII(b) {
		return editDistance([]byte(a), []byte(b), max)
	}
	return editDistance([]rune(a), []rune(b), max)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func editDistance[T byte | rune](a, b []T, max int) int {
	if max > 0 {
		if d := len(a) - len(b); d >= max || -d >= max {
			return max
		}
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			rowMin = min(rowMin, cur[j])
		}
		if max > 0 && rowMin >= max {
			return max
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean returns "; did you mean X?" for the candidate closest to s (letter case
// ignored), or "" when none is close: the suggestion an unknown name's error ends with.
func DidYouMean(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := EditDistance(strings.ToLower(s), strings.ToLower(c), 0); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(3, len(best)/2) {
		return ""
	}
	return "; did you mean " + best + "?"
}
