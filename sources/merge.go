package sources

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// Source names as Snapshot.Sources reports them, most physical first.
const (
	SourceUSB      = "usb"
	SourceALSA     = "alsa"
	SourcePipeWire = "pipewire"
)

// evidence is one thing one source saw; merge groups the evidence of one physical device.
type evidence struct {
	usb    *usbDevice
	card   *alsaCard
	client *seqClient
	pwdev  *pwDevice
	pwmidi *pwMIDIClient
}

type merger struct {
	items  []evidence
	parent []int
	usbOf  []int               // per root: the usb item in its group, -1 when none
	notes  map[string][]string // by source name
	mem    usbMemory           // serials from an earlier usb reading; nil when usb answered
}

// note records something merging skipped, under the source whose evidence it concerns.
func (m *merger) note(source, format string, args ...any) {
	if m.notes == nil {
		m.notes = map[string][]string{}
	}
	m.notes[source] = append(m.notes[source], fmt.Sprintf(format, args...))
}

func (e evidence) source() string {
	switch {
	case e.usb != nil:
		return SourceUSB
	case e.card != nil, e.client != nil:
		return SourceALSA
	}
	return SourcePipeWire
}

func (m *merger) add(e evidence) int {
	i := len(m.items)
	m.items = append(m.items, e)
	m.parent = append(m.parent, i)
	u := -1
	if e.usb != nil {
		u = i
	}
	m.usbOf = append(m.usbOf, u)
	return i
}

func (m *merger) find(i int) int {
	for m.parent[i] != i {
		m.parent[i] = m.parent[m.parent[i]]
		i = m.parent[i]
	}
	return i
}

// union joins two groups unless that would put two USB devices in one: sources that
// disagree about where a device is are noted, not believed.
func (m *merger) union(a, b int, why string) bool {
	ra, rb := m.find(a), m.find(b)
	if ra == rb {
		return true
	}
	if ua, ub := m.usbOf[ra], m.usbOf[rb]; ua >= 0 && ub >= 0 {
		m.note(m.items[b].source(), "not linking %s: it would join usb %s and usb %s", why, m.items[ua].usb.Path, m.items[ub].usb.Path)
		return false
	}
	m.parent[rb] = ra
	if m.usbOf[ra] < 0 {
		m.usbOf[ra] = m.usbOf[rb]
	}
	return true
}

// merged says which device each piece of evidence ended up in, so observed relations
// name merged devices: a USB device by its sysfs name (3-3.2, usb3), a sequencer client
// by number (from seq/clients or PipeWire's Midi-Bridge), a PipeWire device by id.
// Evidence left out of the snapshot (unplugging) is in none of them.
type merged struct {
	usb      map[string]*graph.ObservedDevice
	client   map[int]*graph.ObservedDevice
	pwDevice map[int]*graph.ObservedDevice
}

// usbMemory remembers the serial of each USB device the last good usb reading showed, by
// usbMemoryKey, so that a reading without the usb source keys a serial device as before.
type usbMemory map[string]string

func usbMemoryKey(vid, pid, path string) string { return vid + ":" + pid + "@" + path }

// rememberUSB is the memory of one good usb reading.
func rememberUSB(usb []*usbDevice) usbMemory {
	mem := usbMemory{}
	for _, d := range usb {
		if d.Serial != "" {
			mem[usbMemoryKey(d.VID, d.PID, d.Path)] = d.Serial
		}
	}
	return mem
}

