package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/devgraph/devgraph/graph"
)

func runNote(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "add":
		fs, c := e.flags("note add", `TARGET "MESSAGE" [--kind info|success|warning|danger] [-m WHY] [--json]`, false)
		jsonOut := fs.Bool("json", false, "print the note as JSON")
		kind := fs.String("kind", "info", "info, success, warning or danger")
		pos, err := parse(fs, rest, 2, 2)
		if err != nil {
			return err
		}
		return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
			target, err := resolveTarget(ctx, svc, pos[0], graph.KindIdentity, graph.KindDevice)
			if err != nil {
				return err
			}
			n, err := svc.AddNote(ctx, graph.NoteCreate{Target: target, Kind: *kind, Body: pos[1]})
			if err != nil {
				return err
			}
			if *jsonOut {
				return writeJSON(e.stdout, n)
			}
			if n.Existed {
				fmt.Fprintf(e.stdout, "already there: %s on %s (the same note, added %s); nothing written\n", n.ID, n.Target, n.Time.UTC().Format(time.RFC3339))
				return nil
			}
			fmt.Fprintf(e.stdout, "added %s on %s\n", n.ID, n.Target)
			return nil
		})
	case "delete":
		fs, c := e.flags("note delete", "NOTE-ID [-m WHY]", false)
		pos, err := parse(fs, rest, 1, 1)
		if err != nil {
			return err
		}
		return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
			if err := svc.DeleteNote(ctx, pos[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "deleted %s\n", pos[0])
			return nil
		})
	case "":
		if err := e.groupHelp("note", rest, []subcmd{
			{"add", `TARGET "MESSAGE"`, "leave a note on an identity, device or robot"},
			{"delete", "NOTE-ID", "delete a note"},
		}); err != nil {
			return err
		}
		return usagef("note: missing subcommand; want add or delete (list them with `devgraph notes TARGET`)")
	}
	return usagef("note: unknown subcommand %q; want add or delete", sub)
}

func runNotes(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("notes", "TARGET [--kind K] [--limit N] [--after CURSOR] [--json]", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	kind := fs.String("kind", "", "only notes of this kind")
	limit := fs.Int("limit", graph.DefaultPageSize, "how many to list (at most 500)")
	after := fs.String("after", "", "continue after this cursor")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		target, err := resolveTarget(ctx, svc, pos[0], graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		notes, total, next, err := svc.FindNotes(ctx, graph.NoteFilter{Target: target, Kind: *kind, First: graph.ClampFirst(*limit), After: *after})
		if err != nil {
			return err
		}
		return writePage(e, *jsonOut, notes, total, next, printNotes)
	})
}

func printNotes(w io.Writer, notes []*graph.Note) error {
	t := newTable(w, "NOTE", "TIME", "KIND", "AUTHOR", "BODY")
	for _, n := range notes {
		t.row(n.ID, fmtTime(n.Time), n.Kind, n.Author, clip(n.Body, 60))
	}
	return t.flush()
}
