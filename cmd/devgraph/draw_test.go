package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/headless"
)

// hostileGraph is a small studio whose names hold everything the two formats treat as
// syntax: quotes, brackets of every kind, line breaks, backslashes and Graphviz escapes,
// Mermaid's entity and comment markers, arrows, pipes, unicode and emoji.
func hostileGraph() *graph.Subgraph {
	v := func(id string, kind graph.Kind, name string, nodes ...string) *graph.Vertex {
		return &graph.Vertex{ID: id, Kind: kind, Name: name, Nodes: nodes}
	}
	return &graph.Subgraph{
		Around: "identity:jd\"xi",
		Depth:  2,
		Vertices: []*graph.Vertex{
			v("identity:jd\"xi", graph.KindIdentity, `Roland "JD-Xi" [synth] {v2} (red)`, "device:usb:3-3.2"),
			v("identity:keystep", graph.KindIdentity, "KeyStep\nline two\r\nline three"),
			v("device:usb:3-3", graph.KindDevice, `hub \N \l back\slash`),
			v("device:usb:usb3", graph.KindDevice, "root hub <b>bold</b> & co; x --> y"),
			v("client:alsa:Bitwig Studio", graph.KindClient, "Bitwig Studio | C# #quot; %% not a comment `tick`"),
			v("client:pipewire:Firefox", graph.KindClient, "Ünïcødé 🎹 日本語 — naïve\ttab"),
			v("identity:end", graph.KindIdentity, "end"),
			v("identity:nameless", graph.KindIdentity, ""),
		},
		Edges: []*graph.Relation{
			{ID: "obs:01", Type: "subscribed", From: "device:usb:3-3.2", FromPort: "JD-Xi \"MIDI\" 1", To: "client:alsa:Bitwig Studio", ToPort: "in|1", Observed: true, Source: "alsa"},
			{ID: "obs:02", Type: "via", From: "device:usb:3-3.2", To: "device:usb:3-3", Observed: true, Source: "usb"},
			{ID: "obs:03", Type: "via", From: "device:usb:3-3", To: "device:usb:usb3", Observed: true, Source: "usb"},
			{ID: "obs:04", Type: "linked", From: "client:pipewire:Firefox", FromPort: "output_FL", To: "identity:end", ToPort: "playback_FL", Observed: true, Source: "pipewire"},
			{ID: "rel:01", Type: "cable", From: "identity:keystep", FromPort: "MIDI OUT", To: "identity:jd\"xi", ToPort: "MIDI IN"},
			{ID: "rel:02", Type: "controls", From: "identity:keystep", To: "identity:nameless"},
			{ID: "rel:03", Type: "cable", From: "identity:end", FromPort: "OUT <L>", To: "identity:nameless"},
			// Not drawn: an end outside the picture, and one inside a single vertex.
			{ID: "rel:04", Type: "cable", From: "identity:keystep", To: "identity:elsewhere"},
			{ID: "rel:05", Type: "part_of", From: "device:usb:3-3.2", To: "identity:jd\"xi"},
		},
	}
}

// drawnEdges is how many of hostileGraph's edges are drawn.
const drawnEdges = 7

// hostileWords are what randomGraph builds names from.
var hostileWords = []string{
	`"`, `'`, `\`, `\N`, `\l`, `\"`, `[`, `]`, `{`, `}`, `(`, `)`, `((x))`, `[[x]]`, `<`, `>`, `<br>`, `<b>x</b>`,
	`|`, `#`, `#quot;`, `#35;`, `&`, `&amp;`, `&eacute;`, `&#35;`, `;`, `:`, `%%`, `%%{init: {}}%%`, `-->`, `---`, `==>`, `-.->`,
	"end", "subgraph", "style", "click", "classDef", "graph", "digraph", "node", "edge", "`", "``x``", "*x*", "_x_", "$x$",
	"ü", "🎹", "日本語", "é", "Ω", "a=b", "x,y", "1.5", "-", "KeyStep", "MIDI", "OUT",
}

