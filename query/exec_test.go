package query_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// TestExecute_Timeout: a request past its time limit gets LIMIT and the executor keeps serving.
func TestExecute_Timeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{Limits: query.Limits{Timeout: time.Nanosecond}})
	e.seed()
	out := e.do(`{ identities(first: 100){ nodes { name tags { name count } } } }`, nil)
	if code := get(out, "errors.0.extensions.code"); code != graph.ELIMIT {
		t.Fatalf("timed-out query: %v", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp := e.exec.Execute(ctx, query.Request{Query: `{ stats { identities } }`}, false)
	if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != graph.ELIMIT {
		t.Fatalf("cancelled request: %+v", resp)
	}
}

func TestParseVar(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		key  string
		want any
	}{
		{"id=identity:jdxi", "id", "identity:jdxi"},
		{"first=10", "first", float64(10)},
		{"all=true", "all", true},
		{`tags=["role:synth"]`, "tags", []any{"role:synth"}},
		{`f={"all":true}`, "f", map[string]any{"all": true}},
		{"$name=Roland JD-Xi", "name", "Roland JD-Xi"},
		{"empty=", "empty", ""},
		{`q="quoted"`, "q", "quoted"},
	} {
		k, v, err := query.ParseVar(c.in)
		if err != nil || k != c.key || fmt.Sprint(v) != fmt.Sprint(c.want) {
			t.Errorf("ParseVar(%q) = %q, %#v, %v; want %q, %#v", c.in, k, v, err, c.key, c.want)
		}
	}
	for _, bad := range []string{"novalue", "=x", ""} {
		if _, _, err := query.ParseVar(bad); graph.ErrorCode(err) != graph.EINVALID {
			t.Errorf("ParseVar(%q) err=%v, want INVALID", bad, err)
		}
	}
	// JSON text decoding would garble (encoding/json reads each as U+FFFD) is refused, not
	// replaced: a lone surrogate escape, a raw byte that is not UTF-8 inside a JSON string.
	for _, bad := range []string{`m="\ud800"`, "m=\"a\xffb\"", `m=["ok","\udc00"]`, `m={"k":"\u0000"}`} {
		if _, v, err := query.ParseVar(bad); graph.ErrorCode(err) != graph.EINVALID || graph.ErrorField(err) != "var" {
			t.Errorf("ParseVar(%q) = %#v, %v; want INVALID naming var", bad, v, err)
		}
	}
}
