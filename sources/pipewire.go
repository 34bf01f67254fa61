package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// Runner produces pw-dump's JSON output. PWDumpCommand runs the real pw-dump; tests and
// the demo use a file or a func of their own.
type Runner func(ctx context.Context) ([]byte, error)

// PWDumpCommand runs `pw-dump` and returns its standard output.
func PWDumpCommand(ctx context.Context) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "pw-dump")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, errors.New("pw-dump not found in PATH; install PipeWire's tools or pass --pw-dump-file")
		}
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("pw-dump failed: %s", clip(graph.EscapeHardwareText([]byte(msg)), 200))
	}
	return stdout.Bytes(), nil
}

// pwDevice is one PipeWire:Interface:Device.
type pwDevice struct {
	ID          int
	Name        string // device.name
	Description string
	Nick        string
	API         string // device.api: alsa, v4l2, bluez5…
	Card        int    // api.alsa.card / alsa.card / api.alsa.path hw:N; -1 when none
	CardName    string // api.alsa.card.name / alsa.card_name
	USBPath     string // the USB device named in sysfs.path: 3-3.2
	BusPath     string // device.bus-path as read
	Controller  string // from device.bus-path: 0000:00:14.0
	DevPath     string // from device.bus-path: 3.2
	VID, PID    string
	Serial      string // device.serial (udev's ID_SERIAL: vendor_model_serial)
	Nodes       []string
}

// pwMIDIClient is a sequencer client as the Midi-Bridge node's ports show it.
type pwMIDIClient struct {
	Client int
	Name   string
	Ports  []string
	Card   int // alsa.card on a port, when PipeWire gives it; else -1
}

// pwNode is one PipeWire:Interface:Node: a device's sink or source, a stream an
// application plays or records (media.class Stream/Output/Audio …), the Midi-Bridge.
type pwNode struct {
	ID          int
	Device      int // device.id; -1 for a node no device owns (streams, the Midi-Bridge)
	Name        string
	Description string
	App         string // application.name
	MediaClass  string
}

// pwPort is one PipeWire:Interface:Port.
type pwPort struct {
	ID        int
	Node      int // node.id; -1 when not given
	Name      string
	Alias     string
	Direction string // input, output
	SeqClient int    // the sequencer client behind a Midi-Bridge port; -1 otherwise
}

// pwLink is one PipeWire:Interface:Link: an output port feeding an input port.
type pwLink struct {
	ID               int
	OutNode, OutPort int
	InNode, InPort   int
	State            string // init, negotiating, allocating, paused, active, error, unlinked
}

type pwReading struct {
	Devices []*pwDevice
	MIDI    []*pwMIDIClient
	Nodes   map[int]*pwNode
	Ports   map[int]*pwPort
	Links   []*pwLink // in dump order
}

type pwObject struct {
	ID   json.RawMessage `json:"id"`
	Type json.RawMessage `json:"type"`
	Info json.RawMessage `json:"info"`
}

type pwInfo struct {
	Props map[string]json.RawMessage `json:"props"`
	// Port and Link objects carry these beside their props.
	Direction    json.RawMessage `json:"direction"`
	OutputNodeID json.RawMessage `json:"output-node-id"`
	OutputPortID json.RawMessage `json:"output-port-id"`
	InputNodeID  json.RawMessage `json:"input-node-id"`
	InputPortID  json.RawMessage `json:"input-port-id"`
	State        json.RawMessage `json:"state"`
}

var (
	seqPathRe = regexp.MustCompile(`^alsa:seq:[^:]*:client_([0-9]+):`)
	busPathRe = regexp.MustCompile(`^pci-([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])-usb-[0-9]+:([0-9.]+):[0-9]+\.[0-9]+$`)
)

