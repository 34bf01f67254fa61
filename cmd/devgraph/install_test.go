//go:build slow

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstall_FromClone clones the repository as a new user would, installs with
// `go install ./cmd/devgraph` and with `make install` into scratch GOBINs, and runs the
// installed binaries' `version`: it names the clone's commit (clean: no +dirty), and
// make install's build also carries its build date.
func TestInstall_FromClone(t *testing.T) {
	t.Parallel()
	git := lookTool(t, "git")
	goTool := lookTool(t, "go")
	top, err := exec.Command(git, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "devgraph")
	if out, err := exec.Command(git, "clone", "--quiet", "--no-hardlinks", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command(git, "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))

	// This machine's go env may say -buildvcs=false; a user's go install stamps the commit.
	// -trimpath keeps the build cache independent of the clone's directory, so a warm
	// run links what the last one compiled.
	env := append(os.Environ(), "GOFLAGS=-buildvcs=auto -trimpath", "GOTOOLCHAIN=local")
	install := func(gobin string, name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = clone
		cmd.Env = append(env, "GOBIN="+gobin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	version := func(bin string) buildInfo {
		t.Helper()
		out, err := exec.Command(bin, "version", "--json").Output()
		if err != nil {
			t.Fatalf("%s version --json: %v", bin, err)
		}
		var b buildInfo
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("version --json: %v\n%s", err, out)
		}
		text, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.Contains(string(text), commit) {
			t.Errorf("%s version does not name commit %s (%v):\n%s", bin, commit, err, text)
		}
		return b
	}

	goBin := t.TempDir()
	install(goBin, goTool, "install", "./cmd/devgraph")
	b := version(filepath.Join(goBin, "devgraph"))
	if b.Commit != commit || b.CommitTime == "" {
		t.Errorf("go install: commit %q at %q, want %s and its time", b.Commit, b.CommitTime, commit)
	}

	// MCP serverInfo.version is the same version string, naming the commit.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"install","version":"1"}}}` + "\n"
	serve := exec.Command(filepath.Join(goBin, "devgraph"), "serve", "--db", filepath.Join(t.TempDir(), "i.db"), "--poll", "0")
	serve.Env = procEnv(t)
	serve.Stdin = strings.NewReader(init)
	out, err := serve.Output()
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	var reply struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if line, _, _ := strings.Cut(string(out), "\n"); json.Unmarshal([]byte(line), &reply) != nil || reply.Result.ServerInfo.Version != b.String() || !strings.Contains(b.String(), commit[:12]) {
		t.Errorf("MCP serverInfo %+v, want version %q naming %s:\n%s", reply.Result.ServerInfo, b.String(), commit[:12], out)
	}

	makeTool := lookTool(t, "make")
	makeBin := t.TempDir()
	install(makeBin, makeTool, "--no-print-directory", "install", "GO="+goTool)
	b = version(filepath.Join(makeBin, "devgraph"))
	if b.Commit != commit || b.BuildDate == "" {
		t.Errorf("make install: commit %q, build date %q; want %s and a date", b.Commit, b.BuildDate, commit)
	}
}
