package main

import (
	"context"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type devicesOptions struct {
	*common
	all    bool
	source string
	limit  int
	after  string
	watch  bool
}

func newDevicesCmd(c *common) *cobra.Command {
	o := &devicesOptions{common: c}
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "list present devices (--all: remembered ones too) with their match",
		Example: `  devgraph devices
  devgraph devices --all
  devgraph devices --source usb -o wide
  devgraph --demo devices --json
  devgraph devices --watch`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDevices(cmd.Context(), o, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.all, "all", false, "also list remembered devices that are not plugged in")
	f.StringVar(&o.source, "source", "", "only devices this source sees (usb, alsa, pipewire, robot)")
	f.IntVar(&o.limit, "limit", graph.MaxPageSize, "how many to list (at most 500)")
	f.StringVar(&o.after, "after", "", "continue after this cursor")
	f.BoolVarP(&o.watch, "watch", "w", false, "after the list, print each device that appears, disappears, is bound or unbound, as it happens (through a running server; Ctrl-C ends)")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runDevices(ctx context.Context, o *devicesOptions, out io.Writer) error {
	e := o.e
	if o.watch {
		return e.watchDevices(ctx, o.common, o.all, o.asJSON(), out)
	}
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		devs, total, next, err := svc.Devices(ctx, graph.DeviceFilter{All: o.all, Source: o.source, First: graph.ClampFirst(o.limit), After: o.after})
		if err != nil {
			return err
		}
		warnSources(ctx, e, svc)
		return writePage(e, o.asJSON(), devs, total, next, func(w io.Writer, devs []*graph.DeviceView) error {
			return printDeviceTable(w, devs, o.all, o.wide, time.Now())
		})
	})
}

// printDeviceTable prints devices: with all, whether each is present and its AGE (since
// last seen), SOURCES then going to -o wide; wide adds LAST SEEN in UTC. HOST, the machine
// each device is attached to, shows in wide and whenever the devices span several hosts
// or one's host is offline (a fleet host whose lease expired: "studio-b (offline)", its
// devices shown as it last recorded them, not unplugged).
func printDeviceTable(w io.Writer, devs []*graph.DeviceView, all, wide bool, now time.Time) error {
	sources := !all || wide
	hosts := wide || manyHosts(devs) || slices.ContainsFunc(devs, func(d *graph.DeviceView) bool { return d.HostOffline })
	cols := []string{"REF"}
	if hosts {
		cols = append(cols, "HOST")
	}
	cols = append(cols, "NAME")
	if sources {
		cols = append(cols, "SOURCES")
	}
	cols = append(cols, "IDENTITY", "MATCH")
	if all {
		cols = append(cols, "PRESENT", "AGE")
		if wide {
			cols = append(cols, "LAST SEEN")
		}
	}
	t := newTable(w, cols...)
	for _, d := range devs {
		cells := []any{d.Ref}
		if hosts {
			h := hostCell(d.Host)
			if d.HostOffline {
				h += " (offline)"
			}
			cells = append(cells, h)
		}
		cells = append(cells, clip(d.Name, 36))
		if sources {
			cells = append(cells, joinOr(d.Sources, d.Source))
		}
		cells = append(cells, identityCell(d), fmtScore(d.Match))
		if all {
			cells = append(cells, yesNo(d.Present), fmtAge(now, d.LastSeen))
			if wide {
				cells = append(cells, fmtTime(d.LastSeen))
			}
		}
		t.row(cells...)
	}
	return t.flush()
}

// manyHosts reports whether devs are attached to more than one host.
func manyHosts(devs []*graph.DeviceView) bool {
	for _, d := range devs {
		if d.Host != devs[0].Host {
			return true
		}
	}
	return false
}

// hostCell is a device's host, "-" for a record older than hosts.
func hostCell(h string) string {
	if h == "" {
		return "-"
	}
	return h
}
