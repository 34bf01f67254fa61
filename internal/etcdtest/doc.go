// Package etcdtest runs real etcd members on loopback for devgraph's cluster tests.
//
// It is test support: only _test.go files and load commands import it. Start runs each member
// as a child process of the etcd binary that Binary builds once from the pinned
// go.etcd.io/etcd/server/v3 module (internal/etcdtest/etcdbin, no download), with its own free
// client and peer ports and a data directory in the test's temp dir. The Cluster kills a
// member (SIGKILL), stops it, restarts it on the same data and ports, or pauses it (SIGSTOP);
// every process is stopped when the test ends, pass or fail.
//
// StartEmbedded runs members inside the test process through go.etcd.io/etcd/server/v3/embed,
// for the one fault a process cannot be given from outside: a network partition, made with
// etcd's own peer cut (EtcdServer.CutPeer, the switch etcd's integration tests use), which
// drops raft traffic both ways between the cut member and each peer.
//
// A member's log goes to a file beside its data directory, and its tail is shown when the test
// fails or a member does not become healthy in time. A load command passes a Standalone where
// a test passes its *testing.T.
package etcdtest

import "testing"

// TB is what the harness needs of a test: testing.TB has it, and a load command can supply
// its own (temp dir, cleanups run at exit, Fatalf that exits).
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Failed() bool
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

var _ TB = testing.TB(nil)
