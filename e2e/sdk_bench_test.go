package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/devgraph/devgraph/store/storetest"
)

// BenchmarkSDK_FindNote times a find and a note through the official MCP TypeScript SDK
// over stdio (bench-sdk.mjs), against devgraph and against the reference MCP memory
// server (@modelcontextprotocol/server-memory: search_nodes and add_observations) holding
// the same number of entities under the same names. Targets: devgraph ≥ 3× faster at
// 1,000 for both; ≥ 50× (find) and ≥ 100× (note) at 50,000.
//
//	go test -run '^$' -bench SDK_FindNote -benchtime 1x ./e2e/
func BenchmarkSDK_FindNote(b *testing.B) {
	node := nodeAndSDK(b)
	bin := devgraphBinary(b)
	script := filepath.Join(repoRoot(b), "e2e", "bench-sdk.mjs")
	memory := filepath.Join(repoRoot(b), "e2e", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(memory); err != nil {
		b.Fatalf("the reference memory server is not installed (npm ci --prefix e2e): %v", err)
	}
	for _, n := range []int{1_000, 50_000} {
		iters := 200
		if n > 10_000 {
			iters = 40 // the memory server reads and rewrites its whole file per call
		}
		b.Run("devgraph/"+sizeName(n), func(b *testing.B) {
			args, env := serveArgs(b, benchDB(b, n))
			// benchDB's files belong to storetest.Host (see startStdioEnv).
			env = append(env, "DEVGRAPH_HOST_NAME="+storetest.Host)
			runSDKBench(b, node, script, "devgraph", n, iters, env, bin, append([]string{"serve"}, args...)...)
		})
		b.Run("memory/"+sizeName(n), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "memory.jsonl")
			writeMemoryFile(b, file, n)
			env := append(os.Environ(), "MEMORY_FILE_PATH="+file)
			runSDKBench(b, node, script, "memory", n, iters, env, node, memory)
		})
	}
}

func runSDKBench(b *testing.B, node, script, mode string, n, iters int, env []string, command string, args ...string) {
	var r struct {
		FindP50 float64 `json:"find_p50"`
		FindP99 float64 `json:"find_p99"`
		NoteP50 float64 `json:"note_p50"`
		NoteP99 float64 `json:"note_p99"`
	}
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(node, append([]string{script, mode, fmt.Sprint(n), fmt.Sprint(iters), "--", command}, args...)...)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			b.Fatalf("bench-sdk.mjs %s: %v\n%s", mode, err, stderr)
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("bench-sdk.mjs output %q: %v", out, err)
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(r.FindP50, "find_p50_ms")
	b.ReportMetric(r.FindP99, "find_p99_ms")
	b.ReportMetric(r.NoteP50, "note_p50_ms")
	b.ReportMetric(r.NoteP99, "note_p99_ms")
}

// writeMemoryFile writes the memory server's JSONL file: n entities named as the
// benchmark databases' identities, with their tags as observations.
func writeMemoryFile(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := 0; i < n; i++ {
		enc.Encode(map[string]any{
			"type": "entity", "name": benchName(i), "entityType": "device",
			"observations": []string{fmt.Sprintf("location:rack-%d", i%10), "manufacturer:" + slug(benchMakers[i%8]), "role:synth"},
		})
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
