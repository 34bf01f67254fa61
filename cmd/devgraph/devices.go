package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type devicesOptions struct {
	*common
	all    bool
	source string
	limit  int
	after  string
}

func newDevicesCmd(c *common) *cobra.Command {
	o := &devicesOptions{common: c}
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "list present devices (--all: remembered ones too) with their match",
		Example: `  devgraph devices
  devgraph devices --all
  devgraph devices --source usb -o wide
  devgraph --demo devices --json`,
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
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runDevices(ctx context.Context, o *devicesOptions, out io.Writer) error {
	e := o.e
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		devs, total, next, err := svc.Devices(ctx, graph.DeviceFilter{All: o.all, Source: o.source, First: graph.ClampFirst(o.limit), After: o.after})
		if err != nil {
			return err
		}
		warnSources(ctx, e, svc)
		return writePage(e, o.asJSON(), devs, total, next, func(w io.Writer, devs []*graph.DeviceView) error {
			return printDeviceTable(w, devs, o.all)
		})
	})
}

func printDeviceTable(w io.Writer, devs []*graph.DeviceView, all bool) error {
	cols := []string{"REF", "NAME", "SOURCES", "IDENTITY", "MATCH"}
	if all {
		cols = append(cols, "PRESENT", "LAST SEEN")
	}
	t := newTable(w, cols...)
	for _, d := range devs {
		ident := "-"
		switch {
		case d.Infra:
			ident = "(hub)"
		case d.BoundTo != "":
			ident = d.BoundTo
			if d.BoundBy == "match" {
				ident += " (match)"
			}
		}
		cells := []any{d.Ref, clip(d.Name, 36), joinOr(d.Sources, d.Source), ident, fmtScore(d.Match)}
		if all {
			cells = append(cells, yesNo(d.Present), fmtTime(d.LastSeen))
		}
		t.row(cells...)
	}
	return t.flush()
}
