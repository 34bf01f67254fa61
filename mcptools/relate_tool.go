package mcptools

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// relationView is a relation as the MCP tools show it: the graph.Relation with its
// times as RFC 3339 strings and the names of its ends, so a model reads "KeyStep" and
// not only identity:keystep.
type relationView struct {
	ID        string            `json:"id" jsonschema:"rel:<uuid> for a declared relation, obs:<hash> for an observed one"`
	Type      string            `json:"type" jsonschema:"the relation type (cable, controls, mounted_on, … ; via, linked, subscribed are observed)"`
	From      string            `json:"from" jsonschema:"the node the relation leaves"`
	FromName  string            `json:"from_name,omitempty" jsonschema:"its display name"`
	FromPort  string            `json:"from_port,omitempty"`
	To        string            `json:"to" jsonschema:"the node the relation enters"`
	ToName    string            `json:"to_name,omitempty" jsonschema:"its display name"`
	ToPort    string            `json:"to_port,omitempty"`
	Attrs     map[string]string `json:"attrs,omitempty" jsonschema:"small string attributes (kind, length, colour, channel …)"`
	Observed  bool              `json:"observed" jsonschema:"true: a source sees it right now (never stored); false: declared"`
	Source    string            `json:"source,omitempty" jsonschema:"observed: usb, alsa or pipewire"`
	Author    string            `json:"author,omitempty" jsonschema:"declared: the actor who added it"`
	CreatedAt string            `json:"created_at,omitempty"`
	UpdatedAt string            `json:"updated_at,omitempty"`
}

func viewRelation(r *graph.Relation, names func(string) string) relationView {
	v := relationView{ID: r.ID, Type: r.Type, From: r.From, FromPort: r.FromPort, To: r.To, ToPort: r.ToPort,
		Attrs: r.Attrs, Observed: r.Observed, Source: r.Source, Author: r.Author}
	if names != nil {
		v.FromName, v.ToName = names(r.From), names(r.To)
	}
	if !r.Created.IsZero() {
		v.CreatedAt = r.Created.UTC().Format(time.RFC3339)
	}
	if !r.Updated.IsZero() {
		v.UpdatedAt = r.Updated.UTC().Format(time.RFC3339)
	}
	return v
}

// renderRelation is one relation on one line: "KeyStep [MIDI OUT] —cable→ [MIDI IN] JD-Xi {kind=midi-din}".
func renderRelation(v relationView) string {
	var b strings.Builder
	b.WriteString(orID(v.FromName, v.From))
	writeHop(&b, v.FromPort, v.Type, v.ToPort, v.Observed, false)
	b.WriteString(orID(v.ToName, v.To))
	if len(v.Attrs) > 0 {
		b.WriteString(" {" + formatAttrs(v.Attrs) + "}")
	}
	return b.String()
}

// writeHop writes " [from port] —type→ [to port] " (reversed: "←type—"); an observed
// relation's type carries a star.
func writeHop(b *strings.Builder, fromPort, typ, toPort string, observed, reverse bool) {
	if fromPort != "" {
		b.WriteString(" [" + fromPort + "]")
	}
	if observed {
		typ += "*"
	}
	if reverse {
		b.WriteString(" ←" + typ + "— ")
	} else {
		b.WriteString(" —" + typ + "→ ")
	}
	if toPort != "" {
		b.WriteString("[" + toPort + "] ")
	}
}

func orID(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

func formatAttrs(a map[string]string) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + a[k]
	}
	return strings.Join(parts, " ")
}

// nodeNames looks up display names of nodes (identities, devices, robots, clients),
// each once per call; a node it cannot find keeps its id.
func (s *Server) nodeNames(ctx context.Context) func(string) string {
	cache := map[string]string{}
	return func(id string) string {
		if n, ok := cache[id]; ok {
			return n
		}
		name := ""
		switch graph.KindOf(id) {
		case graph.KindIdentity:
			if ident, err := s.svc.FindIdentityByID(ctx, id, graph.IdentityParts{}); err == nil {
				name = ident.Name
			}
		case graph.KindDevice:
			if d, err := s.opts.Devices.FindDeviceByID(ctx, id); err == nil {
				name = d.Name
			}
		case graph.KindClient:
			if c, err := s.svc.Client(ctx, id); err == nil {
				name = c.Name
			}
		}
		cache[id] = name
		return name
	}
}

