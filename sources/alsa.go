package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// alsaCard is one card of /proc/asound/cards with its cardN/ files.
type alsaCard struct {
	Number    int
	ID        string // [id] in cards, overridden by cardN/id
	Driver    string // USB-Audio
	ShortName string
	LongName  string // as printed
	// From the long name of a USB card: "… at usb-<controller>-<devpath>, <speed> speed".
	Controller string
	DevPath    string
	SpeedWord  string
	// From cardN/usbid and cardN/usbbus.
	VID, PID    string
	Bus, Devnum int
	MIDI        []string // first line of each cardN/midiN
	Nodes       []string // its /dev/snd nodes, from <sys-root>/class/sound (snd/controlC0)
}

// seqClient is one client of /proc/asound/seq/clients.
type seqClient struct {
	Number int
	Name   string
	Kernel bool
	Card   int      // from "card=N" where the text carries it, else -1
	Words  []string // the bracketed words: Kernel, User, Legacy, UMP, MIDI2…
	Ports  []seqPort
}

type seqPort struct {
	Number int
	Name   string
	Flags  string
	// The port's subscriptions as the kernel lists them under it: "Connecting To:" (this
	// port → there) and "Connected From:" (there → this port). Each subscription shows
	// on both ends when both clients are listed.
	To, From []seqSub
}

// seqSub is the other end of one subscription, with the kernel's flags: "[r:0]" or
// "[t:0]" (events time-stamped in real time or ticks on queue 0), "[ex]" (exclusive).
type seqSub struct {
	Client, Port int
	Timestamp    string // "real", "tick" or ""
	Queue        int
	Exclusive    bool
}

// cardHeadRe matches the first line of a card: "%2i [%-15s]: %s - %s".
var cardHeadRe = regexp.MustCompile(`^\s*([0-9]+) \[(.*)\]: (.*)$`)

// parseCards parses /proc/asound/cards. Lines it cannot read are noted and skipped; a
// card whose long-name line is missing (a truncated file) keeps what its first line says.
func parseCards(data []byte) ([]*alsaCard, []string) {
	var cards []*alsaCard
	var notes []string
	var cur *alsaCard
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, "\r")
		if strings.TrimSpace(line) == "" || strings.TrimSpace(line) == "--- no soundcards ---" {
			continue
		}
		if m := cardHeadRe.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n > 255 {
				notes = append(notes, fmt.Sprintf("cards line %d: card number %q out of range", i+1, m[1]))
				cur = nil
				continue
			}
			c := &alsaCard{Number: n, ID: hwText([]byte(m[2]))}
			rest := m[3]
			if d, s, ok := strings.Cut(rest, " - "); ok {
				c.Driver, c.ShortName = hwText([]byte(d)), hwText([]byte(s))
			} else {
				c.ShortName = hwText([]byte(rest))
			}
			cards = append(cards, c)
			cur = c
			continue
		}
		if cur != nil && cur.LongName == "" && (line[0] == ' ' || line[0] == '\t') {
			cur.LongName = hwText([]byte(line))
			cur.parseLongName()
			continue
		}
		notes = append(notes, fmt.Sprintf("cards line %d: unreadable %q", i+1, clip(line, 60)))
		cur = nil
	}
	return cards, notes
}

// parseLongName reads the USB location out of a usb-audio long name:
// "Roland JD-Xi at usb-0000:00:14.0-3.2, high speed". The controller's bus name may itself
// hold dashes (xhci-hcd.0.auto), so the devpath is what follows the last one.
func (c *alsaCard) parseLongName() {
	i := strings.LastIndex(c.LongName, " at usb-")
	if i < 0 {
		return
	}
	loc := c.LongName[i+len(" at usb-"):]
	loc, speed, _ := strings.Cut(loc, ",")
	j := strings.LastIndexByte(loc, '-')
	if j <= 0 {
		return
	}
	dp := loc[j+1:]
	if !usbPathRe.MatchString("1-" + dp) {
		return
	}
	c.Controller, c.DevPath = loc[:j], dp
	c.SpeedWord = strings.TrimSuffix(strings.TrimSpace(speed), " speed")
}

// stableLongName is the long name without what changes when the device moves or the
// machine reboots: the USB location and speed, or a PCI card's address and irq.
func stableLongName(long string) string {
	for _, sep := range []string{" at usb-", " at 0x", " at irq "} {
		if i := strings.LastIndex(long, sep); i > 0 {
			return strings.TrimSpace(long[:i])
		}
	}
	return long
}