// mergeReadings turns what the sources read into one ObservedDevice per physical device,
// and says which device each piece of evidence ended up in. Any of the readings may be
// nil (that source failed); the others still give their devices, and a device keeps the
// same key as long as one source that knows its USB place sees it. usbOK says the usb
// source answered (usb may then be empty). When it did, a device ALSA or PipeWire place
// on USB that the usb reading does not show is left out (see the package comment); when
// it did not, mem (may be nil) supplies the serial last seen at a device's USB place.
//
// Root hubs (usbN) are never joined with anything: each is an infrastructure device of
// its own, keyed by its controller (rootHub).
func mergeReadings(usb []*usbDevice, usbOK bool, alsa *alsaReading, pw *pwReading, mem usbMemory) ([]*graph.ObservedDevice, map[string][]string, *merged) {
	m := &merger{}
	if !usbOK {
		m.mem = mem
	}
	idx := &merged{usb: map[string]*graph.ObservedDevice{}, client: map[int]*graph.ObservedDevice{}, pwDevice: map[int]*graph.ObservedDevice{}}
	var out []*graph.ObservedDevice
	var plain []*usbDevice
	for _, d := range usb {
		if d.Root {
			r := rootHub(d)
			idx.usb[d.Path] = r
			out = append(out, r)
			continue
		}
		plain = append(plain, d)
	}
	usb = plain
	byPath := map[string]int{}
	byBusDev := map[[2]int]int{}
	for _, d := range usb {
		i := m.add(evidence{usb: d})
		byPath[d.Path] = i
		if d.Devnum > 0 {
			byBusDev[[2]int{d.Bus, d.Devnum}] = i
		}
	}
	// usbAt finds the one USB device at a devpath under a controller (when the bus is not
	// known: a long name without usbbus, a PipeWire bus path).
	usbAt := func(controller, devpath, vid, pid string) (int, bool) {
		found := -1
		for _, d := range usb {
			if d.DevPath != devpath || (controller != "" && d.Controller != "" && d.Controller != controller) ||
				(vid != "" && (d.VID != vid || d.PID != pid)) {
				continue
			}
			if found >= 0 {
				return -1, false
			}
			found = byPath[d.Path]
		}
		return found, found >= 0
	}

	cardItem := map[int]int{}
	var cards []*alsaCard
	var clients []*seqClient
	if alsa != nil {
		cards, clients = alsa.Cards, alsa.Clients
	}
	for _, c := range cards {
		i := m.add(evidence{card: c})
		cardItem[c.Number] = i
		why := fmt.Sprintf("card %d", c.Number)
		switch {
		case c.Bus > 0 && c.Devnum > 0 && hasKey(byBusDev, [2]int{c.Bus, c.Devnum}):
			u := byBusDev[[2]int{c.Bus, c.Devnum}]
			if d := m.items[u].usb; c.VID != "" && (d.VID != c.VID || d.PID != c.PID) {
				m.note(SourceALSA, "card %d: usbbus names usb %s but usbid %s:%s disagrees; not linked", c.Number, d.Path, c.VID, c.PID)
				break
			}
			m.union(u, i, why)
		case c.Bus > 0 && c.DevPath != "" && hasKey(byPath, c.usbPath()):
			m.union(byPath[c.usbPath()], i, why)
		case c.DevPath != "":
			if u, ok := usbAt(c.Controller, c.DevPath, c.VID, c.PID); ok {
				m.union(u, i, why)
			}
		}
	}
	clientItem := map[int]int{}
	for _, cl := range clients {
		if cl.Number < 16 || !cl.Kernel {
			continue // global clients (System, Midi Through) and applications are not devices
		}
		c := linkClientCard(cl.Number, cl.Name, cl.Card, cards)
		if c < 0 && cl.Card < 0 && cl.Number < 128 && !hasKey(cardItem, (cl.Number-16)/4) {
			// A static client whose card the cards file does not list (it was cut short):
			// on its own it would show the card's device a second time.
			m.note(SourceALSA, "client %d (%s): its card %d is not in the cards file; skipped", cl.Number, cl.Name, (cl.Number-16)/4)
			continue
		}
		i := m.add(evidence{client: cl})
		clientItem[cl.Number] = i
		if c >= 0 {
			m.union(cardItem[c], i, fmt.Sprintf("client %d", cl.Number))
		}
	}
	if pw != nil {
		for _, d := range pw.Devices {
			i := m.add(evidence{pwdev: d})
			why := fmt.Sprintf("pipewire device %d", d.ID)
			switch {
			case d.Card >= 0 && hasKey(cardItem, d.Card):
				m.union(cardItem[d.Card], i, why)
			case d.USBPath != "" && hasKey(byPath, d.USBPath):
				m.union(byPath[d.USBPath], i, why)
			case d.DevPath != "":
				if u, ok := usbAt(d.Controller, d.DevPath, d.VID, d.PID); ok {
					m.union(u, i, why)
				}
			}
		}
		for _, c := range pw.MIDI {
			if c.Client < 16 || c.Client >= 128 {
				continue // global clients and applications
			}
			if alsa != nil && len(clients) > 0 && !hasKey(clientItem, c.Client) {
				continue // the kernel lists it as no device of ours (an application)
			}
			i := m.add(evidence{pwmidi: c})
			why := fmt.Sprintf("pipewire midi client %d", c.Client)
			if ci, ok := clientItem[c.Client]; ok {
				m.union(ci, i, why)
			} else if k := linkClientCard(c.Client, c.Name, c.Card, cards); k >= 0 {
				m.union(cardItem[k], i, why)
			} else if alsa == nil {
				// No kernel view: a PipeWire device of the same name is the same card.
				for j, e := range m.items {
					if e.pwdev != nil && c.Name != "" && (e.pwdev.CardName == c.Name || e.pwdev.Nick == c.Name) {
						m.union(j, i, why)
						break
					}
				}
			}
		}
	}

	groups := map[int][]int{}
	var roots []int
	for i := range m.items {
		r := m.find(i)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], i)
	}
	for _, r := range roots {
		var g []evidence
		for _, i := range groups[r] {
			g = append(g, m.items[i])
		}
		if usbOK && m.usbOf[r] < 0 && m.unplugging(g, usb) {
			continue
		}
		d := m.build(g)
		if d == nil {
			continue
		}
		out = append(out, d)
		for _, e := range g {
			switch {
			case e.usb != nil:
				idx.usb[e.usb.Path] = d
			case e.client != nil:
				idx.client[e.client.Number] = d
			case e.pwdev != nil:
				idx.pwDevice[e.pwdev.ID] = d
			}
		}
		for _, e := range g {
			if e.pwmidi != nil && idx.client[e.pwmidi.Client] == nil {
				idx.client[e.pwmidi.Client] = d
			}
		}
	}
	m.uniqueKeys(out)
	sort.SliceStable(out, func(i, j int) bool { return refLess(out[i].Ref, out[j].Ref) })
	return out, m.notes, idx
}

