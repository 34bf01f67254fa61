package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newHintCmd(c *common) *cobra.Command {
	cmd := newGroupCmd("hint", "add|remove hints on an identity", "want add or remove",
		`  devgraph hint add roland-jd-xi usb_id=0582:0160 alsa_card_id=JDXi
  devgraph hint remove roland-jd-xi usb_path=3-3.2`)
	cmd.AddCommand(newHintSubCmd(c, "add"), newHintSubCmd(c, "remove"))
	return cmd
}

type hintOptions struct {
	*common
	sub  string // add or remove
	move bool
}

func newHintSubCmd(c *common, sub string) *cobra.Command {
	o := &hintOptions{common: c, sub: sub}
	cmd := &cobra.Command{
		Use:   sub + " ID KIND=VALUE…",
		Short: "add fingerprints to an identity as hints (--move takes over a unit hint)",
		Example: `  devgraph hint add roland-jd-xi usb_id=0582:0160 alsa_card_id=JDXi
  devgraph hint add minilogue usb_serial=0944:010f:A1B2 --move -m "swapped units"`,
		Args: nargs(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHint(cmd.Context(), o, args, c.e.stdout)
		},
	}
	if sub == "add" {
		cmd.Flags().BoolVar(&o.move, "move", false, "move a unit hint (serial, mac) another identity holds instead of failing")
	} else {
		cmd.Short = "remove hints from an identity"
		cmd.Example = `  devgraph hint remove roland-jd-xi usb_path=3-3.2
  devgraph hint remove roland-jd-xi alsa_card_id=JDXi --json`
	}
	addJSON(cmd, c, "print the identity as JSON")
	return cmd
}

func runHint(ctx context.Context, o *hintOptions, pos []string, out io.Writer) error {
	fps, err := parseFingerprints(pos[1:])
	if err != nil {
		return err
	}
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		var id *graph.Identity
		if o.sub == "add" {
			id, err = svc.AddHints(ctx, pos[0], fps, o.move)
		} else {
			id, err = svc.RemoveHints(ctx, pos[0], fps)
		}
		if err != nil {
			return err
		}
		if o.asJSON() {
			return writeJSON(out, id)
		}
		verb := map[string]string{"add": "added", "remove": "removed"}[o.sub]
		fmt.Fprintf(out, "%s %s on %s; it holds %s\n", verb, plural(len(fps), "hint", "hints"), id.ID, plural(len(id.Hints), "hint", "hints"))
		return nil
	})
}