// stableCardID drops the "_1", "_2" ALSA appends to make a second card with the same id
// unique: which twin gets it depends on plug order, a per-boot fact like the card number.
func stableCardID(id string) string {
	if i := strings.LastIndexByte(id, '_'); i > 0 && i < len(id)-1 {
		if _, err := strconv.Atoi(id[i+1:]); err == nil {
			return id[:i]
		}
	}
	return id
}

var (
	clientRe = regexp.MustCompile(`^Client\s+([0-9]+)\s*:\s*"(.*)"\s*(.*)$`)
	portRe   = regexp.MustCompile(`^\s+Port\s+([0-9]+)\s*:\s*"(.*)"\s*(?:\(([^)]*)\))?`)
	cardEqRe = regexp.MustCompile(`card\s*[=:]\s*([0-9]+)`)
	// "    Connecting To: 128:0, 129:0[r:0][ex]" (sound/core/seq/seq_clientmgr.c,
	// snd_seq_info_dump_subscribers).
	subsRe    = regexp.MustCompile(`^\s+(Connecting To|Connected From)\s*:\s*(.*)$`)
	subAddrRe = regexp.MustCompile(`^([0-9]{1,3}):([0-9]{1,3})((?:\[[^\]]*\])*)$`)
)

// parseSeqClients parses /proc/asound/seq/clients: "Client  20 : "JD-Xi" [Kernel]" lines
// with indented "Port   0 : "…" (RWeX)" lines. Newer kernels add words in the brackets
// ("[Kernel Legacy]", "[User UMP MIDI2]"), a direction after a port, UMP lines and pool
// statistics; all are tolerated. A "card=N" anywhere on a client line links it to a card.
func parseSeqClients(data []byte) ([]*seqClient, []string) {
	var out []*seqClient
	var notes []string
	var cur *seqClient
	seen := map[int]bool{}
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimRight(raw, "\r")
		if m := clientRe.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n > 255 {
				notes = append(notes, fmt.Sprintf("seq/clients line %d: client number %q out of range", i+1, m[1]))
				cur = nil
				continue
			}
			// The kernel lists each client once; a second block with its number (a
			// garbled file) would give two devices one key.
			if seen[n] {
				notes = append(notes, fmt.Sprintf("seq/clients line %d: client %d listed twice; the first is kept", i+1, n))
				cur = nil
				continue
			}
			seen[n] = true
			c := &seqClient{Number: n, Name: hwText([]byte(m[2])), Card: -1}
			rest := m[3]
			if cm := cardEqRe.FindStringSubmatch(rest); cm != nil {
				c.Card, _ = strconv.Atoi(cm[1])
			}
			c.Words = strings.Fields(strings.NewReplacer("[", " ", "]", " ", ",", " ").Replace(rest))
			for _, w := range c.Words {
				switch strings.ToLower(w) {
				case "kernel", "type=kernel":
					c.Kernel = true
				}
			}
			out = append(out, c)
			cur = c
			continue
		}
		if m := portRe.FindStringSubmatch(line); m != nil && cur != nil {
			n, _ := strconv.Atoi(m[1])
			cur.Ports = append(cur.Ports, seqPort{Number: n, Name: hwText([]byte(m[2])), Flags: m[3]})
			continue
		}
		if m := subsRe.FindStringSubmatch(line); m != nil {
			if cur == nil || len(cur.Ports) == 0 {
				notes = append(notes, fmt.Sprintf("seq/clients line %d: %s outside a port; ignored", i+1, m[1]))
				continue
			}
			subs, bad := parseSubs(m[2])
			if bad != "" {
				notes = append(notes, fmt.Sprintf("seq/clients line %d: unreadable subscriber %q; ignored", i+1, clip(bad, 40)))
			}
			p := &cur.Ports[len(cur.Ports)-1]
			if m[1] == "Connecting To" {
				p.To = append(p.To, subs...)
			} else {
				p.From = append(p.From, subs...)
			}
			continue
		}
		if strings.HasPrefix(line, "Client") && !strings.HasPrefix(line, "Client info") {
			notes = append(notes, fmt.Sprintf("seq/clients line %d: unreadable %q", i+1, clip(line, 60)))
			cur = nil
		}
		// Everything else — the header, pool statistics, connections, UMP details — is
		// information we do not need.
	}
	return out, notes
}

