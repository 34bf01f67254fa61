package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

const identityWant = "want create, rename, update, delete, merge or restore"

func newIdentityCmd(c *common) *cobra.Command {
	cmd := newGroupCmd("identity", "create|rename|update|delete|merge|restore an identity", identityWant,
		`  devgraph identity create "Roland JD-Xi" --tag role:synth
  devgraph identity rename roland-jd-xi "JD-Xi (desk)"
  devgraph identity merge jdxi-old roland-jd-xi`)
	cmd.AddCommand(
		newIdentityCreateCmd(c),
		newIdentitySimpleCmd(c, "rename ID NAME", "rename an identity", 2,
			`  devgraph identity rename roland-jd-xi "JD-Xi (desk)"`,
			func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
				id, err := svc.RenameIdentity(ctx, p[0], p[1])
				return id, "renamed", err
			}),
		newIdentityUpdateCmd(c),
		newIdentitySimpleCmd(c, "delete ID", "delete an identity (restore brings it back)", 1,
			`  devgraph identity delete old-synth -m "sold"`,
			func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
				id, err := svc.ResolveID(ctx, p[0], graph.KindIdentity)
				if err != nil {
					return nil, "", err
				}
				before, err := svc.FindIdentityByID(ctx, id, graph.IdentityParts{})
				if err != nil {
					return nil, "", err
				}
				return before, "deleted", svc.DeleteIdentity(ctx, id)
			}),
		newIdentitySimpleCmd(c, "merge FROM INTO", "merge one identity into another", 2,
			`  devgraph identity merge jdxi-old roland-jd-xi -m "the same synth"`,
			func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
				id, err := svc.MergeIdentities(ctx, p[0], p[1])
				return id, "merged " + p[0] + " into", err
			}),
		newIdentitySimpleCmd(c, "restore ID", "bring back a deleted identity", 1,
			`  devgraph identity restore old-synth`,
			func(ctx context.Context, svc graph.Service, p []string) (*graph.Identity, string, error) {
				id, err := svc.RestoreIdentity(ctx, p[0])
				return id, "restored", err
			}),
	)
	return cmd
}

// identityFunc does one identity subcommand and says what it did ("renamed").
type identityFunc func(ctx context.Context, svc graph.Service, pos []string) (*graph.Identity, string, error)

func newIdentitySimpleCmd(c *common, use, short string, n int, example string, fn identityFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    nargs(n, n),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIdentitySimple(cmd.Context(), c, args, fn, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print the identity as JSON")
	return cmd
}

func runIdentitySimple(ctx context.Context, o *common, pos []string, fn identityFunc, out io.Writer) error {
	return o.e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		id, verb, err := fn(ctx, svc, pos)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, id)
		}
		fmt.Fprintf(out, "%s %s (%s)\n", verb, id.ID, id.Name)
		return nil
	})
}

type identityCreateOptions struct {
	*common
	slug  string
	data  string
	hints []string
	tags  []string
}

func newIdentityCreateCmd(c *common) *cobra.Command {
	o := &identityCreateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "create an identity (--slug, --data, --hint, --tag)",
		Example: `  devgraph identity create "Roland JD-Xi"
  devgraph identity create "Korg Minilogue" --slug minilogue --hint usb_id=0944:010f --tag role:synth
  devgraph identity create "Desk lamp" --data '{"room":"studio"}' --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIdentityCreate(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.slug, "slug", "", "the id's slug (default: made from the name)")
	f.StringVar(&o.data, "data", "", "free-form JSON object")
	f.StringArrayVar(&o.hints, "hint", nil, "a hint, `KIND=VALUE` (repeatable)")
	f.StringArrayVar(&o.tags, "tag", nil, "a tag, `NS:VALUE` (repeatable)")
	addJSON(cmd, c, "print the identity as JSON")
	return cmd
}

func runIdentityCreate(ctx context.Context, o *identityCreateOptions, name string, out io.Writer) error {
	in := graph.IdentityCreate{Name: name, Slug: o.slug, Tags: o.tags}
	if o.data != "" {
		if !json.Valid([]byte(o.data)) {
			return graph.FieldErrorf(graph.EINVALID, "data", "--data is not valid JSON; give an object such as '{\"room\":\"studio\"}'")
		}
		in.Data = json.RawMessage(o.data)
	}
	var err error
	if in.Hints, err = parseFingerprints(o.hints); err != nil {
		return err
	}
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		id, err := svc.CreateIdentity(ctx, in)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, id)
		}
		fmt.Fprintf(out, "created %s (%s)\n", id.ID, id.Name)
		return nil
	})
}

type identityUpdateOptions struct {
	*common
	update graph.IdentityUpdate
}

func newIdentityUpdateCmd(c *common) *cobra.Command {
	o := &identityUpdateOptions{common: c}
	var name, data string
	cmd := &cobra.Command{
		Use:   "update ID",
		Short: "change an identity's name or data",
		Example: `  devgraph identity update roland-jd-xi --name "JD-Xi"
  devgraph identity update roland-jd-xi --data '{"room":"studio"}' --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("name") {
				o.update.Name = &name
			}
			if cmd.Flags().Changed("data") {
				if !json.Valid([]byte(data)) {
					return graph.FieldErrorf(graph.EINVALID, "data", "--data is not valid JSON; give an object such as '{\"room\":\"studio\"}'")
				}
				raw := json.RawMessage(data)
				o.update.Data = &raw
			}
			if o.update.Name == nil && o.update.Data == nil {
				return usagef("identity update: nothing to change; give --name or --data")
			}
			return runIdentityUpdate(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "new name")
	cmd.Flags().StringVar(&data, "data", "", "replace the data with this JSON object")
	addJSON(cmd, c, "print the identity as JSON")
	return cmd
}

func runIdentityUpdate(ctx context.Context, o *identityUpdateOptions, ref string, out io.Writer) error {
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		id, err := svc.UpdateIdentity(ctx, ref, o.update)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, id)
		}
		fmt.Fprintf(out, "updated %s (%s)\n", id.ID, id.Name)
		return nil
	})
}

func parseFingerprints(ss []string) ([]graph.Fingerprint, error) {
	var out []graph.Fingerprint
	for _, s := range ss {
		f, err := graph.ParseFingerprint(s)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
