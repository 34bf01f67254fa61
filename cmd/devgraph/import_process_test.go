package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Defect 2 of issue 11: `import /dev/zero` wrote gigabytes beside the database and
// ignored SIGINT and SIGTERM, a regular file was copied whole before line 1 was checked,
// and `query -f /dev/zero` read until memory ran out. These run the real binary.

// importDB is a database with a few changes in it, and its state (importState).
func importDB(t *testing.T, env []string) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "dg.db")
	binOK(t, env, "identity", "create", "Unit A", "--db", db)
	binOK(t, env, "tag", "unit-a", "+role:synth", "--db", db)
	return db, importState(t, env, db)
}

// importState is what an import that fails must leave as it was: the export without its
// header (which carries the time), and the changelog head.
func importState(t *testing.T, env []string, db string) string {
	t.Helper()
	exp := binOK(t, env, "export", "--db", db)
	_, body, _ := strings.Cut(exp, "\n")
	return body + binOK(t, env, "changelog", "verify", "--db", db)
}

// exportHeader is the first line of an export of db.
func exportHeader(t *testing.T, env []string, db string) string {
	t.Helper()
	h, _, _ := strings.Cut(binOK(t, env, "export", "--db", db), "\n")
	return h + "\n"
}

// runLimited runs the binary under sh with ulimit settings (a file size or memory
// bound), so that the behaviour the test refuses fails fast instead of filling the disk
// or memory.
func runLimited(t *testing.T, env []string, limits string, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", limits + `; exec "$0" "$@"`, binary}, args...)...)
	cmd.Env, cmd.Stdin = env, stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() }) // a hang fails, it never blocks the suite
	defer watchdog.Stop()
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("devgraph %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// emptyDir fails the test when dir holds anything.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in %s: %v", dir, left)
	}
}

// wantOneLine fails unless stderr is one line containing want.
func wantOneLine(t *testing.T, stderr, want string) {
	t.Helper()
	if s := strings.TrimSpace(stderr); strings.Count(s, "\n") != 0 || !strings.Contains(s, want) {
		t.Errorf("stderr %q; want one line containing %q", stderr, want)
	}
}

// endlessRecords is a stream that never ends: an export header, then robot records.
type endlessRecords struct{ pending []byte }