// randomGraph is a graph of n vertices with names, ports and ids drawn from hostileWords
// (fixed seed), each vertex with up to three relations.
func randomGraph(seed int64, n int) *graph.Subgraph {
	rnd := rand.New(rand.NewSource(seed))
	words := func(k int) string {
		var w []string
		for i := 0; i < k; i++ {
			w = append(w, hostileWords[rnd.Intn(len(hostileWords))])
		}
		return strings.Join(w, " ")
	}
	kinds := []graph.Kind{graph.KindIdentity, graph.KindDevice, graph.KindClient}
	g := &graph.Subgraph{Vertices: []*graph.Vertex{}, Edges: []*graph.Relation{}}
	for i := 0; i < n; i++ {
		name := words(1 + rnd.Intn(4))
		if rnd.Intn(4) == 0 {
			name += "\n" + words(1+rnd.Intn(3))
		}
		k := kinds[rnd.Intn(len(kinds))]
		g.Vertices = append(g.Vertices, &graph.Vertex{ID: fmt.Sprintf("%s:%d %s", k, i, strings.ReplaceAll(words(2), `\`, "/")), Kind: k, Name: name, Infra: rnd.Intn(8) == 0})
	}
	for i := 0; i < n; i++ {
		for k := rnd.Intn(4); k > 0; k-- {
			j := rnd.Intn(n)
			if j == i {
				continue
			}
			r := &graph.Relation{ID: fmt.Sprintf("rel:%d", len(g.Edges)), Type: graph.SeedRelationTypes[rnd.Intn(len(graph.SeedRelationTypes))],
				From: g.Vertices[i].ID, To: g.Vertices[j].ID, Observed: rnd.Intn(3) == 0}
			if rnd.Intn(2) == 0 {
				r.FromPort, r.ToPort = words(1+rnd.Intn(2)), words(rnd.Intn(2))
			}
			g.Edges = append(g.Edges, r)
		}
	}
	return g
}

// labelLines are the lines a vertex's label shows once drawn: its name (id when it has
// none), split at line breaks, tabs as spaces.
func labelLines(v *graph.Vertex) []string {
	name := v.Name
	if name == "" {
		name = v.ID
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "\r\n", "\n"), "\t", " ")
	return strings.Split(name, "\n")
}

func TestWriteDOT(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := writeDOT(&buf, hostileGraph()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"digraph devgraph {\n",
		`  "identity:jd\"xi" [label="Roland \"JD-Xi\" [synth] {v2} (red)", tooltip="identity:jd\"xi", style=rounded, penwidth=2.5];`,
		`  "identity:keystep" [label="KeyStep\nline two\nline three"`,
		`  "device:usb:3-3" [label="hub \\N \\l back\\slash", tooltip="device:usb:3-3", shape=hexagon`,
		`  "device:usb:usb3" [label="root hub <b>bold</b> &amp; co; x --> y", tooltip="device:usb:usb3", shape=hexagon`,
		`  "client:alsa:Bitwig Studio" [label="Bitwig Studio | C# #quot; %% not a comment ` + "`tick`" + `", tooltip="client:alsa:Bitwig Studio", shape=ellipse];`,
		`  "client:pipewire:Firefox" [label="Ünïcødé 🎹 日本語 — naïve tab"`,
		`  "identity:nameless" [label="identity:nameless"`,
		// The subscription observed on the JD-Xi's device is drawn from its identity, dashed.
		`  "identity:jd\"xi" -> "client:alsa:Bitwig Studio" [label="subscribed\nJD-Xi \"MIDI\" 1 → in|1", style=dashed];`,
		`  "identity:keystep" -> "identity:jd\"xi" [label="cable\nMIDI OUT → MIDI IN"];`,
		`  "identity:keystep" -> "identity:nameless" [label="controls"];`,
		`  "identity:end" -> "identity:nameless" [label="cable\nOUT <L> →"];`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT lacks\n%s\nin\n%s", want, out)
		}
	}
	if got := strings.Count(out, " -> "); got != drawnEdges {
		t.Errorf("%d edges drawn, want %d:\n%s", got, drawnEdges, out)
	}
	if strings.Contains(out, "elsewhere") || strings.Contains(out, "part_of") {
		t.Errorf("drew a relation leaving the picture or inside one vertex:\n%s", out)
	}
	if strings.ContainsAny(out, "\r\t") {
		t.Errorf("raw control characters in DOT:\n%q", out)
	}

	t.Run("Empty", func(t *testing.T) {
		for _, g := range []*graph.Subgraph{nil, {}} {
			var buf bytes.Buffer
			if err := writeDOT(&buf, g); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(buf.String(), "digraph devgraph {") || strings.Contains(buf.String(), "label") {
				t.Fatalf("empty graph:\n%s", buf.String())
			}
		}
	})
	t.Run("WriteError", func(t *testing.T) {
		if err := writeDOT(failWriter{}, hostileGraph()); err == nil {
			t.Fatal("a failing writer's error was lost")
		}
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteMermaid(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := writeMermaid(&buf, hostileGraph()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"flowchart LR\n",
		`  n1("Roland #quot;JD-Xi#quot; [synth] {v2} (red)")`,
		`  n2("KeyStep<br/>line two<br/>line three")`,
		`  n3{{"hub \N \l back\slash"}}`,
		`  n4{{"root hub #lt;b#gt;bold#lt;/b#gt; #amp; co; x --#gt; y"}}`,
		`  n5(["Bitwig Studio #124; C#35; #35;quot; #37;#37; not a comment #96;tick#96;"])`,
		`  n6(["Ünïcødé 🎹 日本語 — naïve tab"])`,
		`  n7("end")`,
		`  n8("identity:nameless")`,
		`  n1 -.->|"subscribed<br/>JD-Xi #quot;MIDI#quot; 1 → in#124;1"| n5`,
		`  n1 -.->|"via"| n3`,
		`  n2 -->|"cable<br/>MIDI OUT → MIDI IN"| n1`,
		`  class n3,n4 infra`,
		`  class n5,n6 client`,
		`  class n1 around`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("Mermaid lacks\n%s\nin\n%s", want, out)
		}
	}
	// Every label is one quoted string with no quote inside; ids are n<k>.
	line := regexp.MustCompile(`^  (n\d+(\(\["|\{\{"|\["|\(")[^"]*("\]\)|"\}\}|"\]|"\))|n\d+ -(->|\.->)\|"[^"|]*"\| n\d+|classDef \w+ [^"]+|class [n\d,]+ \w+)$`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines[1:] {
		if !line.MatchString(l) {
			t.Errorf("unexpected Mermaid line %q", l)
		}
	}
	if got := strings.Count(out, "->|"); got != drawnEdges {
		t.Errorf("%d edges drawn, want %d:\n%s", got, drawnEdges, out)
	}

	t.Run("Limits", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			g    *graph.Subgraph
			msg  string
		}{
			{"Edges", edgesGraph(mermaidMaxEdges + 1), "the picture has 501 relations and Mermaid draws at most 500"},
			{"Text", longGraph(), "characters of Mermaid and Mermaid draws at most 50000"},
		} {
			var buf bytes.Buffer
			err := writeMermaid(&buf, tc.g)
			if graph.ErrorCode(err) != graph.ELIMIT || !strings.Contains(graph.ErrorMessage(err), tc.msg) || !strings.Contains(graph.ErrorMessage(err), "--format dot") {
				t.Errorf("%s: err %v, want LIMIT saying %q and what to do", tc.name, err, tc.msg)
			}
			if buf.Len() != 0 {
				t.Errorf("%s: wrote %d bytes of a picture Mermaid cannot draw", tc.name, buf.Len())
			}
		}
		var buf bytes.Buffer
		if err := writeMermaid(&buf, edgesGraph(mermaidMaxEdges)); err != nil {
			t.Fatalf("%d edges: %v", mermaidMaxEdges, err)
		}
	})
}

// edgesGraph has n relations among 60 vertices.
func edgesGraph(n int) *graph.Subgraph {
	g := &graph.Subgraph{}
	for i := 0; i < 60; i++ {
		g.Vertices = append(g.Vertices, &graph.Vertex{ID: fmt.Sprintf("identity:v%d", i), Kind: graph.KindIdentity, Name: fmt.Sprintf("V%d", i)})
	}
	for i := 0; i < n; i++ {
		g.Edges = append(g.Edges, &graph.Relation{ID: fmt.Sprintf("rel:%04d", i), Type: graph.RelCable, From: g.Vertices[i%60].ID, To: g.Vertices[(i/60+i+1)%60].ID})
	}
	return g
}

// longGraph is a picture of 500 vertices with long names: over Mermaid's text limit.
func longGraph() *graph.Subgraph {
	g := &graph.Subgraph{}
	for i := 0; i < graph.MaxNeighborsVertices; i++ {
		g.Vertices = append(g.Vertices, &graph.Vertex{ID: fmt.Sprintf("identity:v%d", i), Kind: graph.KindIdentity, Name: strings.Repeat("é", 100)})
	}
	return g
}

// TestWriteDOT_Graphviz renders the hostile graph with Graphviz's dot and finds every
// node's label, line by line, in its SVG node, and every edge.
func TestWriteDOT_Graphviz(t *testing.T) {
	t.Parallel()
	dot := needTool(t, "dot", "graphviz")
	_, edges := renderDOT(t, dot, hostileGraph())
	if len(edges) != drawnEdges {
		t.Errorf("%d SVG edges, want %d: %q", len(edges), drawnEdges, edges)
	}
	want := `identity:jd"xi->client:alsa:Bitwig Studio`
	if texts, ok := edges[want]; !ok || strings.Join(texts, "|") != `subscribed|JD-Xi "MIDI" 1 → in|1` {
		t.Errorf("edge %s shows %q (edges %q)", want, texts, keys(edges))
	}

	t.Run("Random", func(t *testing.T) {
		for seed := int64(1); seed <= 3; seed++ {
			g := randomGraph(seed, 60)
			_, edges := renderDOT(t, dot, g)
			// Parallel relations between the same two vertices share an SVG title.
			if len(edges) == 0 || len(edges) > len(g.Edges) {
				t.Errorf("seed %d: %d SVG edge titles for %d relations", seed, len(edges), len(g.Edges))
			}
		}
	})
}

// renderDOT runs g through writeDOT and Graphviz's dot -Tsvg and checks every vertex shows
// its label line by line; it returns the SVG's node and edge texts by title.
func renderDOT(t *testing.T, dot string, g *graph.Subgraph) (nodes, edges map[string][]string) {
	t.Helper()
	var in bytes.Buffer
	if err := writeDOT(&in, g); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, dot, "-Tsvg")
	cmd.Stdin = bytes.NewReader(in.Bytes())
	var svg, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &svg, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot -Tsvg: %v\n%s\ninput:\n%s", err, stderr.String(), in.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("dot warned: %s", stderr.String())
	}
	nodes, edges = svgGroups(t, svg.Bytes())
	for _, v := range g.Vertices {
		texts, ok := nodes[v.ID]
		if !ok {
			t.Errorf("no SVG node titled %q (have %q)", v.ID, keys(nodes))
			continue
		}
		lines := labelLines(v)
		if len(texts) != len(lines) {
			t.Errorf("node %q shows %q, want %q", v.ID, texts, lines)
			continue
		}
		for i := range lines {
			// Graphviz drops the spaces around a line; the text itself is verbatim.
			if texts[i] != strings.TrimSpace(lines[i]) {
				t.Errorf("node %q line %d shows %q, want %q", v.ID, i, texts[i], lines[i])
			}
		}
	}
	if len(nodes) != len(g.Vertices) {
		t.Errorf("%d SVG nodes, want %d", len(nodes), len(g.Vertices))
	}
	// The observed relations are the dashed ones.
	observed := 0
	for _, r := range g.Edges {
		if r.Observed && strings.Contains(in.String(), dotQuote(edgeLabel(r))+", style=dashed") {
			observed++
		}
	}
	if got := bytes.Count(svg.Bytes(), []byte("stroke-dasharray")); got != observed || observed == 0 {
		t.Errorf("%d dashed edges in the SVG, want the %d observed", got, observed)
	}
	return nodes, edges
}

// svgGroups reads Graphviz's SVG: each node and edge group's title and the text lines in it.
func svgGroups(t *testing.T, svg []byte) (nodes, edges map[string][]string) {
	t.Helper()
	nodes, edges = map[string][]string{}, map[string][]string{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	var (
		class, title string
		texts        []string
		in           string // element whose text is being read
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, svg)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			switch tk.Name.Local {
			case "g":
				for _, a := range tk.Attr {
					if a.Name.Local == "class" && (a.Value == "node" || a.Value == "edge") {
						class, title, texts = a.Value, "", nil
					}
				}
			case "title", "text":
				in = tk.Name.Local
				if in == "text" {
					texts = append(texts, "")
				}
			}
		case xml.CharData:
			switch in {
			case "title":
				title += string(tk)
			case "text":
				texts[len(texts)-1] += string(tk)
			}
		case xml.EndElement:
			switch tk.Name.Local {
			case "title", "text":
				in = ""
			case "g":
				switch class {
				case "node":
					nodes[title] = texts
				case "edge":
					edges[title] = texts
				}
				class = ""
			}
		}
	}
	return nodes, edges
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// needTool finds a program; missing, the test fails under CI=true and is skipped otherwise.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (apt-get install -y %s): %v", name, pkg, err)
		}
		t.Skipf("%s is not installed (apt-get install -y %s): %v", name, pkg, err)
	}
	return p
}

// TestWriteMermaid_Chromium parses and renders writeMermaid's output with Mermaid's own
// code (vendored under testdata/mermaid) in headless Chromium with the network off, and
// finds every vertex's label in the rendered SVG; broken Mermaid is reported as a parse
// error, so the parser really ran.
func TestWriteMermaid_Chromium(t *testing.T) {
	t.Parallel()
	g := hostileGraph()
	var text bytes.Buffer
	if err := writeMermaid(&text, g); err != nil {
		t.Fatal(err)
	}
	var empty bytes.Buffer
	if err := writeMermaid(&empty, &graph.Subgraph{}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, origin := startBrowser(ctx, t)
	b.Poll("Mermaid to load", `typeof mermaid === "object" && typeof mermaid.parse === "function"`)
	if _, err := b.Eval(`mermaid.initialize({startOnLoad: false, securityLevel: "strict"}); true`); err != nil {
		t.Fatal(err)
	}

	parse := func(src string) (ok bool, msg string) {
		t.Helper()
		v, err := b.Eval(fmt.Sprintf(`mermaid.parse(%s).then(() => "ok", e => "error: " + (e && e.message || e))`, jsString(src)))
		if err != nil {
			t.Fatalf("running mermaid.parse: %v", err)
		}
		s, _ := v.(string)
		return s == "ok", s
	}
	if ok, msg := parse(text.String()); !ok {
		t.Fatalf("Mermaid rejects writeMermaid's output: %s\n%s", msg, text.String())
	}
	if ok, msg := parse(empty.String()); !ok {
		t.Fatalf("Mermaid rejects the empty graph: %s\n%s", msg, empty.String())
	}
	for _, broken := range []string{
		"flowchart LR\n  n1[\"unclosed\n",
		"flowchart LR\n  n1[\"a \"quoted\" b\"]\n",
		"flowchart LR\n  n1 -->|\"x\"| \n",
	} {
		if ok, msg := parse(broken); ok || !strings.Contains(strings.ToLower(msg), "error") {
			t.Errorf("Mermaid accepted broken input %q (%s)", broken, msg)
		}
	}

	// Render it and read the labels back as Mermaid shows them.
	render := func(src string) (nodes, edges []string) {
		t.Helper()
		v, err := b.Eval(fmt.Sprintf(`mermaid.render("drawtest", %s).then(r => {
			const doc = document.createElement("div");
			doc.innerHTML = r.svg;
			doc.querySelectorAll("br").forEach(br => br.replaceWith(" "));
			const text = sel => [...doc.querySelectorAll(sel)].map(n => n.textContent.replace(/\s+/g, " ").trim());
			return JSON.stringify({nodes: text("g.node"), edges: text("g.edgeLabel")});
		}, e => "error: " + (e && e.message || e))`, jsString(src)))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := v.(string)
		var drawn struct{ Nodes, Edges []string }
		if err := json.Unmarshal([]byte(s), &drawn); err != nil {
			t.Fatalf("render: %s\n%s", s, src)
		}
		return drawn.Nodes, drawn.Edges
	}
	// Each vertex's label and each relation's, as Mermaid shows them (line breaks and
	// runs of space as one space), is among what it drew.
	checkLabels := func(name string, g *graph.Subgraph, src string) {
		t.Helper()
		nodes, edges := render(src)
		norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		for _, v := range g.Vertices {
			if want := norm(strings.Join(labelLines(v), " ")); !slices.Contains(nodes, want) {
				t.Errorf("%s: rendered nodes %q lack %q", name, nodes, want)
			}
		}
		for _, r := range g.Edges {
			if want := norm(edgeLabel(r)); !slices.Contains(edges, want) {
				t.Errorf("%s: rendered edge labels %q lack %q", name, edges, want)
			}
		}
		if len(nodes) != len(g.Vertices) || len(edges) != len(g.Edges) {
			t.Errorf("%s: rendered %d nodes and %d edge labels, want %d and %d", name, len(nodes), len(edges), len(g.Vertices), len(g.Edges))
		}
	}
	g.Edges = slices.DeleteFunc(slices.Clone(g.Edges), func(r *graph.Relation) bool { return r.ID == "rel:04" || r.ID == "rel:05" })
	checkLabels("hostile", g, text.String())

	for seed := int64(1); seed <= 3; seed++ {
		g := randomGraph(seed, 60)
		var text bytes.Buffer
		if err := writeMermaid(&text, g); err != nil {
			t.Fatal(err)
		}
		if ok, msg := parse(text.String()); !ok {
			t.Fatalf("seed %d: Mermaid rejects writeMermaid's output: %s\n%s", seed, msg, text.String())
		}
		checkLabels(fmt.Sprintf("seed %d", seed), g, text.String())
	}

	// writeMermaid's edge limit is Mermaid's: 500 parse, one more does not.
	var most bytes.Buffer
	if err := writeMermaid(&most, edgesGraph(mermaidMaxEdges)); err != nil {
		t.Fatal(err)
	}
	if ok, msg := parse(most.String()); !ok {
		t.Fatalf("Mermaid rejects %d edges: %s", mermaidMaxEdges, msg)
	}
	if ok, msg := parse(most.String() + "  n1 --> n2\n"); ok || !strings.Contains(msg, "Edge limit exceeded") {
		t.Fatalf("Mermaid took %d edges (%s): its limit is not writeMermaid's", mermaidMaxEdges+1, msg)
	}
	noStrayRequests(t, b, origin)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// startBrowser launches headless Chromium on a page that loads the vendored Mermaid
// from a loopback server, and returns the browser and that server's origin.
func startBrowser(ctx context.Context, t *testing.T) (*headless.Browser, string) {
	t.Helper()
	b := headless.Launch(ctx, t)
	root := t.TempDir()
	js, err := os.ReadFile(filepath.Join("testdata", "mermaid", "mermaid.min.js"))
	if err != nil {
		t.Fatalf("the vendored Mermaid: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "mermaid.min.js"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><meta charset="utf-8"><title>mermaid</title><script src="/mermaid.min.js"></script><body></body>`
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(root))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	origin := "http://" + ln.Addr().String()
	b.Navigate(origin + "/index.html")
	return b, origin
}

// noStrayRequests checks the page asked nothing of any host but the test server.
func noStrayRequests(t *testing.T, b *headless.Browser, origin string) {
	t.Helper()
	requests := b.Requests()
	if len(requests) == 0 {
		t.Fatal("no network requests seen")
	}
	for _, u := range requests {
		switch {
		case strings.HasPrefix(u, origin+"/"), strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "blob:"), u == "about:blank":
		default:
			t.Errorf("the page requested %s, outside the test server", u)
		}
	}
}
