package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCLI_Honest: on the file and through a running server's socket alike, a repeated
// bind and an identical note are no-ops that say so; a bind whose model contradicts the
// identity is refused with the contradiction and the command that forces it, and --force
// binds; errors advise commands and flags, never MCP tools.
func TestCLI_Honest(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		c := newCLI(t)
		r := newTestRig(t)
		base := append([]string{"--db", filepath.Join(t.TempDir(), "honest.db")}, r.flags()...)
		honestJourney(t, &journey{t: t, run: func(args ...string) (string, string, int) {
			return c.run(append(args, base...)...)
		}})
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		env := procEnv(t)
		r := newTestRig(t)
		db := filepath.Join(t.TempDir(), "honest.db")
		srv := startServe(t, env, append([]string{"--db", db, "--poll", "0"}, r.flags()...)...)
		srv.waitLine("socket: ")
		honestJourney(t, &journey{t: t, run: func(args ...string) (string, string, int) {
			return runBin(t, env, append(args, "--db", db)...)
		}})
		srv.cmd.Process.Signal(syscall.SIGTERM)
		if err := srv.wait(); err != nil {
			t.Errorf("serve ended with %v:\n%s", err, srv.log())
		}
	})
}

func honestJourney(t *testing.T, j *journey) {
	j.ok("bind", jdxiRef, "--new", "Roland JD-Xi", "--slug", "jdxi")
	head := j.head()
	if out := j.ok("bind", jdxiRef, "--new", "Roland JD-Xi", "--slug", "jdxi"); !strings.HasPrefix(out, "already bound "+jdxiRef+" to "+jdxiID) {
		t.Errorf("retried bind printed %q", out)
	}
	if out := j.ok("bind", jdxiRef, "jdxi"); !strings.HasPrefix(out, "already bound") {
		t.Errorf("retried bind by identity printed %q", out)
	}
	if h := j.head(); h != head {
		t.Errorf("retried binds wrote: head %d → %d", head, h)
	}

	// The KeyStep is another model than the JD-Xi.
	j.fail([]string{"contradicts identity:jdxi", "another model", "run `devgraph show identity:jdxi` or `devgraph bind " + keystepRef + " identity:jdxi --force`"},
		"bind", keystepRef, "jdxi")
	if out := j.ok("bind", keystepRef, "jdxi", "--force"); !strings.HasPrefix(out, "bound "+keystepRef+" to "+jdxiID) {
		t.Errorf("forced bind printed %q", out)
	}

	// An unknown id: the suggestion, then the verb that lists them.
	j.fail([]string{`unknown identity "jdx1"; did you mean identity:jdxi? Run ` + "`devgraph identities`"}, "note", "add", "jdx1", "hello")

	j.ok("note", "add", "jdxi", "firmware 1.53")
	head = j.head()
	if out := j.ok("note", "add", "jdxi", "firmware 1.53"); !strings.HasPrefix(out, "already there: note:") {
		t.Errorf("repeated note printed %q", out)
	}
	if h := j.head(); h != head {
		t.Errorf("a repeated note wrote: head %d → %d", head, h)
	}
}
