package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type tagsOptions struct {
	*common
	namespace string
	inUse     bool
}

func newTagsCmd(c *common) *cobra.Command {
	o := &tagsOptions{common: c}
	cmd := &cobra.Command{
		Use:   "tags",
		Short: "list tags in use and the seeded vocabulary",
		Example: `  devgraph tags
  devgraph tags --namespace role
  devgraph tags --in-use --json`,
		Args: nargs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTags(cmd.Context(), o, c.e.stdout)
		},
	}
	cmd.Flags().StringVar(&o.namespace, "namespace", "", "only this namespace")
	cmd.Flags().BoolVar(&o.inUse, "in-use", false, "only tags on at least one node (else the seeded vocabulary too)")
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runTags(ctx context.Context, o *tagsOptions, out io.Writer) error {
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		tags, err := svc.FindTags(ctx, graph.TagFilter{Namespace: o.namespace, InUse: o.inUse})
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, list[graph.TagCount]{Items: nonNil(tags), Total: len(tags)})
		}
		t := newTable(out, "TAG", "COUNT", "SEEDED")
		for _, tc := range tags {
			t.row(tc.Tag, tc.Count, yesNo(tc.Seeded))
		}
		return t.flush()
	})
}
