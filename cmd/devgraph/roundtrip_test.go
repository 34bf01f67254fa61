package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

type eventList struct {
	Items []*graph.Event `json:"items"`
	Next  string         `json:"next"`
}

// TestCLI_RoundTrip is the foundation issue's CLI story on a temp database: every
// identity verb, hints, tags, notes, changelog filters, verify, backup, export → import
// into an empty database, compact.
func TestCLI_RoundTrip(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "devgraph.db")
	db := "--db=" + dbPath

	c.ok("identity", "create", "Roland JD-Xi", "--hint", "usb_id=0582:01a9", "--tag", "role:synth", db, "-m", "bought it")
	c.ok("identity", "create", "Korg Minilogue", "--slug", "minilogue", db)
	c.ok("identity", "create", "Spare Synth", db)
	c.ok("identity", "rename", "minilogue", "Korg Minilogue XD", db)
	c.ok("identity", "update", "minilogue", `--data={"room":"studio"}`, db)
	c.ok("hint", "add", "minilogue", "usb_serial=0944:0117:SN123", "alsa_card_id=minilogue", db)
	c.fail(1, "minilogue", "hint", "add", "spare-synth", "usb_serial=0944:0117:SN123", db) // held elsewhere
	c.ok("hint", "add", "spare-synth", "usb_serial=0944:0117:SN123", "--move", db)
	c.ok("hint", "remove", "minilogue", "alsa_card_id=minilogue", db)
	c.ok("tag", "roland-jd-xi", "+Location:Studio", "-role:synth", "+role:keys", db)
	c.ok("note", "add", "roland-jd-xi", "fan is loud", "--kind", "warning", db)
	var notes struct {
		Items []*graph.Note `json:"items"`
	}
	c.jsonOf(&notes, "notes", "roland-jd-xi", "--json", db)
	if len(notes.Items) != 1 || notes.Items[0].Kind != "warning" || !strings.HasPrefix(notes.Items[0].Author, "cli:") {
		t.Fatalf("notes: %+v", notes.Items)
	}
	c.ok("note", "add", "minilogue", "temporary", db)
	c.jsonOf(&notes, "notes", "minilogue", "--json", db)
	c.ok("note", "delete", notes.Items[0].ID, db)
	c.ok("identity", "merge", "spare-synth", "minilogue", db)
	c.ok("identity", "delete", "roland-jd-xi", db, "-m", "sold it")
	c.fail(1, "roland-jd-xi", "show", "roland-jd-xi", db)
	c.ok("identity", "restore", "identity:roland-jd-xi", db)

	var id graph.Identity
	c.jsonOf(&id, "show", "roland-jd-xi", "--json", db)
	if id.Name != "Roland JD-Xi" || strings.Join(id.Tags, " ") != "location:studio role:keys" || len(id.Hints) != 1 {
		t.Errorf("restored identity: name %q tags %v hints %v", id.Name, id.Tags, id.Hints)
	}
	c.jsonOf(&id, "show", "minilogue", "--json", db)
	var data bytes.Buffer
	json.Compact(&data, id.Data)
	if id.Name != "Korg Minilogue XD" || data.String() != `{"room":"studio"}` || !graph.ContainsFingerprint(id.Hints, graph.Fingerprint{Kind: graph.FPUSBSerial, Value: "0944:0117:SN123"}) {
		t.Errorf("merged identity: %+v", id)
	}
	var ids struct {
		Items []*graph.Identity `json:"items"`
		Total int               `json:"total"`
	}
	c.jsonOf(&ids, "identities", "--json", db)
	if ids.Total != 2 {
		t.Errorf("identities: total %d, want 2 (the spare was merged)", ids.Total)
	}
	golden(t, "identities", c.ok("identities", db))
	golden(t, "tags", c.ok("tags", "--in-use", db))

	// The changelog, filtered.
	var evs eventList
	c.jsonOf(&evs, "changelog", "--json", "--limit", "500", db)
	actions := map[string]int{}
	for _, e := range evs.Items {
		actions[e.Action]++
		if !strings.HasPrefix(e.Actor, "cli:") {
			t.Errorf("event %d by %q, want cli:<user>", e.Seq, e.Actor)
		}
	}
	for _, a := range []string{graph.ActIdentityCreate, graph.ActIdentityRename, graph.ActIdentityUpdate, graph.ActIdentityDelete,
		graph.ActIdentityMerge, graph.ActIdentityRestore, graph.ActHintAdd, graph.ActHintRemove, graph.ActHintMove,
		graph.ActTagAdd, graph.ActTagRemove, graph.ActNoteAdd, graph.ActNoteDelete} {
		if actions[a] == 0 {
			t.Errorf("no %s event in the changelog: %v", a, actions)
		}
	}
	c.jsonOf(&evs, "changelog", "--action", "hint.*", "--json", db)
	for _, e := range evs.Items {
		if !strings.HasPrefix(e.Action, "hint.") {
			t.Errorf("--action hint.* gave %s", e.Action)
		}
	}
	if len(evs.Items) < 4 {
		t.Errorf("--action hint.*: %d events", len(evs.Items))
	}
	c.jsonOf(&evs, "changelog", "--target", "roland-jd-xi", "--since", "1h", "--json", db)
	var why []string
	for _, e := range evs.Items {
		// The identity's own events, and those of the notes on it.
		if e.Target != "identity:roland-jd-xi" && graph.KindOf(e.Target) != graph.KindNote {
			t.Errorf("--target gave an event on %s", e.Target)
		}
		if e.Message != "" {
			why = append(why, e.Action+":"+e.Message)
		}
	}
	if !contains(why, "identity.delete:sold it") || !contains(why, "identity.create:bought it") {
		t.Errorf("messages on the jdxi events: %v", why)
	}
	c.jsonOf(&evs, "changelog", "--until", "2000-01-01", "--json", db)
	if len(evs.Items) != 0 {
		t.Errorf("--until 2000-01-01 gave %d events", len(evs.Items))
	}
	c.jsonOf(&evs, "changelog", "--actor", "mcp:*", "--json", db)
	if len(evs.Items) != 0 {
		t.Errorf("--actor mcp:* gave %d events", len(evs.Items))
	}
	c.jsonOf(&evs, "changelog", "--limit", "2", "--json", db)
	if len(evs.Items) != 2 || evs.Next == "" {
		t.Fatalf("--limit 2: %d events, next %q", len(evs.Items), evs.Next)
	}
	first := evs.Items[1].Seq
	c.jsonOf(&evs, "changelog", "--limit", "2", "--after", evs.Next, "--json", db)
	if len(evs.Items) == 0 || evs.Items[0].Seq >= first {
		t.Errorf("--after continued at %v, want below seq %d", evs.Items, first)
	}
	c.fail(1, "--since", "changelog", "--since", "yesterday-ish", db)
	if out := c.ok("changelog", "verify", db); !strings.HasPrefix(out, "changelog ok") {
		t.Errorf("verify: %q", out)
	}

	// Backup, export → import into an empty database keeps the chain, compact.
	backup := filepath.Join(dir, "backup.db")
	c.ok("backup", backup, db)
	var bid graph.Identity
	c.jsonOf(&bid, "show", "minilogue", "--json", "--db", backup)
	if bid.Name != "Korg Minilogue XD" {
		t.Errorf("the backup's minilogue is %q", bid.Name)
	}
	c.fail(1, "already exists", "backup", backup, db)
	export := filepath.Join(dir, "export.jsonl")
	c.ok("export", export, db)
	fresh := "--db=" + filepath.Join(dir, "fresh.db")
	iout, errs, code := c.run("import", export, fresh)
	if code != 0 || !strings.Contains(iout, "kept byte for byte") {
		t.Fatalf("import: exit %d\n%s%s", code, iout, errs)
	}
	var orig, imported graph.VerifyReport
	c.jsonOf(&orig, "changelog", "verify", "--json", db)
	c.jsonOf(&imported, "changelog", "verify", "--json", fresh)
	if !imported.OK || imported.HeadHash != orig.HeadHash || imported.HeadSeq != orig.HeadSeq {
		t.Errorf("imported chain %+v, original %+v", imported, orig)
	}
	if got, want := c.ok("identities", fresh), c.ok("identities", db); got != want {
		t.Errorf("identities after import:\n%s\nwant:\n%s", got, want)
	}
	c.stdin = mustRead(t, export)
	fresh2 := "--db=" + filepath.Join(dir, "fresh2.db")
	c.ok("import", "-", fresh2)
	c.stdin = ""
	if out := c.ok("changelog", "prune", "--before", "2000-01-01", fresh2); !strings.HasPrefix(out, "pruned 0 events") {
		t.Errorf("prune before 2000: %q", out)
	}
	if out := c.ok("changelog", "prune", "--before", "0s", fresh2); strings.HasPrefix(out, "pruned 0 ") {
		t.Errorf("prune before now pruned nothing: %q", out)
	}
	if out := c.ok("changelog", "verify", fresh2); !strings.HasPrefix(out, "changelog ok") {
		t.Errorf("verify after prune: %q", out)
	}
	c.fail(2, "--before is required", "changelog", "prune", fresh2)

	c.ok("compact", db)
	c.jsonOf(&orig, "changelog", "verify", "--json", db)
	if !orig.OK {
		t.Errorf("verify after compact: %+v", orig)
	}
	if got := c.ok("identities", db); got != c.ok("identities", fresh) {
		t.Errorf("identities after compact differ: %s", got)
	}
	// query without a server runs the executor in-process.
	qout := c.ok("query", "query($id: ID!) { identity(id: $id) { name } }", "--var", "id=identity:minilogue", db)
	if !strings.Contains(qout, `"Korg Minilogue XD"`) {
		t.Errorf("query: %s", qout)
	}
	c.stdin = "{ identities { totalCount } }"
	if qout := c.ok("query", db); !strings.Contains(qout, `"totalCount": 2`) {
		t.Errorf("query from stdin: %s", qout)
	}
	c.stdin = ""
	c.fail(1, "query failed", "query", "{ nosuchfield }", db)

	out := c.ok("migrate", "--status", db)
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("migrate --status: %q", out)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
