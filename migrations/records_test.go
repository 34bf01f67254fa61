package migrations_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/migrations"
)

// The records of the committed version-3 file, migrated in a scratch file as a fleet's
// are: every device and robot gets the host named, the meta says the current version
// and holds no host (a fleet's hosts are claimed in the cluster), nothing else is lost,
// and the scratch file is gone afterwards.
func TestMigrateRecords_V3(t *testing.T) {
	const fixture = "../store/testdata/schema-v3.bolt"
	in := map[string]string{}
	if err := migrations.EachRecord(fixture, func(b, k, v []byte) error {
		in[string(b)+"/"+string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if in["meta/version"] != "3" {
		t.Fatalf("the fixture's version is %q", in["meta/version"])
	}
	scratch := filepath.Join(t.TempDir(), "scratch.db")
	out := map[string]string{}
	from, err := migrations.MigrateRecords(scratch, migrations.Options{Host: "studio-a"}, func(put func(b, k, v []byte) error) error {
		return migrations.EachRecord(fixture, put)
	}, func(b, k, v []byte) error {
		out[string(b)+"/"+string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if from != 3 || out["meta/version"] != "4" || out["meta/host"] != "" {
		t.Fatalf("from %d, version %q, host %q", from, out["meta/version"], out["meta/host"])
	}
	devices := 0
	for k, v := range in {
		got, ok := out[k]
		if !ok {
			t.Errorf("record %s lost", k)
			continue
		}
		if strings.HasPrefix(k, "devices/") || strings.HasPrefix(k, "robots/") {
			devices++
			var rec map[string]any
			if err := json.Unmarshal([]byte(got), &rec); err != nil || rec["host"] != "studio-a" {
				t.Errorf("%s migrated to %s", k, got)
			}
			continue
		}
		if k != "meta/version" && got != v {
			t.Errorf("%s changed: %q → %q", k, v, got)
		}
	}
	if devices != 3 {
		t.Fatalf("%d device and robot records, want 3", devices)
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Fatalf("the scratch file %s is still there", scratch)
	}
	// A graph without a host to give its devices is refused, and so is a newer one.
	_, err = migrations.MigrateRecords(scratch, migrations.Options{}, func(put func(b, k, v []byte) error) error {
		return migrations.EachRecord(fixture, put)
	}, func(_, _, _ []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "host") {
		t.Fatalf("no host: %v", err)
	}
	_, err = migrations.MigrateRecords(scratch, migrations.Options{Host: "a"}, func(put func(b, k, v []byte) error) error {
		put(migrations.BucketMeta, migrations.KeyFormat, []byte(migrations.FormatName))
		return put(migrations.BucketMeta, migrations.KeyVersion, []byte("99"))
	}, func(_, _, _ []byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a newer graph: %v", err)
	}
}
