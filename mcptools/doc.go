// Package mcptools serves devgraph over the Model Context Protocol (mark3labs/mcp-go):
// graph tools (graph_query, graph_find, graph_browse, graph_bind, graph_unbind,
// graph_unbound, graph_tag, graph_note, graph_identity, graph_suggest_tags,
// graph_changelog, graph_relate, graph_trace), robot tools (robot_status, robot_navigate, robot_stop, robot_arm,
// robot_disarm, robot_detect, robot_grasp, robot_release, robot_parameters), resources
// (devgraph://schema, devgraph://node/{+id}, devgraph://robot/{+id}/state,
// devgraph://changelog/recent) and prompts for the common journeys.
//
// Every tool is a thin layer over graph.Service; graph_find asks the name index it is
// given (Options.Finder, the graph.Finder GraphQL find uses too, so both rank alike).
// A tool's arguments are a Go struct whose tags give its input schema and drive the
// argument check that runs before the handler (input.go), so a model gets a sentence
// naming the field, the expected form and an example rather than a schema dump; its result
// is a Go type whose output schema is derived from it, a compact view (views.go) with raw
// records only on detail: true, and a text rendering carrying the same facts. Anything the
// model can fix (bad input, unknown ids, conflicts, limits) is an isError result, while
// faults of devgraph itself stay JSON-RPC errors carrying no internals.
//
// Tools come in toolsets (Options.Toolsets, serve --tools): graph (reading), edit
// (writing), robots. By default the robot tools are offered once a robot is stored or
// driven, and sessions are sent notifications/tools/list_changed then. Read-only mode
// drops the writing tools but keeps robot_stop: stopping is always allowed.
//
// Every change is made with the actor "mcp:<client name>" (from initialize in the
// 2025-11-25 era, from the request's _meta clientInfo in the 2026-07-28 era,
// "mcp:unknown" when neither names one) and a fresh request id per call, so all events
// of one call share it. A request the HTTP transport authenticated with a bearer token
// keeps the token's actor ("http:<token name>"; graph.ActorAuthenticated): the client's
// name is its own choice, so it only goes to the access log (graph.SetClientName). There
// is no prune tool, and graph_query runs read-only.
//
// Transports: ServeStdio runs its own line-delimited JSON-RPC loop in which every
// request is served on its own goroutine (mcp-go's stdio server queues tool calls on a
// small worker pool, where blocking robot_navigate calls could starve robot_stop);
// HTTPHandler is mcp-go's streamable HTTP server. Both serve both protocol eras.
package mcptools
