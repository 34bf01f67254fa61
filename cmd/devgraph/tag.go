package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

func runTag(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("tag", "TARGET +NS:VALUE… -NS:VALUE… [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the target's tags as JSON")
	// A -word this verb has no flag for is a tag to remove, malformed ("-rolesynth"):
	// refused as a tag, as every interface refuses it, not as an unknown flag.
	var rest, removals []string
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "="); isFlagArg(a) && !strings.HasPrefix(a, "--") && fs.Lookup(name) == nil {
			removals = append(removals, a)
			continue
		}
		rest = append(rest, a)
	}
	pos, err := parse(fs, rest, 1, -1)
	if err != nil {
		return err
	}
	if pos = append(pos, removals...); len(pos) < 2 {
		return usagef("tag: missing arguments; see `devgraph tag -h`")
	}
	var add, remove []string
	for _, op := range pos[1:] {
		switch {
		case strings.HasPrefix(op, "+"):
			add = append(add, op[1:])
		case strings.HasPrefix(op, "-"):
			remove = append(remove, op[1:])
		default:
			add = append(add, op)
		}
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		target, err := resolveTarget(ctx, svc, pos[0], graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		tags, err := svc.UpdateTags(ctx, target, add, remove)
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, struct {
				Target string   `json:"target"`
				Tags   []string `json:"tags"`
			}{target, nonNil(tags)})
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", target, joinOr(tags, "(no tags)"))
		return nil
	})
}

func runTags(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("tags", "[--namespace NS] [--in-use] [--json]", false)
	jsonOut := fs.Bool("json", false, "print JSON")
	ns := fs.String("namespace", "", "only this namespace")
	inUse := fs.Bool("in-use", false, "only tags on at least one node (else the seeded vocabulary too)")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		tags, err := svc.FindTags(ctx, graph.TagFilter{Namespace: *ns, InUse: *inUse})
		if err != nil {
			return err
		}
		if *jsonOut {
			return writeJSON(e.stdout, list[graph.TagCount]{Items: nonNil(tags), Total: len(tags)})
		}
		t := newTable(e.stdout, "TAG", "COUNT", "SEEDED")
		for _, tc := range tags {
			t.row(tc.Tag, tc.Count, yesNo(tc.Seeded))
		}
		return t.flush()
	})
}
