package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// usbDevice is one device under <sys-root>/bus/usb/devices.
type usbDevice struct {
	Path         string // sysfs name, the bus-port path: 3-3.2
	Bus, Devnum  int
	DevPath      string // 3.2
	VID, PID     string
	Serial       string
	Manufacturer string
	Product      string
	Speed        string
	Class        string   // bDeviceClass
	IfClasses    []string // bInterfaceClass of each interface, in interface order
	Drivers      []string // drivers bound to the interfaces, deduplicated
	Controller   string   // host controller the bus hangs off (0000:00:14.0), "" when unknown
	Infra        bool     // a hub
	Root         bool     // a root hub (usbN): the controller's end of the bus
	Nodes        []string // /dev nodes its interfaces provide, kernel names relative to /dev (ttyUSB0, snd/controlC1)
	IDs          usbIDsName
	ifDirs       []string // its interface directories, where readNodes looks
}

var (
	usbPathRe   = regexp.MustCompile(`^[0-9]{1,3}-[0-9]{1,3}(\.[0-9]{1,3}){0,6}$`)
	usbRootRe   = regexp.MustCompile(`^usb[0-9]{1,3}$`)
	hex4Re      = regexp.MustCompile(`^[0-9a-fA-F]{4}$`)
	pciAddrRe   = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	maxAttrSize = 4096 // sysfs attributes are one page at most
)

// readUSB walks <sysRoot>/bus/usb/devices. Each entry is resolved one level (a relative
// symlink into devices/…) and its attributes are read by name; links are never followed
// recursively. Root hubs (usbN) come first, marked Root and Infra; interface entries
// (3-3.2:1.0) are skipped. A broken entry is skipped and noted; only a missing or
// unreadable directory fails the source.
func readUSB(sysRoot string) ([]*usbDevice, []string, error) {
	dir := filepath.Join(sysRoot, "bus", "usb", "devices")
	ents, err := os.ReadDir(dir)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) {
			hint = " (no USB in this machine or container, or sysfs not mounted; --sys-root reads another tree)"
		}
		return nil, nil, fmt.Errorf("%s: %s%s", dir, describeErr(err), hint)
	}
	var out []*usbDevice
	var notes []string
	seen := map[string]string{} // resolved dir → entry name
	for _, e := range ents {
		name := e.Name()
		if strings.ContainsRune(name, ':') {
			continue // interfaces
		}
		if !usbPathRe.MatchString(name) && !usbRootRe.MatchString(name) {
			notes = append(notes, fmt.Sprintf("skipped %q: not a bus-port path", name))
			continue
		}
		devDir, err := resolveEntry(dir, name)
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: %v", name, err))
			continue
		}
		if other, dup := seen[devDir]; dup {
			notes = append(notes, fmt.Sprintf("skipped %s: points at the same directory as %s", name, other))
			continue
		}
		seen[devDir] = name
		d, err := readUSBDevice(name, devDir)
		if err != nil {
			notes = append(notes, fmt.Sprintf("skipped %s: %v", name, err))
			continue
		}
		var n []string
		d.Nodes, n = readNodes(devDir, d.ifDirs)
		notes = append(notes, n...)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return usbPathLess(out[i].Path, out[j].Path) })
	return out, notes, nil
}

// resolveEntry resolves dir/name one level: a symlink's target must be a real directory,
// not another link (a loop or a chain), and must exist (the device may have gone).
func resolveEntry(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		return "", errors.New(describeErr(err))
	}
	target := p
	if fi.Mode()&fs.ModeSymlink != 0 {
		link, err := os.Readlink(p)
		if err != nil {
			return "", errors.New(describeErr(err))
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(dir, link)
		}
		target = filepath.Clean(link)
		fi, err = os.Lstat(target)
		if err != nil {
			return "", fmt.Errorf("link target %s", describeErr(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", errors.New("symlink points at another symlink (a loop or chain); sysfs links point at device directories")
		}
	}
	if !fi.IsDir() {
		return "", errors.New("not a device directory")
	}
	return target, nil
}

// describeErr words a file-system error without repeating the path.
func describeErr(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Err.Error() == "too many levels of symbolic links" {
			return "symlink loop (too many levels of symbolic links)"
		}
		return pe.Err.Error()
	}
	return err.Error()
}

