package sources

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/sources/fixture"
)

// countingRunner serves a pw-dump file and counts its calls; gate, when set, holds each
// call until it is closed.
type countingRunner struct {
	data  []byte
	calls atomic.Int32
	gate  chan struct{}
	err   error
}

func (c *countingRunner) run(ctx context.Context) ([]byte, error) {
	c.calls.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	return c.data, c.err
}

func rigLive(t testing.TB) (*Live, *countingRunner) {
	t.Helper()
	dir := writeRig(t, fixture.DemoRig())
	data, err := os.ReadFile(dir + "/pw-dump.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &countingRunner{data: data}
	l := Demo(dir)
	l.PWDumpFile = ""
	l.PWDump = r.run
	return l, r
}

func status(t testing.TB, s *graph.Snapshot, name string) graph.SourceStatus {
	t.Helper()
	for _, st := range s.Sources {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no status for %s in %+v", name, s.Sources)
	return graph.SourceStatus{}
}

// Not parallel: MissingPWDump sets PATH (its siblings run in parallel after it).
func TestLive_Snapshot(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		l, _ := rigLive(t)
		snap, err := l.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, snap)
		for _, name := range []string{"usb", "alsa", "pipewire"} {
			st := status(t, snap, name)
			if !st.OK || st.Error != "" || st.Devices == 0 || st.Root == "" {
				t.Errorf("%s: %+v", name, st)
			}
		}
		if got, want := status(t, snap, "pipewire").Root, "pw-dump"; got != want {
			t.Errorf("pipewire root=%q, want %q", got, want)
		}
		if got, want := len(snap.Devices), fixture.DemoRig().Counts().Devices; got != want {
			t.Errorf("devices=%d, want %d", got, want)
		}
	})

	t.Run("OneSourceFails", func(t *testing.T) {
		t.Parallel()
		l, r := rigLive(t)
		r.err = errors.New("pw-dump failed: failed to connect: Host is down")
		snap, err := l.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st := status(t, snap, "pipewire")
		if st.OK || st.Error != "pipewire: pw-dump failed: failed to connect: Host is down" || st.Devices != 0 {
			t.Errorf("pipewire: %+v", st)
		}
		if !snap.SourceOK("usb") || !snap.SourceOK("alsa") {
			t.Errorf("the others must still answer: %+v", snap.Sources)
		}
		d := byRef(snap)["usb:3-3.2"]
		if d == nil || strings.Join(d.Sources, ",") != "usb,alsa" || d.Key != "path:0582:01a9:3-3.2" {
			t.Errorf("synth without pipewire: %+v", d)
		}
	})

	t.Run("RunnerPanics", func(t *testing.T) {
		t.Parallel()
		l, _ := rigLive(t)
		l.PWDump = func(context.Context) ([]byte, error) { panic("boom") }
		snap, _ := l.Snapshot(context.Background())
		if st := status(t, snap, "pipewire"); st.OK || !strings.Contains(st.Error, "internal fault while reading: boom") {
			t.Errorf("pipewire: %+v", st)
		}
		if !snap.SourceOK("usb") {
			t.Error("usb must still answer")
		}
	})

	t.Run("MissingPWDump", func(t *testing.T) { // not parallel: it sets PATH
		l, _ := rigLive(t)
		l.PWDump = nil
		t.Setenv("PATH", t.TempDir())
		snap, _ := l.Snapshot(context.Background())
		if st := status(t, snap, "pipewire"); st.OK || !strings.Contains(st.Error, "pw-dump not found in PATH") {
			t.Errorf("pipewire: %+v", st)
		}
	})

	t.Run("Disable", func(t *testing.T) {
		t.Parallel()
		l, r := rigLive(t)
		l.Disable = []string{"pipewire"}
		snap, _ := l.Snapshot(context.Background())
		if len(snap.Sources) != 2 || r.calls.Load() != 0 {
			t.Errorf("disabled pipewire still read: %+v, %d calls", snap.Sources, r.calls.Load())
		}
	})

	t.Run("ExtraSources", func(t *testing.T) {
		t.Parallel()
		l, _ := rigLive(t)
		l.Extra = []Source{
			SourceFunc{SourceName: "robot", Fn: func(context.Context) ([]*graph.ObservedDevice, error) {
				return []*graph.ObservedDevice{{Key: "robot:SIM-1", Ref: "robot:scout", Name: "scout",
					Fingerprints: []graph.Fingerprint{{Kind: graph.FPRobotSerial, Value: "SIM-1"}}}, nil}, nil
			}},
			SourceFunc{SourceName: "lidar", Fn: func(context.Context) ([]*graph.ObservedDevice, error) {
				return nil, errors.New("serial port /dev/ttyUSB0 is busy")
			}},
		}
		snap, _ := l.Snapshot(context.Background())
		d := byRef(snap)["robot:scout"]
		if d == nil || d.Source != "robot" || strings.Join(d.Sources, ",") != "robot" {
			t.Errorf("robot: %+v", d)
		}
		if st := status(t, snap, "robot"); !st.OK || st.Devices != 1 {
			t.Errorf("robot status: %+v", st)
		}
		if st := status(t, snap, "lidar"); st.OK || st.Error != "lidar: serial port /dev/ttyUSB0 is busy" {
			t.Errorf("lidar status: %+v", st)
		}
		if !snap.SourceOK("usb") || len(snap.Devices) != fixture.DemoRig().Counts().Devices+1 {
			t.Errorf("the built-in sources must still answer: %v", summary(snap))
		}
	})
}

