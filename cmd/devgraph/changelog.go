package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
)

func runChangelog(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "verify":
		return changelogVerify(ctx, e, rest)
	case "prune":
		return changelogPrune(ctx, e, rest)
	}
	fs, c := e.flags("changelog", "[--since 24h|RFC3339] [--until T] [--target ID] [--actor GLOB] [--action GLOB] [--limit N] [--after CURSOR] [--follow] [--json] | verify | prune --before T", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	follow := fs.Bool("follow", false, "after the newest events, print each new one as it is written (through a running server; Ctrl-C ends)")
	fs.BoolVar(follow, "f", false, "short for --follow")
	since := fs.String("since", "", "only events at or after this: a duration back from now (24h, 90m) or a time (RFC 3339, or 2006-01-02)")
	until := fs.String("until", "", "only events before this (same forms as --since)")
	target := fs.String("target", "", "only events on this node (id, slug or device ref; changelog for prunes)")
	actor := fs.String("actor", "", "only events by actors matching this glob, e.g. 'mcp:*'")
	action := fs.String("action", "", "only actions matching this glob, e.g. 'hint.*'")
	limit := fs.Int("limit", graph.DefaultPageSize, "how many to list (at most 500)")
	after := fs.String("after", "", "continue after this cursor")
	_, err := parse(fs, args, 0, 0)
	if err != nil {
		return err
	}
	now := time.Now()
	f := graph.EventFilter{Actor: *actor, Action: *action, First: graph.ClampFirst(*limit), After: *after}
	if f.Since, err = parseWhen("since", *since, now); err != nil {
		return err
	}
	if f.Until, err = parseWhen("until", *until, now); err != nil {
		return err
	}
	if *follow {
		if *after != "" || !f.Until.IsZero() {
			return usagef("changelog --follow reads from the newest events on: --after and --until do not go with it")
		}
		f.Target = *target
		return e.followChangelog(ctx, c, f, f.First, *jsonOut)
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		if *target == graph.ChangelogTarget {
			f.Target = *target // the changelog's own events (prunes)
		} else if *target != "" {
			id, err := svc.ResolveID(ctx, *target)
			if err != nil {
				// Deleted nodes still have history: take the id as typed.
				if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(*target) == "" {
					return err
				}
				id = *target
			}
			f.Target = id
		}
		evs, next, err := svc.FindEvents(ctx, f)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, list[*graph.Event]{Items: nonNil(evs), Total: len(evs), Next: next})
		}
		t := newTable(e.stdout, "SEQ", "TIME", "ACTOR", "ACTION", "TARGET", "MESSAGE")
		for _, ev := range evs {
			t.row(ev.Seq, fmtTime(ev.Time), ev.Actor, ev.Action, ev.Target, clip(ev.Message, 50))
		}
		if err := t.flush(); err != nil {
			return err
		}
		if next != "" {
			fmt.Fprintf(e.stderr, "more: --after %s\n", next)
		}
		return nil
	})
}

// parseWhen reads a --since/--until/--before value the way every interface does, and
// names the flag in the refusal.
func parseWhen(field, s string, now time.Time) (time.Time, error) {
	t, err := graph.ParseWhen(field, s, now)
	if err != nil {
		return t, graph.FieldErrorf(graph.EINVALID, field, "--%s", graph.ErrorMessage(err))
	}
	return t, nil
}

func changelogVerify(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("changelog verify", "[--json]", false)
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		r, err := svc.VerifyChangelog(ctx)
		if err != nil {
			return err
		}
		if *jsonOut {
			if err := writeJSON(e.stdout, r); err != nil {
				return err
			}
		} else {
			if r.OK {
				fmt.Fprintf(e.stdout, "changelog ok: %d events checked (seq %d..%d), head %s\n", r.Checked, r.FirstSeq, r.HeadSeq, short(r.HeadHash))
			}
			if line := prunedLine(r); line != "" {
				fmt.Fprintln(e.stdout, line)
			}
		}
		if !r.OK {
			return graph.Errorf(graph.ECONFLICT, "changelog broken at seq %d (event %s): %s", r.BrokenSeq, r.BrokenID, r.Problem)
		}
		return nil
	})
}

// prunedLine says where the retained chain begins and who pruned it ("" when never pruned).
func prunedLine(r *graph.VerifyReport) string {
	if r.Checkpoint == "" {
		return ""
	}
	seq, hash, _ := strings.Cut(r.Checkpoint, ":")
	line := fmt.Sprintf("retained chain begins at seq %d, after checkpoint %s (event %s)", r.FirstSeq, short(hash), seq)
	if p := r.PrunedBy; p != nil {
		return line + fmt.Sprintf("; pruned by %s at %s (events %d..%d, before %s; event %d)",
			p.Actor, fmtTime(p.Time), p.FirstSeq, p.LastSeq, fmtTime(p.Before), p.EventSeq)
	}
	return line + "; no changelog.prune event records who pruned it (an older devgraph pruned without one)"
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

func changelogPrune(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("changelog prune", "--before T [-m WHY]", false)
	before := fs.String("before", "", "drop events older than this (a duration back from now, or a time)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *before == "" {
		return usagef("changelog prune: --before is required (e.g. --before 720h or --before 2026-01-01)")
	}
	t, err := parseWhen("before", *before, time.Now())
	if err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		n, err := svc.PruneChangelog(ctx, t)
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(e.stdout, "pruned 0 events before %s; nothing changed\n", fmtTime(t))
			return nil
		}
		fmt.Fprintf(e.stdout, "pruned %s before %s; the rest stays verifiable from the checkpoint, and a changelog.prune event records the cut\n", plural(n, "event", "events"), fmtTime(t))
		return nil
	})
}
