package sources

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// observation collects the observed relations and clients of one snapshot. An end is a
// merged device or a client; clients are numbered (#2 …) only once all are known, so
// relations hold their ends as *end until then.
type observation struct {
	rels    map[string]*pendingRel // by tuple
	order   []string
	clients []*clientRec
	alsa    map[int]*clientRec // by sequencer client number
	pw      map[int]*clientRec // by node id
	notes   map[string][]string
}

// end is one end of an observed relation: a device or a client.
type end struct {
	dev    *graph.ObservedDevice
	client *clientRec
}

type clientRec struct {
	source string
	name   string
	num    int // the per-boot number that orders clients of one name: client number, node id
	attrs  map[string]string
	listed bool // listed even without relations (user sequencer clients, streams)
	used   bool
	id     string
}

type pendingRel struct {
	typ              string
	from, to         end
	fromPort, toPort string
	source           string
	attrs            map[string]string
}

func (o *observation) note(source, format string, args ...any) {
	if o.notes == nil {
		o.notes = map[string][]string{}
	}
	o.notes[source] = append(o.notes[source], fmt.Sprintf(format, args...))
}

// add records one relation; a repeat of the same ends and ports (a subscription listed
// at both of its ports, a link on two channels of one port pair) keeps the first. A
// relation from a thing to itself is no edge (as for declared relations) and is dropped.
func (o *observation) add(typ, source string, from end, fromPort string, to end, toPort string, attrs map[string]string) {
	if from.same(to) {
		return
	}
	fromPort, toPort = portText(fromPort), portText(toPort)
	k := strings.Join([]string{typ, from.key(), strings.ToLower(fromPort), to.key(), strings.ToLower(toPort)}, "\x00")
	if _, dup := o.rels[k]; dup {
		return
	}
	if o.rels == nil {
		o.rels = map[string]*pendingRel{}
	}
	o.rels[k] = &pendingRel{typ: typ, from: from, to: to, fromPort: fromPort, toPort: toPort, source: source, attrs: attrs}
	o.order = append(o.order, k)
	for _, e := range []end{from, to} {
		if e.client != nil {
			e.client.used = true
		}
	}
}

func (e end) same(f end) bool {
	return (e.dev != nil && e.dev == f.dev) || (e.client != nil && e.client == f.client)
}

// key names an end before client ids are known; devices and clients never collide.
func (e end) key() string {
	if e.dev != nil {
		return "d\x00" + e.dev.Key
	}
	return "c\x00" + e.client.source + "\x00" + strconv.Itoa(e.client.num) + "\x00" + e.client.name
}

func (e end) id() string {
	if e.dev != nil {
		return graph.DeviceID(e.dev.Key)
	}
	return e.client.id
}

// portText keeps a port name within graph.MaxPort bytes, cut at a character boundary.
func portText(p string) string {
	if len(p) <= graph.MaxPort {
		return p
	}
	n := graph.MaxPort
	for n > 0 && !utf8.RuneStart(p[n]) {
		n--
	}
	return p[:n]
}

