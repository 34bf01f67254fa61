package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

// newRelationCmd is the `relation` group: update (relate and unrelate are verbs of their own).
func newRelationCmd(c *common) *cobra.Command {
	cmd := newGroupCmd("relation", "update a declared relation's attrs or ports",
		"want update (add with `devgraph relate`, remove with `devgraph unrelate`)",
		`  devgraph relation update rel:0190a4c2-… --attr colour=red --attr length=
  devgraph relation update rel:0190a4c2-… --to-port "MIDI IN 2"`)
	cmd.AddCommand(newRelationUpdateCmd(c))
	return cmd
}

type relationUpdateOptions struct {
	*common
	fromPort   string
	toPort     string
	attrs      []string
	clearAttrs bool
	dryRun     bool
	update     graph.RelationUpdate
}

func newRelationUpdateCmd(c *common) *cobra.Command {
	o := &relationUpdateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "update REL",
		Short: "change a declared relation's attrs (--attr k=v, k= drops k) or ports",
		Example: `  devgraph relation update rel:0190a4c2-… --attr colour=red --attr length=
  devgraph relation update rel:0190a4c2-… --clear-attrs --attr kind=usb --dry-run
  devgraph relation update rel:0190a4c2-… --from-port "" --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("from-port") {
				o.update.FromPort = &o.fromPort
			}
			if cmd.Flags().Changed("to-port") {
				o.update.ToPort = &o.toPort
			}
			if len(o.attrs) == 0 && !o.clearAttrs && o.update.FromPort == nil && o.update.ToPort == nil {
				return usagef("relation update: nothing to change; give --attr k=v, --clear-attrs, --from-port or --to-port")
			}
			return runRelationUpdate(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fromPort, "from-port", "", "the new port on FROM (\"\" clears it)")
	f.StringVar(&o.toPort, "to-port", "", "the new port on TO (\"\" clears it)")
	f.StringArrayVar(&o.attrs, "attr", nil, "set an attribute, `KEY=VALUE`; KEY= removes it (repeatable; the others stay)")
	f.BoolVar(&o.clearAttrs, "clear-attrs", false, "start from no attributes (then --attr adds)")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and write nothing")
	addJSON(cmd, c, "print the result as JSON")
	return cmd
}

func runRelationUpdate(ctx context.Context, o *relationUpdateOptions, id string, out io.Writer) error {
	changes, err := parseAttrs(o.attrs, true)
	if err != nil {
		return err
	}
	u := o.update
	u.DryRun = o.dryRun
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		if len(o.attrs) > 0 || o.clearAttrs {
			// The service replaces the whole map; a person names only the keys to change,
			// so read the map and send it back changed. Two people changing one
			// relation's attrs at once: the last one wins, as for any replace.
			cur, err := svc.FindRelationByID(ctx, id)
			if err != nil {
				return err
			}
			m := map[string]string{}
			if !o.clearAttrs {
				for k, v := range cur.Attrs {
					m[k] = v
				}
			}
			for k, v := range changes {
				if v == "" {
					delete(m, k)
				} else {
					m[k] = v
				}
			}
			u.Attrs = m
		}
		ch, err := svc.UpdateRelation(ctx, id, u)
		if err != nil {
			return err
		}
		return printChange(out, o.asJSON(), ch, "it already reads so, nothing written")
	})
}
