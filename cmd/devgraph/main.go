// Command devgraph keeps a persistent graph of the hardware around an agent. See the
// README for the verbs; `devgraph help` lists them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// At the file size limit (ulimit -f) the kernel sends SIGXFSZ, whose default action
	// kills; ignored, the write fails with EFBIG and the store refuses that one change
	// with a clear error. The Go runtime ignores it already; this makes it explicit.
	signal.Ignore(syscall.SIGXFSZ)
	// The first SIGINT or SIGTERM cancels ctx: the command stops cleanly (an import rolls
	// back, serve stops its robots). A second one ends the process the default way, in
	// case something does not stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
