package main

import (
	"context"
	"fmt"
	"io"

	"github.com/devgraph/devgraph/graph"
)

func runDevices(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("devices", "[--all] [--source S] [--limit N] [--after CURSOR] [--json]", true)
	jsonOut := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "also list remembered devices that are not plugged in")
	source := fs.String("source", "", "only devices this source sees (usb, alsa, pipewire, robot)")
	limit := fs.Int("limit", graph.MaxPageSize, "how many to list (at most 500)")
	after := fs.String("after", "", "continue after this cursor")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		devs, total, next, err := svc.Devices(ctx, graph.DeviceFilter{All: *all, Source: *source, First: graph.ClampFirst(*limit), After: *after})
		if err != nil {
			return err
		}
		return writePage(e, *jsonOut, devs, total, next, func(w io.Writer, devs []*graph.DeviceView) error {
			return printDeviceTable(w, devs, *all)
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

func runUnbound(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("unbound", "[--json]", true)
	jsonOut := fs.Bool("json", false, "print JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		devs, err := svc.Unbound(ctx)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, list[*graph.DeviceView]{Items: nonNil(devs), Total: len(devs)})
		}
		t := newTable(e.stdout, "REF", "NAME", "BEST CANDIDATE", "MATCH", "WHY", "FINGERPRINTS")
		for _, d := range devs {
			cand, why := "-", "-"
			if d.Match != nil {
				if d.Match.IdentityID != "" {
					cand = d.Match.IdentityID
				}
				if d.Match.Summary != "" {
					why = clip(d.Match.Summary, 80)
				}
			}
			t.row(d.Ref, clip(d.Name, 32), cand, fmtScore(d.Match), why, fmtFingerprints(d.Fingerprints))
		}
		if err := t.flush(); err != nil {
			return err
		}
		if len(devs) > 0 {
			fmt.Fprintf(e.stderr, "bind one with: devgraph bind REF --new \"NAME\" (or bind REF IDENTITY)\n")
		}
		return nil
	})
}

func runBind(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("bind", "REF (IDENTITY | --new NAME [--slug S]) [--move] [--force] [--dry-run] [-m WHY] [--json]", true)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	newName := fs.String("new", "", "create a new identity with this name")
	slug := fs.String("slug", "", "the new identity's slug (with --new)")
	move := fs.Bool("move", false, "move unit hints (serials) another identity holds instead of failing")
	force := fs.Bool("force", false, "bind even though the device's model or unit contradicts the identity's hints")
	dry := fs.Bool("dry-run", false, "show what would change and write nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	in := graph.BindInput{NewName: *newName, Slug: *slug, Move: *move, Force: *force, DryRun: *dry}
	switch {
	case *newName != "":
		if err := nargs(fs, pos, 1, 2); err != nil {
			return err
		}
		if len(pos) == 2 {
			in.IdentityID = pos[1] // both: the service refuses it as every interface does
		}
	default:
		if len(pos) == 1 {
			return usagef("bind: give an IDENTITY to bind %s to, or --new NAME to create one", pos[0])
		}
		if err := nargs(fs, pos, 2, 2); err != nil {
			return err
		}
		in.IdentityID = pos[1]
	}
	if *slug != "" && *newName == "" {
		return usagef("bind: --slug goes with --new NAME")
	}
	in.Ref = pos[0]
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		res, err := svc.Bind(ctx, in)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, res)
		}
		printBind(e.stdout, res)
		return nil
	})
}

func printBind(w io.Writer, r *graph.BindResult) {
	dev, ident := "?", "?"
	if r.Device != nil {
		dev = r.Device.Ref
	}
	if r.Identity != nil {
		ident = r.Identity.ID
	}
	if r.AlreadyBound {
		fmt.Fprintf(w, "already bound %s to %s; nothing changed\n", dev, ident)
		return
	}
	verb := "bound"
	if r.DryRun {
		verb = "would bind"
	}
	created := ""
	if r.Created {
		created = " (new)"
	}
	fmt.Fprintf(w, "%s %s to %s%s\n", verb, dev, ident, created)
	if len(r.HintsAdded) > 0 {
		fmt.Fprintf(w, "hints added: %s\n", graph.FormatFingerprints(r.HintsAdded))
	}
	if len(r.HintsMoved) > 0 {
		fmt.Fprintf(w, "hints moved: %s\n", graph.FormatFingerprints(r.HintsMoved))
	}
	for _, c := range r.Conflicts {
		fmt.Fprintf(w, "conflict: %s\n", c)
	}
	if r.Match != nil {
		how := r.Match.Summary
		if how == "" {
			how = fmtScore(r.Match)
		}
		fmt.Fprintf(w, "match afterwards: %s\n", how)
	}
}

func runUnbind(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("unbind", "REF [-m WHY] [--json]", true)
	jsonOut := fs.Bool("json", false, "print the device as JSON")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		d, err := svc.Unbind(ctx, pos[0])
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, d)
		}
		fmt.Fprintf(e.stdout, "unbound %s (%s)\n", d.Ref, d.ID)
		return nil
	})
}
