package query_test

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
)

// TestAdvice_GraphQL: errors advise in GraphQL's terms — fields and arguments, in the
// message and in extensions.next — never a CLI verb or an MCP tool; a retried bind answers
// alreadyBound and writes nothing; a contradicting bind is refused unless force.
func TestAdvice_GraphQL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, query.Options{})
	e.seed() // binds usb:3-3.2 to identity:jdxi

	firstErr := func(out map[string]any) (string, map[string]any) {
		t.Helper()
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			t.Fatalf("want an error, got %v", out)
		}
		msg, _ := get(errs[0], "message").(string)
		ext, _ := get(errs[0], "extensions").(map[string]any)
		for _, other := range []string{"devgraph ", "graph_", "robot_", "--"} {
			if strings.Contains(msg, other) {
				t.Errorf("message %q speaks another interface's words (%q)", msg, other)
			}
		}
		return msg, ext
	}

	t.Run("UnknownID", func(t *testing.T) {
		msg, ext := firstErr(e.do(`mutation { addNote(target: "jdx1", body: "x"){ id } }`, nil))
		if !strings.Contains(msg, "did you mean identity:jdxi?") || !strings.Contains(msg, "? Next: query `identities`") {
			t.Errorf("message %q", msg)
		}
		if get(ext, "next.0.field") != "identities" || get(ext, "next.0.operation") != "query" || get(ext, "next.0.do") != graph.StepList {
			t.Errorf("extensions.next=%v", ext["next"])
		}
	})
	t.Run("RetriedBind", func(t *testing.T) {
		before := e.eventCount(t)
		d := e.ok(`mutation { bind(ref: "usb:3-3.2", identity: "jdxi"){ alreadyBound created events identity { id } } }`, nil)
		if get(d, "bind.alreadyBound") != true || get(d, "bind.events") != 0.0 || get(d, "bind.identity.id") != "identity:jdxi" {
			t.Errorf("retried bind: %v", d)
		}
		if after := e.eventCount(t); after != before {
			t.Errorf("a retried bind wrote events: %s → %s", before, after)
		}
	})
	t.Run("Contradiction", func(t *testing.T) {
		before := e.eventCount(t)
		msg, ext := firstErr(e.do(`mutation { bind(ref: "usb:3-4.1", identity: "jdxi"){ created } }`, nil))
		if !strings.Contains(msg, "another model") || !strings.Contains(msg, "mutation `bind(ref: \"usb:3-4.1\", identity: \"identity:jdxi\", force: true)`") {
			t.Errorf("message %q", msg)
		}
		if ext["code"] != graph.ECONFLICT || ext["field"] != "identity" {
			t.Errorf("extensions %v", ext)
		}
		forceAdvised := false
		for _, n := range ext["next"].([]any) {
			forceAdvised = forceAdvised || (get(n, "field") == "bind" && get(n, "args.force") == true)
		}
		if !forceAdvised {
			t.Errorf("extensions.next=%v lacks bind with force", ext["next"])
		}
		if after := e.eventCount(t); after != before {
			t.Errorf("a refused bind wrote events: %s → %s", before, after)
		}
		d := e.ok(`mutation { bind(ref: "usb:3-4.1", identity: "jdxi", force: true){ alreadyBound identity { id } } }`, nil)
		if get(d, "bind.alreadyBound") != false || get(d, "bind.identity.id") != "identity:jdxi" {
			t.Errorf("forced bind: %v", d)
		}
	})
}
