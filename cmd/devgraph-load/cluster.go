package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/devgraph/devgraph/cluster"
	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// The cluster mode (--cluster N) starts N etcd members on loopback (child processes of an
// etcd built from the pinned module, as the cluster tests run them) and two front ends in
// this process, and runs tag.add writers on both through one fault per phase. After each
// phase it waits until both replicas hold the cluster's last commit and checks, from the
// changelog, that every acknowledged write is there once (lost, duplicated), that the
// chain verifies on both front ends and that the two replicas hold the same records.

// frontEnd is one in-process front end; a phase may close and reopen it.
type frontEnd struct {
	host, replica string
	fe            atomic.Pointer[cluster.FrontEnd]
	// the counters of front ends closed before this one, on the same replica
	commits, conflicts, retries int64
}

// clusterRun is one run of the cluster mode.
type clusterRun struct {
	c       *config
	members *etcdtest.Cluster
	url     string
	fes     []*frontEnd
	targets []string
	log     *slog.Logger
	stdout  io.Writer
	stderr  io.Writer
	tb      *etcdtest.Standalone
}

func runCluster(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	tb, err := etcdtest.NewStandalone()
	if err != nil {
		return err
	}
	defer tb.Close()
	dir := tb.TempDir()
	if _, err := etcdtest.BuildBinary(); err != nil {
		return fmt.Errorf("build etcd from the pinned module: %w", err)
	}
	r := &clusterRun{c: c, stdout: stdout, stderr: stderr, tb: tb,
		log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	phases, err := r.selected()
	if err != nil {
		return err
	}
	start := time.Now()
	r.members = etcdtest.Start(tb, c.cluster, etcdtest.LogLevel("warn"))
	var eps []string
	for _, ep := range r.members.Endpoints() {
		eps = append(eps, strings.TrimPrefix(ep, "http://"))
	}
	r.url = "etcd://" + strings.Join(eps, ",") + "/load"
	for _, h := range []string{"host-a", "host-b"} {
		f := &frontEnd{host: h, replica: filepath.Join(dir, h+".db")}
		if err := r.open(ctx, f); err != nil {
			return err
		}
		defer func() { f.fe.Load().Close() }()
		r.fes = append(r.fes, f)
	}
	if err := r.makeTargets(ctx, 64); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cluster: %d etcd members on loopback, two front ends, %d target identities, ready in %s; load average %s\n\n",
		c.cluster, len(r.targets), time.Since(start).Round(time.Millisecond), loadAvg())

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	var notes []string
	fmt.Fprintln(tw, "phase\twriters\tacknowledged\twrites/s\tp50\tp99\tmax\tlongest stall\tfailed\tlost\tduplicated\tcommits\tconflicts\tretries")
	for _, p := range phases {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(stderr, "running %s for %s on %d writers…\n", p.name, c.duration, p.writers)
		res, err := r.runPhase(ctx, p)
		if err != nil {
			tw.Flush()
			return fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", p.name, p.writers, res.acked, float64(res.acked)/res.elapsed.Seconds(),
			fmtDur(res.pct(50)), fmtDur(res.pct(99)), fmtDur(res.pct(100)), fmtDur(res.stall), res.failed, res.lost, res.dup, res.commits, res.conflicts, res.retries)
		if res.firstErr != nil {
			fmt.Fprintf(stderr, "%s: first error: %v\n", p.name, res.firstErr)
		}
		if res.fresh > 0 && len(res.lat) > 0 {
			notes = append(notes, fmt.Sprintf("%s: wrote in turn to %d identities of its own, made before it; each gained at most %d hints", p.name, res.fresh, res.hintsEach()))
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintln(stdout)
	if err := r.floor(ctx, min(c.duration, 10*time.Second)); err != nil {
		return err
	}
	if err := r.visibility(ctx, 200); err != nil {
		return err
	}
	if err := r.idle(ctx, c.idle); err != nil {
		return err
	}
	if c.rebuild > 0 {
		if err := r.rebuild(ctx, c.rebuild); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// floor times what etcd alone takes for a commit shaped like a bind's, one writer at a
// time on the same cluster: a Txn fenced on a key's ModRevision that moves the fence, puts
// a request key and eight records of 200 bytes (scratch keys outside the graph's
// prefix). The one-writer row above, less this, is what devgraph adds.
func (r *clusterRun) floor(ctx context.Context, d time.Duration) error {
	cli := r.members.Client(r.tb)
	fence := "/load-floor/txn"
	val := strings.Repeat("x", 200)
	var lat []time.Duration
	var rev int64
	for start := time.Now(); time.Since(start) < d && ctx.Err() == nil; {
		n := len(lat)
		ops := []clientv3.Op{clientv3.OpPut(fence, fmt.Sprint(n)), clientv3.OpPut(fmt.Sprintf("/load-floor/req/%d", n), "")}
		for i := range 8 {
			ops = append(ops, clientv3.OpPut(fmt.Sprintf("/load-floor/d/%d/%d", n%64, i), val))
		}
		t0 := time.Now()
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cli.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(fence), "=", rev)).Then(ops...).Commit()
		cancel()
		if err != nil {
			return fmt.Errorf("etcd floor: %w", err)
		}
		if !resp.Succeeded {
			return fmt.Errorf("etcd floor: the fence moved under a single writer")
		}
		lat = append(lat, time.Since(t0))
		rev = resp.Header.Revision
	}
	if _, err := cli.Delete(ctx, "/load-floor/", clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("etcd floor: %w", err)
	}
	res := &clusterResult{lat: lat}
	slices.Sort(res.lat)
	fmt.Fprintf(r.stdout, "etcd alone: a fenced Txn shaped like a bind (10 puts, ~2 KB), one writer: p50 %s, p99 %s over %d commits; load average %s\n",
		fmtDur(res.pct(50)), fmtDur(res.pct(99)), len(lat), loadAvg())
	return nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func (r *clusterRun) open(ctx context.Context, f *frontEnd) error {
	octx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	fe, err := cluster.Open(octx, cluster.Config{Store: r.url, Replica: f.replica, Host: f.host, MachineID: "load-" + f.host,
		Version: "load", Logger: r.log, Store0: store.Options{Logger: r.log}})
	if err != nil {
		return fmt.Errorf("front end %s: %w", f.host, err)
	}
	f.fe.Store(fe)
	return nil
}

func (r *clusterRun) makeTargets(ctx context.Context, n int) error {
	ids, err := r.makeIdentities(ctx, "Load target", n)
	r.targets = ids
	return err
}

// makeIdentities creates n identities named prefix and a number, sixteen at a time across
// both front ends, and waits until both replicas hold them.
func (r *clusterRun) makeIdentities(ctx context.Context, prefix string, n int) ([]string, error) {
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for w := range errs {
		db := r.fes[w%len(r.fes)].fe.Load().DB()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && errs[w] == nil; i = int(next.Add(1) - 1) {
				id, err := db.CreateIdentity(graph.WithActor(ctx, "cli:load"), graph.IdentityCreate{Name: fmt.Sprintf("%s %05d", prefix, i)})
				if err != nil {
					errs[w] = err
					return
				}
				ids[i] = id.ID
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ids, r.settle(ctx)
}

// settle waits until both replicas hold the cluster's last commit.
func (r *clusterRun) settle(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, commit, err := r.fes[0].fe.Load().Head(sctx)
	if err != nil {
		return err
	}
	for _, f := range r.fes {
		if err := f.fe.Load().DB().WaitReplica(sctx, commit); err != nil {
			return fmt.Errorf("%s's replica did not reach the cluster's last commit (revision %d): %w", f.host, commit, err)
		}
	}
	return nil
}

// clusterPhase is one row: writers on both front ends for the run's duration, with fault
// called after a third of it and heal after the writers stop.
type clusterPhase struct {
	name    string
	writers int
	kind    string // "tag" (tag.add) or "hint" (hint.add: a bind-sized change)
	// fresh, when set, gives the phase its own identities, made before it starts, written
	// in turn so that each gains only a few hints over the run: a bind adds two to five to
	// a new identity, and an identity grown by hundreds of hints is no longer bind-sized.
	fresh bool
	fault func(ctx context.Context) error
	heal  func(ctx context.Context) error
}

func (r *clusterRun) leader(ctx context.Context) (int, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return r.members.Leader(lctx)
}

func (r *clusterRun) phases() []clusterPhase {
	var down int
	restart := func(ctx context.Context) error { r.members.Restart(down); return nil }
	return []clusterPhase{
		{name: "steady", writers: r.c.concurrency, kind: "tag"},
		{name: "one writer (bind-sized)", writers: 1, kind: "hint", fresh: true},
		{name: "leader kill", writers: r.c.concurrency, kind: "tag", fault: func(ctx context.Context) (err error) {
			down, err = r.leader(ctx)
			if err == nil {
				r.members.Kill(down)
			}
			return err
		}, heal: restart},
		{name: "follower kill", writers: r.c.concurrency, kind: "tag", fault: func(ctx context.Context) error {
			l, err := r.leader(ctx)
			if err == nil {
				down = (l + 1) % r.members.Len()
				r.members.Kill(down)
			}
			return err
		}, heal: restart},
		{name: "leader paused 3s", writers: r.c.concurrency, kind: "tag", fault: func(ctx context.Context) error {
			l, err := r.leader(ctx)
			if err == nil {
				r.members.Pause(l)
				time.AfterFunc(3*time.Second, func() { r.members.Resume(l) })
			}
			return err
		}},
		{name: "front end restart", writers: r.c.concurrency, kind: "tag", fault: func(ctx context.Context) error {
			// host-b goes away mid-write and comes back on its replica; its writers fail meanwhile.
			f := r.fes[1]
			old := f.fe.Load()
			old.Close()
			f.commits += old.Stats().Commits.Load()
			f.conflicts += old.Stats().Conflicts.Load()
			f.retries += old.Stats().Retries.Load()
			return r.open(ctx, f)
		}},
	}
}

// selected returns the phases --phases names, all when it names none.
func (r *clusterRun) selected() ([]clusterPhase, error) {
	all := r.phases()
	if r.c.only == "" {
		return all, nil
	}
	var out []clusterPhase
	for _, name := range strings.Split(r.c.only, ",") {
		i := slices.IndexFunc(all, func(p clusterPhase) bool { return p.name == strings.TrimSpace(name) })
		if i < 0 {
			var names []string
			for _, p := range all {
				names = append(names, p.name)
			}
			return nil, fmt.Errorf("--phases: no phase %q; the phases are %s", name, strings.Join(names, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

type clusterResult struct {
	acked, failed, lost, dup    int
	commits, conflicts, retries int64
	lat                         []time.Duration
	stall, elapsed              time.Duration
	firstErr                    error
	fresh                       int // identities made for the phase (0: the shared targets)
}

// hintsEach is how many hints each of the phase's own identities gained, at most.
func (r *clusterResult) hintsEach() int {
	return (len(r.lat) + r.fresh - 1) / r.fresh
}

func (r *clusterResult) pct(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := (len(r.lat)*p + 99) / 100
	return r.lat[max(0, min(i, len(r.lat))-1)]
}

func (r *clusterRun) stats() (commits, conflicts, retries int64) {
	for _, f := range r.fes {
		s := f.fe.Load().Stats()
		commits += f.commits + s.Commits.Load()
		conflicts += f.conflicts + s.Conflicts.Load()
		retries += f.retries + s.Retries.Load()
	}
	return
}

func (r *clusterRun) runPhase(ctx context.Context, p clusterPhase) (*clusterResult, error) {
	res := &clusterResult{}
	targets := r.targets
	var turn atomic.Int64
	if p.fresh {
		// Enough for about 400 writes a second, four hints each; more wrap around.
		n := max(64, int(r.c.duration.Seconds()*400/4))
		var err error
		if targets, err = r.makeIdentities(ctx, "Load "+p.name, n); err != nil {
			return nil, fmt.Errorf("make the phase's %d identities: %w", n, err)
		}
		res.fresh = n
	}
	k0, c0, r0 := r.stats()
	tag := strings.NewReplacer(" ", "-", ",", "").Replace(p.name)
	var mu sync.Mutex
	acked := map[string]bool{}
	var ackedAt []time.Time
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for w := range p.writers {
		f := r.fes[w%len(r.fes)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				payload := fmt.Sprintf("%s-w%d-%d", tag, w, n)
				target := targets[rng.IntN(len(targets))]
				if p.fresh {
					target = targets[int(turn.Add(1)-1)%len(targets)]
				}
				wctx, cancel := context.WithTimeout(graph.WithActor(ctx, "cli:load"), 45*time.Second)
				t0 := time.Now()
				var err error
				db := f.fe.Load().DB()
				if p.kind == "hint" {
					_, err = db.AddHints(wctx, target, []graph.Fingerprint{{Kind: graph.FPUSBSerial, Value: "1d6b:0002:" + payload}}, false)
				} else {
					_, err = db.UpdateTags(wctx, target, []string{"load:" + payload}, nil)
				}
				d := time.Since(t0)
				cancel()
				mu.Lock()
				if err == nil {
					acked[payload] = true
					ackedAt = append(ackedAt, time.Now())
					res.lat = append(res.lat, d)
				} else {
					res.failed++
					if res.firstErr == nil {
						res.firstErr = err
					}
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(50 * time.Millisecond) // a closed front end fails at once: do not spin
				}
			}
		}()
	}
	if p.fault != nil {
		select {
		case <-time.After(r.c.duration / 3):
		case <-ctx.Done():
		}
		if err := p.fault(ctx); err != nil {
			close(stop)
			wg.Wait()
			return nil, err
		}
	}
	select {
	case <-time.After(time.Until(start.Add(r.c.duration))):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	res.elapsed = time.Since(start)
	if p.heal != nil {
		if err := p.heal(ctx); err != nil {
			return nil, err
		}
	}
	k1, c1, r1 := r.stats()
	res.commits, res.conflicts, res.retries = k1-k0, c1-c0, r1-r0
	res.acked = len(acked)
	slices.Sort(res.lat)
	slices.SortFunc(ackedAt, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(ackedAt); i++ {
		res.stall = max(res.stall, ackedAt[i].Sub(ackedAt[i-1]))
	}
	if err := r.settle(ctx); err != nil {
		return nil, err
	}
	seen, err := r.count(ctx, p.kind, tag+"-")
	if err != nil {
		return nil, err
	}
	for payload := range acked {
		if seen[payload] == 0 {
			res.lost++
		}
	}
	for _, n := range seen {
		if n > 1 {
			res.dup++
		}
	}
	return res, r.same(ctx)
}

// count counts the changelog's tag.add (or hint.add) events per payload with prefix.
func (r *clusterRun) count(ctx context.Context, kind, prefix string) (map[string]int, error) {
	db := r.fes[0].fe.Load().DB()
	action, mark := graph.ActTagAdd, `"load:`+prefix
	if kind == "hint" {
		action, mark = graph.ActHintAdd, `1d6b:0002:`+prefix
	}
	seen := map[string]int{}
	after := ""
	for {
		evs, next, err := db.FindEvents(ctx, graph.EventFilter{Action: action, First: 1000, After: after})
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			s := string(e.After)
			i := strings.Index(s, mark)
			if i < 0 {
				continue
			}
			s = s[i+len(mark)-len(prefix):]
			if j := strings.IndexByte(s, '"'); j >= 0 {
				s = s[:j]
			}
			seen[s]++
		}
		if next == "" || len(evs) == 0 {
			return seen, nil
		}
		after = next
	}
}

// same checks that the chain verifies on both front ends and that their replicas hold the
// same records (both hold the cluster's last commit: settle ran).
func (r *clusterRun) same(ctx context.Context) error {
	var sums [][]byte
	for _, f := range r.fes {
		db := f.fe.Load().DB()
		rep, err := db.VerifyChangelog(ctx)
		if err != nil {
			return err
		}
		if !rep.OK {
			return fmt.Errorf("%s: the changelog does not verify: %s at event %d", f.host, rep.Problem, rep.BrokenSeq)
		}
		var all bytes.Buffer
		err = db.Records(ctx, func(b, k, v []byte) error {
			fmt.Fprintf(&all, "%s\x00%s\x00%s\x00", b, k, v)
			return nil
		})
		if err != nil {
			return err
		}
		sums = append(sums, all.Bytes())
	}
	if !bytes.Equal(sums[0], sums[1]) {
		return errors.New("the two front ends' replicas hold different records")
	}
	return nil
}

// visibility writes n tags one at a time on host-a and measures when host-b's subscribers
// hear of each, from the moment host-a was asked to make the change (host-b often hears of
// it before host-a's caller has its answer).
func (r *clusterRun) visibility(ctx context.Context, n int) error {
	a, b := r.fes[0].fe.Load().DB(), r.fes[1].fe.Load().DB()
	heard := make(chan time.Time, n)
	var mu sync.Mutex
	want := map[string]bool{}
	cancel := b.Subscribe(func(evs []*graph.Event) {
		now := time.Now()
		for _, e := range evs {
			if e == nil || e.Action != graph.ActTagAdd {
				continue
			}
			mu.Lock()
			ok := want[string(e.After)]
			delete(want, string(e.After))
			mu.Unlock()
			if ok {
				heard <- now
			}
		}
	})
	defer cancel()
	var lat []time.Duration
	for i := range n {
		t := fmt.Sprintf("load:visible-%d", i)
		mu.Lock()
		want[fmt.Sprintf(`{"tag":%q}`, t)] = true
		mu.Unlock()
		asked := time.Now()
		if _, err := a.UpdateTags(graph.WithActor(ctx, "cli:load"), r.targets[i%len(r.targets)], []string{t}, nil); err != nil {
			return err
		}
		select {
		case at := <-heard:
			lat = append(lat, at.Sub(asked))
		case <-time.After(5 * time.Second):
			return fmt.Errorf("host-b did not hear of host-a's tag %s within 5s", t)
		}
	}
	slices.Sort(lat)
	res := &clusterResult{lat: lat}
	fmt.Fprintf(r.stdout, "visibility: a tag.add asked of host-a reaches host-b's replica and subscribers in p50 %s, p99 %s, max %s (%d writes)\n",
		fmtDur(res.pct(50)), fmtDur(res.pct(99)), fmtDur(res.pct(100)), n)
	return nil
}

// idle leaves both front ends alone for d and reports how far the cluster's revision moved.
func (r *clusterRun) idle(ctx context.Context, d time.Duration) error {
	fe := r.fes[0].fe.Load()
	rev0, _, err := fe.Head(ctx)
	if err != nil {
		return err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return ctx.Err()
	}
	rev1, _, err := fe.Head(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "idle: two front ends left alone for %s moved the etcd revision by %d\n", d, rev1-rev0)
	return nil
}

// rebuild loads n identities into the cluster through host-a (imports of 400 each: one
// etcd Txn takes 16,384 operations, and an identity with its note makes some 27), then
// times a fresh front end building its replica from the cluster.
func (r *clusterRun) rebuild(ctx context.Context, n int) error {
	db := r.fes[0].fe.Load().DB()
	start := time.Now()
	const chunk = 400
	for i := 0; i < n; i += chunk {
		var buf bytes.Buffer
		if err := writeExportRange(&buf, i, min(i+chunk, n)); err != nil {
			return err
		}
		if _, err := db.Import(graph.WithActor(ctx, "cli:load"), &buf, nil); err != nil {
			return fmt.Errorf("import identities %d–%d: %w", i, min(i+chunk, n), err)
		}
	}
	fmt.Fprintf(r.stdout, "replica build: %d identities imported through host-a in %s; ", n, time.Since(start).Round(time.Millisecond))
	f := &frontEnd{host: "host-fresh", replica: filepath.Join(filepath.Dir(r.fes[0].replica), "fresh.db")}
	start = time.Now()
	if err := r.open(ctx, f); err != nil {
		return err
	}
	took := time.Since(start)
	defer f.fe.Load().Close()
	st, err := f.fe.Load().DB().Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "a fresh front end opened with its replica built (%d identities) in %s; load average %s\n", st.Identities, took.Round(time.Millisecond), loadAvg())
	return nil
}
