package sources

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/devgraph/devgraph/graph"
)

// MaxUSBIDsSize is the largest usb.ids file read; the real one is under 1 MiB.
const MaxUSBIDsSize = 16 << 20

// DefaultUSBIDsPaths are where usb.ids is looked for when Live.USBIDs is "": Debian's
// hwdata package, then where usbutils keeps it. The first that exists is read; with none
// devices are named from their own strings alone.
var DefaultUSBIDsPaths = []string{"/usr/share/hwdata/usb.ids", "/usr/share/misc/usb.ids"}

// CheckUSBIDs says whether path can be read as a usb.ids file: it exists, is a regular
// file (after symlinks) and holds at most MaxUSBIDsSize bytes. For checking a flag before
// anything runs; a Live with a bad file only notes it and names devices without it.
func CheckUSBIDs(path string) error {
	_, err := statUSBIDs(path)
	return err
}

func statUSBIDs(path string) (os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("usb.ids %s: %s", path, describeErr(err))
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("usb.ids %s: is a directory; give the usb.ids file itself", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("usb.ids %s: not a regular file", path)
	}
	if fi.Size() > MaxUSBIDsSize {
		return nil, fmt.Errorf("usb.ids %s: %d bytes is over the %d MiB limit; is this usb.ids?", path, fi.Size(), MaxUSBIDsSize>>20)
	}
	return fi, nil
}

// usbIDsName is what usb.ids says about one vid:pid: the vendor's name and the product's
// ("" when the file does not list them).
type usbIDsName struct{ Vendor, Product string }

type usbIDsVendor struct {
	name     string
	products map[string]string // pid → name
}

// usbIDs reads a usb.ids file for the vendors a reading needs, and keeps what it read
// while the file stays the same (path, size and modification time): a poll every few
// seconds then costs one stat, and a one-shot CLI scan parses a few vendors' lines
// instead of building the whole 20,000-vendor table.
type usbIDs struct {
	mu      sync.Mutex
	path    string
	size    int64
	mod     time.Time
	vendors map[string]*usbIDsVendor // vid → vendor; a nil value: looked for, not listed
}

// lookup names each "vid:pid" in ids from the file at path. An unreadable file is an
// error (the caller notes it and names devices without it).
func (c *usbIDs) lookup(path string, ids []string) (map[string]usbIDsName, error) {
	fi, err := statUSBIDs(path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path != path || c.size != fi.Size() || !c.mod.Equal(fi.ModTime()) || c.vendors == nil {
		c.path, c.size, c.mod, c.vendors = path, fi.Size(), fi.ModTime(), map[string]*usbIDsVendor{}
	}
	missing := map[string]bool{}
	for _, id := range ids {
		vid, _, _ := strings.Cut(id, ":")
		if _, ok := c.vendors[vid]; !ok {
			missing[vid] = true
		}
	}
	if len(missing) > 0 {
		data, err := readUSBIDsFile(path)
		if err != nil {
			return nil, err
		}
		found := parseUSBIDs(data, missing)
		for vid := range missing {
			c.vendors[vid] = found[vid] // nil when not listed
		}
	}
	out := make(map[string]usbIDsName, len(ids))
	for _, id := range ids {
		vid, pid, _ := strings.Cut(id, ":")
		v := c.vendors[vid]
		if v == nil {
			continue
		}
		out[id] = usbIDsName{Vendor: v.name, Product: v.products[pid]}
	}
	return out, nil
}

func readUSBIDsFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("usb.ids %s: %s", path, describeErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxUSBIDsSize+1))
	if err != nil {
		return nil, fmt.Errorf("usb.ids %s: %s", path, describeErr(err))
	}
	if len(data) > MaxUSBIDsSize {
		return nil, fmt.Errorf("usb.ids %s: over the %d MiB limit; is this usb.ids?", path, MaxUSBIDsSize>>20)
	}
	return data, nil
}

// parseUSBIDs reads the vendors in want (lowercase vid → true) from usb.ids text, or
// every vendor when want is nil. The format, as usbutils reads it:
//
//	vvvv  Vendor name
//	<TAB>pppp  Product name
//	<TAB><TAB>iiii  Interface name
//
// then other sections ("C 00  class", "HID …", "L 0409  English"…) whose top-level lines
// are not four hex digits; their tab-indented lines belong to them, never to the last
// vendor. Comments (#) and blank lines are skipped; a malformed line is skipped alone.
// Reading stops once every wanted vendor has been read.
func parseUSBIDs(data []byte, want map[string]bool) map[string]*usbIDsVendor {
	out := map[string]*usbIDsVendor{}
	left := len(want)
	var cur *usbIDsVendor
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if line[0] == '\t' {
			if cur == nil || (len(line) > 1 && line[1] == '\t') {
				continue // another section's line, an unwanted vendor's, or an interface
			}
			if id, name, ok := idsEntry(line[1:]); ok {
				if _, dup := cur.products[id]; !dup {
					cur.products[id] = name
				}
			}
			continue
		}
		// A top-level line ends the previous vendor's block.
		if want != nil && left == 0 {
			break
		}
		cur = nil
		id, name, ok := idsEntry(line)
		if !ok {
			continue // a section of another kind (C, AT, HID, L …) or a malformed line
		}
		if want != nil && !want[id] {
			continue
		}
		if _, dup := out[id]; dup {
			continue // listed twice: the first wins, as in usbutils
		}
		cur = &usbIDsVendor{name: name, products: map[string]string{}}
		out[id] = cur
		if want != nil {
			left--
		}
	}
	return out
}

