//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/etcdtest"
	"github.com/devgraph/devgraph/migrations"
	"github.com/devgraph/devgraph/store"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// benchIdentities is the size of the read benchmarks' graph.
const benchIdentities = 2000

// benchExport writes the export lines of identities from to to-1, each with three hints,
// three tags and a note, after a header.
func benchExport(from, to int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	type line struct {
		Type     string          `json:"type"`
		Format   string          `json:"format,omitempty"`
		Version  int             `json:"version,omitempty"`
		Identity *graph.Identity `json:"identity,omitempty"`
		Note     *graph.Note     `json:"note,omitempty"`
	}
	enc.Encode(line{Type: "header", Format: migrations.FormatName, Version: migrations.CurrentVersion})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < to; i++ {
		enc.Encode(line{Type: "identity", Identity: &graph.Identity{
			ID: fmt.Sprintf("identity:synth-%06d", i), Name: fmt.Sprintf("Synth %06d", i),
			Hints: []graph.Fingerprint{
				{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("0582:01a9:SN%06d", i)},
				{Kind: graph.FPUSBID, Value: fmt.Sprintf("%04x:%04x", 0x500+i%8, i%64)},
				{Kind: graph.FPUSBPath, Value: fmt.Sprintf("3-%d.%d", i%8+1, i%4+1)},
			},
			Tags:      []string{fmt.Sprintf("location:rack-%d", i%10), "maker:roland", "role:synth"},
			CreatedAt: base, UpdatedAt: base,
		}})
	}
	for i := from; i < to; i++ {
		enc.Encode(line{Type: "note", Note: &graph.Note{ID: fmt.Sprintf("note:%08x-0000-7001-8000-%012x", i, i),
			Target: fmt.Sprintf("identity:synth-%06d", i), Kind: "info", Body: fmt.Sprintf("Firmware 1.%02d installed.", i%100), Author: "cli:bench", Time: base}})
	}
	return buf.Bytes()
}

// importChunks imports the benchmark's identities into db, 400 at a time (a cluster
// takes one import of that size in one Txn).
func importChunks(b *testing.B, db *store.DB) {
	for i := 0; i < benchIdentities; i += 400 {
		if _, err := db.Import(graph.WithActor(context.Background(), "cli:bench"), bytes.NewReader(benchExport(i, min(i+400, benchIdentities))), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead_Identity reads an identity with its hints, tags and notes from a single
// file and from a front end's replica of a 3-member cluster holding the same graph: a
// replica is read by the same store code, so the two should cost the same. The reads
// alternate between the two in rounds of 500, so a busy machine slows both alike; it
// reports each one's time per read and replica/file.
func BenchmarkRead_Identity(b *testing.B) {
	file, err := store.Open(filepath.Join(b.TempDir(), "file.db"), store.Options{NoBackup: true})
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	importChunks(b, file)
	c := etcdtest.Start(b, 3, etcdtest.LogLevel("warn"))
	fe := openFE(b, c.Endpoints(), "bench", filepath.Join(b.TempDir(), "replica.db"))
	defer fe.Close()
	importChunks(b, fe.DB())
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	read := func(db *store.DB, n int) time.Duration {
		t0 := time.Now()
		for range n {
			id, err := db.FindIdentityByID(ctx, fmt.Sprintf("identity:synth-%06d", r.IntN(benchIdentities)), graph.IdentityParts{Notes: true})
			if err != nil || len(id.Hints) != 3 || len(id.Tags) != 3 || len(id.Notes) != 1 {
				b.Fatalf("%+v %v", id, err)
			}
		}
		return time.Since(t0)
	}
	var onFile, onReplica time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += 500 {
		n := min(500, b.N-done)
		onFile += read(file, n)
		onReplica += read(fe.DB(), n)
	}
	b.ReportMetric(float64(onFile.Nanoseconds())/float64(b.N), "file-ns/read")
	b.ReportMetric(float64(onReplica.Nanoseconds())/float64(b.N), "replica-ns/read")
	b.ReportMetric(float64(onReplica)/float64(onFile), "replica/file")
}

// BenchmarkCommit_OneWriter makes bind-sized changes (a hint added to an identity: its
// record, the hint index, the event, the changelog head) one at a time through a front end
// of a 3-member cluster, and, for the floor under it, bare etcd Txns of the same shape
// (five puts fenced on one key) from the same client; both report p50 and p99.
func BenchmarkCommit_OneWriter(b *testing.B) {
	c := etcdtest.Start(b, 3, etcdtest.LogLevel("warn"))
	fe := openFE(b, c.Endpoints(), "bench", filepath.Join(b.TempDir(), "replica.db"))
	defer fe.Close()
	ids := seedTargets(b, fe.DB(), "Bench target", 8)
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
		b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1])/1e6, "p99-ms")
	}
	b.Run("hint.add", func(b *testing.B) {
		var lat []time.Duration
		ctx := graph.WithActor(context.Background(), "cli:bench")
		n := 0
		for b.Loop() {
			t0 := time.Now()
			_, err := fe.DB().AddHints(ctx, ids[n%len(ids)], []graph.Fingerprint{{Kind: graph.FPUSBSerial, Value: fmt.Sprintf("1d6b:0002:bench%d-%d", b.N, n)}}, false)
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		report(b, lat)
	})
	b.Run("etcd-txn", func(b *testing.B) {
		var lat []time.Duration
		value := string(bytes.Repeat([]byte("x"), 300))
		key := fe.target.key("bench", "fence")
		fence := int64(0)
		n := 0
		for b.Loop() {
			t0 := time.Now()
			resp, err := fe.cli.Txn(context.Background()).If(clientv3.Compare(clientv3.ModRevision(key), "=", fence)).Then(
				clientv3.OpPut(key, "x"), clientv3.OpPut(fe.target.key("bench", "a", strconv.Itoa(n)), value),
				clientv3.OpPut(fe.target.key("bench", "b", strconv.Itoa(n)), value), clientv3.OpPut(fe.target.key("bench", "c"), value),
				clientv3.OpPut(fe.target.key("bench", "d"), value)).Commit()
			lat = append(lat, time.Since(t0))
			if err != nil || !resp.Succeeded {
				b.Fatal(err)
			}
			fence = resp.Header.Revision
			n++
		}
		report(b, lat)
	})
}