func TestLive_ShareWindow(t *testing.T) {
	t.Parallel()
	l, r := rigLive(t)
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	l.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ctx := context.Background()

	a, _ := l.Snapshot(ctx)
	advance(499 * time.Millisecond)
	b, _ := l.Snapshot(ctx)
	if a != b || r.calls.Load() != 1 {
		t.Fatalf("within the window: same=%v calls=%d, want the shared snapshot and 1 call", a == b, r.calls.Load())
	}
	advance(time.Millisecond)
	c, _ := l.Snapshot(ctx)
	if c == a || r.calls.Load() != 2 || !c.Taken.Equal(now) {
		t.Fatalf("after the window: same=%v calls=%d", c == a, r.calls.Load())
	}
	// A fresh Scan bypasses the window.
	l.Scan(ctx)
	if r.calls.Load() != 3 {
		t.Fatalf("Scan: calls=%d, want 3", r.calls.Load())
	}
}

func TestLive_ConcurrentCallersShareOneReading(t *testing.T) {
	t.Parallel()
	l, r := rigLive(t)
	l.ShareWindow = -1 // never reuse a finished reading: only the in-flight one is shared
	r.gate = make(chan struct{})
	const n = 8
	snaps := make([]*graph.Snapshot, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snaps[i], _ = l.Snapshot(context.Background())
		}()
	}
	for { // wait until every caller has joined the one reading
		l.mu.Lock()
		joined := 0
		if l.flight != nil {
			joined = l.flight.waiters
		}
		l.mu.Unlock()
		if joined == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(r.gate)
	wg.Wait()
	if got := r.calls.Load(); got != 1 {
		t.Fatalf("pw-dump ran %d times for %d concurrent callers, want 1", got, n)
	}
	for i := range snaps {
		if snaps[i] == nil || snaps[i] != snaps[0] {
			t.Fatalf("caller %d got a different snapshot", i)
		}
	}
	// The next caller starts a new reading.
	if _, err := l.Snapshot(context.Background()); err != nil || r.calls.Load() != 2 {
		t.Fatalf("next reading: err=%v calls=%d", err, r.calls.Load())
	}
}

func TestLive_CancelledCaller(t *testing.T) {
	t.Parallel()
	l, r := rigLive(t)
	r.gate = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := l.Snapshot(ctx)
		done <- err
	}()
	for r.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	// The reading goes on for whoever comes next and is shared with it.
	close(r.gate)
	snap, err := l.Snapshot(context.Background())
	if err != nil || !snap.SourceOK("pipewire") || r.calls.Load() != 1 {
		t.Fatalf("after a cancel: err=%v calls=%d", err, r.calls.Load())
	}
}

// Close cancels the shared reading under way and waits for it; after Close, Snapshot
// reads in its caller's goroutine. Not parallel: goleak sees every goroutine.
func TestLive_Close(t *testing.T) {
	l, r := rigLive(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var once sync.Once
	started := make(chan struct{})
	l.PWDump = func(ctx context.Context) ([]byte, error) { // pw-dump hangs until cancelled
		once.Do(func() { close(started) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := l.Snapshot(ctx)
		done <- err
	}()
	<-started
	cancel() // the caller goes; the reading goes on without it
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err=%v, want context.Canceled", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	f, last := l.flight, l.last
	l.mu.Unlock()
	if f != nil || last == nil || status(t, last, "pipewire").OK {
		t.Fatalf("after Close: flight=%v, last reading %v; want the reading ended, pipewire cancelled", f, last)
	}
	if err := l.Close(); err != nil { // safe twice
		t.Fatal(err)
	}
	l.PWDump = r.run
	snap, err := l.Snapshot(context.Background())
	if err != nil || snap == last || !snap.SourceOK("pipewire") {
		t.Fatalf("Snapshot after Close: err=%v fresh=%v", err, snap != last)
	}
}

func TestNewDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/rig"
	l, err := NewDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := l.Snapshot(context.Background())
	committed := scanDir(t, "testdata/demo")
	if got, want := summary(snap), summary(committed); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("NewDemo reads\n%s\nthe committed rig reads\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
