//go:build !unix

package main

import "os"

// ttyColumns: tables are not fitted outside unix (discovery supports Linux only).
func ttyColumns(*os.File) (cols int, tty bool) { return 0, false }
