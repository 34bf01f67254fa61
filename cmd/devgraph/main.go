// Command devgraph keeps a persistent graph of the hardware around an agent. See the
// README for the verbs; `devgraph help` lists them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/devgraph/devgraph/internal/startgc"
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
	e := newEnv(os.Stdin, os.Stdout, os.Stderr)
	// The collector has been held since the process started (startgc): version ends
	// before it needs a collection, serve holds on until its first find, every other
	// verb ends the hold before it runs (root.go).
	e.endMainGC = startgc.Release
	code := e.run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
