package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type bindOptions struct {
	*common
	newName string
	slug    string
	move    bool
	force   bool
	dryRun  bool
}

func newBindCmd(c *common) *cobra.Command {
	o := &bindOptions{common: c}
	cmd := &cobra.Command{
		Use:   "bind REF (IDENTITY | --new NAME [--slug S])",
		Short: "bind a device to an identity: bind REF (IDENTITY | --new NAME)",
		Example: `  devgraph bind usb:3-3.2 --new "Roland JD-Xi"
  devgraph bind usb:3-3.2 roland-jd-xi -m "re-plugged on the front hub"
  devgraph bind usb:3-3.1 minilogue --move --dry-run
  devgraph bind usb:3-4.1 jdxi --force      # another model: only if it truly is the same thing`,
		Args: nargs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBind(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.newName, "new", "", "create a new identity with this name")
	f.StringVar(&o.slug, "slug", "", "the new identity's slug (with --new)")
	f.BoolVar(&o.move, "move", false, "move unit hints (serials) another identity holds instead of failing")
	f.BoolVar(&o.force, "force", false, "bind even though the device's model or unit contradicts the identity's hints")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and write nothing")
	addJSON(cmd, c, "print the result as JSON")
	return cmd
}

func runBind(ctx context.Context, o *bindOptions, pos []string, out io.Writer) error {
	e := o.e
	in := graph.BindInput{NewName: o.newName, Slug: o.slug, Move: o.move, Force: o.force, DryRun: o.dryRun}
	switch {
	case o.newName != "":
		if len(pos) == 2 {
			in.IdentityID = pos[1] // both: the service refuses it as every interface does
		}
	default:
		if len(pos) == 1 {
			return usagef("bind: give an IDENTITY to bind %s to, or --new NAME to create one", pos[0])
		}
		in.IdentityID = pos[1]
	}
	if o.slug != "" && o.newName == "" {
		return usagef("bind: --slug goes with --new NAME")
	}
	in.Ref = pos[0]
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		res, err := svc.Bind(ctx, in)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, res)
		}
		printBind(out, res)
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
