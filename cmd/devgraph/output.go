package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// list is the stable --json shape of every listing (documented in the README).
type list[T any] struct {
	Items []T    `json:"items"`
	Total int    `json:"total"`
	Next  string `json:"next,omitempty"` // cursor of the next page; pass it as --after
}

// writePage prints one page of a listing on stdout: with asJSON as a list (items, total,
// next cursor), else through table, then the next-page footer on stderr.
func writePage[T any](e *env, asJSON bool, items []T, total int, next string, table func(io.Writer, []T) error) error {
	if asJSON {
		return writeJSON(e.stdout, list[T]{Items: nonNil(items), Total: total, Next: next})
	}
	if err := table(e.stdout, items); err != nil {
		return err
	}
	e.footer(len(items), total, next)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table writes aligned columns a person can scan.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(toAny(header)...)
	return t
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (t *table) row(cells ...any) {
	ss := make([]string, len(cells))
	for i, c := range cells {
		s := fmt.Sprint(c)
		// A cell is one line without tabs, so columns stay aligned.
		s = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
		s = escapeControls(s)
		if s == "" {
			s = "-"
		}
		ss[i] = s
	}
	fmt.Fprintln(t.tw, strings.Join(ss, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// escapeControls shows each control character of s as an escape (\x1b, \u009b): names,
// notes and messages anyone may write (an agent over MCP) must not drive the reader's
// terminal (retitle it, hide or clear text).
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&sb, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func fmtScore(m *graph.Match) string {
	if m == nil || m.Confidence == "" {
		return "-"
	}
	s := fmt.Sprintf("%.2f %s", m.Score, m.Confidence)
	if m.Ambiguous {
		s += " (ambiguous)"
	}
	return s
}

func fmtFingerprints(fps []graph.Fingerprint) string {
	if len(fps) == 0 {
		return "-"
	}
	return graph.FormatFingerprints(fps)
}

func joinOr(ss []string, empty string) string {
	if len(ss) == 0 {
		return empty
	}
	return strings.Join(ss, " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
