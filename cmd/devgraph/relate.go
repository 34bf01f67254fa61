package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devgraph/devgraph/graph"
)

type relateOptions struct {
	*common
	fromPort string
	toPort   string
	attrs    []string
	newType  bool
	dryRun   bool
}

func newRelateCmd(c *common) *cobra.Command {
	o := &relateOptions{common: c}
	cmd := &cobra.Command{
		Use:   "relate FROM TYPE TO",
		Short: "declare a relation: relate FROM TYPE TO [--from-port P] [--to-port P] [--attr k=v]…",
		Example: `  devgraph relate keystep cable roland-jd-xi --from-port "MIDI OUT" --to-port "MIDI IN" --attr kind=midi-din
  devgraph relate scout located_in studio-a
  devgraph relate lamp switched_by plug-3 --new-type --dry-run`,
		Args: nargs(3, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRelate(cmd.Context(), o, args, c.e.stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fromPort, "from-port", "", "the port on FROM the relation leaves (\"MIDI OUT\")")
	f.StringVar(&o.toPort, "to-port", "", "the port on TO it enters (\"MIDI IN\")")
	f.StringArrayVar(&o.attrs, "attr", nil, "an attribute, `KEY=VALUE` (repeatable); a cable needs kind=midi-din|trs-midi|usb|audio|cv|gate|power|ethernet|serial")
	f.BoolVar(&o.newType, "new-type", false, "allow a type that is neither seeded nor in use (so a typo does not mint one)")
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would change and write nothing")
	addJSON(cmd, c, "print the result as JSON")
	return cmd
}

func runRelate(ctx context.Context, o *relateOptions, pos []string, out io.Writer) error {
	in := graph.RelationCreate{From: pos[0], Type: pos[1], To: pos[2], FromPort: o.fromPort, ToPort: o.toPort, NewType: o.newType, DryRun: o.dryRun}
	var err error
	if in.Attrs, err = parseAttrs(o.attrs, false); err != nil {
		return err
	}
	return o.e.withService(ctx, o.common, openAny, func(ctx context.Context, svc graph.Service) error {
		ch, err := svc.Relate(ctx, in)
		if err != nil {
			return err
		}
		return printChange(out, o.asJSON(), ch, "it was already there, nothing written")
	})
}

// parseAttrs reads --attr key=value flags. With drops, "key=" is allowed (it removes key
// in an update); a key given twice is refused either way.
func parseAttrs(ss []string, drops bool) (map[string]string, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(ss))
	for _, s := range ss {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "attrs", "--attr %q is not key=value; give e.g. --attr kind=midi-din", s)
		}
		if v == "" && !drops {
			return nil, graph.FieldErrorf(graph.EINVALID, "attrs", "--attr %s has no value; give e.g. --attr %s=VALUE or leave it out", k, k)
		}
		if _, dup := m[k]; dup {
			return nil, graph.FieldErrorf(graph.EINVALID, "attrs", "--attr %s is given twice; give each key once", k)
		}
		m[k] = v
	}
	return m, nil
}

// printChange reports a relation write: one line a person reads, or the change as JSON.
// none says why nothing was written when the change was a no-op.
func printChange(w io.Writer, asJSON bool, ch *graph.RelationChange, none string) error {
	if asJSON {
		return writeJSON(w, ch)
	}
	verb := map[string]string{"add": "added", "update": "updated", "remove": "removed"}[ch.Action]
	if ch.DryRun {
		verb = map[string]string{"add": "would add", "update": "would update", "remove": "would remove"}[ch.Action]
	}
	if verb == "" {
		verb = "unchanged" // a repeated add or an update to the same values
	}
	if ch.Relation == nil {
		_, err := fmt.Fprintln(w, verb)
		return err
	}
	r := ch.Relation
	line := fmt.Sprintf("%s %s: %s", verb, r.ID, relationText(r))
	if a := fmtAttrs(r.Attrs); a != "-" {
		line += " (" + a + ")"
	}
	if ch.Action == "none" {
		line += "; " + none
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// relationText is "FROM [PORT] → type → [PORT] TO" with node ids.
func relationText(r *graph.Relation) string {
	return portEnd(r.From, r.FromPort, false) + " → " + r.Type + " → " + portEnd(r.To, r.ToPort, true)
}

// portEnd writes a node with its port on the side facing the relation.
func portEnd(node, port string, portFirst bool) string {
	if port == "" {
		return node
	}
	if portFirst {
		return "[" + port + "] " + node
	}
	return node + " [" + port + "]"
}

// fmtAttrs is "k=v k=v" sorted by key, "-" for none.
func fmtAttrs(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// resolveNode expands what a person typed into a relation endpoint: a client id is taken
// as it stands (clients are live, the store never knows them), anything else as for
// every other verb (resolveTarget).
func resolveNode(ctx context.Context, svc graph.Service, text string) (string, error) {
	if graph.KindOf(text) == graph.KindClient {
		cl, err := svc.Client(ctx, text)
		if err != nil {
			return "", err
		}
		return cl.ID, nil
	}
	return resolveTarget(ctx, svc, text)
}

func printRelations(w io.Writer, rels []*graph.Relation) error {
	t := newTable(w, "RELATION", "FROM", "FROM PORT", "TYPE", "TO", "TO PORT", "ATTRS", "KIND")
	for _, r := range rels {
		t.row(r.ID, r.From, r.FromPort, r.Type, r.To, r.ToPort, clip(fmtAttrs(r.Attrs), 40), relationKind(r))
	}
	if len(rels) == 0 {
		t.row("(none)", "", "", "", "", "", "", "")
	}
	return t.flush()
}

// relationKind is "declared" or "observed (usb)".
func relationKind(r *graph.Relation) string {
	if !r.Observed {
		return "declared"
	}
	if r.Source != "" {
		return "observed (" + r.Source + ")"
	}
	return "observed"
}

func printRelationTypes(w io.Writer, tcs []graph.RelationTypeCount) error {
	t := newTable(w, "TYPE", "COUNT", "SEEDED", "NOTE")
	for _, tc := range tcs {
		note := ""
		switch {
		case tc.Reserved:
			note = "observed only (the sources)"
		case tc.Type == graph.RelCable:
			note = "needs attrs kind=" + strings.Join(graph.CableKinds, "|")
		}
		t.row(tc.Type, tc.Count, yesNo(tc.Seeded), note)
	}
	return t.flush()
}

// printRelation writes one relation as a table of its fields (show REL).
func printRelation(w io.Writer, r *graph.Relation) error {
	t := newTable(w, "RELATION", r.ID)
	t.row("type", r.Type)
	t.row("from", portEnd(r.From, r.FromPort, false))
	t.row("to", portEnd(r.To, r.ToPort, true))
	t.row("attrs", fmtAttrs(r.Attrs))
	t.row("kind", relationKind(r))
	if !r.Observed {
		t.row("author", r.Author)
		t.row("created", fmtTime(r.Created))
		if !r.Updated.IsZero() {
			t.row("updated", fmtTime(r.Updated))
		}
	}
	return t.flush()
}
