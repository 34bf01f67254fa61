package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// warnSources prints one line on stderr for each source that could not be read (which,
// why, and where to look further), so a listing of devices is never silently short. A
// source that answered with warnings is doctor's to show, not this.
func warnSources(ctx context.Context, e *env, svc graph.Service) {
	sts, err := svc.Sources(ctx)
	if err != nil {
		return
	}
	for _, s := range sts {
		if s.OK {
			continue
		}
		why := strings.TrimPrefix(s.Error, s.Name+": ")
		if why == "" {
			why = "no reason given"
		}
		fmt.Fprintf(e.stderr, "devgraph: source %s unavailable: %s; run devgraph doctor for more\n", s.Name, escapeControls(why))
	}
}