// rootHub is the infrastructure device of a root hub (usbN): the end of every via chain.
// Ref usb:usb3; key usb-root:<controller>:<bus> — the controller's PCI address from the
// sysfs path (0000:00:14.0), else the root hub's serial, which Linux sets to the
// controller's bus name (xhci-hcd.0.auto on a board without PCI), else none
// (usb-root:usb3). One controller has a root hub per speed (bus 3 for USB 2, bus 4 for
// USB 3 on an xHCI), so the bus number is part of the key, as it is of every bus-port
// path. No usb_path (a root hub is no port) and no usb_serial (its serial is the
// controller's name, in the key): its fingerprint is its usb_id.
func rootHub(u *usbDevice) *graph.ObservedDevice {
	controller := u.Controller
	if controller == "" {
		controller = u.Serial
	}
	key := "usb-root:" + u.Path
	if controller != "" {
		key = "usb-root:" + controller + ":" + strconv.Itoa(u.Bus)
	}
	d := &graph.ObservedDevice{Key: key, Ref: "usb:" + u.Path, Source: SourceUSB, Sources: []string{SourceUSB}, Infra: true,
		Name: usbName(u, u.IDs), Attrs: map[string]string{}, Nodes: devNodes(u.Nodes)}
	if f, err := graph.NormalizeFingerprint(graph.FPUSBID, u.VID+":"+u.PID); err == nil {
		d.Fingerprints = []graph.Fingerprint{f}
	}
	for k, v := range map[string]string{"vendor_id": u.VID, "product_id": u.PID, "manufacturer": u.Manufacturer, "product": u.Product,
		"speed": u.Speed, "busnum": itoaPos(u.Bus), "devnum": itoaPos(u.Devnum), "usb_class": u.Class,
		"interface_classes": strings.Join(u.IfClasses, ","), "driver": strings.Join(u.Drivers, ","), "usb_controller": controller, "root_hub": "true",
		"usb_ids_vendor": u.IDs.Vendor, "usb_ids_product": u.IDs.Product} {
		if v != "" {
			d.Attrs[k] = v
		}
	}
	return d
}

func hasKey[K comparable](m map[K]int, k K) bool { _, ok := m[k]; return ok }

