//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns stdin so that a read waiting on it can be ended (SIGINT, SIGTERM
// during import): a pipe, FIFO or socket is read through a non-blocking duplicate that
// Go's poller serves, which takes read deadlines; anything else (a regular file, read in
// place; a terminal) is returned as it is. The undo closes the duplicate and makes stdin
// blocking again.
func pollableStdin(f *os.File) (io.Reader, func(), error) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}, nil
	}
	fd := int(f.Fd())
	dup, err := syscall.Dup(fd)
	if err != nil {
		return f, func() {}, nil
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil { // the flag is the open file's: fd shares it
		syscall.Close(dup)
		return f, func() {}, nil
	}
	p := os.NewFile(uintptr(dup), f.Name())
	return p, func() {
		p.Close()
		_ = syscall.SetNonblock(fd, false)
	}, nil
}
