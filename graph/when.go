package graph

import (
	"strconv"
	"strings"
	"time"
)

// ParseWhen reads a time a user typed for a changelog bound (since, until, before): a
// duration back from now ("90m", "24h", "7d"), an RFC 3339 time or a date (UTC), the same
// forms and the same refusal on every interface. "" is the zero time: no bound.
func ParseWhen(field, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n < 100000 {
			return now.UTC().AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			d = -d // "-24h" means 24 hours ago too
		}
		return now.UTC().Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, FieldErrorf(EINVALID, field, "%s %q is not a time; give a duration back from now (30m, 24h, 7d), an RFC 3339 time (2026-11-22T06:00:00Z) or a date (2026-11-22)", field, truncateText(s, 64))
}

// truncateText cuts s to at most n bytes on a rune boundary, marking the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
