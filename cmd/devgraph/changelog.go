package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type changelogOptions struct {
	*common
	since  string
	until  string
	target string
	actor  string
	action string
	limit  int
	after  string
}

func newChangelogCmd(c *common) *cobra.Command {
	o := &changelogOptions{common: c}
	cmd := &cobra.Command{
		Use:   "changelog",
		Short: "read the audit changelog (+ verify, prune)",
		Long:  "read the audit changelog, newest first; `changelog verify` checks its hash chain, `changelog prune` drops old events",
		Example: `  devgraph changelog --since 24h
  devgraph changelog --actor 'mcp:*' --action 'hint.*'
  devgraph changelog --target roland-jd-xi --json
  devgraph changelog verify
  devgraph changelog prune --before 720h`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("changelog: unknown subcommand %q; want verify or prune, or no argument to read it", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChangelog(cmd.Context(), o, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.since, "since", "", "only events at or after this: a duration back from now (24h, 90m) or a time (RFC 3339, or 2006-01-02)")
	f.StringVar(&o.until, "until", "", "only events before this (same forms as --since)")
	f.StringVar(&o.target, "target", "", "only events on this node (id, slug or device ref; changelog for prunes)")
	f.StringVar(&o.actor, "actor", "", "only events by actors matching this glob, e.g. 'mcp:*'")
	f.StringVar(&o.action, "action", "", "only actions matching this glob, e.g. 'hint.*'")
	f.IntVar(&o.limit, "limit", graph.DefaultPageSize, "how many to list (at most 500)")
	f.StringVar(&o.after, "after", "", "continue after this cursor")
	addJSON(cmd, c, "print JSON")
	cmd.AddCommand(newChangelogVerifyCmd(c), newChangelogPruneCmd(c))
	return cmd
}

func runChangelog(ctx context.Context, o *changelogOptions, out io.Writer) error {
	e := o.e
	now := time.Now()
	var err error
	f := graph.EventFilter{Actor: o.actor, Action: o.action, First: graph.ClampFirst(o.limit), After: o.after}
	if f.Since, err = parseWhen("since", o.since, now); err != nil {
		return err
	}
	if f.Until, err = parseWhen("until", o.until, now); err != nil {
		return err
	}
	return e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		if o.target == graph.ChangelogTarget {
			f.Target = o.target // the changelog's own events (prunes)
		} else if o.target != "" {
			id, err := svc.ResolveID(ctx, o.target)
			if err != nil {
				// Deleted nodes still have history: take the id as typed.
				if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(o.target) == "" {
					return err
				}
				id = o.target
			}
			f.Target = id
		}
		evs, next, err := svc.FindEvents(ctx, f)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, list[*graph.Event]{Items: nonNil(evs), Total: len(evs), Next: next})
		}
		t := newTable(out, "SEQ", "TIME", "ACTOR", "ACTION", "TARGET", "MESSAGE")
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

func newChangelogVerifyCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "check the hash chain and name the first broken event",
		Example: `  devgraph changelog verify
  devgraph changelog verify --json`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChangelogVerify(cmd.Context(), c, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print the report as JSON")
	return cmd
}

func runChangelogVerify(ctx context.Context, o *common, out io.Writer) error {
	return o.e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		r, err := svc.VerifyChangelog(ctx)
		if err != nil {
			return err
		}
		if o.asJSON() {
			if err := writeJSON(out, r); err != nil {
				return err
			}
		} else {
			if r.OK {
				fmt.Fprintf(out, "changelog ok: %d events checked (seq %d..%d), head %s\n", r.Checked, r.FirstSeq, r.HeadSeq, short(r.HeadHash))
			}
			if line := prunedLine(r); line != "" {
				fmt.Fprintln(out, line)
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

func newChangelogPruneCmd(c *common) *cobra.Command {
	var before string
	cmd := &cobra.Command{
		Use:   "prune --before T",
		Short: "drop events older than T; the rest stays verifiable from a checkpoint",
		Example: `  devgraph changelog prune --before 720h
  devgraph changelog prune --before 2026-01-01 -m "yearly cleanup"`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChangelogPrune(cmd.Context(), c, before, c.e.stdout)
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "drop events older than this (a duration back from now, or a time)")
	return cmd
}

func runChangelogPrune(ctx context.Context, o *common, before string, out io.Writer) error {
	if before == "" {
		return usagef("changelog prune: --before is required (e.g. --before 720h or --before 2026-01-01)")
	}
	t, err := parseWhen("before", before, time.Now())
	if err != nil {
		return err
	}
	return o.e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		n, err := svc.PruneChangelog(ctx, t)
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(out, "pruned 0 events before %s; nothing changed\n", fmtTime(t))
			return nil
		}
		fmt.Fprintf(out, "pruned %s before %s; the rest stays verifiable from the checkpoint, and a changelog.prune event records the cut\n", plural(n, "event", "events"), fmtTime(t))
		return nil
	})
}
