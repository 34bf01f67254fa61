package storetest

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"
)

// The relation graph of the issue-10 benchmarks: n identities node-000000… with 3
// declared relations each to random other nodes (a fixed seed), plus a separate chain of
// ChainLen cables chain-00 → chain-01 → … → chain-10 that nothing else touches.
const (
	ChainLen        = 10
	RelationsPerRow = 3
)

// GraphNode is the id of node i of the relation graph.
func GraphNode(i int) string { return fmt.Sprintf("identity:node-%06d", i) }

// ChainNode is the id of the k-th node (0…ChainLen) of the chain.
func ChainNode(k int) string { return fmt.Sprintf("identity:chain-%02d", k) }

// GraphRelationTypes are the types the random relations cycle through.
var GraphRelationTypes = []string{graph.RelCable, graph.RelControls, graph.RelPartOf}

func graphUUID(kind, n int) string { return fmt.Sprintf("%08x-0000-7%03x-8000-%012x", n, kind, n) }

// GraphEdges returns the random relations' (from, to) node numbers, RelationsPerRow per
// node, from seed: what WriteRelationGraph writes, for benchmarks that need connected pairs.
func GraphEdges(n int, seed uint64) [][2]int {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([][2]int, 0, n*RelationsPerRow)
	for i := 0; i < n; i++ {
		for k := 0; k < RelationsPerRow; k++ {
			j := r.IntN(n - 1)
			if j >= i {
				j++
			}
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

// WriteRelationGraph writes an export of the relation graph: n + ChainLen + 1 identities,
// n×RelationsPerRow + ChainLen relations, and the identity.create and relation.add events
// that made them, chained as the store chains them, for store.Import.
func WriteRelationGraph(w io.Writer, n int, seed uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	type line struct {
		Type     string          `json:"type"`
		Format   string          `json:"format,omitempty"`
		Version  int             `json:"version,omitempty"`
		Identity *graph.Identity `json:"identity,omitempty"`
		Relation *graph.Relation `json:"relation,omitempty"`
		Event    *graph.Event    `json:"event,omitempty"`
		Also     []string        `json:"also,omitempty"`
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var idents []*graph.Identity
	for i := 0; i < n; i++ {
		idents = append(idents, &graph.Identity{ID: GraphNode(i), Name: fmt.Sprintf("Node %06d", i), Hints: []graph.Fingerprint{}, Tags: []string{}, CreatedAt: base, UpdatedAt: base})
	}
	for k := 0; k <= ChainLen; k++ {
		idents = append(idents, &graph.Identity{ID: ChainNode(k), Name: fmt.Sprintf("Chain %02d", k), Hints: []graph.Fingerprint{}, Tags: []string{}, CreatedAt: base, UpdatedAt: base})
	}
	var rels []*graph.Relation
	for e, p := range GraphEdges(n, seed) {
		typ := GraphRelationTypes[e%len(GraphRelationTypes)]
		r := &graph.Relation{ID: "rel:" + graphUUID(1, e), Type: typ, From: GraphNode(p[0]), FromPort: fmt.Sprintf("OUT %d", e%RelationsPerRow+1), To: GraphNode(p[1]), ToPort: "IN",
			Author: "cli:bench", Created: base.Add(time.Duration(e) * time.Millisecond)}
		if typ == graph.RelCable {
			r.Attrs = map[string]string{"kind": "midi-din"}
		}
		rels = append(rels, r)
	}
	for k := 0; k < ChainLen; k++ {
		e := n*RelationsPerRow + k
		rels = append(rels, &graph.Relation{ID: "rel:" + graphUUID(1, e), Type: graph.RelCable, From: ChainNode(k), FromPort: "OUT", To: ChainNode(k + 1), ToPort: "IN",
			Attrs: map[string]string{"kind": "audio"}, Author: "cli:bench", Created: base.Add(time.Duration(e) * time.Millisecond)})
	}
	if err := enc.Encode(line{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion}); err != nil {
		return err
	}
	for _, id := range idents {
		enc.Encode(line{Type: "identity", Identity: id})
	}
	for _, r := range rels {
		enc.Encode(line{Type: "relation", Relation: r})
	}
	var prev [32]byte
	seq := uint64(0)
	emit := func(t time.Time, action, target string, after any, also ...string) error {
		seq++
		a, _ := json.Marshal(after)
		e := &graph.Event{Seq: seq, ID: graphUUID(2, int(seq)), Time: t, Actor: "cli:bench", Action: action, Target: target, After: a,
			RequestID: graphUUID(3, int(seq)), PrevHash: hex.EncodeToString(prev[:])}
		prev = graph.ChainHash(prev, e)
		e.Hash = hex.EncodeToString(prev[:])
		return enc.Encode(line{Type: "event", Event: e, Also: also})
	}
	for _, id := range idents {
		emit(base, graph.ActIdentityCreate, id.ID, id)
	}
	for _, r := range rels {
		if err := emit(r.Created, graph.ActRelationAdd, r.ID, r, r.From, r.To); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// GraphBuild reports how a relation graph file was made.
type GraphBuild struct {
	Import    time.Duration // the store.Import of the export (0 when the file was cached)
	ImportCPU time.Duration // CPU time (user and system) the process spent meanwhile
	Stats     *graph.ImportStats
}

// BuildRelationGraph makes a database at path holding WriteRelationGraph(n, seed) through
// store.Import. An existing file at path is kept as it is (a cache between runs); the
// file appears only once complete.
func BuildRelationGraph(tb testing.TB, path string, n int, seed uint64) GraphBuild {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return GraphBuild{}
	}
	exp := path + ".jsonl"
	f, err := os.Create(exp)
	if err != nil {
		tb.Fatal(err)
	}
	if err := WriteRelationGraph(f, n, seed); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	defer os.Remove(exp)
	tmp := path + ".tmp"
	os.Remove(tmp)
	db, err := store.Open(tmp, store.Options{NoBackup: true, Host: Host})
	if err != nil {
		tb.Fatal(err)
	}
	in, err := os.Open(exp)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	start, cpu0 := time.Now(), cpuTime()
	st, err := db.Import(context.Background(), in, nil)
	took, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	return GraphBuild{Import: took, ImportCPU: cpu, Stats: st}
}

// cpuTime is the CPU time the process has used: on a machine shared with other work it
// shows what an import costs when wall time cannot.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
