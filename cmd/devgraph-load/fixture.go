package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

// The fixture's names are "<maker> <kind> <nnnnnn>", so find has real fragments to search.
var (
	makers = []string{"Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"}
	kinds  = []string{"Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"}
)

// createDB writes a database of n identities (3 hints, 3 tags and a note each) at path by
// importing a generated export (the same approach as the e2e and store benchmarks). It
// builds path+".tmp" and renames it, so an interrupted run leaves no half-filled database.
func createDB(ctx context.Context, path string, n int) error {
	tmp := path + ".tmp"
	os.Remove(tmp)
	db, err := store.Open(tmp, store.Options{NoBackup: true, NoSync: true})
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeExport(pw, n)) }()
	_, err = db.Import(ctx, pr, nil)
	pr.Close()
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("build the fixture: %w", err)
	}
	return os.Rename(tmp, path)
}

// writeExport writes export lines: a header, n identities, then one note for each.
func writeExport(w io.Writer, n int) error { return writeExportRange(w, 0, n) }

// writeExportRange writes the export lines of identities from to to-1 and their notes.
func writeExportRange(w io.Writer, from, to int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	type line struct {
		Type     string          `json:"type"`
		Format   string          `json:"format,omitempty"`
		Version  int             `json:"version,omitempty"`
		Identity *graph.Identity `json:"identity,omitempty"`
		Note     *graph.Note     `json:"note,omitempty"`
	}
	if err := enc.Encode(line{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion}); err != nil {
		return err
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < to; i++ {
		name := fmt.Sprintf("%s %s %06d", makers[i%len(makers)], kinds[i%len(kinds)], i)
		id := &graph.Identity{
			ID: identityID(i), Name: name,
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
	for i := from; i < to; i++ {
		note := &graph.Note{ID: fmt.Sprintf("note:%08x-0000-7001-8000-%012x", i, i), Target: identityID(i), Kind: "info",
			Body: fmt.Sprintf("Firmware 1.%02d installed; MIDI thru works.", i%100), Author: "cli:load", Time: base}
		if err := enc.Encode(line{Type: "note", Note: note}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func identityID(i int) string {
	name := fmt.Sprintf("%s %s %06d", makers[i%len(makers)], kinds[i%len(kinds)], i)
	return graph.IdentityID(graph.Slugify(name))
}

// identityIDs lists every identity in st (a reused database may hold any number).
func identityIDs(ctx context.Context, st graph.Store) ([]string, error) {
	var ids []string
	f := graph.IdentityFilter{First: graph.MaxPageSize}
	for range 1 << 20 { // bounded: 500 × 2^20 identities
		page, _, next, err := st.FindIdentities(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, id := range page {
			ids = append(ids, id.ID)
		}
		if next == "" {
			break
		}
		f.After = next
	}
	return ids, nil
}
