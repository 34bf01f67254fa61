package main

import (
	"path/filepath"
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
	for _, in := range []string{"", "0", "-1", "G", "1.5G", "12Q", "4 G", "99999999999T"} {
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
	st, err := store.Open(filepath.Join(t.TempDir(), "q.db"), store.Options{NoBackup: true})
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
