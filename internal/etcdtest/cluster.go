package etcdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Limits devgraph needs of a cluster (DESIGN.md, Deployment); Start gives every member these
// unless an option says otherwise.
const (
	DefaultMaxTxnOps       = 16384
	DefaultMaxRequestBytes = 10 << 20
)

// stopGrace is how long a member has to exit after SIGTERM before it gets SIGKILL.
const stopGrace = 2 * time.Second

type config struct {
	maxTxnOps       uint
	maxRequestBytes uint
	startTimeout    time.Duration
	logLevel        string
	noFsync         bool
	extraFlags      []string
}

// Option changes how Start or StartEmbedded runs the members.
type Option func(*config)

// MaxTxnOps sets --max-txn-ops (default DefaultMaxTxnOps), e.g. below what devgraph needs.
func MaxTxnOps(n uint) Option { return func(c *config) { c.maxTxnOps = n } }

// MaxRequestBytes sets --max-request-bytes (default DefaultMaxRequestBytes).
func MaxRequestBytes(n uint) Option { return func(c *config) { c.maxRequestBytes = n } }

// StartTimeout bounds the wait for every member to be healthy (default 30 s), in Start,
// Restart and StartEmbedded.
func StartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// LogLevel sets the members' --log-level (default info; the log goes to a file either way).
func LogLevel(level string) Option { return func(c *config) { c.logLevel = level } }

// NoFsync runs the members with --unsafe-no-fsync: a SIGKILLed process still loses nothing
// (the kernel holds its writes), only a machine crash would. For tests that measure nothing.
func NoFsync() Option { return func(c *config) { c.noFsync = true } }

// Flags appends etcd flags to every member's command line (child processes only).
func Flags(flags ...string) Option {
	return func(c *config) { c.extraFlags = append(c.extraFlags, flags...) }
}

