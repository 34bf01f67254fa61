package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// cliEnv is a test's environment: a home of its own, so nothing touches the real
// ~/.local/share or ~/.cache.
type cliEnv struct {
	t     *testing.T
	home  string
	vars  map[string]string
	stdin string
	cols  int // >0: stdout is a terminal this wide (tables fit it)
}

func newCLI(t *testing.T) *cliEnv {
	t.Helper()
	home := t.TempDir()
	return &cliEnv{t: t, home: home, vars: map[string]string{
		"HOME":           home,
		"XDG_DATA_HOME":  filepath.Join(home, "data"),
		"XDG_CACHE_HOME": filepath.Join(home, "cache"),
		// one host name on every machine, so tables and goldens read the same everywhere
		"DEVGRAPH_HOST_NAME": "studio",
	}}
}

// run runs the CLI in-process and returns stdout, stderr and the exit code.
func (c *cliEnv) run(args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	var stdout io.Writer = &out
	if c.cols > 0 {
		stdout = &fitted{Writer: &out, cols: c.cols}
	}
	e := &env{stdin: strings.NewReader(c.stdin), stdout: stdout, stderr: &errb, getenv: func(k string) string { return c.vars[k] }}
	code := e.run(context.Background(), args)
	return out.String(), errb.String(), code
}

// ok runs the CLI and fails the test unless it exits 0.
func (c *cliEnv) ok(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("devgraph %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), code, errs, out)
	}
	return out
}

// fail runs the CLI and fails the test unless it exits with code and a one-line
// message on stderr containing want.
func (c *cliEnv) fail(code int, want string, args ...string) string {
	c.t.Helper()
	out, errs, got := c.run(args...)
	if got != code {
		c.t.Fatalf("devgraph %s: exit %d, want %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), got, code, errs, out)
	}
	if !strings.Contains(errs, want) {
		c.t.Fatalf("devgraph %s: stderr %q lacks %q", strings.Join(args, " "), errs, want)
	}
	if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n > 0 {
		c.t.Fatalf("devgraph %s: stderr has %d lines, want one: %q", strings.Join(args, " "), n+1, errs)
	}
	return errs
}

// jsonOf runs the CLI (which must succeed) and decodes its --json output.
func (c *cliEnv) jsonOf(v any, args ...string) {
	c.t.Helper()
	out := c.ok(args...)
	// Decode into a zeroed value: Unmarshal would keep fields of an earlier answer.
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("devgraph %s: output is not JSON (%v): %s", strings.Join(args, " "), err, out)
	}
}

// golden compares got with testdata/<name>.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}
