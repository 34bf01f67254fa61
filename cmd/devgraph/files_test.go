package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/store"
)

func TestUnit_ParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1": 1, "4096": 4096, "64K": 64 << 10, "512M": 512 << 20, "512m": 512 << 20, "4G": 4 << 30,
		"4GiB": 4 << 30, "4gb": 4 << 30, "1T": 1 << 40, " 2M ": 2 << 20,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "G", "1.5G", "12Q", "4 G", "99999999999T", "4i", "4iB", "4KIi"} {
		if n, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, n)
		}
	}
	if got, want := graph.DefaultImportMaxSize, int64(4<<30); got != want {
		t.Errorf("default --max-size %d, want %d (4 GiB, as documented)", got, want)
	}
	var s sizeFlag = sizeFlag(graph.DefaultImportMaxSize)
	if got := s.String(); got != "4G" {
		t.Errorf("--max-size default prints as %q, want 4G", got)
	}
}

// query's inputs are capped at exactly what an HTTP server reads of a GraphQL body.
func TestUnit_QueryInputCapIsTheBodyLimit(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "q.db"), store.Options{Host: testHost, NoBackup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exec, err := query.New(identity.New(st, nil, nil), query.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	if got, want := maxQueryInput(), exec.MaxRequestBytes(); got != want {
		t.Fatalf("query reads up to %d bytes; the HTTP body limit is %d", got, want)
	}
}

// A request the server refuses for its body size (a document and variables each within
// their limits, the document's quotes escaped in the JSON body) is refused by the CLI
// opening the file too, with the server's words: it was answered there and refused
// through a running server.
func TestUnit_QueryBodyLimitWithoutServer(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "doc.graphql")
	vars := filepath.Join(dir, "vars.json")
	if err := os.WriteFile(doc, []byte("# "+strings.Repeat(`"`, 60000)+"\n{ stats { identities } }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"x": strings.Repeat("a", 250000)})
	if err := os.WriteFile(vars, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	// query only reads: the database must exist
	if code := e.run(context.Background(), []string{"identity", "create", "probe", "--db", filepath.Join(dir, "q.db")}); code != 0 {
		t.Fatalf("identity create: exit %d, %s", code, errb.String())
	}
	out.Reset()
	code := e.run(context.Background(), []string{"query", "-f", doc, "--vars-file", vars, "--db", filepath.Join(dir, "q.db")})
	if code != 1 || !strings.Contains(errb.String(), "the request is larger than") {
		t.Fatalf("exit %d, stderr %q; want the body limit's refusal", code, errb.String())
	}
}