// unplugging reports whether a group without a usb device is a USB device the (working)
// usb source does not show: torn down in sysfs while ALSA and PipeWire still list it, or
// listed by them before its sysfs entry is readable. Such a group is noted and left out,
// so the device keeps the key usb gives it instead of showing under a second one. A group
// whose USB place the usb reading does show (the sources disagree about it and were not
// linked; that is noted already) is kept.
func (m *merger) unplugging(g []evidence, usb []*usbDevice) bool {
	attached := false
	var place, ids []string
	source := ""
	for _, e := range g {
		switch {
		case e.card != nil:
			c := e.card
			if c.VID == "" && c.Bus <= 0 && c.DevPath == "" {
				continue
			}
			attached = true
			source = SourceALSA
			for _, d := range usb {
				if (c.Bus > 0 && c.Devnum > 0 && d.Bus == c.Bus && d.Devnum == c.Devnum) ||
					(c.Bus > 0 && c.DevPath != "" && d.Path == c.usbPath()) ||
					(c.Bus <= 0 && c.DevPath != "" && d.DevPath == c.DevPath && (c.Controller == "" || d.Controller == "" || d.Controller == c.Controller)) ||
					(c.Bus <= 0 && c.DevPath == "" && d.VID == c.VID && d.PID == c.PID) {
					return false
				}
			}
			switch {
			case c.Bus > 0 && c.DevPath != "":
				place = appendNonEmpty(place, "usb "+c.usbPath())
			case c.Bus > 0:
				place = appendNonEmpty(place, fmt.Sprintf("usbbus %03d/%03d", c.Bus, c.Devnum))
			case c.DevPath != "":
				place = appendNonEmpty(place, "port "+c.DevPath)
			}
			if c.VID != "" {
				ids = appendNonEmpty(ids, c.VID+":"+c.PID)
			}
		case e.pwdev != nil:
			p := e.pwdev
			if p.USBPath == "" && p.DevPath == "" {
				continue
			}
			attached = true
			if source == "" {
				source = SourcePipeWire
			}
			for _, d := range usb {
				if d.Path == p.USBPath || (p.USBPath == "" && d.DevPath == p.DevPath && (p.Controller == "" || d.Controller == "" || d.Controller == p.Controller)) {
					return false
				}
			}
			if p.USBPath != "" {
				place = appendNonEmpty(place, "usb "+p.USBPath)
			} else {
				place = appendNonEmpty(place, "port "+p.DevPath)
			}
			if p.VID != "" {
				ids = appendNonEmpty(ids, p.VID+":"+p.PID)
			}
		}
	}
	if !attached {
		return false
	}
	var what []string
	for _, e := range g {
		switch {
		case e.card != nil:
			what = append(what, fmt.Sprintf("card %d (%s)", e.card.Number, e.card.ID))
		case e.pwdev != nil:
			what = append(what, fmt.Sprintf("pipewire device %d (%s)", e.pwdev.ID, e.pwdev.Name))
		}
	}
	where := strings.Join(append(place, ids...), ", ")
	m.note(source, "%s at %s: not in the usb scan (unplugging, or not yet in sysfs); left out until usb shows it",
		strings.Join(what, " and "), where)
	return true
}

func (c *alsaCard) usbPath() string { return strconv.Itoa(c.Bus) + "-" + c.DevPath }

// linkClientCard finds the card of a kernel sequencer client: by an explicit card=N,
// else by the kernel's static numbering (client 16 + 4 × card for cards 0..27) when the
// names agree or that card has a rawmidi, else by a name exactly one card carries. -1
// when none.
func linkClientCard(num int, name string, card int, cards []*alsaCard) int {
	byNum := map[int]*alsaCard{}
	for _, c := range cards {
		byNum[c.Number] = c
	}
	if card >= 0 {
		if _, ok := byNum[card]; ok {
			return card
		}
	}
	agrees := func(c *alsaCard) bool {
		if name == "" {
			return false
		}
		if c.ShortName == name || c.ID == name {
			return true
		}
		return containsString(c.MIDI, name)
	}
	if num >= 16 && num < 128 {
		// The kernel gives a card's rawmidi exactly this client; names only guard against
		// a cards file and a clients file that disagree.
		if c, ok := byNum[(num-16)/4]; ok && (agrees(c) || len(c.MIDI) > 0) {
			return c.Number
		}
	}
	found := -1
	for _, c := range cards {
		if agrees(c) {
			if found >= 0 {
				return -1 // twins: the name cannot tell them apart
			}
			found = c.Number
		}
	}
	return found
}

