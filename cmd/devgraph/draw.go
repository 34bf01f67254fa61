package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/devgraph/devgraph/graph"
)

// Pictures of a subgraph for `devgraph export --format dot|mermaid`: one node per vertex
// labelled with its name, one edge per relation labelled with its type and ports; observed
// relations dashed, infrastructure devices and clients shaped apart from the things people
// own. Both writers keep the subgraph's order, so the same graph draws the same text.

// drawing is a subgraph prepared for either writer: each relation's ends mapped to the
// vertex holding them (a relation on a bound device is drawn on its identity).
type drawing struct {
	around   int // index of the vertex the picture is around; -1 for the whole graph
	vertices []*graph.Vertex
	infra    map[string]bool // vertex id → drawn as infrastructure
	edges    []drawEdge
}

type drawEdge struct {
	from, to int // indexes in vertices
	label    string
	observed bool
}

func prepare(g *graph.Subgraph) *drawing {
	d := &drawing{around: -1, infra: map[string]bool{}}
	if g == nil {
		return d
	}
	at := make(map[string]int, len(g.Vertices)*2)
	for _, v := range g.Vertices {
		if v == nil {
			continue
		}
		if _, dup := at[v.ID]; dup {
			continue
		}
		i := len(d.vertices)
		d.vertices = append(d.vertices, v)
		at[v.ID] = i
		for _, n := range v.Nodes {
			if _, ok := at[n]; !ok {
				at[n] = i
			}
		}
		if v.Infra {
			d.infra[v.ID] = true
		}
		if g.Around != "" && v.ID == g.Around {
			d.around = i
		}
	}
	for _, r := range g.Edges {
		if r == nil {
			continue
		}
		from, ok1 := at[r.From]
		to, ok2 := at[r.To]
		if !ok1 || !ok2 || from == to {
			continue // an end outside the picture, or a relation inside one vertex
		}
		// Something hangs off it: a hub, even when the source did not say so.
		if r.Type == graph.RelVia && d.vertices[to].Kind == graph.KindDevice {
			d.infra[d.vertices[to].ID] = true
		}
		d.edges = append(d.edges, drawEdge{from: from, to: to, label: edgeLabel(r), observed: r.Observed})
	}
	return d
}

// edgeLabel is the relation's type, then its ports on a second line.
func edgeLabel(r *graph.Relation) string {
	if r.FromPort == "" && r.ToPort == "" {
		return r.Type
	}
	ports := strings.TrimSpace(r.FromPort + " → " + r.ToPort)
	return r.Type + "\n" + ports
}

func vertexLabel(v *graph.Vertex) string {
	if strings.TrimSpace(v.Name) != "" {
		return v.Name
	}
	return v.ID
}

