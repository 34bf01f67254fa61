package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The figure of record for graph_find and graph_note (issue 13): the built binary,
// spawned as a child process and spoken to over stdio in newline JSON-RPC, as an MCP
// client does, with each call's round trip timed at the client. The databases (n
// identities, 3 hints and 3 tags each) are generated at benchmark time into the temp
// dir and reused between runs; each benchmark works on its own copy.
//
//	go test -run '^$' -bench 'Stdio(Find|Note)|SpawnFind' -benchtime 300x ./e2e/

var benchSizes = []int{1_000, 10_000, 50_000, 100_000}

func sizeName(n int) string { return fmt.Sprintf("%dk", n/1000) }

// benchMakers and benchKinds are storetest.WriteIdentities' names: identity i is
// "<maker i%8> <kind i%6> <i as 6 digits>".
var (
	benchMakers = []string{"Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"}
	benchKinds  = []string{"Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"}
)

func benchName(i int) string {
	return fmt.Sprintf("%s %s %06d", benchMakers[i%8], benchKinds[i%6], i)
}

// benchFindText is the j-th search of a run over n identities: what an agent types,
// in four shapes (maker and number, a whole name, maker and kind, a number alone).
func benchFindText(j, n int) string {
	i := (j * 7919) % n
	switch j % 4 {
	case 0:
		return fmt.Sprintf("%s %06d", strings.ToLower(benchMakers[i%8]), i)
	case 1:
		return benchName(i)
	case 2:
		return strings.ToLower(benchMakers[i%8] + " " + benchKinds[i%6])
	default:
		return fmt.Sprintf("%06d", i)
	}
}

// serveEnv keeps a benchmark's server away from this machine's hardware and its
// user's files: empty source roots, no polling, its own HOME and XDG dirs.
func serveArgs(b *testing.B, db string) (args []string, env []string) {
	empty := b.TempDir()
	home := b.TempDir()
	args = []string{"--db", db, "--poll", "0", "--log-level", "error",
		"--sys-root", empty, "--proc-root", empty, "--pw-dump-file", filepath.Join(empty, "none.json")}
	env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+home, "XDG_CACHE_HOME="+home, "XDG_RUNTIME_DIR="+home)
	return args, env
}

// mcpStdio is an initialized `devgraph serve` session on pipes.
type mcpStdio struct {
	*stdioProc
	id int
}

func openMCP(b *testing.B, bin, db string) *mcpStdio {
	b.Helper()
	args, env := serveArgs(b, db)
	p := startStdioEnv(b, bin, env, args...)
	p.send(b, initLine)
	p.reply(b, 1)
	p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return &mcpStdio{stdioProc: p, id: 1}
}

// call sends one tools/call and returns its result and round trip; a tool error fails
// the benchmark (a refused call would measure nothing).
func (s *mcpStdio) call(b *testing.B, tool string, args map[string]any) (map[string]any, time.Duration) {
	s.id++
	a, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.id, tool, a)
	start := time.Now()
	s.send(b, line)
	r := s.reply(b, s.id)
	d := time.Since(start)
	if isErr, _ := path(r, "result", "isError").(bool); isErr {
		b.Fatalf("%s %s: %v", tool, a, r)
	}
	return r, d
}

func (s *mcpStdio) find(b *testing.B, text string) time.Duration {
	r, d := s.call(b, "graph_find", map[string]any{"text": text, "limit": 10})
	if path(r, "result", "structuredContent") == nil {
		b.Fatalf("graph_find %q: no structured result: %v", text, r)
	}
	return d
}

// warm makes the server build its index and read its tags (a search by tag waits for
// them), and warms the pages, so that no start-up work falls into the timed calls.
func (s *mcpStdio) warm(b *testing.B, n int) {
	if r, _ := s.call(b, "graph_find", map[string]any{"tags": []string{"role:synth"}, "limit": 1}); path(r, "result", "structuredContent") == nil {
		b.Fatalf("graph_find by tag: %v", r)
	}
	for j := 0; j < 50; j++ {
		s.find(b, benchFindText(j, n))
	}
}

// openNotes starts a server for the note benchmarks on a copy of the n-identity
// database, warmed as the find benchmarks' are (warm), so that no start-up work falls
// into the timed notes: the start's hold on the collector ends at the first find (or 1 s
// after the start), and the warming of the index and the touching of the heap's
// headroom follow it. With DEVGRAPH_E2E_NOTE_COLD set it is not warmed: the notes are
// then a new server's first second, the collector held throughout (how the figures
// before stop 27 were measured).
func openNotes(b *testing.B, bin string, n int) *mcpStdio {
	s := openMCP(b, bin, benchDB(b, n))
	if os.Getenv("DEVGRAPH_E2E_NOTE_COLD") == "" {
		s.warm(b, n)
	}
	return s
}

func (s *mcpStdio) note(b *testing.B, i, j int) time.Duration {
	target := "identity:" + slug(benchName(i))
	_, d := s.call(b, "graph_note", map[string]any{"target": target, "body": fmt.Sprintf("bench note %d at %d", j, time.Now().UnixNano())})
	return d
}