// build makes one ObservedDevice of a group of evidence.
func (m *merger) build(g []evidence) *graph.ObservedDevice {
	var usb *usbDevice
	var cards []*alsaCard
	var clients []*seqClient
	var pwdevs []*pwDevice
	var pwmidis []*pwMIDIClient
	for _, e := range g {
		switch {
		case e.usb != nil:
			usb = e.usb
		case e.card != nil:
			cards = append(cards, e.card)
		case e.client != nil:
			clients = append(clients, e.client)
		case e.pwdev != nil:
			pwdevs = append(pwdevs, e.pwdev)
		case e.pwmidi != nil:
			pwmidis = append(pwmidis, e.pwmidi)
		}
	}
	d := &graph.ObservedDevice{Attrs: map[string]string{}}
	fp := fpSet{}
	set := func(k, v string) {
		if v != "" {
			d.Attrs[k] = v
		}
	}

	// The USB facts, from sysfs when it answered, else from what ALSA and PipeWire say.
	var vid, pid, path, serial string
	if usb != nil {
		vid, pid, path, serial = usb.VID, usb.PID, usb.Path, usb.Serial
		d.Infra = usb.Infra
		d.Sources = append(d.Sources, SourceUSB)
		set("vendor_id", usb.VID)
		set("product_id", usb.PID)
		set("manufacturer", usb.Manufacturer)
		set("product", usb.Product)
		set("serial", usb.Serial)
		set("speed", usb.Speed)
		set("busnum", itoaPos(usb.Bus))
		set("devnum", itoaPos(usb.Devnum))
		set("usb_class", usb.Class)
		set("interface_classes", strings.Join(usb.IfClasses, ","))
		set("driver", strings.Join(usb.Drivers, ","))
		set("usb_controller", usb.Controller)
		set("usb_ids_vendor", usb.IDs.Vendor)
		set("usb_ids_product", usb.IDs.Product)
		d.Nodes = devNodes(usb.Nodes)
	} else {
		var nodes []string
		for _, c := range cards {
			nodes = append(nodes, c.Nodes...)
		}
		d.Nodes = devNodes(nodes)
	}
	for _, c := range cards {
		if vid == "" && c.VID != "" {
			vid, pid = c.VID, c.PID
		}
		if path == "" && c.Bus > 0 && c.DevPath != "" {
			path = c.usbPath()
		}
	}
	for _, p := range pwdevs {
		if vid == "" && p.VID != "" && (p.USBPath != "" || p.DevPath != "") {
			vid, pid = p.VID, p.PID
		}
		if path == "" && p.USBPath != "" {
			path = p.USBPath
		}
	}
	if serial != "" {
		fp.add(m, graph.FPUSBSerial, vid+":"+pid+":"+serial)
	}
	if usb == nil && serial == "" && vid != "" && path != "" {
		// The usb source did not answer: the serial it last showed at this place (same
		// ids) keeps the key; without one the device is keyed by its place.
		if sn := m.mem[usbMemoryKey(vid, pid, path)]; sn != "" {
			serial = sn
			set("serial", sn)
		}
	}
	if vid != "" {
		fp.add(m, graph.FPUSBID, vid+":"+pid)
	}
	if path != "" {
		fp.add(m, graph.FPUSBPath, path)
	}

	if len(cards) > 0 {
		d.Sources = append(d.Sources, SourceALSA)
	} else if len(clients) > 0 {
		d.Sources = append(d.Sources, SourceALSA)
	}
	var nums, ids, drivers, shorts, longs, midis, buses []string
	for _, c := range cards {
		fp.add(m, graph.FPALSACardID, stableCardID(c.ID))
		if c.LongName != "" {
			fp.add(m, graph.FPALSALongname, stableLongName(c.LongName))
		}
		nums = append(nums, strconv.Itoa(c.Number))
		ids = append(ids, c.ID)
		drivers = appendNonEmpty(drivers, c.Driver)
		shorts = appendNonEmpty(shorts, c.ShortName)
		longs = appendNonEmpty(longs, c.LongName)
		midis = append(midis, c.MIDI...)
		if c.Bus > 0 {
			buses = append(buses, fmt.Sprintf("%03d/%03d", c.Bus, c.Devnum))
		}
	}
	set("alsa_card", strings.Join(nums, ","))
	set("alsa_id", strings.Join(ids, ","))
	set("alsa_driver", strings.Join(drivers, ","))
	set("alsa_name", strings.Join(shorts, "; "))
	set("alsa_longname", strings.Join(longs, "; "))
	set("alsa_usbbus", strings.Join(buses, ","))
	set("midi", strings.Join(midis, "; "))

	var cnums, ports []string
	for _, c := range clients {
		fp.add(m, graph.FPMIDIClient, c.Name)
		cnums = append(cnums, strconv.Itoa(c.Number))
		for _, p := range c.Ports {
			ports = append(ports, p.Name)
		}
	}
	for _, c := range pwmidis {
		if c.Name != "" {
			fp.add(m, graph.FPMIDIClient, c.Name)
		}
		if len(clients) == 0 {
			cnums = append(cnums, strconv.Itoa(c.Client))
			ports = append(ports, c.Ports...)
		}
	}
	set("seq_client", strings.Join(cnums, ","))
	set("seq_ports", strings.Join(ports, "; "))

	if len(pwdevs) > 0 || len(pwmidis) > 0 {
		d.Sources = append(d.Sources, SourcePipeWire)
	}
	var pwids, nodes, descs, busPaths []string
	for _, p := range pwdevs {
		fp.add(m, graph.FPPipeWireDevice, p.Name)
		pwids = append(pwids, strconv.Itoa(p.ID))
		nodes = append(nodes, p.Nodes...)
		descs = appendNonEmpty(descs, p.Description)
		busPaths = appendNonEmpty(busPaths, p.BusPath)
	}
	set("pipewire_id", strings.Join(pwids, ","))
	set("pipewire_nodes", strings.Join(nodes, ","))
	set("pipewire_description", strings.Join(descs, "; "))
	set("pipewire_bus_path", strings.Join(busPaths, ","))
	if len(pwmidis) > 0 {
		set("pipewire_midi", "Midi-Bridge")
	}
	d.Source = d.Sources[0]

	// Key: the most stable evidence. Ref: where the device is now, from the most physical
	// source that can say.
	switch {
	case serial != "" && vid != "":
		d.Key = "sn:" + vid + ":" + pid + ":" + serial
	case vid != "" && path != "":
		d.Key = "path:" + vid + ":" + pid + ":" + path
	case len(cards) > 0:
		d.Key = "alsa:" + cards[0].ID
	case len(pwdevs) > 0:
		d.Key = "pw:" + pwdevs[0].Name
	case len(clients) > 0:
		d.Key = "alsa:seq:" + clients[0].Name
	case len(pwmidis) > 0 && pwmidis[0].Name != "":
		d.Key = "pw:midi:" + pwmidis[0].Name
	default:
		return nil
	}
	switch {
	case path != "":
		d.Ref = "usb:" + path
	case len(cards) > 0:
		d.Ref = "alsa:card:" + cards[0].ID
	case len(pwdevs) > 0:
		d.Ref = "pipewire:" + pwdevs[0].Name
	case len(clients) > 0:
		d.Ref = "alsa:seq:" + clients[0].Name
	default:
		d.Ref = "pipewire:midi:" + pwmidis[0].Name
	}

	// Name: the best human name.
	switch {
	case usb != nil && (namedByDevice(usb) || usb.IDs.Vendor != "" && usb.IDs.Product != ""):
		d.Name = usbName(usb, usb.IDs)
	case len(cards) > 0 && cards[0].ShortName != "":
		d.Name = cards[0].ShortName
	case len(clients) > 0 && clients[0].Name != "":
		d.Name = clients[0].Name
	case len(pwdevs) > 0 && pwdevs[0].Description != "":
		d.Name = pwdevs[0].Description
	case len(pwdevs) > 0 && pwdevs[0].Nick != "":
		d.Name = pwdevs[0].Nick
	case len(pwmidis) > 0 && pwmidis[0].Name != "":
		d.Name = pwmidis[0].Name
	case usb != nil:
		d.Name = usbName(usb, usb.IDs)
	case len(cards) > 0:
		d.Name = cards[0].ID
	case len(pwdevs) > 0:
		d.Name = pwdevs[0].Name
	default:
		d.Name = d.Ref
	}
	d.Fingerprints = fp.list()
	if len(d.Attrs) == 0 {
		d.Attrs = nil
	}
	return d
}

