//go:build cluster

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunCluster runs the cluster mode briefly on a real 3-member etcd and checks that the
// table has a row for every phase with acknowledged writes and none lost or duplicated,
// and that the visibility, idle and replica-build lines follow.
func TestRunCluster(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--cluster", "3", "--duration", "1500ms", "--concurrency", "4", "--idle", "500ms", "--rebuild", "400"}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, errOut.String())
	}
	t.Logf("\n%s", out.String())
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		var cols []string
		for _, c := range strings.Split(line, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		if len(cols) == 14 {
			rows[cols[0]] = cols
		}
	}
	r := &clusterRun{c: &config{concurrency: 4}}
	for _, p := range r.phases() {
		cols, ok := rows[p.name]
		if !ok {
			t.Errorf("no row for phase %q in:\n%s", p.name, out.String())
			continue
		}
		if cols[2] == "0" {
			t.Errorf("%s: no write acknowledged", p.name)
		}
		if cols[9] != "0" || cols[10] != "0" {
			t.Errorf("%s: lost %s, duplicated %s; want 0 and 0", p.name, cols[9], cols[10])
		}
	}
	// The one-writer phase made 150 identities of its own (100 a second of --duration) and
	// wrote to them in turn; the fresh replica holds the 400 loaded identities, the 64 the
	// other writers target and those 150.
	for _, want := range []string{"one writer (bind-sized): wrote in turn to 150 identities of its own", "visibility: ",
		"idle: two front ends left alone for 500ms moved the etcd revision by 0", "replica built (614 identities)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}