// slug is graph.Slugify for the benchmark's ASCII names.
func slug(name string) string { return strings.ReplaceAll(strings.ToLower(name), " ", "-") }

// serverCPU is the CPU time the child has used so far, all its threads (schedstat's
// nanoseconds): beside each wall-clock latency, a figure the machine's other load
// disturbs less. Zero where /proc has no schedstat.
func serverCPU(pid int) time.Duration {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, d := range dirs {
		data, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(string(data), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// reportCPU reports the server's CPU time per call over calls.
func reportCPU(b *testing.B, before, after time.Duration, calls int) {
	if after > before && calls > 0 {
		b.ReportMetric(float64((after-before).Microseconds())/float64(calls), "server_cpu_us/op")
	}
}

// latencies collects round trips and reports their p50 and p99 in milliseconds.
type latencies []time.Duration

func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(l[len(l)/2]), prefix+"p50_ms")
	b.ReportMetric(ms(l[min(len(l)-1, len(l)*99/100)]), prefix+"p99_ms")
}

// BenchmarkStdioFind times graph_find with nothing written in between. Target: p50 ≤
// 0.5 ms at every size.
func BenchmarkStdioFind(b *testing.B) {
	bin := devgraphBinary(b)
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := openMCP(b, bin, benchDB(b, n))
			s.warm(b, n)
			lat := make(latencies, 0, b.N)
			cpu0 := serverCPU(s.cmd.Process.Pid)
			b.ResetTimer()
			for j := 0; j < b.N; j++ {
				lat = append(lat, s.find(b, benchFindText(j, n)))
			}
			b.StopTimer()
			reportCPU(b, cpu0, serverCPU(s.cmd.Process.Pid), b.N)
			s.stop(b)
			b.ReportMetric(0, "ns/op")
			lat.report(b, "")
		})
	}
}

// BenchmarkStdioFindAfterWrite times a graph_find sent right after a graph_note has
// been answered, so each find first catches its index up with a new changelog event.
// Only the find is timed. Target: p50 ≤ 0.5 ms at every size.
func BenchmarkStdioFindAfterWrite(b *testing.B) {
	bin := devgraphBinary(b)
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := openMCP(b, bin, benchDB(b, n))
			s.warm(b, n)
			lat := make(latencies, 0, b.N)
			var cpu time.Duration
			b.ResetTimer()
			for j := 0; j < b.N; j++ {
				b.StopTimer()
				s.note(b, (j*104729)%n, j)
				c0 := serverCPU(s.cmd.Process.Pid)
				b.StartTimer()
				lat = append(lat, s.find(b, benchFindText(j, n)))
				cpu += serverCPU(s.cmd.Process.Pid) - c0
			}
			reportCPU(b, 0, cpu, b.N)
			b.StopTimer()
			s.stop(b)
			b.ReportMetric(0, "ns/op")
			lat.report(b, "")
		})
	}
}

// BenchmarkStdioNote times graph_note, which answers only once the note and its event
// are durable (bbolt's two fdatasyncs). Target: p50 ≤ 0.7 ms at every size.
func BenchmarkStdioNote(b *testing.B) {
	bin := devgraphBinary(b)
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := openNotes(b, bin, n)
			for j := 0; j < 20; j++ {
				s.note(b, (j*104729)%n, -j)
			}
			lat := make(latencies, 0, b.N)
			cpu0 := serverCPU(s.cmd.Process.Pid)
			b.ResetTimer()
			for j := 0; j < b.N; j++ {
				lat = append(lat, s.note(b, (j*104729)%n, j))
			}
			b.StopTimer()
			reportCPU(b, cpu0, serverCPU(s.cmd.Process.Pid), b.N)
			s.stop(b)
			b.ReportMetric(0, "ns/op")
			lat.report(b, "")
		})
	}
}

// BenchmarkStdioNotePaired compares two builds' graph_note over stdio in the same
// minutes: DEVGRAPH_E2E_BIN (a) and DEVGRAPH_E2E_BIN_B (b; a itself when unset) each
// serve a copy of the database, and the calls alternate between them one by one (which
// goes first alternating too). This machine's speed drifts by 10–20% from one minute to
// the next, far more than most changes to the note's path are worth, and separate runs
// of BenchmarkStdioNote see different minutes; here both builds see the same ones, and
// the median of the paired differences (delta_p50_us, a minus b) shows a few µs. A build
// against itself shows the method's own spread (0–5 µs here).
func BenchmarkStdioNotePaired(b *testing.B) {
	binA := devgraphBinary(b)
	binB := binA
	if p := os.Getenv("DEVGRAPH_E2E_BIN_B"); p != "" {
		binB = p
	}
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			alternateNotes(b, n, openNotes(b, binA, n), openNotes(b, binB, n))
		})
	}
}