// usbFallbackName names a device without a product string by its interface class, after
// its maker when known.
func usbFallbackName(u *usbDevice, maker string) string {
	kind := "device"
	classes := append([]string{u.Class}, u.IfClasses...)
	for _, c := range classes {
		switch c {
		case "01":
			kind = "audio device"
		case "02", "0a":
			kind = "serial device"
		case "03":
			kind = "input device"
		case "08":
			kind = "storage device"
		case "09":
			kind = "hub"
		case "0e":
			kind = "camera"
		default:
			continue
		}
		break
	}
	name := "USB " + kind
	if maker != "" {
		name = maker + " " + kind
	}
	return name + " " + u.VID + ":" + u.PID
}

// uniqueKeys gives devices that would share a key (two units reporting one serial, as
// cheap devices do) their place-based key instead, so neither hides the other; what is
// still shared (twins only PipeWire's MIDI bridge sees) is numbered in snapshot order.
func (m *merger) uniqueKeys(devs []*graph.ObservedDevice) {
	count := map[string]int{}
	for _, d := range devs {
		count[d.Key]++
	}
	for _, d := range devs {
		if count[d.Key] < 2 || !strings.HasPrefix(d.Key, "sn:") || !strings.HasPrefix(d.Ref, "usb:") {
			continue
		}
		path := strings.TrimPrefix(d.Ref, "usb:")
		m.note(d.Source, "usb %s shares serial key %s with another device; keyed by its path", path, d.Key)
		d.Key = "path:" + d.Attrs["vendor_id"] + ":" + d.Attrs["product_id"] + ":" + path
	}
	sort.SliceStable(devs, func(i, j int) bool { return refLess(devs[i].Ref, devs[j].Ref) })
	keys, refs := numbering{}, numbering{}
	for _, d := range devs {
		if k := keys.next(d.Key); k != d.Key {
			m.note(d.Source, "%s shares key %s with another device; numbered %s", d.Ref, d.Key, strings.TrimPrefix(k, d.Key))
			d.Key = k
		}
		d.Ref = refs.next(d.Ref)
	}
}

