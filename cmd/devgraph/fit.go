package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tables fit the terminal they are printed on: a table wider than the terminal keeps its
// rows on one line each by showing slugs for full ids and shortening its widest cells
// with "…". Printed anywhere else (a pipe, a file) a table's lines are whole and
// unchanged, so scripts and goldens read what they always read.

// sizedWriter is an output with a width tables fit (0: none).
type sizedWriter interface {
	io.Writer
	Columns() int
}

// fitted is stdout with the width to fit.
type fitted struct {
	io.Writer
	cols int
}

func (f *fitted) Columns() int { return f.cols }

// fitTo returns w as tables should see it: a terminal with its width ($COLUMNS when it is
// a positive number, else the size the terminal reports, else 80); anything else as it is.
func fitTo(w io.Writer, getenv func(string) string) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return w
	}
	cols, tty := ttyColumns(f)
	if !tty {
		return w
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		cols = n
	}
	if cols <= 0 {
		cols = 80
	}
	return &fitted{Writer: w, cols: cols}
}

// columnsOf is the width w's tables fit, 0 for none.
func columnsOf(w io.Writer) int {
	if s, ok := w.(sizedWriter); ok {
		return s.Columns()
	}
	return 0
}

// cell is what a table shows in one place: full, and short when the table must narrow
// (a slug for a full id); short "" means full is all there is. keep marks text a person
// types back (a relation id): its column is never shortened with "…".
type cell struct {
	full, short string
	keep        bool
}

// idCell shows a node id, or only its local part (the slug of identity:<slug>, the key of
// device:<key>) when the table must narrow; a bare slug or key resolves like the full id
// everywhere.
func idCell(id string) cell {
	for _, p := range []string{"identity:", "device:"} {
		if local, ok := strings.CutPrefix(id, p); ok && local != "" {
			return cell{full: id, short: local}
		}
	}
	return cell{full: id}
}

func width(s string) int { return utf8.RuneCountInString(s) }

// fitRows renders rows (the header first) into lines no wider than cols: the short forms
// first, then the widest columns shortened one rune at a time, none below its header's
// width (or 4) unless it is narrower anyway. ok is false when the rows fit as they are
// (then the caller prints them unchanged).
func fitRows(rows [][]cell, cols int) (lines []string, ok bool) {
	if cols <= 0 || len(rows) == 0 {
		return nil, false
	}
	n := len(rows[0])
	text := func(short bool) [][]string {
		out := make([][]string, len(rows))
		for r, row := range rows {
			out[r] = make([]string, n)
			for i := 0; i < n && i < len(row); i++ {
				out[r][i] = row[i].full
				if short && row[i].short != "" {
					out[r][i] = row[i].short
				}
			}
		}
		return out
	}
	widths := func(t [][]string) ([]int, int) {
		w := make([]int, n)
		for _, row := range t {
			for i, s := range row {
				w[i] = max(w[i], width(s))
			}
		}
		total := 2 * (n - 1)
		for _, x := range w {
			total += x
		}
		return w, total
	}
	t := text(false)
	if _, total := widths(t); total <= cols {
		return nil, false
	}
	t = text(true)
	w, total := widths(t)
	if total > cols {
		floor := make([]int, n)
		for i := range floor {
			floor[i] = min(w[i], max(width(t[0][i]), 4))
		}
		for _, row := range rows {
			for i := 0; i < n && i < len(row); i++ {
				if row[i].keep {
					floor[i] = w[i]
				}
			}
		}
		for total > cols {
			best := -1
			for i := range w {
				if w[i] > floor[i] && (best < 0 || w[i] > w[best]) {
					best = i
				}
			}
			if best < 0 {
				break // as narrow as it gets
			}
			w[best]--
			total--
		}
	}
	for _, row := range t {
		var sb strings.Builder
		for i, s := range row {
			s = clip(s, w[i])
			sb.WriteString(s)
			if i < n-1 {
				sb.WriteString(strings.Repeat(" ", w[i]-width(s)+2))
			}
		}
		lines = append(lines, strings.TrimRight(sb.String(), " "))
	}
	return lines, true
}

// writeWrapped writes text; on a terminal each line wider than it is broken at spaces,
// its continuations indented under the line's own indentation, so a trace, a path or a
// sentence reads whole without running past the edge. Elsewhere text is written as it is.
func writeWrapped(w io.Writer, text string) error {
	cols := columnsOf(w)
	if cols <= 0 {
		_, err := io.WriteString(w, text)
		return err
	}
	var sb strings.Builder
	lines := strings.SplitAfter(text, "\n")
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if width(l) <= cols {
			sb.WriteString(l)
		} else {
			body := strings.TrimLeft(l, " │├└─")
			indent := strings.Repeat(" ", width(l)-width(body)) + "    "
			if width(indent) > cols/2 {
				indent = "    "
			}
			cur := l[:len(l)-len(body)]
			first := true
			for _, word := range strings.Split(body, " ") {
				switch {
				case first:
					cur += word
					first = false
				case width(cur)+1+width(word) <= cols:
					cur += " " + word
				default:
					sb.WriteString(cur + "\n")
					cur = indent + word
				}
			}
			sb.WriteString(cur)
		}
		if nl {
			sb.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