// relateOut is graph_relate's structured result.
type relateOut struct {
	Op        string       `json:"op" jsonschema:"the op asked for: add, update or remove"`
	Action    string       `json:"action" jsonschema:"what was done (or, dry run, would be): add, update, remove, or none when nothing needed writing"`
	Existed   bool         `json:"existed" jsonschema:"add: the relation was already there; it is returned and nothing was written"`
	DryRun    bool         `json:"dry_run" jsonschema:"true: nothing was written"`
	Relation  relationView `json:"relation" jsonschema:"the relation afterwards (remove: as it was)"`
	Events    int          `json:"events" jsonschema:"changelog events written (a dry run: that would be written; 0 when nothing changed)"`
	RequestID string       `json:"request_id" jsonschema:"the request id the call's changelog events share"`
}

var relateOps = []string{"add", "update", "remove"}

type relateIn struct {
	Op       string         `json:"op" mcp:"required,enum=add|update|remove"`
	From     string         `json:"from" mcp:"max=300"`
	FromPort string         `json:"from_port" jsonschema:"e.g. MIDI OUT; \"\" clears" mcp:"max=64,svc"`
	Type     string         `json:"type" mcp:"max=32,svc"`
	To       string         `json:"to" mcp:"max=300"`
	ToPort   string         `json:"to_port" mcp:"max=64,svc"`
	Attrs    map[string]any `json:"attrs" jsonschema:"string values; update replaces them"`
	ID       string         `json:"id" mcp:"max=100"`
	NewType  bool           `json:"new_type"`
	DryRun   bool           `json:"dry_run"`
	whyIn
}

func (s *Server) relateTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_relate",
		title: "Add, update or remove a relation between two things",
		desc: "Declare how two identities or devices are connected: a directed, typed relation, optionally between ports. " +
			"add {from, type, to, from_port?, to_port?, attrs?}; update {id, attrs?, from_port?, to_port?}; remove {id} or {from, type, to, ports}. " +
			"Types: cable (needs attrs.kind), controls, mounted_on, part_of, located_in, " +
			"powered_by, one in use, or a new one with new_type: true; via, linked, subscribed are observed only.",
		out:   typedSchema[relateOut](map[string][]string{"properties.op": relateOps, "properties.action": {"add", "update", "remove", "none"}}),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: true,
	}, s.relate)
}

