package sources

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestDemoSnapshotGolden keeps testdata/demo.snapshot.json — what the demo rig reads as,
// every device with its fingerprints and attrs, the observed relations and clients — so a change to parsing or merging shows
// up as a diff; -update rewrites it.
func TestDemoSnapshotGolden(t *testing.T) {
	if !*update { // -update rewrites the testdata other tests read
		t.Parallel()
	}
	snap := scanDir(t, "testdata/demo")
	for i := range snap.Sources {
		snap.Sources[i].Duration = 0
	}
	got, err := json.MarshalIndent(struct {
		Devices   any `json:"devices"`
		Relations any `json:"relations"`
		Clients   any `json:"clients"`
		Sources   any `json:"sources"`
	}{snap.Devices, snap.Relations, snap.Clients, snap.Sources}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "demo.snapshot.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v; run: go test ./sources -run TestDemoSnapshotGolden -update", err)
	}
	if string(got) != string(want) {
		t.Fatalf("the demo rig reads differently from %s; check the diff and run: go test ./sources -run TestDemoSnapshotGolden -update\n%s", golden, got)
	}
}
