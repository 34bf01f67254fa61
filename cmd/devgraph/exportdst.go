package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"

	"github.com/devgraph/devgraph/graph"
)

// exportTo writes fn's output to dst for export FILE. A new file, or a regular one
// (through any symlinks, which stay), is written atomically (writeAtomically renames a
// temp file over it). Anything else there — a device such as /dev/null or /dev/stdout, a
// pipe — is written straight into and never replaced: renaming over it turned
// /dev/full into a regular file and reported success.
func exportTo(dst string, fn func(w io.Writer) (int64, error)) (int64, error) {
	fi, err := os.Stat(dst)
	switch {
	case os.IsNotExist(err):
		return writeAtomically(dst, fn)
	case err != nil:
		return 0, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
	case fi.IsDir():
		return 0, graph.Errorf(graph.EINVALID, "cannot write %s: it is a directory; give a file name", dst)
	case fi.Mode().IsRegular():
		if real, err := filepath.EvalSymlinks(dst); err == nil {
			dst = real
		}
		return writeAtomically(dst, fn)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		return 0, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := fn(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && graph.ErrorCode(err) == graph.EINTERNAL {
		return n, graph.Errorf(graph.EINVALID, "cannot write %s: %v", dst, unwrapPath(err))
	}
	return n, err
}
