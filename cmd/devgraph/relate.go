package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

func runRelate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("relate", "FROM TYPE TO [--from-port P] [--to-port P] [--attr k=v]… [--new-type] [--dry-run] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	fromPort := fs.String("from-port", "", "the port on FROM the relation leaves (\"MIDI OUT\")")
	toPort := fs.String("to-port", "", "the port on TO it enters (\"MIDI IN\")")
	var attrs stringList
	fs.Var(&attrs, "attr", "an attribute, key=value (repeatable); a cable needs kind=midi-din|trs-midi|usb|audio|cv|gate|power|ethernet|serial")
	newType := fs.Bool("new-type", false, "allow a type that is neither seeded nor in use (so a typo does not mint one)")
	dry := fs.Bool("dry-run", false, "show what would change and write nothing")
	pos, err := parse(fs, args, 3, 3)
	if err != nil {
		return err
	}
	in := graph.RelationCreate{From: pos[0], Type: pos[1], To: pos[2], FromPort: *fromPort, ToPort: *toPort, NewType: *newType, DryRun: *dry}
	if in.Attrs, err = parseAttrs(attrs, false); err != nil {
		return err
	}
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		ch, err := svc.Relate(ctx, in)
		if err != nil {
			return err
		}
		return printChange(e.stdout, *jsonOut, ch, "it was already there, nothing written")
	})
}

// runRelation is the `relation` group: update (relate and unrelate are verbs of their own).
func runRelation(ctx context.Context, e *env, args []string) error {
	sub, rest := subcommand(args)
	switch sub {
	case "update":
		return relationUpdate(ctx, e, rest)
	case "":
		if err := e.groupHelp("relation", rest, relationSubs); err != nil {
			return err
		}
		return usagef("relation: missing subcommand; want update (add with `devgraph relate`, remove with `devgraph unrelate`)")
	}
	return usagef("relation: unknown subcommand %q; want update (add with `devgraph relate`, remove with `devgraph unrelate`)", sub)
}

var relationSubs = []subcmd{
	{"update", "REL", "change a declared relation's attrs (--attr k=v, k= drops k) or ports"},
}

func relationUpdate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("relation update", "REL [--attr k=v]… [--clear-attrs] [--from-port P] [--to-port P] [--dry-run] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	fromPort := fs.String("from-port", "", "the new port on FROM (\"\" clears it)")
	toPort := fs.String("to-port", "", "the new port on TO (\"\" clears it)")
	var attrs stringList
	fs.Var(&attrs, "attr", "set an attribute, key=value; key= removes it (repeatable; the others stay)")
	clearAttrs := fs.Bool("clear-attrs", false, "start from no attributes (then --attr adds)")
	dry := fs.Bool("dry-run", false, "show what would change and write nothing")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flagT) { set[f.Name] = true })
	var u graph.RelationUpdate
	if set["from-port"] {
		u.FromPort = fromPort
	}
	if set["to-port"] {
		u.ToPort = toPort
	}
	changes, err := parseAttrs(attrs, true)
	if err != nil {
		return err
	}
	if len(attrs) == 0 && !*clearAttrs && u.FromPort == nil && u.ToPort == nil {
		return usagef("relation update: nothing to change; give --attr k=v, --clear-attrs, --from-port or --to-port")
	}
	u.DryRun = *dry
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		if len(attrs) > 0 || *clearAttrs {
			// The service replaces the whole map; a person names only the keys to change,
			// so read the map and send it back changed. Two people changing one
			// relation's attrs at once: the last one wins, as for any replace.
			cur, err := svc.FindRelationByID(ctx, pos[0])
			if err != nil {
				return err
			}
			m := map[string]string{}
			if !*clearAttrs {
				for k, v := range cur.Attrs {
					m[k] = v
				}
			}
			for k, v := range changes {
				if v == "" {
					delete(m, k)
				} else {
					m[k] = v
				}
			}
			u.Attrs = m
		}
		ch, err := svc.UpdateRelation(ctx, pos[0], u)
		if err != nil {
			return err
		}
		return printChange(e.stdout, *jsonOut, ch, "it already reads so, nothing written")
	})
}

func runUnrelate(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("unrelate", "REL | FROM TYPE TO [--from-port P] [--to-port P]  [--dry-run] [-m WHY] [--json]", false)
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	fromPort := fs.String("from-port", "", "the tuple's port on FROM")
	toPort := fs.String("to-port", "", "the tuple's port on TO")
	dry := fs.Bool("dry-run", false, "show what would change and write nothing")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	var in graph.RelationRemove
	switch len(pos) {
	case 1:
		if *fromPort != "" || *toPort != "" {
			return usagef("unrelate: --from-port and --to-port go with the tuple FROM TYPE TO, not a relation id")
		}
		in.ID = pos[0]
	case 3:
		in = graph.RelationRemove{From: pos[0], Type: pos[1], To: pos[2], FromPort: *fromPort, ToPort: *toPort}
	default:
		return usagef("unrelate: give a relation id (rel:…) or the tuple FROM TYPE TO; see `devgraph unrelate -h`")
	}
	in.DryRun = *dry
	return e.withService(ctx, c, openAny, func(ctx context.Context, svc graph.Service) error {
		ch, err := svc.Unrelate(ctx, in)
		if err != nil {
			return err
		}
		return printChange(e.stdout, *jsonOut, ch, "nothing written")
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

func runRelations(ctx context.Context, e *env, args []string) error {
	fs, c := e.flags("relations", "[NODE] [--type T]… [--direction out|in|both] [--declared|--observed] [--limit N] [--after CURSOR] [--json] | --types", true)
	jsonOut := fs.Bool("json", false, "print JSON")
	types := fs.Bool("types", false, "list the relation types (seeded, reserved for observed relations, and in use) with counts")
	dir := fs.String("direction", "", "out, in or both (default both)")
	declared := fs.Bool("declared", false, "only declared relations")
	observed := fs.Bool("observed", false, "only observed relations (what the sources see now)")
	limit := fs.Int("limit", graph.DefaultPageSize, "how many to list (at most 500)")
	after := fs.String("after", "", "continue after this cursor")
	var typeList stringList
	fs.Var(&typeList, "type", "only relations of this type (repeatable)")
	pos, err := parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	if *types {
		if len(pos) > 0 || *dir != "" || len(typeList) > 0 || *declared || *observed {
			return usagef("relations --types lists the vocabulary; it takes no NODE or filters")
		}
		return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
			tc, err := svc.RelationTypes(ctx)
			if err != nil {
				return err
			}
			return writePage(e, *jsonOut, tc, len(tc), "", printRelationTypes)
		})
	}
	f := graph.RelationFilter{Direction: *dir, Types: typeList, Declared: *declared, Observed: *observed, First: graph.ClampFirst(*limit), After: *after}
	if len(pos) == 0 && *dir != "" {
		return usagef("relations: --direction needs a NODE")
	}
	return e.withService(ctx, c, openRead, func(ctx context.Context, svc graph.Service) error {
		if len(pos) == 1 {
			node, err := resolveNode(ctx, svc, pos[0])
			if err != nil {
				return err
			}
			f.Node = node
		}
		rels, total, next, err := svc.FindRelations(ctx, f)
		if err != nil {
			return err
		}
		return writePage(e, *jsonOut, rels, total, next, printRelations)
	})
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
