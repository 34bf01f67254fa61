package http_test

import (
	"context"
	"testing"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/query/querytest"
	"github.com/devgraph/devgraph/sources/robot"
	"github.com/devgraph/devgraph/store"
)

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
func (e *env) ok(q string, vars map[string]any) map[string]any { e.T.Helper(); return e.OK(q, vars) }

func get(v any, path string) any       { return querytest.Get(v, path) }
func getList(v any, path string) []any { return querytest.GetList(v, path) }
