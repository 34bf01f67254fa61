package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

// WriteIdentities writes an export (a header line, then one identity line each) of n
// identities with 3 hints and 3 tags each, for store.Import. Identity i is named
// "<maker> <kind> <i>", i zero-padded to digits places.
func WriteIdentities(w io.Writer, n, digits int) error {
	enc := json.NewEncoder(w)
	type line struct {
		Type     string          `json:"type"`
		Format   string          `json:"format,omitempty"`
		Version  int             `json:"version,omitempty"`
		Identity *graph.Identity `json:"identity,omitempty"`
	}
	if err := enc.Encode(line{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion}); err != nil {
		return err
	}
	makers := []string{"Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"}
	kinds := []string{"Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s %s %0*d", makers[i%len(makers)], kinds[i%len(kinds)], digits, i)
		id := &graph.Identity{
			ID: graph.IdentityID(graph.Slugify(name)), Name: name,
			Hints: []graph.Fingerprint{
				{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%06d", i)},
				{Kind: graph.FPUSBID, Value: fmt.Sprintf("%04x:%04x", 0x500+i%8, i%64)},
				{Kind: graph.FPUSBPath, Value: fmt.Sprintf("3-%d.%d", i%8+1, i%4+1)},
			},
			Tags:      []string{fmt.Sprintf("location:rack-%d", i%10), "manufacturer:" + strings.ToLower(makers[i%len(makers)]), "role:synth"},
			CreatedAt: base, UpdatedAt: base,
		}
		if err := enc.Encode(line{Type: "identity", Identity: id}); err != nil {
			return err
		}
	}
	return nil
}

// BuildIdentities makes a database at path holding WriteIdentities(n, digits), through
// store.Import. An existing file at path is kept as it is, so a path outside the test's
// temp dir serves as a cache between runs; the file appears only once it is complete.
func BuildIdentities(tb testing.TB, path string, n, digits int) {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	db, err := store.Open(tmp, store.Options{NoBackup: true, Host: Host})
	if err != nil {
		tb.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(WriteIdentities(pw, n, digits)) }()
	if _, err := db.Import(context.Background(), pr, nil); err != nil {
		db.Close()
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}
