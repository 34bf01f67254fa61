package graph

import (
	"strings"
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"90m":                  now.Add(-90 * time.Minute),
		"-24h":                 now.Add(-24 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
		"2026-11-22T06:00:00Z": time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		"2026-11-22":           time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		"2026-11-22 06:30:00":  time.Date(2026, 11, 22, 6, 30, 0, 0, time.UTC),
	} {
		got, err := ParseWhen("since", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseWhen(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "2024-13-45", "7days", "d"} {
		_, err := ParseWhen("until", in, now)
		if ErrorCode(err) != EINVALID || ErrorField(err) != "until" || !strings.HasPrefix(ErrorMessage(err), "until \""+in+"\" is not a time; ") {
			t.Errorf("ParseWhen(%q): %v (field %q)", in, err, ErrorField(err))
		}
	}
}
