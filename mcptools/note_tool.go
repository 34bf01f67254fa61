package mcptools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

func (s *Server) noteTool() *toolDef {
	return &toolDef{
		name:  "graph_note",
		title: "Add or delete a note",
		desc: "Leave a note on an identity, device or robot (action add: target, body as markdown ≤ 16 KiB, kind info|success|warning|danger, " +
			"default info), or delete one (action delete: note_id, note:<uuid>, as returned by add or shown by graph_browse). " +
			"Notes record who wrote them (this client).",
		params: []param{
			{name: "action", typ: "string", enum: []string{"add", "delete"}, desc: "add (default) or delete"},
			{name: "target", typ: "string", maxLen: 300, desc: "add: the node to annotate", example: `"identity:roland-jd-xi"`},
			{name: "body", typ: "string", maxLen: graph.MaxNoteLen, service: true, desc: "add: the note, markdown", example: `"Firmware updated to 1.53"`},
			{name: "kind", typ: "string", enum: graph.NoteKinds, service: true, desc: "add: info (default), success, warning or danger"},
			{name: "note_id", typ: "string", maxLen: 100, desc: "delete: the note's id", example: `"note:0190…"`},
			whyParam,
		},
		out: outputSchema(
			outProp{"note", "object", "the note added", false},
			outProp{"deleted", "string", "the id of the note deleted", false},
			outProp{"request_id", "string", "the request id of the change", true},
		),
		write: true, destructive: true, idempotent: false,
		handler: s.note,
	}
}

func (s *Server) note(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	if c.str("action") == "delete" {
		id := strings.TrimSpace(c.str("note_id"))
		if id == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "note_id", "graph_note delete needs note_id (note:<uuid>, from graph_browse or the add result)")
		}
		if err := s.svc.DeleteNote(ctx, id); err != nil {
			return nil, err
		}
		return result(map[string]any{"deleted": id, "request_id": c.requestID}, "Deleted "+id+".")
	}
	target, body := strings.TrimSpace(c.str("target")), c.str("body")
	if target == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "target", "graph_note add needs target, the node to annotate (e.g. identity:roland-jd-xi; find ids with graph_find)")
	}
	resolved, err := s.svc.ResolveID(ctx, target)
	if err != nil {
		return nil, err
	}
	n, err := s.svc.AddNote(ctx, graph.NoteCreate{Target: resolved, Kind: c.str("kind"), Body: body})
	if err != nil {
		return nil, err
	}
	if n.Existed {
		return result(map[string]any{"note": n, "request_id": c.requestID},
			fmt.Sprintf("Already there: the same %s note %s on %s was added at %s; nothing written.", n.Kind, n.ID, n.Target, n.Time.UTC().Format(time.RFC3339)))
	}
	return result(map[string]any{"note": n, "request_id": c.requestID},
		fmt.Sprintf("Added %s note %s on %s.", n.Kind, n.ID, n.Target))
}
