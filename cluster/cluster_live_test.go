//go:build cluster

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/sources/fixture"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Host liveness and live state, end to end: `devgraph serve --store etcd://…` front ends
// as child processes of the built binary, each a host with its own fixture rig, on a real
// 3-member etcd cluster; every check goes through the CLI on each host's socket.

var (
	devgraphOnce sync.Once
	devgraphBin  string
	devgraphErr  error
)

// devgraphBinary builds the devgraph command once for these tests.
func devgraphBinary(t *testing.T) string {
	t.Helper()
	devgraphOnce.Do(func() {
		dir, err := os.MkdirTemp("", "devgraph-live-bin")
		if err != nil {
			devgraphErr = err
			return
		}
		devgraphBin = filepath.Join(dir, "devgraph")
		out, err := exec.Command("go", "build", "-o", devgraphBin, "../cmd/devgraph").CombinedOutput()
		if err != nil {
			devgraphErr = &buildError{string(out)}
		}
	})
	if devgraphErr != nil {
		t.Fatalf("build devgraph: %v", devgraphErr)
	}
	return devgraphBin
}

type buildError struct{ out string }

func (e *buildError) Error() string { return e.out }

// rigA is the demo studio; rigB another desk: the demo without the nanoKONTROL twins,
// with a Moog synth of its own.
func rigA() *fixture.Rig { return fixture.DemoRig() }

func rigB(t *testing.T, withMoog bool) *fixture.Rig {
	t.Helper()
	r := fixture.DemoRig()
	for _, p := range []string{"3-1", "3-2"} {
		if err := r.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if withMoog {
		r.AddUSB(&fixture.USB{Path: "3-5", VID: "04e2", PID: "0137", Serial: "MG-0042", Manufacturer: "Moog Music Inc.", Product: "Subsequent 37", Speed: "12",
			Interfaces: []fixture.Interface{{Class: "ff", Sub: "00"}}})
	}
	return r
}

// host is one `devgraph serve --store …` child process.
type host struct {
	t      *testing.T
	name   string
	db     string
	env    []string
	args   []string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader // MCP over stdio
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// startHost serves host name on the cluster from rig, written under dir, with serve's
// extra flags.
func startHost(t *testing.T, c *etcdtest.Cluster, prefix, name string, rig *fixture.Rig, dir string, extra ...string) *host {
	t.Helper()
	root := filepath.Join(dir, "rig")
	if err := rig.Write(root); err != nil {
		t.Fatal(err)
	}
	run, err := os.MkdirTemp("", "dglive")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	h := &host{t: t, name: name, db: filepath.Join(dir, name+".db"),
		env: append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
			"XDG_RUNTIME_DIR="+run, "DEVGRAPH_DB=", "DEVGRAPH_MACHINE_ID=machine-"+name, "DEVGRAPH_HOST_NAME=")}
	h.args = []string{"serve", "--store", "etcd://" + joinEndpoints(c.Endpoints()) + prefix, "--db", h.db, "--host-name", name,
		"--sys-root", filepath.Join(root, "sys"), "--proc-root", filepath.Join(root, "proc"), "--pw-dump-file", filepath.Join(root, "pw-dump.json"),
		"--dev-root", filepath.Join(root, "dev"), "--usb-ids", filepath.Join(root, "usb.ids"), "--poll", "500ms"}
	h.args = append(h.args, extra...)
	h.start()
	t.Cleanup(h.stop)
	return h
}

func (h *host) start() {
	h.t.Helper()
	h.cmd = exec.Command(devgraphBinary(h.t), h.args...)
	h.cmd.Env = h.env
	h.cmd.Stderr = &lockedWriter{h: h}
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil { // stdio MCP: serves until stdin ends
		h.t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	h.stdout = bufio.NewReader(out)
	if err := h.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(h.cmd, h.done)
	h.eventually("its socket answers", 30*time.Second, func() bool {
		_, _, err := h.cli("identities")
		return err == nil
	})
}

// kill ends the front end with SIGKILL: nothing of it runs on, its lease is not revoked.
func (h *host) kill() {
	h.cmd.Process.Signal(syscall.SIGKILL)
	<-h.done
}

// stop ends it as stdio's end does, SIGKILL after 10 s.
func (h *host) stop() {
	if h.cmd == nil {
		return
	}
	select {
	case <-h.done:
		return
	default:
	}
	h.stdin.Close()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.kill()
	}
}

type lockedWriter struct{ h *host }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.stderr.Write(p)
}