// numbering hands out names unique among those it has handed out: the first s as it is,
// later ones s#2, s#3, …, skipping any already taken (a device whose own key is s#2).
type numbering struct {
	seen map[string]int  // how often each name was asked for
	used map[string]bool // what was handed out
}

func (u *numbering) next(s string) string {
	if u.seen == nil {
		u.seen, u.used = map[string]int{}, map[string]bool{}
	}
	u.seen[s]++
	n, out := u.seen[s], s
	if n > 1 {
		out = fmt.Sprintf("%s#%d", s, n)
	}
	for u.used[out] {
		n++
		out = fmt.Sprintf("%s#%d", s, n)
	}
	u.used[out] = true
	return out
}

// fpSource is the source a fingerprint kind comes from, for notes.
var fpSource = map[graph.FingerprintKind]string{
	graph.FPUSBSerial: SourceUSB, graph.FPUSBID: SourceUSB, graph.FPUSBPath: SourceUSB,
	graph.FPALSACardID: SourceALSA, graph.FPALSALongname: SourceALSA, graph.FPMIDIClient: SourceALSA,
	graph.FPPipeWireDevice: SourcePipeWire,
}

// fpSet collects normalised, de-duplicated fingerprints.
type fpSet []graph.Fingerprint

func (s *fpSet) add(m *merger, kind graph.FingerprintKind, value string) {
	f, err := graph.NormalizeFingerprint(kind, value)
	if err != nil {
		m.note(fpSource[kind], "dropped fingerprint %s=%q: %s", kind, clip(value, 60), graph.ErrorMessage(err))
		return
	}
	if !graph.ContainsFingerprint(*s, f) {
		*s = append(*s, f)
	}
}

func (s fpSet) list() []graph.Fingerprint {
	out := append([]graph.Fingerprint(nil), s...)
	graph.SortFingerprints(out)
	return out
}

func appendNonEmpty(ss []string, s string) []string {
	if s == "" || containsString(ss, s) {
		return ss
	}
	return append(ss, s)
}

func itoaPos(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
