package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

// withService opens the service for a verb, runs fn with the CLI's caller context and
// closes it.
func (e *env) withService(ctx context.Context, c *common, mode openMode, fn func(ctx context.Context, svc graph.Service) error) error {
	s, err := e.open(ctx, c, mode)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(c.withCaller(ctx), s.svc)
}

type identitiesOptions struct {
	*common
	name  string
	tags  []string
	limit int
	after string
}

func newIdentitiesCmd(c *common) *cobra.Command {
	o := &identitiesOptions{common: c}
	cmd := &cobra.Command{
		Use:   "identities",
		Short: "list identities",
		Example: `  devgraph identities
  devgraph identities --tag role:synth --name rol
  devgraph identities --limit 20 --after CURSOR --json`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIdentities(cmd.Context(), o, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "only names starting with this (case-insensitive)")
	f.StringArrayVar(&o.tags, "tag", nil, "only identities carrying this tag, `NS:VALUE` (repeatable: all of them)")
	f.IntVar(&o.limit, "limit", graph.DefaultPageSize, "how many to list (at most 500)")
	f.StringVar(&o.after, "after", "", "continue after this cursor (printed at the end of the previous page)")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runIdentities(ctx context.Context, o *identitiesOptions, out io.Writer) error {
	e := o.e
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		ids, total, next, err := svc.FindIdentities(ctx, graph.IdentityFilter{Name: o.name, Tags: o.tags, First: graph.ClampFirst(o.limit), After: o.after})
		if err != nil {
			return err
		}
		return writePage(e, o.asJSON(), ids, total, next, func(w io.Writer, ids []*graph.Identity) error {
			t := newTable(w, "ID", "NAME", "HINTS", "TAGS")
			for _, id := range ids {
				t.row(id.ID, clip(id.Name, 40), len(id.Hints), joinOr(id.Tags, "-"))
			}
			return t.flush()
		})
	})
}

// footer tells a person on stderr that the list goes on.
func (e *env) footer(shown, total int, next string) {
	if next != "" {
		fmt.Fprintf(e.stderr, "showing %d of %d; next page: --after %s\n", shown, total, next)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
