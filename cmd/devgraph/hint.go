package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/devgraph/devgraph/graph"
)

type flagT = flag.Flag

func runHint(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "add", "remove":
	case "":
		if err := e.groupHelp("hint", rest, []subcmd{
			{"add", "ID KIND=VALUE…", "add fingerprints to an identity as hints (--move takes over a unit hint)"},
			{"remove", "ID KIND=VALUE…", "remove hints from an identity"},
		}); err != nil {
			return err
		}
		return usagef("hint: missing subcommand; want add or remove")
	default:
		return usagef("hint: unknown subcommand %q; want add or remove", sub)
	}
	fs, c := e.flags("hint "+sub, "ID KIND=VALUE… [--move] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the identity as JSON")
	move := false
	if sub == "add" {
		fs.BoolVar(&move, "move", false, "move a unit hint (serial, mac) another identity holds instead of failing")
	}
	pos, err := parse(fs, rest, 2, -1)
	if err != nil {
		return err
	}
	fps, err := parseFingerprints(pos[1:])
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		var id *graph.Identity
		if sub == "add" {
			id, err = svc.AddHints(ctx, pos[0], fps, move)
		} else {
			id, err = svc.RemoveHints(ctx, pos[0], fps)
		}
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, id)
		}
		verb := map[string]string{"add": "added", "remove": "removed"}[sub]
		fmt.Fprintf(e.stdout, "%s %s on %s; it holds %s\n", verb, plural(len(fps), "hint", "hints"), id.ID, plural(len(id.Hints), "hint", "hints"))
		return nil
	})
}
