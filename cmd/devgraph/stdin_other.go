//go:build !unix

package main

import (
	"io"
	"os"
)

// pollableStdin returns stdin as it is where reads cannot be given deadlines.
func pollableStdin(f *os.File) (io.Reader, func(), error) { return f, func() {}, nil }