// idsEntry parses "xxxx  Name": four hex digits, white space, a name. The id comes back
// lowercase and the name as text read from a file (escaped where not valid UTF-8).
func idsEntry(line []byte) (id, name string, ok bool) {
	if len(line) < 6 || (line[4] != ' ' && line[4] != '\t') {
		return "", "", false
	}
	for _, c := range line[:4] {
		if !isHex(c) {
			return "", "", false
		}
	}
	name = strings.TrimSpace(graph.EscapeHardwareText(line[5:]))
	if name == "" || len(name) > 256 {
		return "", "", false
	}
	return strings.ToLower(string(line[:4])), name, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// findUSBIDs is the usb.ids file a Live reads: the one given, else the first default that
// exists ("" when none does: devices are then named from their own strings).
func findUSBIDs(given string) string {
	if given != "" {
		return given
	}
	for _, p := range DefaultUSBIDsPaths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// genericNames are product strings that say what kind of thing a device is but not which
// one, compared after normalizeProduct (so "USB2.0 Hub", "USB 2.0 Hub [MTT]" and "Hub"
// are all "hub"). A device whose product string is one of these is named from usb.ids.
var genericNames = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{
		"", "hub", "root hub", "audio", "audio device", "sound", "sound card", "sound device", "dac", "speaker",
		"speakers", "headset", "headphones", "microphone", "midi", "midi device", "midi interface",
		"keyboard", "mouse", "optical mouse", "gaming mouse", "gaming keyboard", "keyboard mouse",
		"keyboard and mouse", "receiver", "wireless receiver", "nano receiver", "hid", "hid device",
		"input device", "device", "composite device", "gadget", "billboard device", "bridge",
		"controller", "host controller", "xhci host controller", "ehci host controller",
		"ohci host controller", "uhci host controller", "serial", "serial port", "serial device",
		"serial controller", "serial converter", "uart", "camera", "webcam", "video", "video device",
		"storage", "storage device", "mass storage", "mass storage device", "disk", "flash disk",
		"flash drive", "bluetooth", "ethernet", "ethernet adapter", "network adapter",
		"wlan", "wireless", "wireless adapter", "printer", "scanner", "card reader", "reader",
		"joystick", "gamepad", "game controller", "touchpad", "tablet", "modem", "charger",
	} {
		m[s] = true
	}
	return m
}()

// genericWords carry no name in a product string: the bus, its versions and speeds, and
// filler.
var genericWords = map[string]bool{
	"usb": true, "usb1": true, "usb2": true, "usb3": true, "usb4": true, "usbc": true, "type": true,
	"c": true, "generic": true, "standard": true, "full": true, "high": true, "super": true,
	"speed": true, "hs": true, "fs": true, "ss": true, "the": true, "a": true,
}

// normalizeProduct reduces a product string to the words that could name something:
// lowercase, bracketed qualifiers ("[MTT]", "(HS)") removed, split at anything that is not
// a letter or digit, bus words and numbers dropped. Letters of every script count, so a
// name written in Chinese or Cyrillic is never reduced to nothing.
func normalizeProduct(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '[' || r == '(':
			depth++
			b.WriteByte(' ')
		case r == ']' || r == ')':
			if depth > 0 {
				depth--
			}
			b.WriteByte(' ')
		case depth > 0:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	var words []string
	for _, w := range strings.Fields(b.String()) {
		if genericWords[w] || isNumber(w) {
			continue
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// GenericProduct reports whether a device's product string is missing or says only what
// kind of device it is ("USB2.0 Hub", "USB Audio", "Keyboard", "xHCI Host Controller"),
// so that usb.ids names it better. A name in any script counts as a real one.
func GenericProduct(product string) bool {
	return genericNames[normalizeProduct(product)]
}

// errNoUSBIDs marks a Live that found no usb.ids: not a warning (macOS, minimal
// containers), devices are named from their own strings.
var errNoUSBIDs = errors.New("no usb.ids")

// usbIDsNames looks up the USB devices of a reading in usb.ids (Live.USBIDs, else the
// defaults). With no file found it returns nil and errNoUSBIDs.
func (l *Live) usbIDsNames(devs []*usbDevice) (map[string]usbIDsName, error) {
	path := findUSBIDs(l.USBIDs)
	if path == "" {
		return nil, errNoUSBIDs
	}
	ids := make([]string, 0, len(devs))
	for _, d := range devs {
		ids = append(ids, d.VID+":"+d.PID)
	}
	return l.ids.lookup(path, ids)
}

// usbName names a USB device as lsusb does: its own product string unless that is missing
// or generic, else usb.ids' "Vendor Product". Without both usb.ids names a generic product
// string is kept (with the maker's name before it: "GenesysLogic USB2.0 Hub"), and a
// device with no product string is named by its class and ids, after its maker when the
// device or usb.ids gives one ("Holtek Semiconductor, Inc. input device 04d9:1702"). A
// root hub without usb.ids keeps the kernel's product string ("xHCI Host Controller").
func usbName(u *usbDevice, ids usbIDsName) string {
	switch {
	case u.Product != "" && !GenericProduct(u.Product):
		return u.Product
	case ids.Vendor != "" && ids.Product != "":
		return ids.Vendor + " " + ids.Product
	case u.Root:
		if u.Product != "" {
			return u.Product
		}
		return "USB root hub " + u.Path
	}
	maker := u.Manufacturer
	if maker == "" {
		maker = ids.Vendor
	}
	if u.Product != "" {
		if maker == "" || strings.Contains(strings.ToLower(u.Product), strings.ToLower(maker)) {
			return u.Product
		}
		return maker + " " + u.Product
	}
	return usbFallbackName(u, maker)
}

// namedByDevice reports whether usbName takes the device's own product string.
func namedByDevice(u *usbDevice) bool { return u.Product != "" && !GenericProduct(u.Product) }
