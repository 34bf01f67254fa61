package main

import (
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/internal/advicetest"
)

// TestCLIAdvice_EveryStep: every step renders as a devgraph command or words for a person
// at a terminal, never as an MCP tool call or a GraphQL field, and carries its values.
func TestCLIAdvice_EveryStep(t *testing.T) {
	for _, s := range advicetest.Every() {
		got := cliAdvice([]graph.Step{s})
		if got == "" {
			t.Errorf("%+v renders as nothing", s)
			continue
		}
		for _, other := range []string{"graph_", "call ", "mutation", "{\""} {
			if strings.Contains(got, other) && s.Do != graph.StepDetect && s.Do != graph.StepGrasp && s.Do != graph.StepRelease {
				t.Errorf("%+v: %q speaks another interface (%q)", s, got, other)
			}
		}
		for _, v := range []string{s.ID, s.Ref, s.Identity, s.Robot} {
			if v != "" && !strings.Contains(got, v) {
				t.Errorf("%+v: %q leaves out %q", s, got, v)
			}
		}
	}
	if got, want := errorLine(graph.Errorf(graph.ENOTFOUND, "unknown identity %q; did you mean identity:jdxi?", "jdx1").Next(graph.ListStep(graph.ListIdentities, ""))),
		"unknown identity \"jdx1\"; did you mean identity:jdxi? Run `devgraph identities`"; got != want {
		t.Errorf("errorLine=%q, want %q", got, want)
	}
}
