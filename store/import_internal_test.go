package store

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// importLines across its buffer: lines longer than the buffer come back whole, blank
// lines empty, a last line without a newline too; a line past max is ELIMIT and one not
// starting with '{' EINVALID, both at once.
func TestImportLines(t *testing.T) {
	long := "{" + strings.Repeat("x", 50) + "}"
	in := " {a}\r\n\n" + long + "\n  \n{b}"
	l := &importLines{br: bufio.NewReaderSize(strings.NewReader(in), 16), max: 60}
	var got []string
	for {
		b, n, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
		_ = n
	}
	want := []string{"{a}", "", long, "", "{b}"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q", got, want)
	}

	l = &importLines{br: bufio.NewReaderSize(strings.NewReader("{}\n{"+strings.Repeat("x", 100)), 16), max: 60}
	if _, _, err := l.next(); err != nil {
		t.Fatal(err)
	}
	if _, n, err := l.next(); graph.ErrorCode(err) != graph.ELIMIT || n != 2 {
		t.Fatalf("line %d: %v; want ELIMIT on line 2", n, err)
	}

	l = &importLines{br: bufio.NewReaderSize(strings.NewReader("  \x00"+strings.Repeat("x", 100)), 16), max: 60}
	if _, n, err := l.next(); graph.ErrorCode(err) != graph.EINVALID || n != 1 {
		t.Fatalf("line %d: %v; want EINVALID on line 1", n, err)
	}
}

// The spool's bound may be as large as --max-size takes (math.MaxInt64 bytes) without
// its arithmetic overflowing.
func TestSpooler_LargestMax(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "spool")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &spooler{r: strings.NewReader("abc"), f: f, max: math.MaxInt64}
	if n, err := s.Read(make([]byte, 10)); n != 3 || err != nil {
		t.Fatalf("read %d, %v; want 3 bytes", n, err)
	}
}
