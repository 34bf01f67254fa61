package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --store's bad input, refused by every verb that takes it with one line and nothing
// written, no cluster needed: a URL that is not etcd's, an endpoint nothing answers on
// (named, given up within --connect-timeout), and etcds:// whose CA file is missing.
func TestStoreFlag_BadInput(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := t.TempDir()
	export := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(export, []byte(`{"kind":"format","format":"devgraph-export"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "b.db")
	verbs := [][]string{
		{"changelog", "verify"},
		{"export", filepath.Join(dir, "out.jsonl")},
		{"backup", backup},
		{"import", export},
		{"doctor"},
		{"identities"},
	}
	cases := []struct {
		store, want string
	}{
		{"http://127.0.0.1:2379", `--store "http://127.0.0.1:2379": not an etcd URL; write etcd://host:2379`},
		{"etcd://127.0.0.1", `endpoint "127.0.0.1" needs a host and a port`},
		{"etcd://127.0.0.1:1?cacert=x", "query parameters are for etcds:// (TLS) only"},
		{"etcds://127.0.0.1:1?cacert=" + filepath.Join(dir, "missing-ca.pem"), "missing-ca.pem: no such file or directory"},
		{"etcds://127.0.0.1:1?cert=c.pem", "cert and key go together"},
		{"etcd://127.0.0.1:1,127.0.0.1:2/devgraph", "cannot reach etcd at 127.0.0.1:1, 127.0.0.1:2 within 300ms"},
	}
	for _, tc := range cases {
		for _, v := range verbs {
			args := append([]string{"--store", tc.store, "--connect-timeout", "300ms"}, v...)
			c.fail(1, tc.want, args...)
		}
	}
	for _, p := range []string{backup, filepath.Join(dir, "out.jsonl")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused verb wrote %s", p)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(c.home, "data")); len(entries) > 0 {
		t.Errorf("a refused verb made a database: %v", entries)
	}
}

// --store goes with the verbs that work on a graph; the file-only ones refuse it, and
// import's --force is for a cluster.
func TestStoreFlag_Usage(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := filepath.Join(t.TempDir(), "x.db")
	c.fail(2, "--store names a cluster; compact works on a database file (--db): drop --store", "--store", "etcd://127.0.0.1:1", "--db", db, "compact")
	export := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(export, []byte(`{"kind":"format","format":"devgraph-export"}`+"\n"), 0o600)
	errs := c.fail(2, "import: --force clears a stopped import into a cluster; it goes with --store", "--db", db, "import", "--force", export)
	if strings.Contains(errs, "\n\n") {
		t.Fatal(errs)
	}
}
