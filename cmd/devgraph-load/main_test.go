package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRun runs the whole load against a small database and checks that the table has a
// row for every phase with requests and no errors, and ends with the memory line.
func TestRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "load.db")
	var out, errOut bytes.Buffer
	args := []string{"--identities", "200", "--duration", "300ms", "--concurrency", "4", "--db", db}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	t.Logf("\n%s", out.String())
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		// Phase names may hold one space ("mcp graph_find"): columns are split on 2+ spaces.
		var cols []string
		for _, c := range strings.Split(line, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		if len(cols) == 8 {
			rows[cols[0]] = cols
		}
	}
	if _, ok := rows["phase"]; !ok {
		t.Fatalf("no table header in:\n%s", out.String())
	}
	l := newLoader("", nil, 1)
	for _, p := range l.phases() {
		cols, ok := rows[p.name]
		if !ok {
			t.Errorf("no row for phase %q", p.name)
			continue
		}
		if n, err := strconv.Atoi(cols[1]); err != nil || n == 0 {
			t.Errorf("%s: requests %q, want a positive count", p.name, cols[1])
		}
		if cols[7] != "0" {
			t.Errorf("%s: errors %q, want 0 (stderr: %s)", p.name, cols[7], errOut.String())
		}
	}
	if !strings.Contains(out.String(), "anonymous RSS: ") || strings.Contains(out.String(), "unknown") {
		t.Errorf("no memory line in:\n%s", out.String())
	}

	// A second run reuses the database (now with the first run's notes).
	out.Reset()
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("second run: %v\nstderr:\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "(reused)") {
		t.Errorf("second run did not reuse %s:\n%s", db, out.String())
	}
}