func (e *endlessRecords) Read(p []byte) (int, error) {
	if len(e.pending) == 0 {
		e.pending = bytes.Repeat([]byte(`{"type":"robot","robot":{"ref":"x"}}`+"\n"), 1024)
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

func TestProcess_ImportEndlessInput(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db, before := importDB(t, env)
	header := exportHeader(t, env, db)
	// Under a file size bound of a few MiB, spooling gigabytes fails fast instead. The
	// endless line is spooled up to the line bound (64 MiB) first, so it has no such bound.
	const fsize = "ulimit -f 8192"
	cases := []struct {
		name   string
		limits string
		stdin  io.Reader
		args   []string
		want   string
	}{
		{"/dev/zero with a small --max-size", fsize, nil, []string{"import", "/dev/zero", "--max-size", "1M"}, "import line 1 is not an export record"},
		{"/dev/zero", fsize, nil, []string{"import", "/dev/zero"}, "import line 1 is not an export record"},
		{"endless records on stdin past --max-size", fsize, &endlessRecords{pending: []byte(header)}, []string{"import", "-", "--max-size", "1M"}, "larger than --max-size 1M"},
		{"endless line on stdin", "true", io.MultiReader(strings.NewReader(header+"{"), endlessByte('x')), []string{"import", "-"}, "import line 2 is longer than 64 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			out, errs, code := runLimited(t, append(env, "TMPDIR="+tmp), c.limits, c.stdin, append(c.args, "--db", db)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
			}
			wantOneLine(t, errs, c.want)
			if !strings.Contains(errs, "nothing was imported") {
				t.Errorf("stderr %q does not say nothing was imported", errs)
			}
			emptyDir(t, tmp)
			if after := importState(t, env, db); after != before {
				t.Fatalf("the database changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

// endlessByte is a stream of one byte, forever.
type endlessByte byte

func (b endlessByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// SIGTERM or SIGINT while import reads a pipe that never ends: exit 1 with one line, no
// temporary file, the database as it was.
func TestProcess_ImportSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			env := procEnv(t)
			db, before := importDB(t, env)
			header := exportHeader(t, env, db)
			tmp := t.TempDir()
			cmd := exec.Command(binary, "import", "-", "--db", db)
			cmd.Env = append(env, "TMPDIR="+tmp)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
			defer watchdog.Stop()
			// 4 MiB through a 64 KiB pipe: once written, the import has read most of it
			// (its signal handling is set up) and waits for more, which never comes.
			records := bytes.Repeat([]byte(`{"type":"robot","robot":{"ref":"x"}}`+"\n"), (4<<20)/37)
			if _, err := in.Write(append([]byte(header), records...)); err != nil {
				t.Fatalf("write: %v\n%s", err, errb.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait() // stdin stays open: the process must end by itself
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 1 {
				t.Fatalf("%v, want exit 1\n%s%s", err, out.String(), errb.String())
			}
			wantOneLine(t, errb.String(), "import interrupted; nothing was imported")
			emptyDir(t, tmp)
			if after := importState(t, env, db); after != before {
				t.Fatalf("the database changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

// A regular file whose first line is bad is refused at line 1 without being copied:
// under a 4 MiB file size bound, with no usable TMPDIR, a 16 MiB file is refused naming
// line 1. A good regular file imports with no TMPDIR at all.
func TestProcess_ImportRegularFileNotCopied(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db, before := importDB(t, env)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	filler := bytes.Repeat([]byte(`{"type":"robot","robot":{"ref":"x"}}`+"\n"), (16<<20)/37)
	if err := os.WriteFile(bad, append([]byte("{not json\n"), filler...), 0o600); err != nil {
		t.Fatal(err)
	}
	noTmp := append(env, "TMPDIR="+filepath.Join(dir, "missing"))
	out, errs, code := runLimited(t, noTmp, "ulimit -f 8192", nil, "import", bad, "--db", db)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	wantOneLine(t, errs, "import line 1 is not an export record")
	if after := importState(t, env, db); after != before {
		t.Fatalf("the database changed:\n before %s\n after  %s", before, after)
	}

	good := filepath.Join(dir, "good.jsonl")
	binOK(t, env, "export", good, "--db", db)
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	if out := binOK(t, noTmp, "import", good, "--db", fresh); !strings.Contains(out, "changelog kept byte for byte") {
		t.Errorf("import: %q", out)
	}
	if got := importState(t, env, fresh); got != before {
		t.Fatalf("imported:\n %s\nwant\n %s", got, before)
	}
}

// query -f and --vars-file read at most what an HTTP server reads of a GraphQL body: an
// endless file is refused at once (run under a memory bound, so reading it to the end
// fails fast instead of taking the machine's memory).
func TestProcess_QueryEndlessFiles(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db, _ := importDB(t, env)
	for _, args := range [][]string{
		{"query", "-f", "/dev/zero"},
		{"query", "{ stats { identities } }", "--vars-file", "/dev/zero"},
	} {
		out, errs, code := runLimited(t, env, "ulimit -v 4194304", nil, append(args, "--db", db)...)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1\n%s%s", args, code, out, errs)
		}
		wantOneLine(t, errs, "/dev/zero is larger than")
	}
	out, errs, code := runLimited(t, env, "ulimit -v 4194304", strings.NewReader(strings.Repeat(" ", 1<<20)+"{ stats { identities } }"), "query", "--db", db)
	if code != 1 {
		t.Fatalf("query < 1 MiB: exit %d, want 1\n%s%s", code, out, errs)
	}
	wantOneLine(t, errs, "the document on stdin is larger than")
}

// Through a running server's socket the same bounds hold: the server spools the stream
// under the caller's --max-size and refuses a bad line 1 at once; an interrupted client
// exits 1 and nothing is imported; a good stream with a --max-size of its own imports.
func TestProcess_ImportThroughServer(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db, _ := importDB(t, env)
	srvTmp := t.TempDir()
	srv := startServe(t, append(env, "TMPDIR="+srvTmp), "--db", db, "--poll", "0")
	srv.waitLine("socket: ")
	before := importState(t, env, db)
	header := exportHeader(t, env, db)
	cliTmp := t.TempDir()
	cliEnv := append(env, "TMPDIR="+cliTmp)

	for _, c := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string
	}{
		{"endless records past --max-size", &endlessRecords{pending: []byte(header)}, []string{"import", "-", "--max-size", "1M"}, "larger than --max-size 1M"},
		{"/dev/zero", nil, []string{"import", "/dev/zero"}, "import line 1 is not an export record"},
	} {
		out, errs, code := runLimited(t, cliEnv, "true", c.stdin, append(c.args, "--db", db)...)
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s%s\nserver:\n%s", c.name, code, out, errs, srv.log())
		}
		wantOneLine(t, errs, c.want)
	}

	cmd := exec.Command(binary, "import", "-", "--db", db)
	cmd.Env = cliEnv
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	defer watchdog.Stop()
	records := bytes.Repeat([]byte(`{"type":"robot","robot":{"ref":"x"}}`+"\n"), (4<<20)/37)
	if _, err := in.Write(append([]byte(header), records...)); err != nil {
		t.Fatalf("write: %v\n%s", err, errb.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if ee, ok := cmd.Wait().(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("interrupted import through the server: %v\n%s", cmd.ProcessState, errb.String())
	}
	wantOneLine(t, errb.String(), "import interrupted; nothing was imported")

	if after := importState(t, env, db); after != before {
		t.Fatalf("the database changed:\n before %s\n after  %s", before, after)
	}
	emptyDir(t, cliTmp)

	// A good stream with a --max-size of its own goes through.
	other := filepath.Join(t.TempDir(), "other.db")
	binOK(t, env, "identity", "create", "Unit B", "--db", other)
	exp := binOK(t, env, "export", "--db", other)
	out, errs, code := runLimited(t, cliEnv, "true", strings.NewReader(exp), "import", "-", "--max-size", "8G", "--db", db)
	if code != 0 || !strings.Contains(out, "imported 1 record") {
		t.Fatalf("import through the server: exit %d\n%s%s\nserver:\n%s", code, out, errs, srv.log())
	}
	// A regular file larger than --max-size: its own size bounds the server's spool.
	third := filepath.Join(t.TempDir(), "third.db")
	binOK(t, env, "identity", "create", "Unit C", "--db", third)
	file := filepath.Join(t.TempDir(), "third.jsonl")
	binOK(t, env, "export", file, "--db", third)
	if fi, err := os.Stat(file); err != nil || fi.Size() <= 500 {
		t.Fatalf("export %v: want over 500 bytes (%v)", fi, err)
	}
	if out := binOK(t, cliEnv, "import", file, "--max-size", "500", "--db", db); !strings.Contains(out, "imported 1 record") {
		t.Fatalf("import of a regular file through the server: %q", out)
	}
	srv.stdin.Close()
	if err := srv.wait(); err != nil {
		t.Fatalf("serve ended with %v:\n%s", err, srv.log())
	}
	emptyDir(t, srvTmp)
}
