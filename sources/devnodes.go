package sources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
)

// DefaultDevRoot is where the stable /dev links are read when Live.DevRoot is "".
const DefaultDevRoot = "/dev"

// Bounds of the walk for a device's /dev nodes: sysfs puts a class device at most five
// directories below its USB device (3-6/3-6:1.0/0003:04D9:1702.0001/input/input5/event5),
// and a device has a few hundred entries at most.
const (
	maxNodeDepth   = 6
	maxNodeEntries = 4096
	maxDevName     = 200
)

// nodeKind is the kind of a kernel device name (DEVNAME, relative to /dev), "" for kinds
// devgraph does not list (the USB device node itself, hiddev, media controllers …).
func nodeKind(devname string) string {
	switch {
	case strings.HasPrefix(devname, "tty"):
		return graph.NodeTTY
	case strings.HasPrefix(devname, "snd/"):
		return graph.NodeSnd
	case strings.HasPrefix(devname, "video"):
		return graph.NodeVideo
	case strings.HasPrefix(devname, "input/"):
		return graph.NodeInput
	case strings.HasPrefix(devname, "hidraw"):
		return graph.NodeHidraw
	}
	return ""
}

// validDevName accepts a DEVNAME as the kernel writes one: a clean relative path of
// printable characters that stays under /dev.
func validDevName(s string) bool {
	if s == "" || len(s) > maxDevName || !utf8.ValidString(s) || path.Clean(s) != s || strings.HasPrefix(s, "/") ||
		s == ".." || strings.HasPrefix(s, "../") {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	return true
}

// readNodes finds the /dev nodes a USB device's interfaces provide: the class devices
// below its interface directories (ifDirs, as readUSBDevice listed them) whose uevent
// names a DEVNAME of a listed kind (tty, snd, video, input, hidraw). Directories are
// listed, never entered through symlinks (driver, subsystem and device links point
// elsewhere in sysfs); devices behind a hub (their own bus-port directories beside the
// interfaces) are left to themselves. It returns the names relative to /dev, sorted, and
// a note when something was skipped.
func readNodes(devDir string, ifDirs []string) ([]string, []string) {
	var out, notes []string
	entries := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if depth > 0 && !errors.Is(err, fs.ErrNotExist) { // gone while read: nothing to say
				notes = append(notes, fmt.Sprintf("%s: %s", dir, describeErr(err)))
			}
			return
		}
		for _, e := range ents {
			if entries++; entries > maxNodeEntries {
				if entries == maxNodeEntries+1 {
					notes = append(notes, fmt.Sprintf("%s: over %d entries; /dev nodes beyond them not listed", devDir, maxNodeEntries))
				}
				return
			}
			name := e.Name()
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				continue
			case e.IsDir():
				if name == "power" || strings.HasPrefix(name, "ep_") || depth+1 > maxNodeDepth {
					continue
				}
				walk(filepath.Join(dir, name), depth+1)
			case name == "uevent" && depth > 0 && e.Type().IsRegular() && nodeDirRe.MatchString(filepath.Base(dir)):
				// Only a directory named like a node has a DEVNAME worth reading: the
				// interface, HID, inputN and cardN directories between have none.
				b, err := readAttr(filepath.Join(dir, name))
				if err != nil {
					continue
				}
				if dn := ueventDevName(b); dn != "" {
					if !validDevName(dn) {
						notes = append(notes, fmt.Sprintf("%s: DEVNAME %q is not a /dev name; skipped", dir, graph.EscapeHardwareText([]byte(dn))))
					} else if nodeKind(dn) != "" {
						out = append(out, dn)
					}
				}
			}
		}
	}
	for _, d := range ifDirs {
		walk(d, 1)
	}
	sort.Slice(out, func(i, j int) bool { return nodeLess(out[i], out[j]) })
	return dedupeSorted(out), notes
}

// nodeDirRe matches the sysfs directory names of the class devices listed: the kernel
// names the node after its directory (tty: ttyUSB0, ttyACM0; sound: controlC1, pcmC1D0p,
// midiC1D0, hwC1D0; video4linux: video0; input: event3, mouse0, js0; hidraw: hidraw0).
var nodeDirRe = regexp.MustCompile(`^(?:tty[A-Za-z]*[0-9]+|controlC[0-9]+|(?:pcm|midi|hw)C[0-9]+D[0-9]+[pc]?|video[0-9]+|event[0-9]+|mouse[0-9]+|js[0-9]+|hidraw[0-9]+)$`)