// parsePWDump parses pw-dump's JSON array. JSON that does not parse (a truncated dump)
// fails the whole reading; an object of the wrong shape is skipped and noted. Where
// PipeWire printed a number for a string or a string for a number, the value is coerced.
func parsePWDump(data []byte) (*pwReading, []string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, errors.New("pw-dump output is empty; is PipeWire running?")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, nil, fmt.Errorf("pw-dump output is not valid JSON at byte %d (%s); is it truncated?", se.Offset, se.Error())
		default:
			return nil, nil, fmt.Errorf("pw-dump output is not a JSON array of objects: %s", clip(err.Error(), 120))
		}
	}
	r := &pwReading{Nodes: map[int]*pwNode{}, Ports: map[int]*pwPort{}}
	var notes []string
	nodeDevice := map[int]*pwDevice{}
	type pendingNode struct {
		dev  int
		name string
	}
	var nodes []pendingNode
	midi := map[int]*pwMIDIClient{}
	for i, m := range raw {
		var o pwObject
		if err := json.Unmarshal(m, &o); err != nil {
			notes = append(notes, fmt.Sprintf("pw-dump object %d is not an object; skipped", i))
			continue
		}
		typ := coerceString(o.Type)
		if typ == "" || len(o.Info) == 0 || string(o.Info) == "null" {
			continue // removed objects and oddities
		}
		var info pwInfo
		if err := json.Unmarshal(o.Info, &info); err != nil {
			notes = append(notes, fmt.Sprintf("pw-dump object %d (%s): info is not an object; skipped", i, clip(typ, 40)))
			continue
		}
		p := info.Props
		id, _ := coerceInt(o.ID)
		switch typ {
		case "PipeWire:Interface:Device":
			d := &pwDevice{ID: id, Card: -1,
				Name: propString(p, "device.name"), Description: propString(p, "device.description"),
				Nick: propString(p, "device.nick"), API: propString(p, "device.api"), BusPath: propString(p, "device.bus-path"),
				Serial: propString(p, "device.serial")}
			if d.Name == "" {
				notes = append(notes, fmt.Sprintf("pw-dump device %d has no device.name; skipped", id))
				continue
			}
			d.Card = propCard(p)
			d.CardName = propString(p, "api.alsa.card.name")
			if d.CardName == "" {
				d.CardName = propString(p, "alsa.card_name")
			}
			d.USBPath = usbPathInSysfs(propString(p, "sysfs.path"))
			if m := busPathRe.FindStringSubmatch(d.BusPath); m != nil && usbPathRe.MatchString("1-"+m[2]) {
				d.Controller, d.DevPath = m[1], m[2]
			}
			d.VID, d.PID = propHexID(p, "device.vendor.id"), propHexID(p, "device.product.id")
			if d.VID == "" || d.PID == "" {
				d.VID, d.PID = "", ""
			}
			nodeDevice[id] = d
			r.Devices = append(r.Devices, d)
		case "PipeWire:Interface:Node":
			n := &pwNode{ID: id, Device: -1, Name: propString(p, "node.name"), Description: propString(p, "node.description"),
				App: propString(p, "application.name"), MediaClass: propString(p, "media.class")}
			if dev, ok := coerceInt(p["device.id"]); ok {
				n.Device = dev
				nodes = append(nodes, pendingNode{dev, n.Name})
			}
			r.Nodes[id] = n
		case "PipeWire:Interface:Port":
			port := &pwPort{ID: id, Node: -1, SeqClient: -1, Name: propString(p, "port.name"), Alias: propString(p, "port.alias"),
				Direction: coerceString(info.Direction)}
			if n, ok := coerceInt(p["node.id"]); ok {
				port.Node = n
			}
			if port.Direction == "" {
				port.Direction = map[string]string{"in": "input", "out": "output"}[propString(p, "port.direction")]
			}
			r.Ports[id] = port
			m := seqPathRe.FindStringSubmatch(propString(p, "object.path"))
			if m == nil {
				continue
			}
			client, _ := strconv.Atoi(m[1])
			port.SeqClient = client
			cname, pname := splitPortAlias(propString(p, "port.alias"), propString(p, "port.name"))
			c := midi[client]
			if c == nil {
				c = &pwMIDIClient{Client: client, Name: cname, Card: -1}
				midi[client] = c
			}
			if c.Card < 0 {
				c.Card = propCard(p)
			}
			if pname != "" && !containsString(c.Ports, pname) {
				c.Ports = append(c.Ports, pname)
			}
		case "PipeWire:Interface:Link":
			l, err := parsePWLink(id, info)
			if err != "" {
				notes = append(notes, fmt.Sprintf("pw-dump link %d: %s; skipped", id, err))
				continue
			}
			r.Links = append(r.Links, l)
		}
	}
	for _, n := range nodes {
		if d := nodeDevice[n.dev]; d != nil && n.name != "" {
			d.Nodes = append(d.Nodes, n.name)
		}
	}
	for _, c := range midi {
		r.MIDI = append(r.MIDI, c)
	}
	sort.Slice(r.MIDI, func(i, j int) bool { return r.MIDI[i].Client < r.MIDI[j].Client })
	return r, notes, nil
}

// parsePWLink reads a Link's ends from its info (output-node-id, output-port-id,
// input-node-id, input-port-id, state), falling back to its props (link.output.node …)
// where the info lacks them. err says what is missing.
func parsePWLink(id int, info pwInfo) (*pwLink, string) {
	l := &pwLink{ID: id, State: coerceString(info.State)}
	for _, f := range []struct {
		dst        *int
		info, prop string
		raw        json.RawMessage
	}{
		{&l.OutNode, "output-node-id", "link.output.node", info.OutputNodeID},
		{&l.OutPort, "output-port-id", "link.output.port", info.OutputPortID},
		{&l.InNode, "input-node-id", "link.input.node", info.InputNodeID},
		{&l.InPort, "input-port-id", "link.input.port", info.InputPortID},
	} {
		n, ok := coerceInt(f.raw)
		if !ok {
			n, ok = coerceInt(info.Props[f.prop])
		}
		if !ok || n < 0 {
			return nil, "no " + f.info
		}
		*f.dst = n
	}
	return l, ""
}