// clean makes text safe to embed: valid UTF-8, \r\n and \r as \n, tabs and other
// control characters as spaces.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\r', r == '\t', unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// dotQuote quotes s as a DOT string for an id or a label: every backslash is doubled and
// a double quote escaped (so Graphviz's label escapes such as \N or \l never fire on a
// name), a line break becomes DOT's \n, and & is written &amp; since Graphviz decodes HTML
// entities in labels and in the titles of its SVG (a name holding "&eacute;" shows as
// typed).
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range clean(s) {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeDOT writes g as a Graphviz digraph: node ids are the vertex ids (quoted), labels
// their names; identities are rounded boxes, devices boxes, infrastructure grey
// hexagons, clients ellipses, the vertex the picture is around drawn thicker; observed
// relations are dashed.
func writeDOT(w io.Writer, g *graph.Subgraph) error {
	d := prepare(g)
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph devgraph {\n")
	bw.WriteString("  graph [rankdir=LR, charset=\"UTF-8\"];\n")
	bw.WriteString("  node [shape=box, fontname=\"Helvetica\"];\n")
	bw.WriteString("  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for i, v := range d.vertices {
		bw.WriteString("  " + dotQuote(v.ID) + " [label=" + dotQuote(vertexLabel(v)) + ", tooltip=" + dotQuote(v.ID))
		switch {
		case d.infra[v.ID]:
			bw.WriteString(`, shape=hexagon, style=filled, fillcolor="#eeeeee", color="#888888"`)
		case v.Kind == graph.KindClient:
			bw.WriteString(`, shape=ellipse`)
		case v.Kind == graph.KindIdentity:
			bw.WriteString(`, style=rounded`)
		}
		if i == d.around {
			bw.WriteString(`, penwidth=2.5`)
		}
		bw.WriteString("];\n")
	}
	for _, e := range d.edges {
		bw.WriteString("  " + dotQuote(d.vertices[e.from].ID) + " -> " + dotQuote(d.vertices[e.to].ID) + " [label=" + dotQuote(e.label))
		if e.observed {
			bw.WriteString(", style=dashed")
		}
		bw.WriteString("];\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// mermaidText writes s for a double-quoted Mermaid label: the characters Mermaid's lexer
// or its HTML labels would read as syntax become Mermaid entity codes (#quot;, #35; …),
// a line break <br/>.
func mermaidText(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range clean(s) {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '&':
			b.WriteString("#amp;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '|':
			b.WriteString("#124;")
		case '`':
			b.WriteString("#96;")
		case '%': // Mermaid strips %%{…}%% directives anywhere in the text, quoted or not
			b.WriteString("#37;")
		case '\n':
			b.WriteString("<br/>")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Mermaid's own limits with its default configuration, which a diagram cannot raise
// (both are "secure" keys): more edges is a parse error, more text renders as an error.
const (
	mermaidMaxEdges = 500
	mermaidMaxText  = 50000
)

// writeMermaid writes g as a Mermaid flowchart (left to right). Vertex ids hold ':' and
// other characters Mermaid ids cannot, so nodes are n1, n2 … in the subgraph's order with
// the name as a quoted label; identities are rounded, devices boxes, infrastructure
// hexagons, clients stadiums, the vertex the picture is around drawn thicker; observed
// relations are dotted. A picture beyond Mermaid's
// default limits (500 edges, 50,000 characters) is ELIMIT and nothing is written.
func writeMermaid(w io.Writer, g *graph.Subgraph) error {
	d := prepare(g)
	if len(d.edges) > mermaidMaxEdges {
		return graph.Errorf(graph.ELIMIT, "the picture has %d relations and Mermaid draws at most %d: narrow it with --around NODE --depth N, or use --format dot", len(d.edges), mermaidMaxEdges)
	}
	var bw strings.Builder
	bw.WriteString("flowchart LR\n")
	var infra, clients []string
	for i, v := range d.vertices {
		id := "n" + strconv.Itoa(i+1)
		lb, rb := `["`, `"]`
		switch {
		case d.infra[v.ID]:
			lb, rb = `{{"`, `"}}`
			infra = append(infra, id)
		case v.Kind == graph.KindClient:
			lb, rb = `(["`, `"])`
			clients = append(clients, id)
		case v.Kind == graph.KindIdentity:
			lb, rb = `("`, `")`
		}
		bw.WriteString("  " + id + lb + mermaidText(vertexLabel(v)) + rb + "\n")
	}
	for _, e := range d.edges {
		arrow := " -->|"
		if e.observed {
			arrow = " -.->|"
		}
		bw.WriteString("  n" + strconv.Itoa(e.from+1) + arrow + `"` + mermaidText(e.label) + `"| n` + strconv.Itoa(e.to+1) + "\n")
	}
	if len(infra) > 0 {
		bw.WriteString("  classDef infra fill:#eeeeee,stroke:#888888\n")
		bw.WriteString("  class " + strings.Join(infra, ",") + " infra\n")
	}
	if len(clients) > 0 {
		bw.WriteString("  classDef client fill:#fff8e1,stroke:#b08800\n")
		bw.WriteString("  class " + strings.Join(clients, ",") + " client\n")
	}
	if d.around >= 0 {
		bw.WriteString("  classDef around stroke-width:3px\n")
		bw.WriteString("  class n" + strconv.Itoa(d.around+1) + " around\n")
	}
	if n := jsLength(bw.String()); n > mermaidMaxText {
		return graph.Errorf(graph.ELIMIT, "the picture takes %d characters of Mermaid and Mermaid draws at most %d: narrow it with --around NODE --depth N, or use --format dot", n, mermaidMaxText)
	}
	_, err := io.WriteString(w, bw.String())
	return err
}

// jsLength is the length of s as JavaScript counts it (UTF-16 code units), which is what
// Mermaid's text limit counts.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}
