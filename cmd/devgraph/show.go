package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

func newShowCmd(c *common) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID|REF|REL|CLIENT",
		Short: "show an identity, a device, a relation or a client",
		Example: `  devgraph show roland-jd-xi
  devgraph show usb:3-3.2 --json
  devgraph show rel:0190a4c2-…`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShow(cmd.Context(), c, args[0], c.e.stdout)
		},
	}
	addJSON(cmd, c, "print JSON")
	return cmd
}

func runShow(ctx context.Context, o *common, text string, out io.Writer) error {
	e := o.e
	return e.withService(ctx, o, openRead, func(ctx context.Context, svc graph.Service) error {
		switch graph.KindOf(text) {
		case graph.KindRelation, graph.KindObserved:
			r, err := svc.FindRelationByID(ctx, text)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, r)
			}
			return printRelation(out, r)
		case graph.KindClient:
			cl, err := svc.Client(ctx, text)
			if err != nil {
				return err
			}
			rels, total, err := nodeRelations(ctx, svc, cl.ID)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, struct {
					*graph.Client
					Relations      []*graph.Relation `json:"relations"`
					RelationsTotal int               `json:"relations_total"`
				}{cl, rels, total})
			}
			t := newTable(out, "CLIENT", cl.ID)
			t.row("name", cl.Name)
			t.row("source", cl.Source)
			t.row("attrs", fmtAttrs(cl.Attrs))
			if err := t.flush(); err != nil {
				return err
			}
			return printNodeRelations(out, cl.ID, rels, total)
		}
		id, err := resolveTarget(ctx, svc, text)
		if err != nil {
			return err
		}
		switch graph.KindOf(id) {
		case graph.KindIdentity:
			ident, err := svc.FindIdentityByID(ctx, id, graph.IdentityParts{Notes: true, Devices: true})
			if err != nil {
				return err
			}
			rels, total, err := nodeRelations(ctx, svc, id)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, struct {
					*graph.Identity
					Relations      []*graph.Relation `json:"relations"`
					RelationsTotal int               `json:"relations_total"`
				}{ident, rels, total})
			}
			if err := printIdentity(out, ident); err != nil {
				return err
			}
			return printNodeRelations(out, id, rels, total)
		case graph.KindDevice:
			dv, err := svc.Device(ctx, id)
			if err != nil {
				return err
			}
			rels, total, err := nodeRelations(ctx, svc, id)
			if err != nil {
				return err
			}
			if o.asJSON() {
				return writeJSON(out, struct {
					*graph.DeviceView
					Relations      []*graph.Relation `json:"relations"`
					RelationsTotal int               `json:"relations_total"`
				}{dv, rels, total})
			}
			if err := printDevice(out, dv); err != nil {
				return err
			}
			return printNodeRelations(out, id, rels, total)
		}
		return graph.Errorf(graph.EINVALID, "%s is not an identity, a device, a relation or a client; `devgraph show` takes those (notes: `devgraph notes TARGET`)", id)
	})
}

// showRelations is how many of a node's relations show prints; `devgraph relations NODE`
// pages through the rest.
const showRelations = 50

// nodeRelations returns the first relations of a node's vertex, declared then observed,
// and how many there are.
func nodeRelations(ctx context.Context, svc graph.Service, node string) ([]*graph.Relation, int, error) {
	rels, total, _, err := svc.FindRelations(ctx, graph.RelationFilter{Node: node, First: showRelations})
	if err != nil {
		return nil, 0, err
	}
	return nonNil(rels), total, nil
}

// printNodeRelations is show's relations section: each relation from the node's side.
func printNodeRelations(w io.Writer, node string, rels []*graph.Relation, total int) error {
	fmt.Fprintln(w)
	if len(rels) == 0 {
		fmt.Fprintln(w, "relations: none (add one with `devgraph relate`)")
		return nil
	}
	if err := printRelations(w, rels); err != nil {
		return err
	}
	if total > len(rels) {
		fmt.Fprintf(w, "showing %d of %d relations; all of them: devgraph relations %s\n", len(rels), total, node)
	}
	return nil
}