func (s *Server) relate(ctx context.Context, c *call, in relateIn) (*mcp.CallToolResult, error) {
	op := in.Op
	need := func(field, what string) error {
		return graph.FieldErrorf(graph.EINVALID, field, "graph_relate %s needs %s: %s", op, field, what)
	}
	notFor := func(field, why string) error {
		return graph.FieldErrorf(graph.EINVALID, field, "graph_relate %s does not take %s: %s", op, field, why)
	}
	attrs, err := relationAttrs(c.has("attrs"), in.Attrs)
	if err != nil {
		return nil, err
	}
	from, to, typ, id := strings.TrimSpace(in.From), strings.TrimSpace(in.To), strings.TrimSpace(in.Type), strings.TrimSpace(in.ID)
	dry := in.DryRun
	var ch *graph.RelationChange
	switch op {
	case "add":
		switch {
		case id != "":
			return nil, notFor("id", "a new relation gets its id when added; to change an existing one use op update with id, to add pass from, type and to")
		case from == "":
			return nil, need("from", "the node the relation leaves, e.g. identity:keystep (find ids with graph_find)")
		case typ == "":
			return nil, need("type", "the relation type, e.g. cable; graph_suggest_tags with namespace relation lists the types in use")
		case to == "":
			return nil, need("to", "the node the relation enters, e.g. identity:roland-jd-xi (find ids with graph_find)")
		}
		ch, err = s.svc.Relate(ctx, graph.RelationCreate{From: from, FromPort: in.FromPort, Type: typ, To: to,
			ToPort: in.ToPort, Attrs: attrs, NewType: in.NewType, DryRun: dry})
	case "update":
		for _, f := range []string{"from", "type", "to", "new_type"} {
			if c.has(f) {
				return nil, notFor(f, "update changes a relation's attrs or ports; to change from, type or to, remove it (op remove) and add the new one (op add)")
			}
		}
		if id == "" {
			return nil, need("id", "the relation id (rel:…); graph_browse on either end or graph_trace lists it")
		}
		u := graph.RelationUpdate{DryRun: dry}
		if c.has("attrs") {
			u.Attrs = attrs
			if u.Attrs == nil {
				u.Attrs = map[string]string{}
			}
		}
		if c.has("from_port") {
			u.FromPort = &in.FromPort
		}
		if c.has("to_port") {
			u.ToPort = &in.ToPort
		}
		if u.Attrs == nil && u.FromPort == nil && u.ToPort == nil {
			return nil, need("attrs", "what to change: attrs (a JSON object of strings, replacing the old ones), from_port and/or to_port")
		}
		ch, err = s.svc.UpdateRelation(ctx, id, u)
	case "remove":
		for _, f := range []string{"attrs", "new_type"} {
			if c.has(f) {
				return nil, notFor(f, "remove names a relation by id, or by from, type, to and its ports")
			}
		}
		r := graph.RelationRemove{ID: id, DryRun: dry}
		if id != "" {
			for _, f := range []string{"from", "from_port", "type", "to", "to_port"} {
				if c.has(f) {
					return nil, notFor(f, "give either id or the tuple (from, type, to and ports), not both")
				}
			}
		} else {
			switch {
			case from == "" && typ == "" && to == "":
				return nil, need("id", "the relation id (rel:…), or from, type and to (with the ports if it has them)")
			case from == "":
				return nil, need("from", "the node the relation leaves (or pass id instead)")
			case typ == "":
				return nil, need("type", "the relation type (or pass id instead)")
			case to == "":
				return nil, need("to", "the node the relation enters (or pass id instead)")
			}
			r.From, r.FromPort, r.Type, r.To, r.ToPort = from, in.FromPort, typ, to, in.ToPort
		}
		ch, err = s.svc.Unrelate(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	if ch == nil || ch.Relation == nil {
		return nil, graph.Errorf(graph.EINTERNAL, "graph_relate %s: the service returned no relation", op)
	}
	out := relateOut{Op: op, Action: ch.Action, Existed: op == "add" && ch.Action == "none", DryRun: ch.DryRun || dry,
		Relation: viewRelation(ch.Relation, s.nodeNames(ctx)), Events: ch.Events, RequestID: c.requestID}
	line := renderRelation(out.Relation)
	var text string
	switch {
	case out.Existed:
		text = fmt.Sprintf("Already existed: %s %s; nothing written.", ch.Relation.ID, line)
	case ch.Action == "none":
		text = fmt.Sprintf("Unchanged: %s %s already has those values; nothing written.", ch.Relation.ID, line)
	case out.DryRun:
		text = fmt.Sprintf("Dry run: would %s %s %s; nothing written.", ch.Action, ch.Relation.ID, line)
	default:
		verb := map[string]string{"add": "Added", "update": "Updated", "remove": "Removed"}[ch.Action]
		text = fmt.Sprintf("%s %s %s (%d changelog event(s)).", orID(verb, ch.Action), ch.Relation.ID, line, ch.Events)
		if ch.Action == "add" {
			text += " Follow it with graph_trace."
		}
	}
	return result(out, text)
}

// relationAttrs reads the attrs argument: a JSON object whose values are strings.
func relationAttrs(given bool, raw map[string]any) (map[string]string, error) {
	if !given {
		return nil, nil
	}
	out := make(map[string]string, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := raw[k].(string)
		if !ok {
			return nil, graph.FieldErrorf(graph.EINVALID, "attrs", "attrs.%s is %s; attrs are a JSON object of strings, so quote it: {%q: %q}", k, describeValue(raw[k]), k, plainValue(raw[k]))
		}
		out[k] = s
	}
	return out, nil
}

// plainValue is a JSON scalar written the way a model would quote it.
func plainValue(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	}
	return "…"
}