// observe reads the observed relations out of what the sources read, naming merged
// devices through idx: via from the usb reading, subscribed from seq/clients, linked
// from pw-dump's Link objects. Any reading may be nil (its source failed); it then
// contributes nothing. Clients are the user-space sequencer clients, PipeWire's stream
// nodes, and any other end that is no device (Midi Through, a virtual sink). Relations
// are sorted by type, from, from port, to and to port; clients by id.
func observe(usb []*usbDevice, alsa *alsaReading, pw *pwReading, idx *merged) ([]*graph.Relation, []*graph.Client, map[string][]string) {
	o := &observation{alsa: map[int]*clientRec{}, pw: map[int]*clientRec{}}
	o.via(usb, idx)
	if alsa != nil {
		o.subscribed(alsa.Clients, idx)
	}
	if pw != nil {
		o.linked(pw, idx)
	}
	clients := o.numberClients()
	rels := make([]*graph.Relation, 0, len(o.order))
	for _, k := range o.order {
		p := o.rels[k]
		from, to := p.from.id(), p.to.id()
		rels = append(rels, &graph.Relation{ID: graph.ObservedRelationID(p.typ, from, p.fromPort, to, p.toPort), Type: p.typ,
			From: from, FromPort: p.fromPort, To: to, ToPort: p.toPort, Attrs: p.attrs, Observed: true, Source: p.source})
	}
	sort.Slice(rels, func(i, j int) bool {
		a, b := rels[i], rels[j]
		for _, c := range [][2]string{{a.Type, b.Type}, {a.From, b.From}, {a.FromPort, b.FromPort}, {a.To, b.To}, {a.ToPort, b.ToPort}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
	return rels, clients, o.notes
}

// via links every USB device to the hub it hangs off, and so on to the root hub: ToPort
// is the hub's port ("port 2" for 3-3.2 on 3-3). A device whose hub the snapshot does not
// show (its entry was unreadable, its sysfs entry is half gone) has no via; the hub's
// problem is noted where it was read.
func (o *observation) via(usb []*usbDevice, idx *merged) {
	for _, u := range usb {
		d := idx.usb[u.Path]
		parent, port := usbParent(u.Path)
		if d == nil || parent == "" {
			continue
		}
		hub := idx.usb[parent]
		if hub == nil {
			continue
		}
		o.add(graph.RelVia, SourceUSB, end{dev: d}, "", end{dev: hub}, "port "+port, nil)
	}
}

// subscribed turns each sequencer subscription into sender client:port → destination
// client:port, with the ports' names. Subscriptions to or from System (client 0: its
// Timer and Announce ports, which every sequencer application watches) are the
// sequencer's own housekeeping, not MIDI, and are left out; so are those whose other end
// the file does not list (it changed while being read), noted.
func (o *observation) subscribed(clients []*seqClient, idx *merged) {
	byNum := map[int]*seqClient{}
	for _, c := range clients {
		if _, dup := byNum[c.Number]; !dup {
			byNum[c.Number] = c
		}
	}
	for _, c := range clients {
		if !c.Kernel && byNum[c.Number] == c {
			o.alsaClient(c) // user clients are listed, subscribed or not
		}
	}
	portName := func(c *seqClient, n int) (string, bool) {
		for _, p := range c.Ports {
			if p.Number == n {
				return p.Name, true
			}
		}
		return "", false
	}
	for _, c := range clients {
		if byNum[c.Number] != c {
			continue
		}
		for _, p := range c.Ports {
			type sub struct {
				from, to seqAddr
				s        seqSub
			}
			var subs []sub
			for _, s := range p.To {
				subs = append(subs, sub{seqAddr{c.Number, p.Number}, seqAddr{s.Client, s.Port}, s})
			}
			for _, s := range p.From {
				subs = append(subs, sub{seqAddr{s.Client, s.Port}, seqAddr{c.Number, p.Number}, s})
			}
			for _, s := range subs {
				if s.from.client == 0 || s.to.client == 0 {
					continue
				}
				fc, tc := byNum[s.from.client], byNum[s.to.client]
				if fc == nil || tc == nil {
					o.note(SourceALSA, "seq/clients: subscription %s → %s names a client the file does not list; skipped", s.from, s.to)
					continue
				}
				fp, ok1 := portName(fc, s.from.port)
				tp, ok2 := portName(tc, s.to.port)
				if !ok1 || !ok2 {
					o.note(SourceALSA, "seq/clients: subscription %s → %s names a port the file does not list; skipped", s.from, s.to)
					continue
				}
				from, to := o.seqEnd(fc, idx), o.seqEnd(tc, idx)
				if from == nil || to == nil {
					continue
				}
				var attrs map[string]string
				if s.s.Timestamp != "" || s.s.Exclusive {
					attrs = map[string]string{}
					if s.s.Timestamp != "" {
						attrs["timestamp"] = s.s.Timestamp
						attrs["queue"] = strconv.Itoa(s.s.Queue)
					}
					if s.s.Exclusive {
						attrs["exclusive"] = "true"
					}
				}
				o.add(graph.RelSubscribed, SourceALSA, *from, fp, *to, tp, attrs)
			}
		}
	}
}

type seqAddr struct{ client, port int }

func (a seqAddr) String() string { return strconv.Itoa(a.client) + ":" + strconv.Itoa(a.port) }

// seqEnd is the end a sequencer client stands for: the device it belongs to, else a
// client for an application (a user client) or a kernel client that is no device (Midi
// Through). A device's kernel client left out of the snapshot (unplugging) stands for
// nothing: nil.
func (o *observation) seqEnd(c *seqClient, idx *merged) *end {
	if d := idx.client[c.Number]; d != nil {
		return &end{dev: d}
	}
	if c.Kernel && c.Number >= 16 {
		return nil
	}
	return &end{client: o.alsaClient(c)}
}

func (o *observation) alsaClient(c *seqClient) *clientRec {
	if r := o.alsa[c.Number]; r != nil {
		return r
	}
	name := c.Name
	if name == "" {
		name = "client " + strconv.Itoa(c.Number)
	}
	typ := "user"
	if c.Kernel {
		typ = "kernel"
	}
	var ports []string
	for _, p := range c.Ports {
		ports = append(ports, p.Name)
	}
	r := &clientRec{source: SourceALSA, name: name, num: c.Number, listed: !c.Kernel,
		attrs: map[string]string{"seq_client": strconv.Itoa(c.Number), "type": typ}}
	if len(ports) > 0 {
		r.attrs["seq_ports"] = strings.Join(ports, "; ")
	}
	o.alsa[c.Number] = r
	o.clients = append(o.clients, r)
	return r
}

// linked turns each PipeWire link into output port → input port, with the port names
// as ports and the node names in attrs (from_node, to_node) beside its state. A port of
// a device's node stands for that device; a Midi-Bridge port for the device of the
// sequencer client behind it; any other node (a stream, a virtual sink) for a client.
// Links in state error or unlinked carry nothing and are left out; a link whose ports
// the dump does not hold is noted.
func (o *observation) linked(pw *pwReading, idx *merged) {
	ids := make([]int, 0, len(pw.Nodes))
	for id := range pw.Nodes {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if n := pw.Nodes[id]; n.Device < 0 && strings.HasPrefix(n.MediaClass, "Stream/") {
			o.pwClient(n)
		}
	}
	for _, l := range pw.Links {
		if l.State == "error" || l.State == "unlinked" {
			continue
		}
		op, ip := pw.Ports[l.OutPort], pw.Ports[l.InPort]
		if op == nil || ip == nil {
			o.note(SourcePipeWire, "pw-dump link %d: port %d → %d not in the dump; skipped", l.ID, l.OutPort, l.InPort)
			continue
		}
		on, in := pw.Nodes[pick(op.Node, l.OutNode)], pw.Nodes[pick(ip.Node, l.InNode)]
		if on == nil || in == nil {
			o.note(SourcePipeWire, "pw-dump link %d: node %d → %d not in the dump; skipped", l.ID, l.OutNode, l.InNode)
			continue
		}
		from, to := o.pwEnd(on, op, idx), o.pwEnd(in, ip, idx)
		if from == nil || to == nil {
			continue
		}
		attrs := map[string]string{"from_node": on.Name, "to_node": in.Name}
		if l.State != "" {
			attrs["state"] = l.State
		}
		for k, v := range attrs {
			if v == "" {
				delete(attrs, k)
			} else if len(v) > graph.MaxRelationAttrVal {
				attrs[k] = clip(v, graph.MaxRelationAttrVal-len("…"))
			}
		}
		o.add(graph.RelLinked, SourcePipeWire, *from, pwPortName(op), *to, pwPortName(ip), attrs)
	}
}

// pick is the port's own node id when it gives one, else the link's.
func pick(portNode, linkNode int) int {
	if portNode >= 0 {
		return portNode
	}
	return linkNode
}

func pwPortName(p *pwPort) string {
	switch {
	case p.SeqClient >= 0 && p.Alias != "":
		_, name := splitPortAlias(p.Alias, p.Name)
		return name
	case p.Name != "":
		return p.Name
	case p.Alias != "":
		return p.Alias
	}
	return "port " + strconv.Itoa(p.ID)
}

// pwEnd is the end a node's port stands for (see linked); nil for a device node whose
// device the snapshot left out (unplugging).
func (o *observation) pwEnd(n *pwNode, p *pwPort, idx *merged) *end {
	if p.SeqClient >= 0 {
		if d := idx.client[p.SeqClient]; d != nil {
			return &end{dev: d}
		}
		if c := o.alsa[p.SeqClient]; c != nil {
			return &end{client: c}
		}
	}
	if n.Device >= 0 {
		if d := idx.pwDevice[n.Device]; d != nil {
			return &end{dev: d}
		}
		return nil
	}
	return &end{client: o.pwClient(n)}
}

func (o *observation) pwClient(n *pwNode) *clientRec {
	if r := o.pw[n.ID]; r != nil {
		return r
	}
	name := n.App
	if name == "" {
		name = n.Description
	}
	if name == "" {
		name = n.Name
	}
	if name == "" {
		name = "node " + strconv.Itoa(n.ID)
	}
	r := &clientRec{source: SourcePipeWire, name: name, num: n.ID, listed: strings.HasPrefix(n.MediaClass, "Stream/"),
		attrs: map[string]string{"pipewire_node": strconv.Itoa(n.ID)}}
	for k, v := range map[string]string{"node_name": n.Name, "media_class": n.MediaClass} {
		if v != "" {
			r.attrs[k] = v
		}
	}
	o.pw[n.ID] = r
	o.clients = append(o.clients, r)
	return r
}

// numberClients gives every client kept (listed, or an end of a relation) its id: the
// first of a source and name by per-boot number is client:<source>:<name>, the next #2
// (or the next number no other client's id holds).
func (o *observation) numberClients() []*graph.Client {
	var keep []*clientRec
	for _, c := range o.clients {
		if c.listed || c.used {
			keep = append(keep, c)
		}
	}
	sort.SliceStable(keep, func(i, j int) bool {
		a, b := keep[i], keep[j]
		if a.source != b.source {
			return a.source < b.source
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.num < b.num
	})
	seen := map[string]int{}
	taken := map[string]bool{}
	out := make([]*graph.Client, 0, len(keep))
	for _, c := range keep {
		k := c.source + "\x00" + c.name
		// An application may name itself like another's second ("Bitwig Studio#2"): the
		// next number free keeps every id its own.
		for {
			seen[k]++
			if c.id = graph.ClientID(c.source, c.name, seen[k]); !taken[c.id] {
				break
			}
		}
		taken[c.id] = true
		out = append(out, &graph.Client{ID: c.id, Source: c.source, Name: c.name, Attrs: c.attrs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