// ueventDevName is the DEVNAME= line of a uevent file, "" when it has none.
func ueventDevName(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// nodeLess orders /dev names by kind, then with numbers compared as numbers (ttyUSB2 <
// ttyUSB10, snd/controlC1 < snd/pcmC1D0p).
func nodeLess(a, b string) bool {
	ka, kb := kindRank(nodeKind(a)), kindRank(nodeKind(b))
	if ka != kb {
		return ka < kb
	}
	return naturalLess(a, b)
}

func kindRank(k string) int {
	switch k {
	case graph.NodeTTY:
		return 0
	case graph.NodeSnd:
		return 1
	case graph.NodeVideo:
		return 2
	case graph.NodeInput:
		return 3
	}
	return 4
}

// naturalLess compares strings with runs of digits compared by value.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func dedupeSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// cardNodeRe matches the ALSA entries of <sys-root>/class/sound that are /dev/snd nodes of
// one card: controlC0, pcmC0D0p, midiC1D0, hwC0D2.
var cardNodeRe = regexp.MustCompile(`^(?:controlC([0-9]{1,3})|(?:pcm|midi|hw)C([0-9]{1,3})D[0-9]{1,3}[pc]?)$`)

// readCardNodes lists <sys-root>/class/sound (names only, no link followed) and sets each
// card's /dev/snd nodes, for cards that are not USB devices (whose nodes the usb walk
// finds). A missing directory (no sysfs here) lists nothing.
func readCardNodes(sysRoot string, cards []*alsaCard) []string {
	dir := filepath.Join(sysRoot, "class", "sound")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []string{fmt.Sprintf("%s: %s; /dev/snd nodes not listed", dir, describeErr(err))}
	}
	byNum := map[int][]string{}
	for _, e := range ents {
		m := cardNodeRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1] + m[2])
		byNum[n] = append(byNum[n], "snd/"+e.Name())
	}
	for _, c := range cards {
		nodes := byNum[c.Number]
		sort.Slice(nodes, func(i, j int) bool { return nodeLess(nodes[i], nodes[j]) })
		c.Nodes = nodes
	}
	return nil
}

// devLinkDirs are the directories under the dev root where udev keeps stable names for
// nodes, as symlinks to them.
var devLinkDirs = []string{
	"serial/by-id", "serial/by-path",
	"snd/by-id", "snd/by-path",
	"v4l/by-id", "v4l/by-path",
	"input/by-id", "input/by-path",
}

// readDevLinks reads the stable links under devRoot: node (relative to /dev: ttyUSB0,
// snd/controlC1) → its links as /dev paths, sorted. Each link is read with Readlink, never
// followed; one pointing outside the root, or absolute outside /dev, is skipped. A
// missing directory is usual (no serial device plugged in) and says nothing.
func readDevLinks(devRoot string) (map[string][]string, []string) {
	links := map[string][]string{}
	var notes []string
	for _, rel := range devLinkDirs {
		dir := filepath.Join(devRoot, filepath.FromSlash(rel))
		ents, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
				notes = append(notes, fmt.Sprintf("%s: %s; its links not listed", dir, describeErr(err)))
			}
			continue
		}
		for i, e := range ents {
			if i >= maxNodeEntries {
				notes = append(notes, fmt.Sprintf("%s: over %d entries; the rest not listed", dir, maxNodeEntries))
				break
			}
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			target, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err != nil {
				continue // removed while read
			}
			target = filepath.ToSlash(target)
			var node string
			if t, ok := strings.CutPrefix(target, "/dev/"); ok {
				node = path.Clean(t)
			} else if path.IsAbs(target) {
				continue
			} else {
				node = path.Join(rel, target)
			}
			if !validDevName(node) {
				continue // outside the root
			}
			name := graph.EscapeHardwareText([]byte(e.Name()))
			links[node] = append(links[node], "/dev/"+rel+"/"+name)
		}
	}
	for _, l := range links {
		sort.Strings(l)
	}
	return links, notes
}

// devNodes turns kernel names into a device's nodes (links are added by Live from its
// reading of the dev root).
func devNodes(names []string) []graph.DeviceNode {
	if len(names) == 0 {
		return nil
	}
	out := make([]graph.DeviceNode, 0, len(names))
	for _, n := range names {
		out = append(out, graph.DeviceNode{Path: "/dev/" + n, Kind: nodeKind(n)})
	}
	return out
}

// linkNodes adds to each device's nodes the stable links that point at them.
func linkNodes(devs []*graph.ObservedDevice, links map[string][]string) {
	if len(links) == 0 {
		return
	}
	for _, d := range devs {
		for i := range d.Nodes {
			d.Nodes[i].Links = links[strings.TrimPrefix(d.Nodes[i].Path, "/dev/")]
		}
	}
}
