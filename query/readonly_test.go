package query

import (
	"testing"

	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
)

func TestOnlyStopsRobots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"Stop", `mutation { robotStop(robot: "scout") { state } }`, true},
		{"TwoStops", `mutation { a: robotStop(robot: "scout") { state } b: robotStop(robot: "rover") { state } }`, true},
		{"StopAndTypename", `mutation { __typename robotStop(robot: "scout") { state } }`, true},
		{"InlineFragment", `mutation { ... on Mutation { robotStop(robot: "scout") { state } } }`, true},
		{"Spread", `mutation { ...S } fragment S on Mutation { robotStop(robot: "scout") { state } }`, true},
		{"Arm", `mutation { robotArm(robot: "scout") { state } }`, false},
		{"StopAndArm", `mutation { robotStop(robot: "scout") { state } robotArm(robot: "scout") { state } }`, false},
		{"SpreadArm", `mutation { robotStop(robot: "scout") { state } ...S } fragment S on Mutation { robotArm(robot: "scout") { state } }`, false},
		{"OnlyTypename", `mutation { __typename }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.Parse(parser.ParseParams{Source: tc.doc})
			if err != nil {
				t.Fatal(err)
			}
			op := doc.Definitions[0].(*ast.OperationDefinition)
			if got := onlyStopsRobots(op, doc); got != tc.want {
				t.Fatalf("onlyStopsRobots(%s)=%v, want %v", tc.doc, got, tc.want)
			}
		})
	}
}
