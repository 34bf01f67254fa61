package main

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/startgc"
	"github.com/devgraph/devgraph/mcptools"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/remote"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/sources"
	"github.com/devgraph/devgraph/sources/robot"
)

// closers are one running `devgraph serve`'s parts, closed in reverse order.
type closers struct {
	log  *slog.Logger
	list []namedCloser
}

type namedCloser struct {
	name string
	fn   func() error
}

func (c *closers) add(name string, fn func() error) { c.list = append(c.list, namedCloser{name, fn}) }

func (c *closers) close() {
	for i := len(c.list) - 1; i >= 0; i-- {
		nc := c.list[i]
		start := time.Now()
		if err := nc.fn(); err != nil {
			c.log.Warn("shutdown", "part", nc.name, "err", err)
		}
		c.log.Debug("stopped", "part", nc.name, "took", time.Since(start))
	}
	c.list = nil
}

// runtime is what the frontends (stdio, HTTP, relayed sessions) serve: the GraphQL
// executor and the MCP server.
type runtime struct {
	log  *slog.Logger
	exec *query.Executor
	mcp  *mcptools.Server

	svc      graph.Service
	mcpOpts  mcptools.Options
	roOnce   sync.Once
	mcpRO    *mcptools.Server // for relayed sessions of a `serve --read-only`
	mcpROErr error

	names    *search.Finder // the name index: find, graph_find, "did you mean"
	stopWarm func()         // ends warmFind's goroutine
	warmed   chan struct{}  // closed when it has ended
	endStart func()         // ends serve's hold on the collector; safe twice
	warmRest time.Duration  // warmRestAfter, unless a test sets another
}

// build makes the executor and the MCP server over svc, with the one name index (find,
// graph_find, "did you mean"): rt.names.
func (rt *runtime) build(svc graph.Service, notifier graph.Notifier, names graph.NameSource, robotEvents func(fn func(ref string)) func(), hosts graph.HostStatus, f *serveFlags) error {
	fleetHosts, _ := hosts.(graph.FleetHosts) // GraphQL hosts on a fleet
	// A fleet's front end: MCP withdraws its writing tools while the cluster is mid-upgrade.
	writable, _ := hosts.(graph.WriteState)
	exec, err := query.New(svc, query.Options{Limits: f.limits, Logger: rt.log, Finder: rt.names, Hosts: fleetHosts})
	if err != nil {
		return err
	}
	rt.exec = exec
	opts := mcptools.Options{ReadOnly: f.readOnly, Exec: exec, Finder: rt.names, Devices: names, Notifier: notifier, Logger: rt.log, Version: Version, MaxPage: f.limits.MaxPageSize, MaxHTTPSessions: f.mcpSessions, Toolsets: f.toolsets, Hosts: hosts,
		RobotEvents: robotEvents, Writable: writable}
	rt.mcp, err = mcptools.New(svc, opts)
	if err != nil {
		exec.Close()
		return err
	}
	rt.svc, rt.mcpOpts = svc, opts
	return nil
}

// session is the MCP server for a relayed session: for one that asks for read-only
// mode, the server itself when it is read-only, else a read-only one over the same
// service, built on first use.
func (rt *runtime) session(readOnly bool) (remote.StdioServer, error) {
	if !readOnly || rt.mcpOpts.ReadOnly {
		return rt.mcp, nil
	}
	rt.roOnce.Do(func() {
		opts := rt.mcpOpts
		opts.ReadOnly = true
		rt.mcpRO, rt.mcpROErr = mcptools.New(rt.svc, opts)
	})
	if rt.mcpROErr != nil {
		return nil, rt.mcpROErr
	}
	return rt.mcpRO, nil
}

// warmFind builds the name index for find now rather than on the first find; then,
// once a first find has been answered (or after warmRestAfter), it ends the start's
// hold on the collector (endStart) and builds what a find builds when it first needs it
// (the tags, the map a change needs): so an agent's first search pays for none of it
// and does not share the machine with it. Last it touches the heap's headroom
// (startgc.Prefault), so that the writes that follow find its pages mapped.
// stopWarmFind stops and waits for it.
func (rt *runtime) warmFind() {
	ctx, stop := context.WithCancel(context.Background())
	rt.stopWarm, rt.warmed = stop, make(chan struct{})
	go func() {
		defer close(rt.warmed)
		err := rt.names.Build(ctx)
		if err == nil {
			t := time.NewTimer(cmp.Or(rt.warmRest, warmRestAfter))
			defer t.Stop()
			select {
			case <-rt.names.Found():
			case <-t.C:
			case <-ctx.Done():
				return
			}
			rt.endStart()
			err = rt.names.Warm(ctx)
			if err == nil {
				startgc.Prefault()
			}
		}
		if err != nil && ctx.Err() == nil {
			rt.log.Warn("build the find index", "err", err)
		}
	}()
}

// warmRestAfter is how long warmFind waits for a first find before it warms the rest.
const warmRestAfter = time.Second

// stopWarmFind ends warmFind's goroutine and waits for it; safe twice.
func (rt *runtime) stopWarmFind() error {
	if rt.stopWarm != nil {
		rt.stopWarm()
		<-rt.warmed
	}
	rt.endStart()
	return nil
}

func (rt *runtime) close() error {
	rt.roOnce.Do(func() {}) // no read-only server is built after this
	if rt.mcpRO != nil {
		rt.mcpRO.Close()
	}
	if rt.mcp != nil {
		rt.mcp.Close()
	}
	if rt.exec != nil {
		rt.exec.Close()
	}
	return nil
}

// fleetEvents tells of the fleet's robot state changes by ref.
func fleetEvents(fleet *robot.Fleet) func(fn func(ref string)) func() {
	return func(fn func(ref string)) func() {
		return fleet.Subscribe(func(ref string, _ graph.RobotState) { fn(ref) })
	}
}

// fleet builds the robots: the demo world with --demo, plus every --sim-robot.
func (e *env) fleet(f *serveFlags, st graph.RobotStore, log *slog.Logger) (*robot.Fleet, error) {
	opts := robot.Options{Store: st, Logger: log}
	var fleet *robot.Fleet
	var err error
	if f.demo {
		fleet, err = robot.DemoFleet(opts)
	} else {
		fleet, err = robot.NewFleet(opts)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range f.simRobots {
		if err := fleet.AddSimSpec(s); err != nil {
			return nil, err
		}
	}
	return fleet, nil
}

// The fleet is one of the sources Live reads.
var _ sources.Source = (*robot.Fleet)(nil)
