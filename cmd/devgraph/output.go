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

// table writes aligned columns a person can scan. Rows are kept until flush, which fits
// them to a terminal's width (fitRows) or, anywhere else, aligns them unchanged.
type table struct {
	w    io.Writer
	rows [][]cell
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w}
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

// row adds a row; a cell may be a cell (idCell: a full id with its slug), else it is
// printed with fmt.Sprint.
func (t *table) row(cells ...any) {
	out := make([]cell, len(cells))
	for i, c := range cells {
		v, ok := c.(cell)
		if !ok {
			v = cell{full: fmt.Sprint(c)}
		}
		v.full = cleanCell(v.full)
		if v.short != "" {
			v.short = cleanCell(v.short)
		}
		out[i] = v
	}
	t.rows = append(t.rows, out)
}

// cleanCell makes s one line without tabs (so columns stay aligned) and without control
// characters; empty is "-".
func cleanCell(s string) string {
	s = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
	s = escapeControls(s)
	if s == "" {
		s = "-"
	}
	return s
}

func (t *table) flush() error {
	rows := t.rows
	t.rows = nil
	if lines, ok := fitRows(rows, columnsOf(t.w)); ok {
		_, err := io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
		return err
	}
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		ss := make([]string, len(r))
		for i, c := range r {
			ss[i] = c.full
		}
		fmt.Fprintln(tw, strings.Join(ss, "\t"))
	}
	return tw.Flush()
}

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

// fmtAge says how long ago t was, in the largest whole unit: 45s, 12m, 5h, 3d; "-" for
// a zero time, "now" for the future (a clock set back).
func fmtAge(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
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

// fmtExplanation is a match's whole explanation on one line: its summary, then each
// reason that counted ("usb_id 0582:01a9 +0.30: model agrees"), for `unbound -o wide`.
func fmtExplanation(m *graph.Match) string {
	if m == nil {
		return "-"
	}
	parts := []string{m.Summary}
	for _, r := range m.Explanation {
		parts = append(parts, fmt.Sprintf("%s %s %+.2f: %s", r.Kind, r.Value, r.Weight, r.Note))
	}
	return strings.Join(parts, "; ")
}
