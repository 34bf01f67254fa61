package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type eventView struct {
	Seq       string `json:"seq" jsonschema:"64-bit, as a string"`
	ID        string `json:"id,omitempty" jsonschema:"with bodies: true"`
	Time      string `json:"time"`
	Actor     string `json:"actor"`
	Action    string `json:"action"`
	Target    string `json:"target"`
	Message   string `json:"message,omitempty"`
	RequestID string `json:"request_id"`
	Before    any    `json:"before,omitempty" jsonschema:"with bodies: true"`
	After     any    `json:"after,omitempty" jsonschema:"with bodies: true"`
}

func viewEvent(ev *graph.Event, bodies bool) eventView {
	v := eventView{Seq: strconv.FormatUint(ev.Seq, 10), Time: rfc3339(ev.Time), Actor: ev.Actor, Action: ev.Action,
		Target: ev.Target, Message: ev.Message, RequestID: ev.RequestID}
	if bodies {
		v.ID, v.Before, v.After = ev.ID, rawJSON(ev.Before), rawJSON(ev.After)
	}
	return v
}

type changelogIn struct {
	Since  string `json:"since" jsonschema:"RFC 3339 or 24h, 7d…" mcp:"max=64"`
	Until  string `json:"until" jsonschema:"as since" mcp:"max=64"`
	Target string `json:"target" mcp:"max=300"`
	Actor  string `json:"actor" jsonschema:"glob, e.g. mcp:*" mcp:"max=100"`
	Action string `json:"action" jsonschema:"glob, e.g. tag.*" mcp:"max=64"`
	Bodies bool   `json:"bodies" jsonschema:"add before/after JSON"`
	pageIn
}

type changelogOut struct {
	Events     []eventView `json:"events" jsonschema:"newest first"`
	NextCursor string      `json:"next_cursor" jsonschema:"the next (older) page"`
}

func (s *Server) changelogTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_changelog",
		title: "Read the audit changelog",
		desc: "Read the audit changelog, newest first: who (actor) changed what (action, target), when, and why (message). " +
			"Filter by time, target, actor and action.",
		out: typedSchema[changelogOut](nil),
		set: toolsetGraph, readOnly: true, idempotent: true,
	}, s.changelog)
}

func (s *Server) changelog(ctx context.Context, c *call, in changelogIn) (*mcp.CallToolResult, error) {
	now := time.Now()
	f := graph.EventFilter{Actor: in.Actor, Action: in.Action, First: s.pageLimit(in.Limit, 20), After: in.Cursor}
	var err error
	if f.Since, err = parseWhen("since", in.Since, now); err != nil {
		return nil, err
	}
	if f.Until, err = parseWhen("until", in.Until, now); err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(in.Target); t == graph.ChangelogTarget {
		f.Target = t // the changelog's own events (prunes)
	} else if t != "" {
		if f.Target, err = s.svc.ResolveID(ctx, t); err != nil {
			// Deleted nodes still have history: fall back to the id as given.
			if graph.ErrorCode(err) != graph.ENOTFOUND || graph.KindOf(t) == "" {
				return nil, err
			}
			f.Target = t
		}
	}
	evs, next, err := s.svc.FindEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	views := make([]eventView, len(evs))
	var b strings.Builder
	if len(evs) == 0 {
		b.WriteString("No events match.\n")
	}
	for i, ev := range evs {
		views[i] = viewEvent(ev, in.Bodies)
		fmt.Fprintf(&b, "#%d %s %s %s %s", ev.Seq, ev.Time.UTC().Format(time.RFC3339), ev.Actor, ev.Action, ev.Target)
		if ev.RequestID != "" {
			fmt.Fprintf(&b, " req %s", ev.RequestID) // one user action's events share it
		}
		if ev.Message != "" {
			fmt.Fprintf(&b, " — %s", ev.Message)
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("Older: call again with cursor=" + next + "\n")
	}
	return result(changelogOut{Events: views, NextCursor: next}, b.String())
}

// parseWhen reads since/until the way every interface does.
func parseWhen(field, s string, now time.Time) (time.Time, error) {
	return graph.ParseWhen(field, s, now)
}

// rawJSON decodes a stored JSON body for a structured result; nil when there is none.
func rawJSON(b json.RawMessage) any {
	var v any
	if len(b) == 0 || json.Unmarshal(b, &v) != nil {
		return nil
	}
	return v
}
