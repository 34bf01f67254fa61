package main

import (
	"fmt"
	"io"
	"time"
)

// progressLine shows how far a long job (an import) has got, as done/total and a
// percentage: on a terminal one line refreshed in place (at most ten times a second),
// anywhere else (a pipe, a log file) only the last state, as one line when the job ends.
type progressLine struct {
	w     io.Writer
	what  string // "import"
	tty   bool
	now   func() time.Time
	last  time.Time
	shown bool
	done  int
	total int
}

func newProgressLine(w io.Writer, what string) *progressLine {
	return &progressLine{w: w, what: what, tty: columnsOf(w) > 0, now: time.Now}
}

func (p *progressLine) text() string {
	pct := 0
	if p.total > 0 {
		pct = int(int64(p.done) * 100 / int64(p.total))
	}
	return fmt.Sprintf("%s: %d/%d records (%d%%)", p.what, p.done, p.total, pct)
}

// update records the state and, on a terminal, redraws the line.
func (p *progressLine) update(done, total int) {
	p.done, p.total = done, total
	if !p.tty {
		return
	}
	if t := p.now(); p.last.IsZero() || t.Sub(p.last) >= 100*time.Millisecond || done == total {
		p.last = t
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.text())
		p.shown = true
	}
}

// finish ends the line: on a terminal it is drawn a last time and ended (so an error
// that follows has a line of its own); elsewhere it is printed once, when the job
// succeeded and reported anything.
func (p *progressLine) finish(ok bool) {
	switch {
	case p.tty && p.shown:
		fmt.Fprintf(p.w, "\r%s\x1b[K\n", p.text())
	case !p.tty && ok && p.total > 0:
		fmt.Fprintln(p.w, p.text())
	}
}
