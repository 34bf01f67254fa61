package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/store"
)

// complete runs `devgraph __complete ARGS…` (what the shell scripts run at a TAB) in
// process and returns the offered values without their descriptions, and the exit code.
func (c *cliEnv) complete(args ...string) ([]string, int) {
	c.t.Helper()
	out, _, code := c.run(append([]string{"__complete"}, args...)...)
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue // the directive
		}
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals, code
}

// TestCompletion_Values: identity slugs, device refs, robot names and tags come from the
// database; after + the tag vocabulary, after - the tags the identity holds.
func TestCompletion_Values(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	r := newTestRig(t)
	db := filepath.Join(t.TempDir(), "c.db")
	base := append([]string{"--db", db}, r.flags()...)
	c.ok(append([]string{"devices"}, base...)...) // records the rig's devices
	c.ok(append([]string{"identity", "create", "Roland JD-Xi", "--tag", "role:synth"}, base...)...)
	c.ok(append([]string{"identity", "create", "Korg Minilogue"}, base...)...)

	cases := []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"show", ""}, []string{"roland-jd-xi", "korg-minilogue", "usb:3-3.2"}, nil},
		{[]string{"show", "rol"}, []string{"roland-jd-xi"}, []string{"korg-minilogue"}},
		{[]string{"bind", "usb:3-3"}, []string{"usb:3-3.2"}, []string{"roland-jd-xi"}},
		{[]string{"bind", "usb:3-3.2", ""}, []string{"roland-jd-xi", "korg-minilogue"}, []string{"usb:3-3.2"}},
		{[]string{"identity", "merge", "korg-minilogue", ""}, []string{"roland-jd-xi"}, nil},
		{[]string{"tag", ""}, []string{"roland-jd-xi", "usb:3-3.2"}, nil},
		{[]string{"tag", "roland-jd-xi", "+role:s"}, []string{"+role:synth", "+role:sampler"}, []string{"+role:hub"}},
		{[]string{"tag", "roland-jd-xi", "-"}, []string{"-role:synth"}, []string{"-role:hub"}},
		{[]string{"tag", "korg-minilogue", "-r"}, nil, []string{"-role:synth"}},
		{[]string{"tag", "--sys-root", ""}, nil, []string{"roland-jd-xi"}}, // a path, not a target
		{[]string{"identities", "--tag", "role:sy"}, []string{"role:synth"}, nil},
		{[]string{"relate", "roland-jd-xi", "c"}, []string{"cable", "controls"}, []string{"mounted_on"}},
		{[]string{"relations", "roland-jd-xi", "--direction", ""}, []string{"out", "in", "both"}, nil},
		{[]string{"devices", "-o", ""}, []string{"json", "wide"}, nil},
		{[]string{"changelog", "--target", "kor"}, []string{"korg-minilogue"}, nil},
		{[]string{"help", "rel"}, []string{"relate", "relation", "relations"}, []string{"trace"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, nil},
		// Flags before the verb, as the CLI takes them (devgraph --json show X).
		{[]string{"--json", "show", "rol"}, []string{"roland-jd-xi"}, []string{"korg-minilogue"}},
		{[]string{"-json", "tag", "roland-jd-xi", "-"}, []string{"-role:synth"}, nil},
		{[]string{"-o", "json", "relations", "roland-jd-xi", "--direction", ""}, []string{"out", "in", "both"}, nil},
		{[]string{"--json", "sh"}, []string{"show"}, nil},
		{[]string{"--json", "show"}, []string{"show"}, nil},
	}
	for _, tc := range cases {
		got, code := c.complete(append(append([]string{}, base...), tc.args...)...)
		if code != 0 {
			t.Fatalf("completing %q: exit %d", tc.args, code)
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q: %q lacks %q", tc.args, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("completing %q: %q offers %q", tc.args, got, w)
			}
		}
	}
}

