package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

// DefaultShareWindow is how long one snapshot is shared between callers.
const DefaultShareWindow = 500 * time.Millisecond

// DefaultSourceTimeout bounds one source's reading (pw-dump, a robot backend).
const DefaultSourceTimeout = 10 * time.Second

// Live reads the hardware through the usb, alsa and pipewire sources (and any Extra
// sources) and merges what they see into one snapshot. It implements graph.Live.
//
// Configure it through its fields before the first Snapshot; the zero value reads the
// real machine (/sys, /proc and `pw-dump`). Close ends the shared reading Snapshot runs
// in the background.
type Live struct {
	SysRoot    string // default "/sys"
	ProcRoot   string // default "/proc"
	PWDumpFile string // read pw-dump JSON from this file instead of running PWDump
	PWDump     Runner // default PWDumpCommand

	// USBIDs is the usb.ids file devices are named from when their own strings are
	// missing or generic; "" looks in DefaultUSBIDsPaths (none found: no usb.ids names).
	USBIDs string
	// DevRoot is where the stable /dev links (serial/by-id, snd/by-id …) are read;
	// default DefaultDevRoot. The nodes themselves come from sysfs.
	DevRoot string

	// Disable names built-in sources not to read at all ("pipewire" on a machine without
	// it); a disabled source is not reported.
	Disable []string

	// Extra sources (robots) whose devices are added to every snapshot as they are.
	Extra []Source

	ShareWindow   time.Duration // default DefaultShareWindow; negative: never share
	SourceTimeout time.Duration // default DefaultSourceTimeout
	Now           func() time.Time

	mu      sync.Mutex
	last    *graph.Snapshot
	flight  *flight
	closed  bool
	reading sync.WaitGroup // the flight's goroutine

	memMu  sync.Mutex
	usbMem usbMemory // serials of the last good usb reading, for readings without it

	ids usbIDs // usb.ids, read for the vendors seen and kept while the file is unchanged
}

var _ graph.Live = (*Live)(nil)

type flight struct {
	done    chan struct{}
	cancel  context.CancelFunc // Close ends the reading
	snap    *graph.Snapshot
	waiters int // callers sharing this reading (tests look)
}

// Demo returns a Live that reads the demo rig (or any fixture rig) written at root:
// root/sys, root/proc, root/pw-dump.json, root/dev and root/usb.ids (the rig's own, so
// the demo names devices the same on every machine).
func Demo(root string) *Live {
	return &Live{
		SysRoot:    filepath.Join(root, "sys"),
		ProcRoot:   filepath.Join(root, "proc"),
		PWDumpFile: filepath.Join(root, "pw-dump.json"),
		DevRoot:    filepath.Join(root, "dev"),
		USBIDs:     filepath.Join(root, "usb.ids"),
	}
}

// NewDemo writes the demo rig (fixture.DemoRig) into dir, replacing an earlier copy, and
// returns a Live that reads it. The cmd's --demo uses it, so a built binary needs no
// files beside it.
func NewDemo(dir string) (*Live, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo rig: %w", err)
	}
	if err := fixture.DemoRig().Write(dir); err != nil {
		return nil, fmt.Errorf("demo rig: %w", err)
	}
	return Demo(dir), nil
}

