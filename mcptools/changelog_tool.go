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
	Seq       string          `json:"seq"` // 64-bit, as a string
	ID        string          `json:"id"`
	Time      time.Time       `json:"time"`
	Actor     string          `json:"actor"`
	Action    string          `json:"action"`
	Target    string          `json:"target"`
	Message   string          `json:"message,omitempty"`
	RequestID string          `json:"request_id"`
	Before    json.RawMessage `json:"before,omitempty"`
	After     json.RawMessage `json:"after,omitempty"`
}

func viewEvent(ev *graph.Event, bodies bool) eventView {
	v := eventView{Seq: strconv.FormatUint(ev.Seq, 10), ID: ev.ID, Time: ev.Time, Actor: ev.Actor, Action: ev.Action,
		Target: ev.Target, Message: ev.Message, RequestID: ev.RequestID}
	if bodies {
		v.Before, v.After = ev.Before, ev.After
	}
	return v
}

func (s *Server) changelogTool() *toolDef {
	return &toolDef{
		name:  "graph_changelog",
		title: "Read the audit changelog",
		desc: "Read who changed what, newest first: every change from the CLI, MCP, GraphQL, discovery and robots is one event per node " +
			"(seq, time, actor, action, target, message, request_id). Filters: since/until (RFC 3339 time or a duration back from now " +
			"such as 24h, 7d), target (a node id), actor glob (mcp:*), action glob (tag.*, device.appear). bodies: true adds each " +
			"event's before/after JSON. Paged (limit, cursor).",
		params: []param{
			{name: "since", typ: "string", maxLen: 64, desc: "only events at or after this time: RFC 3339 or a duration back from now (30m, 24h, 7d)", example: `"24h"`},
			{name: "until", typ: "string", maxLen: 64, desc: "only events before this time (same forms as since)", example: `"2026-11-22T06:00:00Z"`},
			{name: "target", typ: "string", maxLen: 300, desc: "only events on this node", example: `"identity:roland-jd-xi"`},
			{name: "actor", typ: "string", maxLen: 100, desc: "actor glob", example: `"mcp:*"`},
			{name: "action", typ: "string", maxLen: 64, desc: "action glob", example: `"tag.*"`},
			{name: "bodies", typ: "boolean", desc: "include before/after JSON of each event"},
			s.limitParam(20), cursorParam,
		},
		out: outputSchema(
			outProp{"events", "array", "events newest first", true},
			outProp{"next_cursor", "string", "pass as cursor for the next (older) page", false},
		),
		readOnly: true, idempotent: true,
		handler: s.changelog,
	}
}

func (s *Server) changelog(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	now := time.Now()
	f := graph.EventFilter{Actor: c.str("actor"), Action: c.str("action"), First: s.pageLimit(c, 20), After: c.str("cursor")}
	var err error
	if f.Since, err = parseWhen("since", c.str("since"), now); err != nil {
		return nil, err
	}
	if f.Until, err = parseWhen("until", c.str("until"), now); err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(c.str("target")); t == graph.ChangelogTarget {
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
		views[i] = viewEvent(ev, c.boolean("bodies"))
		fmt.Fprintf(&b, "#%d %s %s %s %s", ev.Seq, ev.Time.UTC().Format(time.RFC3339), ev.Actor, ev.Action, ev.Target)
		if ev.Message != "" {
			fmt.Fprintf(&b, " — %s", ev.Message)
		}
		b.WriteByte('\n')
	}
	if next != "" {
		b.WriteString("Older: call again with cursor=" + next + "\n")
	}
	return result(map[string]any{"events": views, "next_cursor": next}, b.String())
}

// parseWhen reads an RFC 3339 time or a duration back from now ("24h", "7d").
func parseWhen(field, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.UTC(), nil
	}
	d := s
	mult := time.Duration(1)
	if strings.HasSuffix(d, "d") {
		d, mult = strings.TrimSuffix(d, "d")+"h", 24
	}
	if dur, err := time.ParseDuration(d); err == nil && dur >= 0 {
		return now.Add(-dur * mult).UTC(), nil
	}
	return time.Time{}, graph.FieldErrorf(graph.EINVALID, field, "%s %q: give an RFC 3339 time (2026-11-22T06:00:00Z), a date (2026-11-22) or a duration back from now (30m, 24h, 7d)", field, s)
}
