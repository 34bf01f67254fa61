//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// ttyColumns reports whether f is a terminal and, if so, its width in columns (0 when the
// terminal does not say, as a 0×0 pty does).
func ttyColumns(f *os.File) (cols int, tty bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