// usbAttrs are the device attributes read by name.
var usbAttrs = []string{"idVendor", "idProduct", "serial", "manufacturer", "product", "busnum", "devnum", "devpath", "speed", "bDeviceClass"}

func readUSBDevice(name, devDir string) (*usbDevice, error) {
	attrs := make(map[string][]byte, len(usbAttrs))
	for _, a := range usbAttrs {
		b, err := readAttr(filepath.Join(devDir, a))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // optional attributes exist only on some devices
			}
			return nil, fmt.Errorf("%s: %s", a, describeErr(err))
		}
		attrs[a] = b
	}
	if _, ok := attrs["idVendor"]; !ok {
		// Every USB device has idVendor; its absence means the device went away while we
		// read it (or the entry is not a device).
		if _, err := os.Stat(devDir); err != nil {
			return nil, errors.New("removed while being read")
		}
	}
	d, err := parseUSBAttrs(name, attrs)
	if err != nil {
		return nil, err
	}
	// Interfaces: <name>:<config>.<intf> directories beside the attributes.
	ents, err := os.ReadDir(devDir)
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %s", describeErr(err))
	}
	drivers := map[string]bool{}
	prefix := name
	if d.Root {
		prefix = strconv.Itoa(d.Bus) + "-0" // a root hub's interface is 3-0:1.0
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix+":") {
			continue
		}
		idir := filepath.Join(devDir, e.Name())
		if b, err := readAttr(filepath.Join(idir, "bInterfaceClass")); err == nil {
			if c, ok := parseHexByte(b); ok {
				d.IfClasses = append(d.IfClasses, c)
			}
		}
		if link, err := os.Readlink(filepath.Join(idir, "driver")); err == nil {
			drv := filepath.Base(link)
			// Only an interface a driver holds has class devices (/dev nodes) below
			// it, and a hub's driver makes none.
			if e.IsDir() && drv != "hub" {
				d.ifDirs = append(d.ifDirs, idir)
			}
			if !drivers[drv] {
				drivers[drv] = true
				d.Drivers = append(d.Drivers, graph.EscapeHardwareText([]byte(drv)))
			}
		}
	}
	for _, c := range d.IfClasses {
		if c == "09" {
			d.Infra = true
		}
	}
	d.Controller = controllerOf(devDir)
	return d, nil
}

// readAttr reads one sysfs attribute, refusing anything larger than a page.
func readAttr(path string) ([]byte, error) { return readSmallFile(path, maxAttrSize) }

