package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTable_Fit(t *testing.T) {
	build := func(w *bytes.Buffer, cols int) *table {
		var out io.Writer = w
		if cols > 0 {
			out = &fitted{Writer: w, cols: cols}
		}
		tb := newTable(out, "ID", "NAME", "WHY")
		tb.row(idCell("identity:roland-jd-xi"), "Roland JD-Xi", "model 0582:01a9 and the ALSA card id JDXi agree; no other identity holds them")
		tb.row(idCell("identity:scout"), "Scout", "unit serial SCOUT1")
		return tb
	}
	t.Run("Pipe", func(t *testing.T) {
		var b bytes.Buffer
		if err := build(&b, 0).flush(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "identity:roland-jd-xi  Roland JD-Xi  model 0582:01a9 and the ALSA card id JDXi agree; no other identity holds them\n") {
			t.Fatalf("a pipe got a changed line:\n%s", b.String())
		}
	})
	t.Run("Fits", func(t *testing.T) {
		for _, cols := range []int{80, 60, 40} {
			var b bytes.Buffer
			if err := build(&b, cols).flush(); err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if n := utf8.RuneCountInString(l); n > cols {
					t.Fatalf("cols=%d: line of %d: %q", cols, n, l)
				}
			}
			got := b.String()
			if strings.Contains(got, "identity:") || !strings.Contains(got, "roland-jd-xi") || !strings.Contains(got, "…") {
				t.Fatalf("cols=%d: want slugs and a shortened why:\n%s", cols, got)
			}
		}
	})
	t.Run("WideEnough", func(t *testing.T) {
		var a, b bytes.Buffer
		build(&a, 0).flush()
		build(&b, 200).flush()
		if a.String() != b.String() {
			t.Fatalf("a table that fits changed:\n%s\nvs\n%s", a.String(), b.String())
		}
	})
}

func TestFmtAge(t *testing.T) {
	mustTime := func(t *testing.T, s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	now := mustTime(t, "2026-11-28T12:00:00Z")
	for _, c := range []struct{ at, want string }{
		{"2026-11-28T11:59:15Z", "45s"}, {"2026-11-28T11:48:00Z", "12m"}, {"2026-11-28T07:00:00Z", "5h"},
		{"2026-11-25T12:00:00Z", "3d"}, {"2026-11-28T12:00:05Z", "now"},
	} {
		if got := fmtAge(now, mustTime(t, c.at)); got != c.want {
			t.Fatalf("fmtAge(%s)=%q, want %q", c.at, got, c.want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	t.Run("Pipe", func(t *testing.T) {
		var b bytes.Buffer
		p := newProgressLine(&b, "import")
		p.update(1000, 4000)
		p.update(4000, 4000)
		if b.Len() != 0 {
			t.Fatalf("a pipe got progress before the end: %q", b.String())
		}
		if p.finish(false); b.Len() != 0 {
			t.Fatalf("a failed job printed progress in a pipe: %q", b.String())
		}
		p.finish(true)
		if got, want := b.String(), "import: 4000/4000 records (100%)\n"; got != want {
			t.Fatalf("pipe: %q, want %q", got, want)
		}
	})
	t.Run("Terminal", func(t *testing.T) {
		var b bytes.Buffer
		p := newProgressLine(&fitted{Writer: &b, cols: 80}, "import")
		clock := time.Unix(0, 0)
		p.now = func() time.Time { clock = clock.Add(time.Second); return clock }
		p.update(1000, 4000)
		p.update(3000, 4000)
		p.finish(true)
		want := "\rimport: 1000/4000 records (25%)\x1b[K\rimport: 3000/4000 records (75%)\x1b[K\rimport: 3000/4000 records (75%)\x1b[K\n"
		if got := b.String(); got != want {
			t.Fatalf("terminal: %q, want %q", got, want)
		}
	})
}
