package query_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/query/querytest"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// env is querytest.Env under the names these tests use.
type env struct {
	*querytest.Env
	t          testing.TB
	db         *store.DB
	svc        *identity.Service
	exec       *query.Executor
	ctx        context.Context
	robotClock *robot.FakeClock
}

func newEnv(t testing.TB, opts query.Options) *env {
	t.Helper()
	e := querytest.New(t, opts)
	return &env{Env: e, t: e.T, db: e.DB, svc: e.Svc, exec: e.Exec, ctx: e.Ctx, robotClock: e.RobotClock}
}

func (e *env) seed()                                           { e.T.Helper(); e.Seed() }
func (e *env) do(q string, vars map[string]any) map[string]any { e.T.Helper(); return e.Do(q, vars) }
func (e *env) doCtx(ctx context.Context, q string, vars map[string]any) map[string]any {
	e.T.Helper()
	return e.DoCtx(ctx, q, vars)
}
func (e *env) ok(q string, vars map[string]any) map[string]any { e.T.Helper(); return e.OK(q, vars) }

func get(v any, path string) any       { return querytest.Get(v, path) }
func getList(v any, path string) []any { return querytest.GetList(v, path) }

// fail runs a request that must fail with code and returns the first error's message.
func (e *env) fail(code, q string, vars map[string]any) string {
	e.t.Helper()
	out := e.do(q, vars)
	errs, _ := out["errors"].([]any)
	if len(errs) == 0 {
		e.t.Fatalf("want error %s, got success: %v\nquery: %s", code, out, q)
	}
	first := errs[0].(map[string]any)
	ext, _ := first["extensions"].(map[string]any)
	if got := ext["code"]; got != code {
		e.t.Fatalf("error code=%v, want %s (message %q)\nquery: %s", got, code, first["message"], q)
	}
	return first["message"].(string)
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	hashRe = regexp.MustCompile(`"[0-9a-f]{64}"`)
)

// golden compares v (JSON-encoded, ids and hashes masked) with testdata/golden/name.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := uuidRe.ReplaceAllString(string(b), "<uuid>")
	got = hashRe.ReplaceAllString(got, `"<hash>"`) + "\n"
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./query -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
