package main

import (
	"context"
	"fmt"
	"io"

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

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return fmt.Sprint([]string(*l)) }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func runIdentities(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("identities", "[--name PREFIX] [--tag NS:VALUE]… [--limit N] [--after CURSOR] [--json]", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	name := fs.String("name", "", "only names starting with this (case-insensitive)")
	limit := fs.Int("limit", graph.DefaultPageSize, "how many to list (at most 500)")
	after := fs.String("after", "", "continue after this cursor (printed at the end of the previous page)")
	var tags stringList
	fs.Var(&tags, "tag", "only identities carrying this tag (repeatable: all of them)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		ids, total, next, err := svc.FindIdentities(ctx, graph.IdentityFilter{Name: *name, Tags: tags, First: graph.ClampFirst(*limit), After: *after})
		if err != nil {
			return err
		}
		return writePage(e, *jsonOut, ids, total, next, func(w io.Writer, ids []*graph.Identity) error {
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