func newConfig(opts []Option) config {
	c := config{
		maxTxnOps:       DefaultMaxTxnOps,
		maxRequestBytes: DefaultMaxRequestBytes,
		startTimeout:    30 * time.Second,
		logLevel:        "info",
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Cluster is n etcd members running as child processes on loopback.
type Cluster struct {
	tb      TB
	bin     string
	cfg     config
	members []*member
}

type member struct {
	name      string
	dir       string // data dir
	logPath   string
	clientURL string
	peerURL   string
	args      []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	paused bool
}

// Start runs n members (n = 1 is a single-member cluster) as child processes of the etcd
// binary, each in its own process group with free loopback ports and a data dir under
// tb.TempDir(), and returns once every member is healthy (it answers Status and a
// linearizable Get). When the test ends every member is stopped: SIGTERM, then SIGKILL to its
// process group after 2 s. If the binary cannot be built the test is skipped (failed under
// CI=true); if a member does not become healthy the test fails naming it, with its log tail.
func Start(tb TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	if n < 1 {
		tb.Fatalf("etcdtest.Start: %d members; want at least 1", n)
	}
	c := &Cluster{tb: tb, bin: Binary(tb), cfg: newConfig(opts)}
	tb.Cleanup(c.stopAll)
	// A port found free can be taken by another process before etcd binds it (parallel test
	// packages); then the cluster starts again on new ports.
	var err error
	for range startAttempts {
		if err = c.launch(n); err == nil || !errors.Is(err, errPortTaken) {
			break
		}
		for _, m := range c.members {
			m.mu.Lock()
			if m.cmd != nil {
				m.stop()
			}
			m.mu.Unlock()
		}
	}
	if err != nil {
		tb.Fatalf("etcdtest.Start: %v", err)
	}
	return c
}

// startAttempts is how often Start tries new ports when one it picked was taken.
const startAttempts = 3

var errPortTaken = errors.New("a port was taken before etcd could bind it")

// launch starts n members on fresh ports and data dirs and waits until all are healthy.
func (c *Cluster) launch(n int) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	root := c.tb.TempDir()
	c.members = nil
	var initial []string
	for i := range n {
		m := &member{
			name:      fmt.Sprintf("m%d", i),
			clientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			peerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
		}
		m.dir = filepath.Join(root, m.name+".etcd")
		m.logPath = filepath.Join(root, m.name+".log")
		initial = append(initial, m.name+"="+m.peerURL)
		c.members = append(c.members, m)
	}
	token := filepath.Base(root)
	for _, m := range c.members {
		m.args = []string{
			"--name", m.name,
			"--data-dir", m.dir,
			"--listen-client-urls", m.clientURL,
			"--advertise-client-urls", m.clientURL,
			"--listen-peer-urls", m.peerURL,
			"--initial-advertise-peer-urls", m.peerURL,
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			"--initial-cluster-token", token,
			"--max-txn-ops", strconv.FormatUint(uint64(c.cfg.maxTxnOps), 10),
			"--max-request-bytes", strconv.FormatUint(uint64(c.cfg.maxRequestBytes), 10),
			"--log-level", c.cfg.logLevel,
			"--log-outputs", "stderr",
		}
		if c.cfg.noFsync {
			m.args = append(m.args, "--unsafe-no-fsync")
		}
		m.args = append(m.args, c.cfg.extraFlags...)
	}
	for i := range c.members {
		if err := c.spawn(i); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.startTimeout)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range c.members {
		wg.Go(func() {
			// One member that cannot start fails the start at once, not at the timeout.
			if errs[i] = c.waitHealthy(ctx, i); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil {
		return nil
	}
	for _, m := range c.members {
		if b, _ := os.ReadFile(m.logPath); bytes.Contains(b, []byte("address already in use")) {
			return fmt.Errorf("%w: %v", errPortTaken, err)
		}
	}
	return fmt.Errorf("not every one of %d members became healthy (timeout %s):\n%v", n, c.cfg.startTimeout, err)
}

// Len is the number of members.
func (c *Cluster) Len() int { return len(c.members) }

// Endpoints are the members' client URLs, in member order.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.members))
	for i, m := range c.members {
		eps[i] = m.clientURL
	}
	return eps
}

// Endpoint is member i's client URL.
func (c *Cluster) Endpoint(i int) string { return c.member(i).clientURL }

// LogPath is the file member i logs to.
func (c *Cluster) LogPath(i int) string { return c.member(i).logPath }

// Client is a client of every member's endpoint, closed when the test ends.
func (c *Cluster) Client(tb TB) *clientv3.Client {
	tb.Helper()
	return newClient(tb, c.Endpoints())
}

// Kill sends SIGKILL to member i's process group and waits for it to exit.
func (c *Cluster) Kill(i int) {
	c.tb.Helper()
	m := c.member(i)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		c.tb.Fatalf("etcdtest: Kill(%d): %s is not running", i, m.name)
	}
	m.kill(syscall.SIGKILL)
	<-m.exited
	m.cmd, m.paused = nil, false
}

// Stop stops member i as an operator would: SIGTERM, SIGKILL after 2 s.
func (c *Cluster) Stop(i int) {
	c.tb.Helper()
	m := c.member(i)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		c.tb.Fatalf("etcdtest: Stop(%d): %s is not running", i, m.name)
	}
	m.stop()
}

// Restart starts member i again (stopping it first if it runs) with the same data dir and
// ports, and waits until it is healthy.
func (c *Cluster) Restart(i int) {
	c.tb.Helper()
	m := c.member(i)
	m.mu.Lock()
	if m.cmd != nil {
		m.stop()
	}
	m.mu.Unlock()
	if err := c.spawn(i); err != nil {
		c.tb.Fatalf("etcdtest: Restart(%d): %v", i, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.startTimeout)
	defer cancel()
	if err := c.waitHealthy(ctx, i); err != nil {
		c.tb.Fatalf("etcdtest: Restart(%d): not healthy (timeout %s):\n%v", i, c.cfg.startTimeout, err)
	}
}

// Pause freezes member i's process group (SIGSTOP): its sockets stay open and say nothing.
func (c *Cluster) Pause(i int) { c.signalPaused(i, syscall.SIGSTOP, true) }

// Resume lets a paused member run again (SIGCONT).
func (c *Cluster) Resume(i int) { c.signalPaused(i, syscall.SIGCONT, false) }

func (c *Cluster) signalPaused(i int, sig syscall.Signal, paused bool) {
	c.tb.Helper()
	m := c.member(i)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil {
		c.tb.Fatalf("etcdtest: %v to member %d: %s is not running", sig, i, m.name)
	}
	m.kill(sig)
	m.paused = paused
}

// Leader is the index of the member that a majority of the running, unpaused members name as
// leader, asked again until ctx ends.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	for {
		i, err := c.leaderOnce(ctx)
		if err == nil {
			return i, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("no leader: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) leaderOnce(ctx context.Context) (int, error) {
	type answer struct {
		self, leader uint64
		err          error
	}
	answers := make([]answer, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		m.mu.Lock()
		up := m.cmd != nil && !m.paused
		m.mu.Unlock()
		if !up {
			answers[i].err = errors.New("not running")
			continue
		}
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			st, err := status(sctx, m.clientURL)
			if err != nil {
				answers[i].err = err
				return
			}
			answers[i] = answer{self: st.Header.MemberId, leader: st.Leader}
		})
	}
	wg.Wait()
	votes := map[uint64]int{}
	index := map[uint64]int{}
	for i, a := range answers {
		if a.err == nil {
			index[a.self] = i
			if a.leader != 0 {
				votes[a.leader]++
			}
		}
	}
	for id, v := range votes {
		if i, ok := index[id]; ok && v > len(c.members)/2 {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no member named leader by a majority of %d (votes %v)", len(c.members), votes)
}

// WaitLeader waits until a majority names a leader and a write through a client of every
// endpoint is accepted.
func (c *Cluster) WaitLeader(ctx context.Context) error {
	return waitWritable(ctx, c.Endpoints(), c.Leader)
}

func (c *Cluster) member(i int) *member {
	if i < 0 || i >= len(c.members) {
		c.tb.Fatalf("etcdtest: member %d of a %d-member cluster", i, len(c.members))
	}
	return c.members[i]
}

// spawn starts member i's process, its output appended to its log file.
func (c *Cluster) spawn(i int) error {
	m := c.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	log, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s log: %w", m.name, err)
	}
	cmd := exec.Command(c.bin, m.args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so a signal reaches everything it started; and SIGKILL when the
	// test process dies without running its cleanups (a go test timeout; see spawn.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startChild(cmd); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", m.name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		log.Close()
		childExited()
		close(exited)
	}()
	m.cmd, m.exited, m.paused = cmd, exited, false
	return nil
}

// waitHealthy waits until member i answers Status and a linearizable Get, or its process
// exits, or ctx ends.
func (c *Cluster) waitHealthy(ctx context.Context, i int) error {
	m := c.members[i]
	m.mu.Lock()
	exited := m.exited
	m.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	host := strings.TrimPrefix(m.clientURL, "http://")
	var last error
	for {
		// A cheap dial until the port listens; then the client's checks.
		if conn, err := net.DialTimeout("tcp", host, 100*time.Millisecond); err != nil {
			last = err
		} else {
			conn.Close()
			if last = healthy(ctx, m.clientURL); last == nil {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("member %d (%s, client %s) exited: %s; log %s:\n%s", i, m.name, m.clientURL, exitState(m), m.logPath, logExcerpt(m.logPath, 3, 20))
		case <-ctx.Done():
			select {
			case <-exited:
				continue
			default:
			}
			return fmt.Errorf("member %d (%s, client %s): %v; log %s ends:\n%s", i, m.name, m.clientURL, last, m.logPath, logTail(m.logPath, 20))
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func exitState(m *member) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil && m.cmd.ProcessState != nil {
		return m.cmd.ProcessState.String()
	}
	return "exited"
}

// stopAll stops every member, showing each one's log tail first if the test failed.
func (c *Cluster) stopAll() {
	var wg sync.WaitGroup
	for _, m := range c.members {
		wg.Go(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.cmd != nil {
				m.stop()
			}
		})
	}
	wg.Wait()
	if c.tb.Failed() {
		for _, m := range c.members {
			c.tb.Logf("etcd member %s (client %s) log %s ends:\n%s", m.name, m.clientURL, m.logPath, logTail(m.logPath, 30))
		}
	}
}

// kill signals m's process group. The caller holds m.mu and m.cmd is set.
func (m *member) kill(sig syscall.Signal) {
	syscall.Kill(-m.cmd.Process.Pid, sig)
}

// stop sends SIGTERM (after SIGCONT, so a paused member hears it), then SIGKILL after
// stopGrace, and waits for the exit. The caller holds m.mu and m.cmd is set.
func (m *member) stop() {
	m.kill(syscall.SIGTERM)
	m.kill(syscall.SIGCONT)
	select {
	case <-m.exited:
	case <-time.After(stopGrace):
	}
	// The group may hold more than the member itself; SIGKILL reaches whatever is left.
	m.kill(syscall.SIGKILL)
	<-m.exited
	m.cmd, m.paused = nil, false
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// logTail is the last n lines of a log file.
func logTail(path string, n int) string { return logExcerpt(path, 0, n) }

// logExcerpt is the first head and last tail lines of a log file (etcd prints why it refused
// its flags first, then its usage).
func logExcerpt(path string, head, tail int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "  (no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > head+tail {
		cut := [][]byte{[]byte("...")}
		if head == 0 {
			cut = nil
		}
		lines = append(append(lines[:head:head], cut...), lines[len(lines)-tail:]...)
	}
	return "  " + string(bytes.Join(lines, []byte("\n  ")))
}

func newClient(tb TB, endpoints []string) *clientv3.Client {
	tb.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		tb.Fatalf("etcdtest: client of %v: %v", endpoints, err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}

// status asks one endpoint for its status through a client of that endpoint alone.
func status(ctx context.Context, endpoint string) (*clientv3.StatusResponse, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return cli.Status(ctx, endpoint)
}

// healthy is nil when endpoint answers Status and a linearizable Get (so it is in a cluster
// with a leader and caught up enough to serve reads).
func healthy(ctx context.Context, endpoint string) error {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return err
	}
	defer cli.Close()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := cli.Status(sctx, endpoint); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if _, err := cli.Get(sctx, "etcdtest/health"); err != nil {
		return fmt.Errorf("get: %w", err)
	}
	return nil
}

// waitWritable waits for a leader and then for a Put through each endpoint to succeed.
func waitWritable(ctx context.Context, endpoints []string, leader func(context.Context) (int, error)) error {
	if _, err := leader(ctx); err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, last = cli.Put(pctx, "etcdtest/waitleader", time.Now().UTC().Format(time.RFC3339Nano))
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no write accepted: %w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Client is a client of the given endpoints (one member's, to talk to that member alone),
// closed when the test ends.
func Client(tb TB, endpoints ...string) *clientv3.Client {
	tb.Helper()
	return newClient(tb, endpoints)
}
