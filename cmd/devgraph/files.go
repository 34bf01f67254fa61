package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

func writeAtomically(dst string, fn func(w io.Writer) (int64, error)) (int64, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return 0, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
	}
	tmp := f.Name()
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		if graph.ErrorCode(err) == graph.EINTERNAL {
			return n, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
		}
		return n, err
	}
	return n, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// formatOf picks the export format from a file's extension: jsonl unless it names a
// picture.
func formatOf(file string) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".dot", ".gv":
		return "dot"
	case ".mmd", ".mermaid":
		return "mermaid"
	}
	return "jsonl"
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// eofReader notes when its reader has been read to the end (by the transport's own
// goroutine).
type eofReader struct {
	r   io.Reader
	eof atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof.Store(true)
	}
	return n, err
}

var errImportInterrupted = graph.Errorf(graph.EUNAVAILABLE, "import interrupted; nothing was imported")

// openInput opens what import (and query -f) reads: stdin for "-", else the file. A
// pipe or FIFO is made pollable, so a read waiting on it ends when ctx does (SIGINT,
// SIGTERM); opening a FIFO that no writer has opened yet waits for one, or for ctx.
func openInput(ctx context.Context, stdin io.Reader, name string) (io.Reader, func(), error) {
	if name == "-" {
		return pollableReader(stdin)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(err))
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(err))
		}
		return f, func() { f.Close() }, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(name) // blocks until a writer opens the FIFO
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, nil, graph.Errorf(graph.ENOTFOUND, "cannot read %s: %v", name, unwrapPath(o.err))
		}
		return o.f, func() { o.f.Close() }, nil
	case <-ctx.Done():
		// Be the writer the open waits for, so it returns, then close both ends.
		if w, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
		return nil, nil, ctx.Err()
	}
}

// endReadsWith makes a read of r waiting on a pipe end when ctx does, for readers that
// take deadlines (a pollable *os.File); the returned func undoes it.
func endReadsWith(ctx context.Context, r io.Reader) func() bool {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
		return context.AfterFunc(ctx, func() { _ = d.SetReadDeadline(time.Unix(1, 0)) })
	}
	return func() bool { return true }
}

// sizeFlag is a byte count given as 4294967296, 4G, 4GiB, 512M, 64K …
type sizeFlag int64

func (s *sizeFlag) String() string { return store.FormatSize(int64(*s)) }

func (s *sizeFlag) Type() string { return "SIZE" }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// parseSize reads a positive byte count: digits, optionally followed by K, M, G or T
// (powers of 1024, with or without "iB" or "B").
func parseSize(v string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(v))
	t = strings.TrimSuffix(t, "B")
	if u, ok := strings.CutSuffix(t, "I"); ok && u != "" && strings.IndexByte("KMGT", u[len(u)-1]) >= 0 {
		t = u // KiB, MiB …: an "i" only after a unit
	}
	shift := 0
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size; want bytes or a number with K, M, G or T, e.g. 512M or 4G", v)
	}
	return n << shift, nil
}