// resolveTarget expands what a person typed into a node id. Device refs are looked up
// through the live sources first, so a device just plugged in (or moved to another port)
// is found before any background poll has recorded it.
func resolveTarget(ctx context.Context, svc graph.Service, text string, kinds ...graph.Kind) (string, error) {
	if graph.IsRef(text) {
		if dv, err := svc.Device(ctx, text); err == nil {
			return dv.ID, nil
		}
	}
	return svc.ResolveID(ctx, text, kinds...)
}

func printIdentity(w io.Writer, id *graph.Identity) error {
	t := newTable(w, "IDENTITY", id.ID)
	t.row("name", id.Name)
	if len(id.Data) > 0 && string(id.Data) != "null" {
		t.row("data", string(id.Data))
	}
	t.row("tags", joinOr(id.Tags, "-"))
	t.row("created", fmtTime(id.CreatedAt))
	t.row("updated", fmtTime(id.UpdatedAt))
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	h := newTable(w, "HINT", "VALUE", "CLASS")
	for _, f := range id.Hints {
		h.row(f.Kind, f.Value, f.Class())
	}
	if len(id.Hints) == 0 {
		h.row("(none)", "", "")
	}
	if err := h.flush(); err != nil {
		return err
	}
	if len(id.Devices) > 0 {
		fmt.Fprintln(w)
		d := newTable(w, "DEVICE", "REF", "PRESENT", "NAME")
		for _, dev := range id.Devices {
			d.row(dev.ID, dev.Ref, yesNo(dev.Present), clip(dev.Name, 40))
		}
		if err := d.flush(); err != nil {
			return err
		}
	}
	if len(id.Notes) > 0 {
		fmt.Fprintln(w)
		return printNotes(w, id.Notes)
	}
	return nil
}

func printDevice(w io.Writer, dv *graph.DeviceView) error {
	t := newTable(w, "DEVICE", dv.ID)
	t.row("ref", dv.Ref)
	switch {
	case dv.HostOffline:
		t.row("host", dv.Host+" (offline: its lease expired; shown as it last recorded it, not unplugged)")
	case dv.Host != "":
		t.row("host", dv.Host)
	}
	t.row("name", dv.Name)
	t.row("sources", joinOr(dv.Sources, dv.Source))
	t.row("present", yesNo(dv.Present))
	if dv.Infra {
		t.row("infrastructure", "yes (hubs are shown, never bound)")
	}
	bound := "-"
	if dv.BoundTo != "" {
		bound = dv.BoundTo + " (" + dv.BoundBy + ")"
	}
	t.row("bound to", bound)
	t.row("match", fmtScore(dv.Match))
	t.row("tags", joinOr(dv.Tags, "-"))
	t.row("first seen", fmtTime(dv.FirstSeen))
	t.row("last seen", fmtTime(dv.LastSeen))
	if len(dv.Aliases) > 0 {
		t.row("aliases", strings.Join(dv.Aliases, " "))
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(dv.Nodes) > 0 {
		// The /dev nodes it provides now: a line per stable link (the node repeated, so
		// each line stands alone in grep), "-" for a node without one.
		fmt.Fprintln(w)
		n := newTable(w, "NODE", "KIND", "LINK")
		for _, node := range dv.Nodes {
			if len(node.Links) == 0 {
				n.row(node.Path, node.Kind, "-")
			}
			for _, l := range node.Links {
				n.row(node.Path, node.Kind, l)
			}
		}
		if err := n.flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	f := newTable(w, "FINGERPRINT", "VALUE", "CLASS")
	for _, fp := range dv.Fingerprints {
		f.row(fp.Kind, fp.Value, fp.Class())
	}
	if err := f.flush(); err != nil {
		return err
	}
	if dv.Match != nil {
		fmt.Fprintln(w)
		printExplanation(w, dv.Match)
	}
	return nil
}

// printExplanation writes a match's summary and each reason that counted.
func printExplanation(w io.Writer, m *graph.Match) {
	if m.Summary != "" {
		_ = writeWrapped(w, fmt.Sprintf("match: %s\n", m.Summary))
	}
	if len(m.Explanation) == 0 {
		return
	}
	t := newTable(w, "EVIDENCE", "VALUE", "CLASS", "WEIGHT", "WHY")
	for _, r := range m.Explanation {
		t.row(r.Kind, r.Value, r.Class, fmt.Sprintf("%+.2f", r.Weight), r.Note)
	}
	_ = t.flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
