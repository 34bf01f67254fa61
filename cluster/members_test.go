//go:build cluster

package cluster

// TEMPORARY: a 3-member etcd of child processes from /tmp/etcdprobe/etcd, until
// internal/etcdtest lands on main; the fault tests use only the methods below.

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

type members struct {
	t       testing.TB
	dir     string
	names   []string
	client  []string
	peer    []string
	cmds    []*exec.Cmd
	initial string
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startMembers(t testing.TB, n int) *members {
	m := &members{t: t, dir: t.TempDir()}
	var ic []string
	for i := 0; i < n; i++ {
		m.names = append(m.names, fmt.Sprintf("m%d", i))
		m.client = append(m.client, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		m.peer = append(m.peer, fmt.Sprintf("127.0.0.1:%d", freePort(t)))
		ic = append(ic, fmt.Sprintf("%s=http://%s", m.names[i], m.peer[i]))
	}
	m.initial = strings.Join(ic, ",")
	m.cmds = make([]*exec.Cmd, n)
	for i := range n {
		m.start(i, "new")
	}
	t.Cleanup(func() {
		for i := range m.cmds {
			m.Kill(i)
		}
	})
	m.waitHealthy()
	return m
}

func (m *members) start(i int, state string) {
	bin := "/tmp/etcdprobe/etcd"
	if _, err := os.Stat(bin); err != nil {
		m.t.Skip("no etcd at " + bin)
	}
	cmd := exec.Command(bin, "--name", m.names[i], "--data-dir", filepath.Join(m.dir, m.names[i]),
		"--listen-client-urls", "http://"+m.client[i], "--advertise-client-urls", "http://"+m.client[i],
		"--listen-peer-urls", "http://"+m.peer[i], "--initial-advertise-peer-urls", "http://"+m.peer[i],
		"--initial-cluster", m.initial, "--initial-cluster-state", state,
		"--max-txn-ops=16384", "--max-request-bytes=10485760", "--log-level", "error")
	f, _ := os.OpenFile(filepath.Join(m.dir, m.names[i]+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.cmds[i] = cmd
}

func (m *members) Endpoints() []string { return append([]string(nil), m.client...) }

func (m *members) Kill(i int) {
	if c := m.cmds[i]; c != nil {
		c.Process.Kill()
		c.Wait()
		m.cmds[i] = nil
	}
}

func (m *members) Restart(i int) {
	m.Kill(i)
	m.start(i, "existing")
	m.waitHealthy()
}

func (m *members) Pause(i int)  { m.cmds[i].Process.Signal(syscall.SIGSTOP) }
func (m *members) Resume(i int) { m.cmds[i].Process.Signal(syscall.SIGCONT) }

func (m *members) waitHealthy() {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if l, err := m.Leader(context.Background()); err == nil && l >= 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	m.t.Fatal("etcd did not become healthy")
}

// Leader returns the index of the member that is the leader.
func (m *members) Leader(ctx context.Context) (int, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: m.client, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return -1, err
	}
	defer cli.Close()
	for i, ep := range m.client {
		if m.cmds[i] == nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := cli.Status(sctx, ep)
		cancel()
		if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no leader")
}
