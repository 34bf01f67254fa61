package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newNoteCmd(c *common) *cobra.Command {
	cmd := newGroupCmd("note", "add|delete a note",
		"want add or delete (list them with `devgraph notes TARGET`)",
		`  devgraph note add roland-jd-xi "the DIN MIDI out is flaky" --kind warning
  devgraph note delete note:0190a4c2-…`)
	cmd.AddCommand(newNoteAddCmd(c), newNoteDeleteCmd(c))
	return cmd
}

type noteAddOptions struct {
	*common
	kind string
}

func newNoteAddCmd(c *common) *cobra.Command {
	o := &noteAddOptions{common: c}
	cmd := &cobra.Command{
		Use:   `add TARGET "MESSAGE"`,
		Short: "leave a note on an identity, device or robot",
		Example: `  devgraph note add roland-jd-xi "the DIN MIDI out is flaky" --kind warning
  devgraph note add usb:3-3.2 "**firmware** 1.52 installed" --kind success --json`,
		Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNoteAdd(cmd.Context(), o, args, c.e.stdout)
		},
	}
	cmd.Flags().StringVar(&o.kind, "kind", "info", "info, success, warning or danger")
	addJSON(cmd, c, "print the note as JSON")
	return cmd
}

func runNoteAdd(ctx context.Context, o *noteAddOptions, pos []string, out io.Writer) error {
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		target, err := resolveTarget(ctx, svc, pos[0], graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		n, err := svc.AddNote(ctx, graph.NoteCreate{Target: target, Kind: o.kind, Body: pos[1]})
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, n)
		}
		if n.Existed {
			fmt.Fprintf(out, "already there: %s on %s (the same note, added %s); nothing written\n", n.ID, n.Target, n.Time.UTC().Format(time.RFC3339))
			return nil
		}
		fmt.Fprintf(out, "added %s on %s\n", n.ID, n.Target)
		return nil
	})
}

func newNoteDeleteCmd(c *common) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NOTE-ID",
		Short: "delete a note",
		Example: `  devgraph note delete note:0190a4c2-…
  devgraph note delete note:0190a4c2-… -m "fixed"`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNoteDelete(cmd.Context(), c, args[0], c.e.stdout)
		},
	}
}

func runNoteDelete(ctx context.Context, o *common, id string, out io.Writer) error {
	return o.e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		if err := svc.DeleteNote(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(out, "deleted %s\n", id)
		return nil
	})
}
