package mcptools

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// Prompt names.
const (
	PromptDescribeSetup = "describe_setup"
	PromptBindNewDevice = "bind_new_device"
	PromptReviewChanges = "review_changes"
	PromptRobotMission  = "robot_mission"
)

func (s *Server) addPrompts() {
	s.mcp.AddPrompt(mcp.NewPrompt(PromptDescribeSetup,
		mcp.WithPromptDescription("Describe my setup: every device present, what it is, how it is tagged, and what is not bound yet."),
		mcp.WithArgument("focus", mcp.ArgumentDescription("optional: a tag or word to focus on, e.g. role:synth or audio")),
	), s.promptDescribe)
	s.mcp.AddPrompt(mcp.NewPrompt(PromptBindNewDevice,
		mcp.WithPromptDescription("Bind a newly plugged device to an identity: find it, check candidates, bind, tag and note it."),
		mcp.WithArgument("ref", mcp.ArgumentDescription("optional: the device ref if you know it, e.g. usb:3-3.2")),
		mcp.WithArgument("name", mcp.ArgumentDescription("optional: what the device is called, e.g. Roland JD-Xi")),
	), s.promptBind)
	s.mcp.AddPrompt(mcp.NewPrompt(PromptReviewChanges,
		mcp.WithPromptDescription("Review recent changes in the changelog: who changed what, and anything that looks wrong."),
		mcp.WithArgument("since", mcp.ArgumentDescription("how far back: a duration (24h, 7d) or an RFC 3339 time; default 24h")),
		mcp.WithArgument("actor", mcp.ArgumentDescription("optional actor glob, e.g. mcp:*")),
	), s.promptReview)
	s.mcp.AddPrompt(mcp.NewPrompt(PromptRobotMission,
		mcp.WithPromptDescription("Run a robot mission: find the robot, arm it, drive to an object, grasp it, bring it back, release it."),
		mcp.WithArgument("robot", mcp.ArgumentDescription("the robot (identity or robot:<name>); default: the first robot")),
		mcp.WithArgument("object", mcp.ArgumentDescription("optional: the object to fetch (an id or kind from robot_detect)")),
	), s.promptMission)
}

func userPrompt(desc, text string) *mcp.GetPromptResult {
	return mcp.NewGetPromptResult(desc, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))})
}

func (s *Server) promptDescribe(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	focus := strings.TrimSpace(req.Params.Arguments["focus"])
	var b strings.Builder
	b.WriteString("Describe the hardware around me using devgraph.\n\n")
	// A short snapshot so the model starts from facts rather than a blank page.
	if devs, total, _, err := s.svc.Devices(ctx, graph.DeviceFilter{First: 30}); err == nil {
		fmt.Fprintf(&b, "Right now %d device(s) are present", total)
		if total > len(devs) {
			fmt.Fprintf(&b, " (first %d listed)", len(devs))
		}
		b.WriteString(":\n")
		for _, d := range devs {
			who := "unbound"
			if d.BoundTo != "" {
				who = "= " + d.BoundTo
			}
			fmt.Fprintf(&b, "- %s %q %s\n", d.Ref, d.Name, who)
		}
		b.WriteByte('\n')
	}
	b.WriteString("Steps:\n" +
		"1. Call graph_find (no text) to list identities and devices, and graph_unbound for devices devgraph does not know yet.\n" +
		"2. For anything interesting call graph_browse to see its hints, tags, notes, bound devices and relations (cables, links, subscriptions, which hub it hangs off).\n" +
		"3. Where signals flow (controllers, synths, audio interfaces) call graph_trace to follow them to where they end.\n" +
		"4. Summarise by role (synths, audio interfaces, controllers, robots…) and how they are connected, say which are offline, and list unbound devices with their best candidate.\n" +
		"Do not change anything; this is a read-only tour.\n")
	if focus != "" {
		fmt.Fprintf(&b, "Focus on %q (as a tag, pass it to graph_find tags; otherwise as text).\n", focus)
	}
	return userPrompt("Describe my setup", b.String()), nil
}

