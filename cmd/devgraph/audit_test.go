package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// checkPruned runs the prune story against a database the CLI reaches through run (on
// the file, or through a running server's socket): a future before is refused and writes
// nothing; a real prune writes a changelog.prune event by the CLI's user; verify names
// where the retained chain begins and who pruned it.
func checkPruned(t *testing.T, run func(args ...string) (string, string, int)) {
	t.Helper()
	for _, name := range []string{"Prune One", "Prune Two", "Prune Three"} {
		if _, errs, code := run("identity", "create", name); code != 0 {
			t.Fatalf("identity create: %d %s", code, errs)
		}
	}
	head := func() graph.VerifyReport {
		t.Helper()
		out, errs, code := run("changelog", "verify", "--json")
		var r graph.VerifyReport
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("verify: %d %s%s", code, out, errs)
		}
		return r
	}
	before := head()

	_, errs, code := run("changelog", "prune", "--before", "2999-01-01")
	if code != 1 || !strings.Contains(errs, "in the future") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("prune with a future before: exit %d %q", code, errs)
	}
	if after := head(); after.HeadHash != before.HeadHash || after.Checkpoint != "" {
		t.Fatalf("a refused prune changed the chain: %+v", after)
	}

	out, errs, code := run("changelog", "prune", "--before", "0s", "-m", "retention")
	if code != 0 || !strings.HasPrefix(out, "pruned 2 events") || !strings.Contains(out, "changelog.prune event") {
		t.Fatalf("prune: exit %d %q %q", code, out, errs)
	}
	out, errs, code = run("changelog", "--target", "changelog", "--json")
	var evs eventList
	if code != 0 || json.Unmarshal([]byte(out), &evs) != nil || len(evs.Items) != 1 {
		t.Fatalf("changelog --target changelog: %d %s%s", code, out, errs)
	}
	ev := evs.Items[0]
	if ev.Action != graph.ActChangelogPrune || ev.Actor != cliActor() || ev.Message != "retention" || ev.PrevHash != before.HeadHash {
		t.Errorf("prune event %+v (head before %s)", ev, before.HeadHash)
	}
	out, errs, code = run("changelog", "verify")
	want := "retained chain begins at seq 3, after checkpoint "
	if code != 0 || !strings.HasPrefix(out, "changelog ok") || !strings.Contains(out, want) ||
		!strings.Contains(out, "; pruned by "+cliActor()+" at ") || !strings.Contains(out, "(events 1..2, before ") {
		t.Errorf("verify after prune: exit %d\n%s%s", code, out, errs)
	}
	r := head()
	if !r.OK || r.FirstSeq != 3 || r.PrunedBy == nil || r.PrunedBy.EventSeq != ev.Seq || r.PrunedBy.Actor != cliActor() {
		t.Errorf("verify --json after prune: %+v %+v", r, r.PrunedBy)
	}
}

// Defect 6 (issue 11), the CLI on the file: the database's own user may prune, never
// with a future before, and the prune is recorded.
func TestCLI_PruneAudited(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := "--db=" + filepath.Join(t.TempDir(), "prune.db")
	checkPruned(t, func(args ...string) (string, string, int) { return c.run(append(args, db)...) })
}

// The CLI through a running server's socket (the same OS user: trusted) prunes too, with
// the same checks and the same event.
func TestProcess_PruneThroughSocket(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "prune.db")
	srv := startServe(t, env, "--db", db, "--poll", "0")
	srv.waitLine("socket: ")
	checkPruned(t, func(args ...string) (string, string, int) { return runBin(t, env, append(args, "--db", db)...) })
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}