func (l *Live) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Snapshot returns a reading of every source, shared with other callers for
// ShareWindow: a caller within the window of the last reading gets it, and callers
// arriving while a reading is under way wait for that one instead of starting their own.
// The snapshot is shared: treat it as read-only. The error is only for a cancelled ctx;
// failing sources are reported in Snapshot.Sources. After Close it reads in the caller's
// goroutine, sharing nothing.
func (l *Live) Snapshot(ctx context.Context) (*graph.Snapshot, error) {
	window := l.ShareWindow
	if window == 0 {
		window = DefaultShareWindow
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return l.Scan(ctx), nil
	}
	if l.last != nil && window > 0 {
		if age := l.now().Sub(l.last.Taken); age >= 0 && age < window {
			s := l.last
			l.mu.Unlock()
			return s, nil
		}
	}
	f := l.flight
	if f == nil {
		// The reading outlives the caller that started it (others may wait for it) but
		// not Close.
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		l.flight = f
		l.reading.Add(1)
		go func() {
			defer l.reading.Done()
			defer cancel()
			s := l.Scan(rctx)
			l.mu.Lock()
			f.snap, l.last, l.flight = s, s, nil
			l.mu.Unlock()
			close(f.done)
		}()
	}
	f.waiters++
	l.mu.Unlock()
	select {
	case <-f.done:
		return f.snap, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close cancels the shared reading under way, if any, and waits for it to end: no
// goroutine Live started outlives it. Callers waiting for that reading get it (its
// cancelled sources reported as failed). Safe twice.
func (l *Live) Close() error {
	l.mu.Lock()
	l.closed = true
	if l.flight != nil {
		l.flight.cancel()
	}
	l.mu.Unlock()
	l.reading.Wait()
	return nil
}

// Scan reads every source now, bypassing the shared snapshot.
func (l *Live) Scan(ctx context.Context) *graph.Snapshot {
	taken := l.now()
	timeout := l.SourceTimeout
	if timeout <= 0 {
		timeout = DefaultSourceTimeout
	}
	disabled := map[string]bool{}
	for _, d := range l.Disable {
		disabled[d] = true
	}
	sysRoot, procRoot := l.SysRoot, l.ProcRoot
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	if procRoot == "" {
		procRoot = "/proc"
	}

	type result struct {
		status graph.SourceStatus
		notes  []string
		devs   []*graph.ObservedDevice
	}
	var (
		wg                     sync.WaitGroup
		usbRes, alsaRes, pwRes result
		usbDevs                []*usbDevice
		alsaR                  *alsaReading
		pwR                    *pwReading
	)
	run := func(res *result, name, root string, fn func(ctx context.Context) ([]string, error)) {
		defer wg.Done()
		start := time.Now()
		res.status = graph.SourceStatus{Name: name, Root: root}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("internal fault while reading: %v", p)
				}
			}()
			res.notes, err = fn(ctx)
		}()
		res.status.Duration = time.Since(start)
		if err != nil {
			res.status.Error = name + ": " + err.Error()
			return
		}
		res.status.OK = true
	}
	if !disabled[SourceUSB] {
		wg.Add(1)
		go run(&usbRes, SourceUSB, filepath.Join(sysRoot, "bus", "usb", "devices"), func(context.Context) ([]string, error) {
			d, notes, err := readUSB(sysRoot)
			usbDevs = d
			if err != nil {
				return notes, err
			}
			names, err := l.usbIDsNames(d)
			switch {
			case errors.Is(err, errNoUSBIDs):
			case err != nil:
				notes = append(notes, err.Error()+"; devices named from their own strings")
			default:
				for _, u := range d {
					u.IDs = names[u.VID+":"+u.PID]
				}
			}
			return notes, nil
		})
	}
	if !disabled[SourceALSA] {
		wg.Add(1)
		go run(&alsaRes, SourceALSA, filepath.Join(procRoot, "asound"), func(context.Context) ([]string, error) {
			r, notes, err := readALSA(procRoot)
			alsaR = r
			if err == nil {
				notes = append(notes, readCardNodes(sysRoot, r.Cards)...)
			}
			return notes, err
		})
	}
	if !disabled[SourcePipeWire] {
		root := l.PWDumpFile
		if root == "" {
			root = "pw-dump"
		}
		wg.Add(1)
		go run(&pwRes, SourcePipeWire, root, func(ctx context.Context) ([]string, error) {
			data, err := l.readPWDump(ctx)
			if err != nil {
				return nil, err
			}
			r, notes, err := parsePWDump(data)
			pwR = r
			return notes, err
		})
	}
	// The stable /dev links are no source of their own: what cannot be read there is
	// noted under usb, whose devices they name.
	var devLinks map[string][]string
	var devNotes []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		root := l.DevRoot
		if root == "" {
			root = DefaultDevRoot
		}
		devLinks, devNotes = readDevLinks(root)
	}()
	extra := make([]result, len(l.Extra))
	for i, s := range l.Extra {
		wg.Add(1)
		go run(&extra[i], s.Name(), "", func(ctx context.Context) ([]string, error) {
			devs, err := s.Scan(ctx)
			extra[i].devs = devs
			return nil, err
		})
	}
	wg.Wait()

	l.memMu.Lock()
	if usbRes.status.OK {
		l.usbMem = rememberUSB(usbDevs)
	}
	mem := l.usbMem
	l.memMu.Unlock()
	devs, mergeNotes, idx := mergeReadings(usbDevs, usbRes.status.OK, alsaR, pwR, mem)
	if !usbRes.status.OK {
		usbDevs = nil // a failed reading's partial result names nothing
	}
	linkNodes(devs, devLinks)
	if usbRes.status.OK {
		usbRes.notes = append(usbRes.notes, devNotes...)
	}
	rels, clients, relNotes := observe(usbDevs, alsaR, pwR, idx)
	if mergeNotes == nil {
		mergeNotes = map[string][]string{}
	}
	for src, n := range relNotes {
		mergeNotes[src] = append(mergeNotes[src], n...)
	}
	snap := &graph.Snapshot{Taken: taken, Relations: rels, Clients: clients}
	for _, res := range []*result{&usbRes, &alsaRes, &pwRes} {
		if res.status.Name == "" {
			continue
		}
		if res.status.OK {
			for _, d := range devs {
				if containsString(d.Sources, res.status.Name) {
					res.status.Devices++
				}
			}
			res.notes = append(res.notes, mergeNotes[res.status.Name]...)
			res.status.Error = warnings(res.status.Name, res.notes)
		}
		snap.Sources = append(snap.Sources, res.status)
	}
	for i := range extra {
		res := &extra[i]
		for _, d := range res.devs {
			if d == nil || d.Key == "" {
				continue
			}
			if d.Source == "" {
				d.Source = res.status.Name
			}
			if len(d.Sources) == 0 {
				d.Sources = []string{d.Source}
			}
			devs = append(devs, d)
			res.status.Devices++
		}
		snap.Sources = append(snap.Sources, res.status)
	}
	snap.Devices = devs
	sort.SliceStable(snap.Devices, func(i, j int) bool { return refLess(snap.Devices[i].Ref, snap.Devices[j].Ref) })
	return snap
}

// refLess orders refs by source, root hubs first and USB paths numerically (usb:usb3,
// usb:3-2, usb:3-10).
func refLess(a, b string) bool {
	pa, pb := strings.TrimPrefix(a, "usb:"), strings.TrimPrefix(b, "usb:")
	isUSB := func(p string) bool { return usbPathRe.MatchString(p) || usbRootRe.MatchString(p) }
	if len(pa) < len(a) && len(pb) < len(b) && isUSB(pa) && isUSB(pb) {
		return usbPathLess(pa, pb)
	}
	return a < b
}

func (l *Live) readPWDump(ctx context.Context) ([]byte, error) {
	if l.PWDumpFile != "" {
		b, err := readSmallFile(l.PWDumpFile, 64<<20)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", l.PWDumpFile, describeErr(err))
		}
		return b, nil
	}
	run := l.PWDump
	if run == nil {
		run = PWDumpCommand
	}
	return run(ctx)
}

// warnings words what a working source skipped; "" when nothing was.
func warnings(name string, notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	const show = 4
	s := strings.Join(notes[:min(show, len(notes))], "; ")
	if len(notes) > show {
		s += fmt.Sprintf("; and %d more", len(notes)-show)
	}
	return name + " warning: " + s
}