// parseUSBAttrs turns raw attribute contents into a device. idVendor and idProduct are
// required and must be 4 hex digits; the rest is optional and checked where it has a
// shape. Text attributes are kept as read when valid UTF-8 and escaped when not.
func parseUSBAttrs(name string, attrs map[string][]byte) (*usbDevice, error) {
	d := &usbDevice{Path: name}
	bus, dp, _ := strings.Cut(name, "-")
	if n, ok := strings.CutPrefix(name, "usb"); ok {
		// A root hub: bus N, devpath "0" as the kernel prints it.
		d.Root, d.Infra = true, true
		bus, dp = n, "0"
	}
	vid, ok := attrs["idVendor"]
	if !ok {
		return nil, errors.New("no idVendor attribute")
	}
	if d.VID = attrLine(vid); !hex4Re.MatchString(d.VID) {
		return nil, fmt.Errorf("idVendor %q is not 4 hex digits", d.VID)
	}
	pid, ok := attrs["idProduct"]
	if !ok {
		return nil, errors.New("no idProduct attribute")
	}
	if d.PID = attrLine(pid); !hex4Re.MatchString(d.PID) {
		return nil, fmt.Errorf("idProduct %q is not 4 hex digits", d.PID)
	}
	d.VID, d.PID = strings.ToLower(d.VID), strings.ToLower(d.PID)
	d.Serial = hwText(attrs["serial"])
	d.Manufacturer = hwText(attrs["manufacturer"])
	d.Product = hwText(attrs["product"])

	d.Bus, _ = strconv.Atoi(bus)
	d.DevPath = dp
	if b, ok := attrs["busnum"]; ok {
		n, err := strconv.Atoi(attrLine(b))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("busnum %q is not a bus number", attrLine(b))
		}
		if n != d.Bus {
			return nil, fmt.Errorf("busnum %d disagrees with the entry name %s", n, name)
		}
	}
	if b, ok := attrs["devnum"]; ok {
		n, err := strconv.Atoi(attrLine(b))
		if err != nil || n <= 0 || n > 127 {
			return nil, fmt.Errorf("devnum %q is not a device number", attrLine(b))
		}
		d.Devnum = n
	}
	if b, ok := attrs["devpath"]; ok {
		if v := attrLine(b); v != dp {
			return nil, fmt.Errorf("devpath %q disagrees with the entry name %s", v, name)
		}
	}
	if b, ok := attrs["speed"]; ok {
		v := attrLine(b)
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			d.Speed = v
		}
	}
	if b, ok := attrs["bDeviceClass"]; ok {
		c, ok := parseHexByte(b)
		if !ok {
			return nil, fmt.Errorf("bDeviceClass %q is not a hex byte", attrLine(b))
		}
		d.Class = c
		d.Infra = c == "09" || d.Root
	}
	return d, nil
}

// attrLine is an attribute's first line without padding.
func attrLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// hwText is an attribute's first line as text read from hardware: trimmed, kept as read
// when valid UTF-8, escaped when not.
func hwText(b []byte) string {
	if b == nil {
		return ""
	}
	if i := strings.IndexByte(string(b), '\n'); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(graph.EscapeHardwareText(b))
}

func parseHexByte(b []byte) (string, bool) {
	s := strings.ToLower(attrLine(b))
	if len(s) != 2 {
		return "", false
	}
	if _, err := strconv.ParseUint(s, 16, 8); err != nil {
		return "", false
	}
	return s, true
}

// controllerOf finds the host controller's PCI address in a resolved device directory:
// …/0000:00:14.0/usb3/3-3/3-3.2 → 0000:00:14.0.
func controllerOf(devDir string) string {
	parts := strings.Split(filepath.ToSlash(devDir), "/")
	for i := len(parts) - 1; i > 0; i-- {
		if strings.HasPrefix(parts[i], "usb") && pciAddrRe.MatchString(parts[i-1]) {
			return parts[i-1]
		}
	}
	return ""
}

// usbParent is the sysfs name of the hub a device hangs off, and the hub's port it is
// plugged into: 3-3.2 → 3-3 port 2, 3-3 → usb3 (the root hub) port 3. A root hub hangs
// off nothing ("", "").
func usbParent(path string) (parent, port string) {
	if usbRootRe.MatchString(path) {
		return "", ""
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i], path[i+1:]
	}
	bus, p, _ := strings.Cut(path, "-")
	return "usb" + bus, p
}

// usbPathLess orders bus-port paths numerically: 3-2 < 3-10 < 3-10.1; root hubs (usb3)
// come before every bus-port path, by bus.
func usbPathLess(a, b string) bool {
	ra, rb := usbRootRe.MatchString(a), usbRootRe.MatchString(b)
	if ra || rb {
		if ra && rb {
			na, _ := strconv.Atoi(a[3:])
			nb, _ := strconv.Atoi(b[3:])
			return na < nb
		}
		return ra
	}
	na, nb := usbPathNums(a), usbPathNums(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

func usbPathNums(p string) []int {
	f := strings.FieldsFunc(p, func(r rune) bool { return r == '-' || r == '.' })
	out := make([]int, len(f))
	for i, s := range f {
		out[i], _ = strconv.Atoi(s)
	}
	return out
}