// BenchmarkStdioNoteOverFloor is devgraph's own part of a note, measured as the issue
// counts it (0.5 ms of the 0.7 for the disk, 0.2 for devgraph): graph_note calls to
// devgraph (a) alternate one by one with the same calls to e2e/floor (b), which makes
// the same writes and fdatasyncs and nothing else, so both see the same minutes of the
// machine; delta_p50_us is the median of the paired differences. Separate runs of
// BenchmarkStdioNote and BenchmarkStdioNoteFloor give the same difference only when the
// machine keeps its speed between them.
func BenchmarkStdioNoteOverFloor(b *testing.B) {
	bin := devgraphBinary(b)
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			f := &mcpStdio{stdioProc: startProc(b, exec.Command(floor.get(b), filepath.Join(b.TempDir(), "floor.db")))}
			alternateNotes(b, n, openNotes(b, bin, n), f)
		})
	}
}

// alternateNotes times b.N notes on each of sa and sb (over n identities), alternating
// call by call and which goes first, after 20 untimed on each; it reports each one's
// p50 and p99 (a_, b_) and the median of the paired differences, a minus b.
func alternateNotes(b *testing.B, n int, sa, sb *mcpStdio) {
	for j := 0; j < 20; j++ {
		sa.note(b, (j*104729)%n, -j)
		sb.note(b, (j*104729)%n, -j)
	}
	la, lb := make(latencies, 0, b.N), make(latencies, 0, b.N)
	delta := make(latencies, 0, b.N)
	b.ResetTimer()
	for j := 0; j < b.N; j++ {
		i := (j * 104729) % n
		var da, db time.Duration
		if j%2 == 0 {
			da = sa.note(b, i, j)
			db = sb.note(b, i, j)
		} else {
			db = sb.note(b, i, j)
			da = sa.note(b, i, j)
		}
		la, lb, delta = append(la, da), append(lb, db), append(delta, da-db)
	}
	b.StopTimer()
	sa.stop(b)
	sb.stop(b)
	b.ReportMetric(0, "ns/op")
	la.report(b, "a_")
	lb.report(b, "b_")
	sort.Slice(delta, func(i, j int) bool { return delta[i] < delta[j] })
	b.ReportMetric(float64(delta[len(delta)/2].Nanoseconds())/1000, "delta_p50_us")
}

// BenchmarkStdioNoteFloor is BenchmarkStdioNote's calls answered by e2e/floor instead of
// devgraph: the same pipes, the same writes and fdatasyncs as bbolt's commit of a note, a
// result of the same size, and nothing else. Run beside BenchmarkStdioNote (-bench
// 'StdioNote(Floor)?$'), the difference is devgraph's own part of a note; the issue's
// 0.7 ms counts 0.5 ms for the disk and 0.2 for it.
func BenchmarkStdioNoteFloor(b *testing.B) {
	cmd := exec.Command(floor.get(b), filepath.Join(b.TempDir(), "floor.db"))
	s := &mcpStdio{stdioProc: startProc(b, cmd)}
	for j := 0; j < 20; j++ {
		s.note(b, j, -j)
	}
	lat := make(latencies, 0, b.N)
	cpu0 := serverCPU(cmd.Process.Pid)
	b.ResetTimer()
	for j := 0; j < b.N; j++ {
		lat = append(lat, s.note(b, j, j))
	}
	b.StopTimer()
	reportCPU(b, cpu0, serverCPU(cmd.Process.Pid), b.N)
	s.stop(b)
	b.ReportMetric(0, "ns/op")
	lat.report(b, "")
}

var floor = &builtBinary{pkg: "./e2e/floor", name: "floor"}

// BenchmarkSpawnFind_100k times, from spawning `devgraph serve` on a 100,000-identity
// database, initialize (answered before the find is sent, as a client waits for it),
// notifications/initialized and the first graph_find's answer. Target: p50 ≤ 50 ms.
func BenchmarkSpawnFind_100k(b *testing.B) {
	bin := devgraphBinary(b)
	db := benchDB(b, 100_000)
	args, env := serveArgs(b, db)
	// One cold start untimed: the file's pages in the page cache, as on a machine
	// where the server runs every day.
	p := startStdioEnv(b, bin, env, args...)
	p.send(b, initLine)
	p.reply(b, 1)
	p.stop(b)
	var first, init, cpu latencies
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := startStdioEnv(b, bin, env, args...)
		p.send(b, initLine)
		p.reply(b, 1)
		init = append(init, time.Since(p.start))
		p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		p.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"graph_find","arguments":{"text":%q}}}`, benchFindText(i, 100_000)))
		r := p.reply(b, 2)
		first = append(first, time.Since(p.start))
		cpu = append(cpu, serverCPU(p.cmd.Process.Pid))
		if isErr, _ := path(r, "result", "isError").(bool); isErr {
			b.Fatalf("graph_find: %v", r)
		}
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(0, "ns/op")
	first.report(b, "first_find_")
	init.report(b, "initialize_")
	cpu.report(b, "server_cpu_to_first_find_")
}
