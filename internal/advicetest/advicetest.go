// Package advicetest lists one graph.Step of every kind, with the values the errors that
// make it give it and the bare forms some make, so each edge's renderer is tested against
// the same list.
package advicetest

import "github.com/devgraph/devgraph/graph"

// Every returns one step of each kind and list kind, with and without a node.
func Every() []graph.Step {
	x, y := graph.XY(1.5, -2)
	out := []graph.Step{
		{Do: graph.StepShow, ID: "identity:jdxi"},
		{Do: graph.StepBind, Ref: "usb:3-3.2", Identity: "identity:jdxi"},
		{Do: graph.StepBind, Ref: "usb:3-3.2", Identity: "identity:jdxi", Arg: "force", Value: "true"},
		{Do: graph.StepBind, Ref: "usb:3-3.2", Name: "Roland JD-Xi"},
		graph.PassStep("move", "true"), graph.PassStep("new_type", "true"), graph.PassStep("slug", "jdxi-2"), graph.PassStep("slug", ""),
		{Do: graph.StepUpdate, ID: "rel:0190"}, {Do: graph.StepRemove, ID: "rel:0190"}, {Do: graph.StepRemove},
		{Do: graph.StepDelNote, ID: "identity:jdxi"},
		{Do: graph.StepArm, Robot: "robot:scout"}, {Do: graph.StepDetect, Robot: "robot:scout"},
		{Do: graph.StepGrasp, Robot: "robot:scout"}, {Do: graph.StepGrasp, Robot: "robot:scout", Object: "cube-1"},
		{Do: graph.StepRelease, Robot: "robot:scout"}, {Do: graph.StepStop, Robot: "robot:scout"},
		{Do: graph.StepNavigate, Robot: "robot:scout", X: x, Y: y},
		{Do: graph.StepPage}, {Do: graph.StepRetry}, {Do: graph.StepServe},
	}
	for _, k := range []string{graph.ListIdentities, graph.ListDevices, graph.ListUnbound, graph.ListBound, graph.ListRobots,
		graph.ListRelationTypes, graph.ListTags} {
		out = append(out, graph.ListStep(k, ""))
	}
	// The kinds that list a node's own, with the node and without.
	for _, k := range []string{graph.ListRelations, graph.ListNotes, graph.ListClients, graph.ListChangelog} {
		out = append(out, graph.ListStep(k, ""), graph.ListStep(k, "identity:jdxi"))
	}
	return out
}