// splitPortAlias reads "JD-Xi:JD-Xi JD-Xi MIDI 1" (port.alias) or, failing that,
// "JD-Xi:(capture_0) JD-Xi JD-Xi MIDI 1" (port.name) into client and port names.
func splitPortAlias(alias, name string) (client, port string) {
	if c, p, ok := strings.Cut(alias, ":"); ok && c != "" {
		return c, p
	}
	if i := strings.Index(name, ":("); i > 0 {
		port := name[i+2:]
		if j := strings.Index(port, ") "); j >= 0 {
			port = port[j+2:]
		}
		return name[:i], port
	}
	return "", name
}

// propCard finds the ALSA card number a PipeWire object names, however it is spelled.
func propCard(p map[string]json.RawMessage) int {
	for _, k := range []string{"api.alsa.card", "alsa.card"} {
		if n, ok := coerceInt(p[k]); ok && n >= 0 && n < 256 {
			return n
		}
	}
	if path := propString(p, "api.alsa.path"); strings.HasPrefix(path, "hw:") {
		s := strings.TrimPrefix(path, "hw:")
		if i := strings.IndexByte(s, ','); i >= 0 {
			s = s[:i]
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < 256 {
			return n
		}
	}
	return -1
}

// usbPathInSysfs finds the USB device in a sysfs path:
// /devices/pci0000:00/0000:00:14.0/usb3/3-3/3-3.2/3-3.2:1.0/sound/card1 → 3-3.2.
func usbPathInSysfs(p string) string {
	found := ""
	for _, part := range strings.Split(p, "/") {
		if usbPathRe.MatchString(part) {
			found = part
		}
	}
	return found
}

// propHexID reads a vendor or product id PipeWire printed as "0x0582" or as the number 1410.
func propHexID(p map[string]json.RawMessage, k string) string {
	if n, ok := coerceInt(p[k]); ok && len(bytes.TrimSpace(p[k])) > 0 && bytes.TrimSpace(p[k])[0] != '"' {
		if n < 0 || n > 0xffff {
			return ""
		}
		return fmt.Sprintf("%04x", n)
	}
	return hexID(propString(p, k))
}

// hexID reads "0x0582" or "0582" (4 digits are hex, as udev prints them) into "0582";
// other digit strings are decimal ("5" → "0005").
func hexID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var n uint64
	var err error
	if strings.HasPrefix(s, "0x") {
		n, err = strconv.ParseUint(s[2:], 16, 16)
	} else if hex4Re.MatchString(s) {
		n, err = strconv.ParseUint(s, 16, 16)
	} else {
		n, err = strconv.ParseUint(s, 10, 16)
	}
	if err != nil || s == "" {
		return ""
	}
	return fmt.Sprintf("%04x", n)
}

func propString(p map[string]json.RawMessage, k string) string { return coerceString(p[k]) }

// coerceString reads a JSON string, or the text of a number or boolean, as text read from
// hardware; anything else is "".
func coerceString(r json.RawMessage) string {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return ""
	}
	switch r[0] {
	case '"':
		var s string
		if json.Unmarshal(keepInvalidBytes(r), &s) != nil {
			return ""
		}
		return strings.TrimSpace(graph.EscapeHardwareText([]byte(s)))
	case '{', '[', 'n':
		return ""
	}
	return string(r) // a number or true/false
}

// keepInvalidBytes writes each byte of a JSON string that is not UTF-8 as the text \xNN
// (a JSON-escaped backslash, then xNN), as graph.EscapeHardwareText writes it: Go's
// decoder would turn it into U+FFFD, and hardware text is escaped, never replaced.
func keepInvalidBytes(r []byte) []byte {
	if utf8.Valid(r) {
		return r
	}
	out := make([]byte, 0, len(r)+16)
	for len(r) > 0 {
		c, size := utf8.DecodeRune(r)
		if c == utf8.RuneError && size <= 1 {
			out = fmt.Appendf(out, `\\x%02x`, r[0])
			r = r[1:]
			continue
		}
		out = append(out, r[:size]...)
		r = r[size:]
	}
	return out
}

// coerceInt reads a JSON number or a string holding one.
func coerceInt(r json.RawMessage) (int, bool) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return 0, false
	}
	s := string(r)
	if r[0] == '"' {
		if json.Unmarshal(r, &s) != nil {
			return 0, false
		}
		s = strings.TrimSpace(s)
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int(f)) && f > -1e9 && f < 1e9 {
		return int(f), true
	}
	return 0, false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
