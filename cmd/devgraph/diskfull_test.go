package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

var noteID = regexp.MustCompile(`note:[0-9a-f-]{36}`)

// setFileSizeLimit sets the soft RLIMIT_FSIZE of process pid (prlimit(2)); the hard
// limit stays, so a process of the same user may lower it and raise it back.
func setFileSizeLimit(t *testing.T, pid int, bytes uint64) {
	t.Helper()
	var old syscall.Rlimit
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_FSIZE, 0, uintptr(unsafe.Pointer(&old)), 0, 0); e != 0 {
		t.Fatalf("read the file size limit of %d: %v", pid, e)
	}
	lim := syscall.Rlimit{Cur: min(bytes, old.Max), Max: old.Max}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_FSIZE, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		t.Fatalf("set the file size limit of %d to %d: %v", pid, bytes, e)
	}
}

// gqlResult is a GraphQL response.
type gqlResult struct {
	Data   map[string]json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func gqlVars(t *testing.T, url, query string, vars map[string]any) gqlResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r gqlResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("GraphQL answered %s %q: %v", resp.Status, b, err)
	}
	return r
}

// TestProcess_DiskFull: a `serve --http` child is filled through GraphQL until a write
// fails, once at the file size limit (its RLIMIT_FSIZE lowered with prlimit: EFBIG, and
// SIGXFSZ must not kill it) and once on a full file system (a small tmpfs the test
// mounts: ENOSPC). The write fails with one line naming the cause, reads keep working
// over HTTP and the socket, the CLI's write through the socket gets the same line, and
// once the limit is raised or a ballast file removed writes resume; after a clean stop
// the changelog verifies and the file holds every acknowledged note.
func TestProcess_DiskFull(t *testing.T) {
	t.Parallel()
	t.Run("FileSizeLimit", func(t *testing.T) {
		t.Parallel()
		var pid int
		fillUntilRefused(t, t.TempDir(), "file size limit",
			func(p int) { pid = p; setFileSizeLimit(t, pid, 256<<10) },
			func() { setFileSizeLimit(t, pid, ^uint64(0)) })
	})
	t.Run("NoSpace", func(t *testing.T) {
		t.Parallel()
		dir := mountTmpfs(t, "1m")
		ballast := filepath.Join(dir, "ballast")
		if err := os.WriteFile(ballast, make([]byte, 256<<10), 0o600); err != nil {
			t.Fatal(err)
		}
		fillUntilRefused(t, dir, "the disk is full", func(int) {}, func() {
			if err := os.Remove(ballast); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// mountTmpfs mounts a tmpfs of the given size (mount(8)'s size=) on a temp dir and
// unmounts it when the test ends. It needs root: without it the test fails under CI=true
// and is skipped otherwise.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := shortTemp(t)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a %s tmpfs on %s (the test needs root): %v", size, dir, err)
		}
		t.Skipf("mount a %s tmpfs on %s (the test needs root): %v", size, dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillUntilRefused serves a database in dir, calls limit with the server's pid, writes
// 8 KiB notes through GraphQL until one is refused with cause, checks reads and the
// CLI at the limit, calls lift, and checks that writes resume and nothing acknowledged
// is lost, also after a restart.
func fillUntilRefused(t *testing.T, dir, cause string, limit func(pid int), lift func()) {
	env := procEnv(t)
	r := newTestRig(t)
	db := filepath.Join(dir, "full.db")
	srv := startServe(t, env, append([]string{"--db", db, "--http", "127.0.0.1:0"}, r.flags()...)...)
	srv.waitLine("socket: ")
	url := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")
	pid := srv.cmd.Process.Pid

	if res := gqlVars(t, url, `mutation { createIdentity(name: "Fill") { id } }`, nil); len(res.Errors) > 0 {
		t.Fatalf("createIdentity: %+v", res.Errors)
	}
	limit(pid)
	rnd := rand.New(rand.NewPCG(3, 4))
	acked := map[string]string{}
	addNote := func(target string) (string, gqlResult) {
		body := noteText(rnd, 8<<10)
		res := gqlVars(t, url, `mutation($t: ID!, $b: String!) { addNote(target: $t, body: $b) { id } }`, map[string]any{"t": target, "b": body})
		var n struct{ ID string }
		if len(res.Errors) == 0 {
			json.Unmarshal(res.Data["addNote"], &n)
			acked[n.ID] = body
		}
		return n.ID, res
	}
	var refused gqlResult
	for i := 0; ; i++ {
		if i == 400 {
			t.Fatalf("400 notes of 8 KiB fit; the limit never came")
		}
		if _, res := addNote("identity:fill"); len(res.Errors) > 0 {
			refused = res
			break
		}
	}
	msg := refused.Errors[0].Message
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("refused after %d notes (file %d bytes): %s", len(acked), fi.Size(), msg)
	if len(acked) == 0 {
		t.Errorf("no note fitted under the limit; the test shows nothing about acknowledged writes")
	}
	if !strings.Contains(msg, cause) || strings.Contains(msg, "\n") || refused.Errors[0].Extensions["code"] != graph.EUNAVAILABLE {
		t.Errorf("the refusal %q (%v) does not say %q in one line", msg, refused.Errors[0].Extensions, cause)
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("serve died at the limit:\n%s", srv.log())
	}

	// While at the limit: reads work over HTTP and through the socket; the CLI's write
	// through the socket gets the same one line.
	if res := gqlVars(t, url, `{ identity(id: "fill") { notes(first: 1) { totalCount } } }`, nil); len(res.Errors) > 0 {
		t.Errorf("read over HTTP at the limit: %+v", res.Errors)
	}
	if out := binOK(t, env, "identities", "--db", db); !strings.Contains(out, "identity:fill") {
		t.Errorf("identities through the socket at the limit: %q", out)
	}
	// Pages freed by earlier writes may still take one; write until refused.
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatalf("50 CLI notes fitted at the limit")
		}
		body := noteText(rnd, 8<<10)
		out, errs, code := runBin(t, env, "note", "add", "fill", body, "--db", db)
		if code == 0 {
			if id := noteID.FindString(out); id != "" {
				acked[id] = body
			}
			continue
		}
		if code != 1 || !strings.Contains(errs, cause) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("CLI note add at the limit: exit %d %q, want exit 1 and one line saying %q", code, errs, cause)
		}
		break
	}

	// The limit is lifted: writes resume.
	lift()
	for i := 0; i < 10; i++ {
		if _, res := addNote("identity:fill"); len(res.Errors) > 0 {
			t.Fatalf("write %d after lifting the limit: %+v", i, res.Errors)
		}
	}
	if out := binOK(t, env, "changelog", "verify", "--db", db); !strings.HasPrefix(out, "changelog ok") {
		t.Errorf("verify through the socket: %q", out)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Fatalf("serve ended with %v:\n%s", err, srv.log())
	}
	if out := binOK(t, env, "changelog", "verify", "--db", db); !strings.HasPrefix(out, "changelog ok") {
		t.Errorf("verify after the restart: %q", out)
	}
	checkNotes(t, db, acked)
}

// checkNotes opens the database file and finds every acknowledged note in it.
func checkNotes(t *testing.T, db string, acked map[string]string) {
	t.Helper()
	st, err := store.Open(db, store.Options{Host: testHost, Timeout: 5 * time.Second, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, body := range acked {
		n, err := st.FindNoteByID(context.Background(), id)
		if err != nil || n.Body != body {
			t.Fatalf("acknowledged note %s: %v", id, err)
		}
	}
	t.Logf("all %d acknowledged notes are in the file", len(acked))
}

// noteText is n bytes of lowercase text that does not compress.
func noteText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz "
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return fmt.Sprint(string(b))
}