func (h *host) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stderr.String()
}

// cli runs a devgraph verb against this host's front end (its socket beside --db).
func (h *host) cli(args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, devgraphBinary(h.t), append(args, "--db", h.db)...)
	cmd.Env = h.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func (h *host) cliOK(args ...string) string {
	h.t.Helper()
	out, errs, err := h.cli(args...)
	if err != nil {
		h.t.Fatalf("%s: devgraph %s: %v\n%s%s\nserve's log:\n%s", h.name, strings.Join(args, " "), err, out, errs, h.log())
	}
	return out
}

// eventually polls cond until it holds; the deadline only bounds a failing test.
func (h *host) eventually(what string, within time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s: %s: not within %s\nserve's log:\n%s", h.name, what, within, h.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deviceView is a device as `devices --json` gives it.
type deviceView struct {
	ID          string `json:"id"`
	Ref         string `json:"ref"`
	Host        string `json:"host"`
	Present     bool   `json:"present"`
	HostOffline bool   `json:"host_offline"`
	Nodes       []struct {
		Path string `json:"path"`
	} `json:"nodes"`
}

// devices lists every remembered device as this host sees it, by ref.
func (h *host) devices() map[string]deviceView {
	h.t.Helper()
	var page struct {
		Items []deviceView `json:"items"`
	}
	out := h.cliOK("devices", "--all", "--json")
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		h.t.Fatalf("devices --json: %v\n%s", err, out)
	}
	m := map[string]deviceView{}
	for _, d := range page.Items {
		m[d.Ref] = d
	}
	return m
}

// mcp sends one JSON-RPC request on the front end's stdio and returns its response.
func (h *host) mcp(id int, method, params string) map[string]any {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)); err != nil {
		h.t.Fatal(err)
	}
	for {
		line, err := h.stdout.ReadBytes('\n')
		if err != nil {
			h.t.Fatalf("MCP on %s: %v\n%s", h.name, err, h.log())
		}
		var msg map[string]any
		if json.Unmarshal(line, &msg) == nil && msg["id"] == float64(id) {
			return msg
		}
	}
}