// TestCompletion_NeverWrites: a TAB never creates a database, never waits for or takes
// a held file's lock (it offers nothing and exits 0), and beside a running server asks
// the server.
func TestCompletion_NeverWrites(t *testing.T) {
	t.Parallel()
	t.Run("MissingDB", func(t *testing.T) {
		c := newCLI(t)
		dir := t.TempDir()
		db := filepath.Join(dir, "sub", "none.db")
		for _, args := range [][]string{{"show", ""}, {"tag", "x", "-r"}, {"tag", "x", "+r"}, {"robot", "navigate", ""}} {
			got, code := c.complete(append([]string{"--db", db}, args...)...)
			if code != 0 || len(got) != 0 {
				t.Errorf("completing %q on a missing db: exit %d, %q", args, code, got)
			}
		}
		// The default database too.
		if got, code := c.complete("show", ""); code != 0 || len(got) != 0 {
			t.Errorf("completing on the default db: exit %d, %q", code, got)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("completion created %v in %s", ents, dir)
		}
		if _, err := os.Stat(c.vars["XDG_DATA_HOME"]); !os.IsNotExist(err) {
			t.Errorf("completion created the data directory (%v)", err)
		}
	})
	t.Run("LockedDB", func(t *testing.T) {
		c := newCLI(t)
		db := filepath.Join(t.TempDir(), "l.db")
		c.ok("identity", "create", "Roland JD-Xi", "--db", db)
		st, err := store.Open(db, store.Options{Host: testHost})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		before, _ := os.Stat(db)
		got, code := c.complete("--db", db, "show", "")
		if code != 0 || len(got) != 0 {
			t.Errorf("completing on a held db: exit %d, %q; want 0 and nothing", code, got)
		}
		if after, _ := os.Stat(db); !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
			t.Errorf("completion changed the held file")
		}
	})
	t.Run("BesideServer", func(t *testing.T) {
		env := procEnv(t)
		r := newTestRig(t)
		db := filepath.Join(t.TempDir(), "s.db")
		c := newCLI(t)
		c.ok(append([]string{"identity", "create", "Roland JD-Xi", "--db", db}, r.flags()...)...)
		srv := startServe(t, env, append([]string{"--db", db, "--poll", "0", "--sim-robot", "scout@1,1"}, r.flags()...)...)
		srv.waitLine("socket: ")
		// The server holds the file: only its socket can answer.
		got, code := c.complete("--db", db, "show", "")
		if code != 0 || !slices.Contains(got, "roland-jd-xi") || !slices.Contains(got, "robot:scout") {
			t.Errorf("completing beside a server: exit %d, %q", code, got)
		}
		if got, _ := c.complete("--db", db, "robot", "navigate", "sc"); !slices.Contains(got, "scout") {
			t.Errorf("robot names beside a server: %q", got)
		}
		srv.stdin.Close()
		if err := srv.wait(); err != nil {
			t.Errorf("serve ended with %v:\n%s", err, srv.log())
		}
	})
}

// TestCompletion_Scripts: the three scripts are cobra's (golden files; go test -update
// rewrites them), and the bash one parses.
func TestCompletion_Scripts(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		golden(t, "completion-"+sh, c.ok("completion", sh))
	}
	bash := lookTool(t, "bash")
	check := exec.Command(bash, "-n")
	check.Stdin = strings.NewReader(c.ok("completion", "bash"))
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("bash -n on the script: %v\n%s", err, out)
	}
}

// lookTool finds a program the test needs; missing, the test fails under CI=true and is
// skipped elsewhere.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v", name, err)
		}
		t.Skipf("%s: %v", name, err)
	}
	return p
}

// TestCompletion_Bash sources the bash script in a real bash without the
// bash-completion package and completes what a person types, the binary answering
// through `devgraph __complete` as it does at a TAB.
func TestCompletion_Bash(t *testing.T) {
	t.Parallel()
	bash := lookTool(t, "bash")
	c := newCLI(t)
	script := c.ok("completion", "bash")
	r := newTestRig(t)
	db := filepath.Join(t.TempDir(), "b.db")
	c.ok(append([]string{"devices", "--db", db}, r.flags()...)...)
	c.ok("identity", "create", "Roland JD-Xi", "--tag", "role:synth", "--db", db)
	env := append(procEnv(t), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))

	complete := func(line string) []string {
		t.Helper()
		// COMP_WORDS as bash splits the line: at blanks, and around ':' (COMP_WORDBREAKS).
		var words []string
		for _, w := range strings.Fields(line) {
			for i, part := range strings.Split(w, ":") {
				if i > 0 {
					words = append(words, ":")
				}
				if part != "" {
					words = append(words, part)
				}
			}
		}
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		var sb strings.Builder
		sb.WriteString(script)
		sb.WriteString("\nCOMP_LINE=" + quoteBash(line) + "\nCOMP_POINT=" + strconv.Itoa(len(line)) + "\nCOMP_WORDS=(")
		for _, w := range words {
			sb.WriteString(" " + quoteBash(w))
		}
		sb.WriteString(")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n__devgraph_start_colons\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", sb.String())
		cmd.Env = env
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.Output(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if err != nil {
			t.Fatalf("bash completion of %q: %v\n%s", line, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				v, _, _ := strings.Cut(l, " ") // "value  (description)" when several
				got = append(got, v)
			}
		}
		return got
	}
	cases := []struct {
		line string
		want []string
		not  []string
	}{
		{"devgraph rel", []string{"relate", "relation", "relations"}, []string{"trace"}},
		{"devgraph identity re", []string{"rename", "restore"}, nil},
		{"devgraph relations --t", []string{"--type", "--types"}, nil},
		{"devgraph export --format m", []string{"mermaid"}, []string{"dot"}},
		{"devgraph completion ", []string{"bash", "zsh", "fish"}, nil},
		{"devgraph show --db " + db + " rol", []string{"roland-jd-xi"}, nil},
		// Refs hold ':', where bash splits words: the completion replaces only what
		// follows the last ':', so the line reads usb:3-3.2, not usb:usb:3-3.2.
		{"devgraph unbind --db " + db + " usb:3-3.", []string{"3-3.2"}, []string{"usb:3-3.2"}},
		{"devgraph tag --db " + db + " roland-jd-xi +role:syn", []string{"synth"}, nil},
		{"devgraph tag --db " + db + " roland-jd-xi -", []string{"-role:synth"}, nil},
	}
	for _, tc := range cases {
		got := complete(tc.line)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("completing %q: %q lacks %q", tc.line, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("completing %q: %q offers %q", tc.line, got, w)
			}
		}
	}
}

// quoteBash is a single-quoted bash word.
func quoteBash(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
