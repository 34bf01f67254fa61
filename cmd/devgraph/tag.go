package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newTagCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tag TARGET +NS:VALUE… -NS:VALUE…",
		Short: "add (+ns:value) and remove (-ns:value) tags",
		Long: "add (+ns:value) and remove (-ns:value) tags on an identity or a device; " +
			"+ns:value and -ns:value are tag operations, never flags",
		Example: `  devgraph tag roland-jd-xi +role:synth +location:desk-left
  devgraph tag roland-jd-xi -status:loaned -m "back from repair"
  devgraph tag usb:3-3.2 +capability:midi --json`,
		// pflag would read -role:synth as flags: tag reads its own arguments.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, help, err := tagArgs(cmd, args)
			if err != nil || help {
				if help {
					return cmd.Help()
				}
				return err
			}
			if err := c.checkOutput(); err != nil {
				return err
			}
			return runTag(cmd.Context(), c, pos, c.e.stdout)
		},
	}
	addJSON(cmd, c, "print the target's tags as JSON")
	return cmd
}

// tagArgs reads tag's arguments: TARGET and its operations. A -word this verb has no
// flag for is a tag to remove, malformed ("-rolesynth"): refused as a tag, as every
// interface refuses it, not as an unknown flag.
func tagArgs(cmd *cobra.Command, args []string) ([]string, bool, error) {
	fs := cmd.Flags()
	cmd.InheritedFlags()
	var rest, removals []string
	for _, a := range args {
		if isFlagArg(a) && !strings.HasPrefix(a, "--") && lookupFlag(fs, a) == nil {
			removals = append(removals, a)
			continue
		}
		rest = append(rest, a)
	}
	pos, help, err := ownArgs(cmd, rest)
	if err != nil || help {
		return nil, help, err
	}
	if len(pos) == 0 {
		return nil, false, usagef("tag: missing arguments; see `devgraph tag -h`")
	}
	if pos = append(pos, removals...); len(pos) < 2 {
		return nil, false, usagef("tag: missing arguments; see `devgraph tag -h`")
	}
	return pos, false, nil
}

func runTag(ctx context.Context, o *common, pos []string, out io.Writer) error {
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
	return o.e.withService(ctx, o, openAny, func(ctx context.Context, svc graph.Service) error {
		target, err := resolveTarget(ctx, svc, pos[0], graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		tags, err := svc.UpdateTags(ctx, target, add, remove)
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, struct {
				Target string   `json:"target"`
				Tags   []string `json:"tags"`
			}{target, nonNil(tags)})
		}
		fmt.Fprintf(out, "%s: %s\n", target, joinOr(tags, "(no tags)"))
		return nil
	})
}
