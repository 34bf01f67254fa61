//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/internal/etcdtest"
)

// TestFaults_FirstStartTogether starts two front ends at once on an empty cluster, as a
// fleet does when it is first brought up: both must start and end up with the same graph.
// (One saw the other's host claim, before its seed, as foreign keys under the prefix and
// refused to start: "the prefix holds 1 keys but no devgraph graph".)
func TestFaults_FirstStartTogether(t *testing.T) {
	c := etcdtest.Start(t, 3, etcdtest.LogLevel("warn"))
	dir := t.TempDir()
	for round := range 5 {
		prefix := fmt.Sprintf("/together%d", round)
		var wg sync.WaitGroup
		fes := make([]*FrontEnd, 2)
		errs := make([]error, 2)
		for i := range fes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fes[i], errs[i] = openFEAt(c.Endpoints(), prefix, fmt.Sprintf("host-%d", i), filepath.Join(dir, fmt.Sprintf("r%d-%d.db", round, i)))
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: front end %d of two started together on an empty cluster: %v", round, i, err)
			}
			defer fes[i].Close()
		}
		// Each writes on the identity the other made.
		l := newLedger()
		ids := [][]string{seedTargets(t, fes[0].DB(), "Made on host 0", 1), seedTargets(t, fes[1].DB(), "Made on host 1", 1)}
		for i, fe := range fes {
			if err := fe.DB().WaitReplica(context.Background(), fes[1-i].DB().ReplicaRev()); err != nil {
				t.Fatal(err)
			}
			p := fmt.Sprintf("zq-together%d-%d", round, i)
			l.try(p)
			l.done(p, doWrite(context.Background(), fe.DB(), "tag", ids[1-i][0], p))
		}
		checkAll(t, l, fes)
	}
}