func (s *Server) promptBind(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	ref := strings.TrimSpace(req.Params.Arguments["ref"])
	name := strings.TrimSpace(req.Params.Arguments["name"])
	var b strings.Builder
	b.WriteString("A device was just plugged in; help me bind it to a stable identity in devgraph.\n\n")
	if ref != "" {
		fmt.Fprintf(&b, "The device is %s.\n", ref)
	} else {
		b.WriteString("1. Call graph_unbound to list present devices devgraph does not recognise; pick the new one (ask me if several could be it).\n")
	}
	b.WriteString("2. Read its best candidate, score and explanation. If a candidate is high and right, bind to it; if the thing already has an identity (graph_find by name), bind to that.\n" +
		"3. Otherwise bind with graph_bind {ref, new_name}; try dry_run: true first if a conflict is likely.\n" +
		"4. Call graph_suggest_tags and tag the identity with existing terms (role:, manufacturer:, location:…) using graph_tag.\n" +
		"5. Leave a short graph_note saying what it is and where it is plugged.\n" +
		"6. Confirm with graph_browse on the identity and tell me what changed.\n")
	if name != "" {
		fmt.Fprintf(&b, "I call it %q.\n", name)
	}
	return userPrompt("Bind a newly plugged device", b.String()), nil
}

func (s *Server) promptReview(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	since := strings.TrimSpace(req.Params.Arguments["since"])
	if since == "" {
		since = "24h"
	}
	actor := strings.TrimSpace(req.Params.Arguments["actor"])
	var b strings.Builder
	fmt.Fprintf(&b, "Review what changed in devgraph since %s", since)
	if actor != "" {
		fmt.Fprintf(&b, " by %s", actor)
	}
	b.WriteString(".\n\n")
	args := fmt.Sprintf("{since: %q", since)
	if actor != "" {
		args += fmt.Sprintf(", actor: %q", actor)
	}
	args += "}"
	fmt.Fprintf(&b, "1. Call graph_changelog %s and page with cursor until done (or 200 events).\n", args)
	b.WriteString("2. Group events by request_id (one request = one user action) and by actor.\n" +
		"3. Summarise: identities created, renamed, merged or deleted; devices bound, unbound, appearing and disappearing; tags and notes; robot commands.\n" +
		"4. Point out anything odd: deletes, hint moves, unexpected actors, devices that came and went repeatedly. Use graph_changelog bodies: true on a target to see before/after.\n" +
		"Do not change anything.\n")
	return userPrompt("Review recent changes", b.String()), nil
}

func (s *Server) promptMission(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	robot := strings.TrimSpace(req.Params.Arguments["robot"])
	object := strings.TrimSpace(req.Params.Arguments["object"])
	var b strings.Builder
	b.WriteString("Run a fetch mission with a devgraph robot.\n\n")
	if robot == "" {
		b.WriteString("1. Call robot_status to list robots and pick one that is idle with enough battery.\n")
	} else {
		fmt.Fprintf(&b, "1. Call robot_status {robot: %q}; note its pose (this is home) and battery.\n", robot)
	}
	b.WriteString("2. robot_arm it.\n" +
		"3. robot_detect to see objects in range")
	if object != "" {
		fmt.Fprintf(&b, "; find %q", object)
	}
	b.WriteString(". If nothing is in range, drive a short way and detect again.\n" +
		"4. robot_navigate to a point within grasp_reach of the object (robot_parameters shows it); check status is arrived — if blocked or geofence, pick another approach point.\n" +
		"5. robot_grasp the object.\n" +
		"6. robot_navigate back home.\n" +
		"7. robot_release, then robot_disarm.\n" +
		"8. Report each step's result (status, distance remaining, battery). If anything goes wrong, call robot_stop at once.\n")
	return userPrompt("Run a robot mission", b.String()), nil
}