// graphqlDevice reads one device through GraphQL on this host (devgraph query).
func (h *host) graphqlDevice(ref string) deviceView {
	h.t.Helper()
	var resp struct {
		Data struct {
			Devices struct {
				Edges []struct {
					Node struct {
						Ref         string `json:"ref"`
						Present     bool   `json:"present"`
						HostOffline bool   `json:"hostOffline"`
						Nodes       []struct {
							Path string `json:"path"`
						} `json:"nodes"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"devices"`
		} `json:"data"`
	}
	out := h.cliOK("query", `{ devices(filter: {all: true}, first: 100) { edges { node { ref present hostOffline nodes { path } } } } }`)
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		h.t.Fatalf("query: %v\n%s", err, out)
	}
	for _, e := range resp.Data.Devices.Edges {
		if n := e.Node; n.Ref == ref {
			return deviceView{Ref: n.Ref, Present: n.Present, HostOffline: n.HostOffline, Nodes: n.Nodes}
		}
	}
	h.t.Fatalf("GraphQL devices on %s has no %s:\n%s", h.name, ref, out)
	return deviceView{}
}

// traceEnds are the ends of a trace from node, as this host sees it.
func (h *host) traceEnds(node string) []string {
	h.t.Helper()
	var tr struct {
		Ends []string `json:"ends"`
	}
	out := h.cliOK("trace", node, "--json")
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		h.t.Fatalf("trace --json: %v\n%s", err, out)
	}
	return tr.Ends
}

// headSeq is the changelog's head as this host's replica holds it.
func (h *host) headSeq() uint64 {
	h.t.Helper()
	var rep struct {
		HeadSeq uint64 `json:"head_seq"`
	}
	out := h.cliOK("changelog", "verify", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		h.t.Fatalf("changelog verify --json: %v\n%s", err, out)
	}
	return rep.HeadSeq
}

func revision(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "/never-a-key")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// Two hosts see both hosts' devices, each device's /dev nodes from the host that has it,
// and a trace from host a crosses a declared cable into host b's live sequencer
// subscription. Host b killed: within its lease a shows b's devices host offline —
// present as b last recorded them, not unplugged, no changelog event — and the trace
// stops at b. Host b back (with its Moog unplugged meanwhile): online again, its own
// discovery reconciles what changed.
func TestLive_HostLivenessAndLiveState(t *testing.T) {
	c := etcdtest.Start(t, 3)
	dir := t.TempDir()
	a := startHost(t, c, "/live", "studio-a", rigA(), filepath.Join(dir, "a"))
	b := startHost(t, c, "/live", "studio-b", rigB(t, true), filepath.Join(dir, "b"))

	const (
		moog    = "studio-b/usb:3-5"
		bSerial = "studio-b/usb:3-7" // its FTDI robot base: /dev/ttyUSB0
		twin    = "studio-a/usb:3-1" // only a has the nanoKONTROL twins
		bitwigB = "client:studio-b/alsa:Bitwig Studio"
	)
	for _, h := range []*host{a, b} {
		h.eventually("sees both hosts' devices", 20*time.Second, func() bool {
			d := h.devices()
			return d[moog].Present && d[twin].Present && len(d[bSerial].Nodes) > 0
		})
	}
	d := a.devices()
	if d[moog].Host != "studio-b" || d[twin].Host != "studio-a" || d[moog].HostOffline {
		t.Errorf("on a: moog %+v, twin %+v", d[moog], d[twin])
	}
	if _, ok := b.devices()["studio-b/usb:3-1"]; ok {
		t.Errorf("b has no nanoKONTROL at 3-1, yet one is listed on b")
	}

	// GraphQL says the same, through a's socket.
	if g := a.graphqlDevice(moog); !g.Present || g.HostOffline || len(g.Nodes) != 0 {
		t.Errorf("GraphQL on a: b's Moog %+v, want present, online (it has no /dev nodes)", g)
	}
	if g := a.graphqlDevice(bSerial); g.HostOffline || len(g.Nodes) == 0 {
		t.Errorf("GraphQL on a: b's serial adapter %+v, want online with its /dev node", g)
	}

	// A cable from a's KeyStep into b's JD-Xi: a trace from a follows it into b's live
	// sequencer subscription to Bitwig Studio on b.
	a.cliOK("relate", "usb:3-4.4.1", "cable", "studio-b/usb:3-3.2", "--attr", "kind=midi-din")
	a.eventually("a trace from a reaches b's Bitwig Studio", 10*time.Second, func() bool {
		return slices.Contains(a.traceEnds("usb:3-4.4.1"), bitwigB)
	})

	cli := c.Client(t)
	seqBefore := a.headSeq()
	b.kill()
	a.eventually("shows b's devices host offline", 3*HostTTL*time.Second, func() bool {
		return a.devices()[moog].HostOffline
	})
	d = a.devices()
	for ref, v := range d {
		if v.Host == "studio-b" && (!v.HostOffline || len(v.Nodes) > 0) {
			t.Errorf("%s on a after b died: host offline %v, nodes %v", ref, v.HostOffline, v.Nodes)
		}
		if v.Host == "studio-a" && v.HostOffline {
			t.Errorf("%s (a's own) shows host offline", ref)
		}
	}
	if !d[moog].Present || !d[bSerial].Present {
		t.Errorf("b's devices are marked unplugged after b died: %+v %+v", d[moog], d[bSerial])
	}
	if seq := a.headSeq(); seq != seqBefore {
		t.Errorf("the changelog moved (seq %d → %d) when b died; nothing is written for a dead host", seqBefore, seq)
	}
	out := a.cliOK("devices")
	if !strings.Contains(out, "HOST") || !strings.Contains(out, "offline") {
		t.Errorf("devices on a does not say b is offline:\n%s", out)
	}
	// MCP on a's stdio: graph_browse says b's Moog is remembered with its host offline.
	a.mcp(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live-test","version":"1.0"}}`)
	io.WriteString(a.stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	res, _ := json.Marshal(a.mcp(2, "tools/call", `{"name":"graph_browse","arguments":{"id":"`+moog+`"}}`))
	if !strings.Contains(string(res), "host offline") || !strings.Contains(string(res), `"host_offline":true`) {
		t.Errorf("graph_browse on a does not say b's Moog's host is offline:\n%s", res)
	}
	if ends := a.traceEnds("usb:3-4.4.1"); slices.Contains(ends, bitwigB) {
		t.Errorf("the trace still reaches b's live client after b died: %v", ends)
	}
	if g := a.graphqlDevice(moog); !g.Present || !g.HostOffline {
		t.Errorf("GraphQL on a after b died: b's Moog %+v, want remembered present, host offline", g)
	}

	// b comes back with its Moog unplugged meanwhile: online again, and its discovery
	// records the Moog gone (the one change), nothing else.
	if err := rigB(t, false).Write(filepath.Join(dir, "b", "rig")); err != nil {
		t.Fatal(err)
	}
	b.start()
	a.eventually("shows b online again, its Moog gone", 20*time.Second, func() bool {
		d := a.devices()
		return !d[bSerial].HostOffline && len(d[bSerial].Nodes) > 0 && !d[moog].Present && !d[moog].HostOffline
	})
	var evs struct {
		Items []struct {
			Actor, Action, Target string
		} `json:"items"`
	}
	out = a.cliOK("changelog", "--json", "--since", "1h")
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		t.Fatalf("changelog --json: %v\n%s", err, out)
	}
	var since []string
	for _, e := range evs.Items {
		since = append(since, e.Action+" "+e.Target+" by "+e.Actor)
	}
	if !slices.Contains(since, "device.disappear device:studio-b/sn:04e2:0137:MG-0042 by discovery:usb@studio-b") {
		t.Errorf("b's discovery did not record its Moog gone; the changelog:\n%s", strings.Join(since, "\n"))
	}
	a.eventually("the trace reaches b's Bitwig Studio again", 10*time.Second, func() bool {
		return slices.Contains(a.traceEnds("usb:3-4.4.1"), bitwigB)
	})
	t.Logf("etcd revision at the end: %d", revision(t, cli))
}

// Two idle front ends (polling their sources every 500 ms) write nothing: the etcd
// revision stands still over the window (15 s; LIVE_IDLE_WINDOW to measure longer).
func TestLive_IdleFrontEndsWriteNothing(t *testing.T) {
	window := 15 * time.Second
	if w, err := time.ParseDuration(os.Getenv("LIVE_IDLE_WINDOW")); err == nil {
		window = w
	}
	c := etcdtest.Start(t, 3)
	dir := t.TempDir()
	a := startHost(t, c, "/idle", "studio-a", rigA(), filepath.Join(dir, "a"))
	b := startHost(t, c, "/idle", "studio-b", rigB(t, true), filepath.Join(dir, "b"))
	for _, h := range []*host{a, b} {
		h.eventually("sees both hosts' live devices", 20*time.Second, func() bool {
			d := h.devices()
			return len(d["studio-a/usb:3-7"].Nodes) > 0 && len(d["studio-b/usb:3-7"].Nodes) > 0
		})
	}
	cli := c.Client(t)
	// Settled: nothing written for longer than a publication's spacing.
	rev := revision(t, cli)
	a.eventually("the cluster settles", 30*time.Second, func() bool {
		time.Sleep(2 * PublishEvery)
		now := revision(t, cli)
		settled := now == rev
		rev = now
		return settled
	})
	start := revision(t, cli)
	time.Sleep(window)
	end := revision(t, cli)
	t.Logf("two idle front ends over %s: etcd revision %d → %d", window, start, end)
	if end != start {
		resp, _ := cli.Get(context.Background(), "/idle/", clientv3.WithPrefix(), clientv3.WithMinModRev(start+1), clientv3.WithKeysOnly())
		var keys []string
		if resp != nil {
			for _, kv := range resp.Kvs {
				keys = append(keys, string(kv.Key))
			}
		}
		t.Errorf("two idle front ends advanced the etcd revision by %d over %s; written: %v", end-start, window, keys)
	}
}
