package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type relationsOptions struct {
	*common
	types     bool
	direction string
	declared  bool
	observed  bool
	typeList  []string
	limit     int
	after     string
}

func newRelationsCmd(c *common) *cobra.Command {
	o := &relationsOptions{common: c}
	cmd := &cobra.Command{
		Use:   "relations [NODE]",
		Short: "list a node's relations, declared and observed (--types: the vocabulary)",
		Example: `  devgraph relations keystep
  devgraph relations roland-jd-xi --type cable --direction in
  devgraph relations --observed --json
  devgraph relations --types`,
		Args: nargs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRelations(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.types, "types", false, "list the relation types (seeded, reserved for observed relations, and in use) with counts")
	f.StringVar(&o.direction, "direction", "", "out, in or both (default both)")
	f.BoolVar(&o.declared, "declared", false, "only declared relations")
	f.BoolVar(&o.observed, "observed", false, "only observed relations (what the sources see now)")
	f.StringArrayVar(&o.typeList, "type", nil, "only relations of this `TYPE` (repeatable)")
	f.IntVar(&o.limit, "limit", graph.DefaultPageSize, "how many to list (at most 500)")
	f.StringVar(&o.after, "after", "", "continue after this cursor")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runRelations(ctx context.Context, o *relationsOptions, pos []string, out io.Writer) error {
	e := o.e
	if o.types {
		if len(pos) > 0 || o.direction != "" || len(o.typeList) > 0 || o.declared || o.observed {
			return usagef("relations --types lists the vocabulary; it takes no NODE or filters")
		}
		return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
			tc, err := svc.RelationTypes(ctx)
			if err != nil {
				return err
			}
			return writePage(e, o.asJSON(), tc, len(tc), "", printRelationTypes)
		})
	}
	f := graph.RelationFilter{Direction: o.direction, Types: o.typeList, Declared: o.declared, Observed: o.observed, First: graph.ClampFirst(o.limit), After: o.after}
	if len(pos) == 0 && o.direction != "" {
		return usagef("relations: --direction needs a NODE")
	}
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		if len(pos) == 1 {
			node, err := resolveNode(ctx, svc, pos[0])
			if err != nil {
				return err
			}
			f.Node = node
		}
		rels, total, next, err := svc.FindRelations(ctx, f)
		if err != nil {
			return err
		}
		return writePage(e, o.asJSON(), rels, total, next, printRelations)
	})
}