// parseSubs reads the list after "Connecting To:" or "Connected From:": addresses
// client:port separated by ", ", each optionally followed by "[r:0]", "[t:1]" (older
// tools print "[real:0]", "[tick:1]") and "[ex]". bad is the first item it could not
// read ("" when none); the others are kept.
func parseSubs(list string) (subs []seqSub, bad string) {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		m := subAddrRe.FindStringSubmatch(item)
		if m == nil {
			if bad == "" {
				bad = item
			}
			continue
		}
		s := seqSub{}
		s.Client, _ = strconv.Atoi(m[1])
		s.Port, _ = strconv.Atoi(m[2])
		if s.Client > 255 || s.Port > 255 {
			if bad == "" {
				bad = item
			}
			continue
		}
		for _, tag := range strings.Split(strings.Trim(m[3], "[]"), "][") {
			kind, q, ok := strings.Cut(tag, ":")
			switch {
			case tag == "ex":
				s.Exclusive = true
			case ok && (kind == "r" || kind == "real"):
				s.Timestamp = "real"
				s.Queue, _ = strconv.Atoi(q)
			case ok && (kind == "t" || kind == "tick"):
				s.Timestamp = "tick"
				s.Queue, _ = strconv.Atoi(q)
			}
		}
		subs = append(subs, s)
	}
	return subs, bad
}

// alsaReading is what the alsa source read.
type alsaReading struct {
	Cards   []*alsaCard
	Clients []*seqClient
}

// readALSA reads <procRoot>/asound. A missing cards file fails the source; missing
// per-card files and a missing seq/clients (no sequencer loaded) are fine.
func readALSA(procRoot string) (*alsaReading, []string, error) {
	dir := filepath.Join(procRoot, "asound")
	data, err := readSmallFile(filepath.Join(dir, "cards"), 1<<20)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) {
			hint = " (no ALSA sound driver loaded here; --proc-root reads another tree)"
		}
		return nil, nil, fmt.Errorf("%s: %s%s", filepath.Join(dir, "cards"), describeErr(err), hint)
	}
	cards, notes := parseCards(data)
	r := &alsaReading{}
	seenNum := map[int]bool{}
	for _, c := range cards {
		if seenNum[c.Number] {
			notes = append(notes, fmt.Sprintf("skipped card %d: listed twice", c.Number))
			continue
		}
		seenNum[c.Number] = true
		notes = append(notes, readCardFiles(filepath.Join(dir, "card"+strconv.Itoa(c.Number)), c)...)
		r.Cards = append(r.Cards, c)
	}
	if data, err := readSmallFile(filepath.Join(dir, "seq", "clients"), 1<<20); err == nil {
		var n []string
		r.Clients, n = parseSeqClients(data)
		notes = append(notes, n...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		notes = append(notes, fmt.Sprintf("seq/clients: %s", describeErr(err)))
	}
	return r, notes, nil
}

// readCardFiles fills a card from cardN/{id,usbid,usbbus,midiN}; each file is optional
// (usbid and usbbus exist only for USB cards), and a garbled one is noted and ignored.
func readCardFiles(dir string, c *alsaCard) []string {
	var notes []string
	name := filepath.Base(dir)
	if b, err := readSmallFile(filepath.Join(dir, "id"), maxAttrSize); err == nil {
		if id := hwText(b); id != "" {
			c.ID = id
		}
	}
	if b, err := readSmallFile(filepath.Join(dir, "usbid"), maxAttrSize); err == nil {
		v := attrLine(b)
		vid, pid, ok := strings.Cut(v, ":")
		if ok && hex4Re.MatchString(vid) && hex4Re.MatchString(pid) {
			c.VID, c.PID = strings.ToLower(vid), strings.ToLower(pid)
		} else {
			notes = append(notes, fmt.Sprintf("%s/usbid %q is not vid:pid; ignored", name, clip(v, 40)))
		}
	}
	if b, err := readSmallFile(filepath.Join(dir, "usbbus"), maxAttrSize); err == nil {
		v := attrLine(b)
		bs, ds, ok := strings.Cut(v, "/")
		bus, err1 := strconv.Atoi(bs)
		dev, err2 := strconv.Atoi(ds)
		if ok && err1 == nil && err2 == nil && bus > 0 && dev > 0 && bus < 1000 && dev < 128 {
			c.Bus, c.Devnum = bus, dev
		} else {
			notes = append(notes, fmt.Sprintf("%s/usbbus %q is not bus/device; ignored", name, clip(v, 40)))
		}
	}
	if ents, err := os.ReadDir(dir); err == nil {
		var midis []string
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, "midi") {
				if _, err := strconv.Atoi(n[4:]); err == nil {
					midis = append(midis, n)
				}
			}
		}
		sort.Strings(midis)
		for _, m := range midis {
			if b, err := readSmallFile(filepath.Join(dir, m), 64<<10); err == nil {
				if t := hwText(b); t != "" {
					c.MIDI = append(c.MIDI, t)
				}
			}
		}
	}
	return notes
}

// readSmallFile reads a file, refusing one larger than limit.
func readSmallFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, 512) // sysfs and procfs files are short; grow for the rest
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return nil, fmt.Errorf("larger than %d bytes", limit)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, err
		}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