// BenchmarkCommit_16Writers runs 16 concurrent tag.add writers on a 3-member cluster,
// all on one front end, or eight on each of two (which then race for every commit), and
// reports acknowledged writes per second and the writes each etcd Txn carried (group
// commit).
func BenchmarkCommit_16Writers(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("frontends=%d", n), func(b *testing.B) { bench16(b, n) })
	}
}

func bench16(b *testing.B, frontends int) {
	c := etcdtest.Start(b, 3, etcdtest.LogLevel("warn"))
	dir := b.TempDir()
	var fes []*FrontEnd
	for i := range frontends {
		fe := openFE(b, c.Endpoints(), fmt.Sprintf("bench-%d", i), filepath.Join(dir, fmt.Sprintf("%d.db", i)))
		defer fe.Close()
		fes = append(fes, fe)
	}
	ids := seedTargets(b, fes[0].DB(), "Bench target", 64)
	waitSame(b, fes)
	commits := func() (n int64) {
		for _, fe := range fes {
			n += fe.stats.Commits.Load()
		}
		return n
	}
	commits0 := commits()
	var next atomic.Int64
	ctx := graph.WithActor(context.Background(), "cli:bench")
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				if _, err := fes[w%len(fes)].DB().UpdateTags(ctx, ids[int(n)%len(ids)], []string{fmt.Sprintf("bench:w%d-%d", w, n)}, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/took.Seconds(), "writes/s")
	b.ReportMetric(float64(b.N)/float64(max(commits()-commits0, 1)), "writes/txn")
}

// BenchmarkReplicaBuild times a fresh front end's open on a cluster holding 20,000
// identities (each with three hints, three tags and a note): most of it is filling its
// replica from a snapshot. Run with -cpuprofile to see the front end's share (etcd's
// own work is in the member processes).
func BenchmarkReplicaBuild(b *testing.B) {
	const n = 20_000
	c := etcdtest.Start(b, 3, etcdtest.LogLevel("warn"))
	fe := openFE(b, c.Endpoints(), "bench", filepath.Join(b.TempDir(), "replica.db"))
	defer fe.Close()
	for i := 0; i < n; i += 400 {
		if _, err := fe.DB().Import(graph.WithActor(context.Background(), "cli:bench"), bytes.NewReader(benchExport(i, min(i+400, n))), nil); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	i := 0
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var used time.Duration
	defer func() { b.ReportMetric(used.Seconds()/float64(max(i, 1)), "frontend-cpu-s/op") }()
	for b.Loop() {
		c0 := cpu()
		fresh := openFE(b, c.Endpoints(), fmt.Sprintf("fresh-%d", i), filepath.Join(dir, fmt.Sprintf("fresh-%d.db", i)))
		used += cpu() - c0
		b.StopTimer()
		if st, err := fresh.DB().Stats(context.Background()); err != nil || st.Identities < n {
			b.Fatalf("fresh replica: %+v %v", st, err)
		}
		fresh.Close()
		i++
		b.StartTimer()
	}
}
