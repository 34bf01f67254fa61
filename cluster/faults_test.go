//go:build cluster

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	m "github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

// The fault tests run a steady write load (tag adds, notes and hint adds, each with a
// payload no other write has) on front ends of one 3-member cluster, break something
// mid-load, and then check what a fleet store promises: every acknowledged write is in
// the changelog exactly once (and no write at all is there twice), the chain verifies on
// every front end, and every replica holds exactly the cluster's records.

// openFE opens an in-process front end of the cluster at endpoints as host.
func openFE(t testing.TB, endpoints []string, host, replica string) *FrontEnd {
	t.Helper()
	fe, err := openFEAt(endpoints, "/faults", host, replica)
	if err != nil {
		t.Fatalf("open front end %s: %v", host, err)
	}
	return fe
}

// openFEAt opens an in-process front end of the graph under prefix.
func openFEAt(endpoints []string, prefix, host, replica string) (*FrontEnd, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Open(ctx, Config{
		Store:     "etcd://" + joinEndpoints(endpoints) + prefix,
		Replica:   replica,
		Host:      host,
		MachineID: "machine-" + host,
		Version:   "test",
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// writeKinds are the writes of the load, one after the other per writer.
var writeKinds = []string{"tag", "note", "hint"}

// doWrite makes one write whose events carry payload p, on target.
func doWrite(ctx context.Context, db *store.DB, kind, target, p string) error {
	ctx = graph.WithActor(ctx, "faults")
	switch kind {
	case "tag":
		_, err := db.UpdateTags(ctx, target, []string{"fz:" + p}, nil)
		return err
	case "note":
		_, err := db.AddNote(ctx, graph.NoteCreate{Target: target, Body: "note " + p})
		return err
	default:
		_, err := db.AddHints(ctx, target, []graph.Fingerprint{{Kind: graph.FPUSBSerial, Value: "1d6b:0002:" + p}}, false)
		return err
	}
}

// ledger records what the load's clients were told.
type ledger struct {
	mu      sync.Mutex
	tried   map[string]bool // every payload sent
	acked   map[string]bool // payloads whose write was acknowledged
	failed  int
	lastErr error
	ackedAt []time.Time // when each acknowledgment came
}

func newLedger() *ledger { return &ledger{tried: map[string]bool{}, acked: map[string]bool{}} }

func (l *ledger) try(p string) {
	l.mu.Lock()
	l.tried[p] = true
	l.mu.Unlock()
}

func (l *ledger) done(p string, err error) {
	l.mu.Lock()
	if err == nil {
		l.acked[p] = true
		l.ackedAt = append(l.ackedAt, time.Now())
	} else {
		l.failed++
		l.lastErr = err
	}
	l.mu.Unlock()
}

// load runs writers on each db until stop is closed; it returns when all have stopped.
func runLoad(ctx context.Context, l *ledger, tag string, dbs []*store.DB, perDB int, targets []string, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for d, db := range dbs {
		for w := range perDB {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					p := fmt.Sprintf("zq-%s-d%d-w%d-%d", tag, d, w, n)
					kind := writeKinds[n%len(writeKinds)]
					l.try(p)
					wctx, cancel := context.WithTimeout(ctx, 45*time.Second)
					err := doWrite(wctx, db, kind, targets[(d*perDB+w+n)%len(targets)], p)
					cancel()
					l.done(p, err)
				}
			}()
		}
	}
	wg.Wait()
}

// clusterHead returns the cluster's revision and the ModRevision of its last commit.
func clusterHead(t testing.TB, fe *FrontEnd) (rev, commit int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rev, commit, err := fe.Head(ctx)
	if err != nil {
		t.Fatalf("read the cluster's head: %v", err)
	}
	return rev, commit
}

// checkAll waits until every front end's replica holds the cluster's last commit, then
// checks the promises against the ledger.
func checkAll(t *testing.T, l *ledger, fes []*FrontEnd) {
	t.Helper()
	rev, _ := clusterHead(t, fes[0])
	waitSame(t, fes)
	// The cluster's records at rev, as bucket/key → value.
	want := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := scan(ctx, fes[0].cli, fes[0].target, rev, func(k, v []byte) error {
		want[strings.TrimPrefix(string(k), fes[0].target.dataPrefix())] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Events per payload, from the cluster's own records.
	count := map[string]int{}
	for k, v := range want {
		b, key, ok := strings.Cut(k, "/")
		if !ok || b != string(m.BucketEvents) {
			continue
		}
		e, err := m.DecodeEvent(m.ReadU64([]byte(key)), []byte(v))
		if err != nil {
			t.Fatalf("event %x: %v", key, err)
		}
		if p := payloadOf(e); p != "" {
			count[p]++
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lost, twice, unacked := 0, 0, 0
	for p := range l.acked {
		if count[p] == 0 {
			lost++
			if lost <= 5 {
				t.Errorf("acknowledged write %s is not in the changelog", p)
			}
		}
	}
	for p, n := range count {
		if n > 1 {
			twice++
			if twice <= 5 {
				t.Errorf("write %s is in the changelog %d times", p, n)
			}
		}
		if !l.tried[p] {
			t.Errorf("the changelog holds %s, which no client sent", p)
		}
		if !l.acked[p] {
			unacked++
		}
	}
	t.Logf("%d acknowledged, %d failed (%d of them made all the same), lost %d, twice %d; last error: %v", len(l.acked), l.failed, unacked, lost, twice, l.lastErr)
	for _, fe := range fes {
		rep, err := fe.db.VerifyChangelog(context.Background())
		if err != nil || !rep.OK {
			t.Errorf("%s: the changelog does not verify: %v %+v", fe.Host(), err, rep)
		}
		got := map[string]string{}
		err = fe.db.Records(context.Background(), func(b, k, v []byte) error {
			got[string(b)+"/"+string(k)] = string(v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		diff := 0
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				diff++
				if diff <= 3 {
					t.Errorf("%s: replica's %q is %q (present %v), the cluster's is %q", fe.Host(), k, trunc(got[k]), ok, trunc(v))
				}
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				diff++
				if diff <= 3 {
					t.Errorf("%s: the replica holds %q, the cluster does not", fe.Host(), k)
				}
			}
		}
		if diff > 0 {
			t.Errorf("%s: the replica differs from the cluster in %d records", fe.Host(), diff)
		}
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// payloadRE is the load's payload as it appears in an event: each begins "zq".
var payloadRE = regexp.MustCompile(`zq[a-z0-9-]+`)

// payloadOf finds the load's payload in an event (a tag, a note's body, a hint's value).
func payloadOf(e *graph.Event) string {
	switch e.Action {
	case graph.ActTagAdd, graph.ActNoteAdd, graph.ActHintAdd:
		return payloadRE.FindString(string(e.After))
	}
	return ""
}

// waitSame waits until every front end's replica holds the cluster's last commit.
func waitSame(t testing.TB, fes []*FrontEnd) {
	t.Helper()
	_, commit := clusterHead(t, fes[0])
	for _, fe := range fes {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := fe.db.WaitReplica(ctx, commit)
		cancel()
		if err != nil {
			t.Fatalf("%s: the replica holds revision %d, the cluster's last commit is %d", fe.Host(), fe.db.ReplicaRev(), commit)
		}
	}
}

// seedTargets creates the identities the load writes on.
func seedTargets(t testing.TB, db *store.DB, name string, n int) []string {
	var ids []string
	for i := range n {
		id, err := db.CreateIdentity(graph.WithActor(context.Background(), "faults"), graph.IdentityCreate{Name: fmt.Sprintf("%s %d", name, i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.ID)
	}
	return ids
}

// loadPhase runs the load on dbs for 1.5 s, calls fault (which returns when the fault
// began), runs the load 4 s more, stops it, calls heal, and checks every front end.
func loadPhase(t *testing.T, l *ledger, fes []*FrontEnd, targets []string, fault, heal func()) {
	var dbs []*store.DB
	for _, fe := range fes {
		dbs = append(dbs, fe.DB())
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	l.mu.Lock()
	before := len(l.ackedAt)
	l.mu.Unlock()
	go func() {
		runLoad(context.Background(), l, strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name())), dbs, 3, targets, stop)
		close(done)
	}()
	time.Sleep(1500 * time.Millisecond)
	if fault != nil {
		fault()
	}
	time.Sleep(4 * time.Second)
	close(stop)
	<-done
	if heal != nil {
		heal()
	}
	l.mu.Lock()
	gap := longestGap(l.ackedAt[before:])
	t.Logf("%d writes acknowledged in the phase; the longest wait between two acknowledgments was %s", len(l.ackedAt)-before, gap.Round(time.Millisecond))
	l.mu.Unlock()
	checkAll(t, l, fes)
}

// longestGap is the longest time between two successive instants of ts.
func longestGap(ts []time.Time) time.Duration {
	var gap time.Duration
	for i := 1; i < len(ts); i++ {
		gap = max(gap, ts[i].Sub(ts[i-1]))
	}
	return gap
}

// leaderOf returns the index of the cluster's leader.
func leaderOf(t *testing.T, leader func(context.Context) (int, error)) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	i, err := leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestFaults runs the load through each fault a member process can be given, in turn,
// on one cluster of child-process members, then kills a front end's process mid-write.
func TestFaults(t *testing.T) {
	if os.Getenv("DEVGRAPH_FAULTS_CHILD") != "" {
		t.Skip("a child front end")
	}
	c := etcdtest.Start(t, 3, etcdtest.LogLevel("warn"))
	dir := t.TempDir()
	feA := openFE(t, c.Endpoints(), "host-a", filepath.Join(dir, "a.db"))
	defer feA.Close()
	feB := openFE(t, c.Endpoints(), "host-b", filepath.Join(dir, "b.db"))
	defer feB.Close()
	fes := []*FrontEnd{feA, feB}
	targets := seedTargets(t, feA.DB(), "Fault target", 6)
	waitSame(t, fes)
	l := newLedger()

	t.Run("steady", func(t *testing.T) { loadPhase(t, l, fes, targets, nil, nil) })
	t.Run("leader-kill", func(t *testing.T) {
		var killed int
		loadPhase(t, l, fes, targets, func() { killed = leaderOf(t, c.Leader); c.Kill(killed) }, func() { c.Restart(killed) })
	})
	t.Run("follower-kill", func(t *testing.T) {
		var killed int
		loadPhase(t, l, fes, targets, func() { killed = (leaderOf(t, c.Leader) + 1) % 3; c.Kill(killed) }, func() { c.Restart(killed) })
	})
	t.Run("pause-leader-3s", func(t *testing.T) {
		loadPhase(t, l, fes, targets, func() {
			paused := leaderOf(t, c.Leader)
			c.Pause(paused)
			time.AfterFunc(3*time.Second, func() { c.Resume(paused) })
		}, nil)
	})

	t.Run("frontend-kill", func(t *testing.T) {
		replica := filepath.Join(dir, "c.db")
		child, acks := startChildFE(t, c.Endpoints(), "host-c", replica, targets)
		dbs := []*store.DB{feA.DB(), feB.DB()}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			runLoad(context.Background(), l, "fekill", dbs, 3, targets, stop)
			close(done)
		}()
		// Kill the child once it has had some writes acknowledged, mid-stream.
		for range 300 {
			if acks.count() >= 20 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		child.Process.Signal(syscall.SIGKILL)
		child.Wait()
		time.Sleep(1500 * time.Millisecond)
		close(stop)
		<-done
		acks.wait()
		if acks.count() == 0 {
			t.Fatal("the child front end acknowledged no write before it was killed")
		}
		acks.into(l)
		// The killed host comes back on the same replica file (a restart): it catches up.
		feC := openFE(t, c.Endpoints(), "host-c", replica)
		defer feC.Close()
		checkAll(t, l, []*FrontEnd{feA, feB, feC})
	})
}

// TestFaults_PartitionLeader cuts the leader off from its peers (etcd's own peer cut, on
// members embedded in the test process) under the load, for 4 s, then heals it.
func TestFaults_PartitionLeader(t *testing.T) {
	e := etcdtest.StartEmbedded(t, 3, etcdtest.LogLevel("warn"))
	dir := t.TempDir()
	feA := openFE(t, e.Endpoints(), "host-a", filepath.Join(dir, "a.db"))
	defer feA.Close()
	feB := openFE(t, e.Endpoints(), "host-b", filepath.Join(dir, "b.db"))
	defer feB.Close()
	fes := []*FrontEnd{feA, feB}
	targets := seedTargets(t, feA.DB(), "Partition target", 6)
	waitSame(t, fes)
	l := newLedger()
	var cut int
	loadPhase(t, l, fes, targets, func() { cut = leaderOf(t, e.Leader); e.Partition(cut) }, func() {
		e.Heal(cut)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// childAcks collects a child front end's "try"/"ok" lines.
type childAcks struct {
	mu    sync.Mutex
	tried []string
	acked []string
	eof   chan struct{}
}

func (a *childAcks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.acked)
}

func (a *childAcks) wait() { <-a.eof }

func (a *childAcks) into(l *ledger) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range a.tried {
		l.tried[p] = true
	}
	for _, p := range a.acked {
		l.acked[p] = true
	}
}

// startChildFE starts this test binary as a front end in its own process (the child's
// TestFaultsChild), writing on targets and saying "try P" before and "ok P" after each
// acknowledged write.
func startChildFE(t *testing.T, endpoints []string, host, replica string, targets []string) (*exec.Cmd, *childAcks) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultsChild$", "-test.v=false")
	cmd.Env = append(os.Environ(), "DEVGRAPH_FAULTS_CHILD="+strings.Join([]string{strings.Join(endpoints, ","), host, replica, strings.Join(targets, ",")}, ";"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &childAcks{eof: make(chan struct{})}
	go func() {
		defer close(a.eof)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			verb, p, _ := strings.Cut(sc.Text(), " ")
			a.mu.Lock()
			switch verb {
			case "try":
				a.tried = append(a.tried, p)
			case "ok":
				a.acked = append(a.acked, p)
			}
			a.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("child front end's stderr:\n%s", stderr.String())
		}
	})
	return cmd, a
}

// TestFaultsChild is the child front end of TestFaults's frontend-kill phase.
func TestFaultsChild(t *testing.T) {
	spec := os.Getenv("DEVGRAPH_FAULTS_CHILD")
	if spec == "" {
		t.Skip("run by TestFaults")
	}
	parts := strings.Split(spec, ";")
	fe := openFE(t, strings.Split(parts[0], ","), parts[1], parts[2])
	targets := strings.Split(parts[3], ",")
	var mu sync.Mutex
	say := func(verb, p string) {
		mu.Lock()
		fmt.Printf("%s %s\n", verb, p)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				p := fmt.Sprintf("zq-child-w%d-%d", w, n)
				say("try", p)
				err := doWrite(context.Background(), fe.DB(), writeKinds[n%len(writeKinds)], targets[(w+n)%len(targets)], p)
				if err == nil {
					say("ok", p)
				}
			}
		}()
	}
	wg.Wait()
}
