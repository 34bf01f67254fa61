package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type notesOptions struct {
	*common
	kind  string
	limit int
	after string
}

func newNotesCmd(c *common) *cobra.Command {
	o := &notesOptions{common: c}
	cmd := &cobra.Command{
		Use:   "notes TARGET",
		Short: "list the notes on a target",
		Example: `  devgraph notes roland-jd-xi
  devgraph notes usb:3-3.2 --kind warning --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNotes(cmd.Context(), o, args[0], c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kind, "kind", "", "only notes of this kind")
	f.IntVar(&o.limit, "limit", graph.DefaultPageSize, "how many to list (at most 500)")
	f.StringVar(&o.after, "after", "", "continue after this cursor")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runNotes(ctx context.Context, o *notesOptions, text string, out io.Writer) error {
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		target, err := resolveTarget(ctx, svc, text, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		notes, total, next, err := svc.FindNotes(ctx, graph.NoteFilter{Target: target, Kind: o.kind, First: graph.ClampFirst(o.limit), After: o.after})
		if err != nil {
			return err
		}
		return writePage(o.e, o.asJSON(), notes, total, next, printNotes)
	})
}

func printNotes(w io.Writer, notes []*graph.Note) error {
	t := newTable(w, "NOTE", "TIME", "KIND", "AUTHOR", "BODY")
	for _, n := range notes {
		t.row(n.ID, fmtTime(n.Time), n.Kind, n.Author, clip(n.Body, 60))
	}
	return t.flush()
}
