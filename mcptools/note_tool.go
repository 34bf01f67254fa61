package mcptools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

type noteIn struct {
	Action string `json:"action" mcp:"enum=add|delete"`
	Target string `json:"target" mcp:"max=300"`
	Body   string `json:"body" mcp:"max=16384,svc"`
	Kind   string `json:"kind" jsonschema:"default info" mcp:"enum=info|success|warning|danger,svc"`
	NoteID string `json:"note_id" mcp:"max=100"`
	whyIn
}

type noteOut struct {
	Note      *noteView `json:"note,omitempty" jsonschema:"the note added"`
	Deleted   string    `json:"deleted,omitempty" jsonschema:"the id of the note deleted"`
	Existed   bool      `json:"existed,omitempty" jsonschema:"the same note was there already: nothing written"`
	RequestID string    `json:"request_id"`
}

func (s *Server) noteTool() *toolDef {
	return typed(s, &toolDef{
		name:  "graph_note",
		title: "Add or delete a note",
		desc: "Add a markdown note to an identity or a device (robots included), or delete one by note_id " +
			"(graph_browse shows them). The note records this client as its author.",
		out:   typedSchema[noteOut](nil),
		set:   toolsetEdit,
		write: true, destructive: true, idempotent: false,
	}, s.note)
}

func (s *Server) note(ctx context.Context, c *call, in noteIn) (*mcp.CallToolResult, error) {
	if in.Action == "delete" {
		id := strings.TrimSpace(in.NoteID)
		if id == "" {
			return nil, graph.FieldErrorf(graph.EINVALID, "note_id", "graph_note delete needs note_id (note:<uuid>, from graph_browse or the add result)")
		}
		if err := s.svc.DeleteNote(ctx, id); err != nil {
			return nil, err
		}
		return result(noteOut{Deleted: id, RequestID: c.requestID}, "Deleted "+id+".")
	}
	target := strings.TrimSpace(in.Target)
	if target == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "target", "graph_note add needs target, the node to annotate (e.g. identity:roland-jd-xi; find ids with graph_find)")
	}
	n, err := s.svc.AddNote(ctx, graph.NoteCreate{Target: target, Kind: in.Kind, Body: in.Body})
	if err != nil {
		return nil, err
	}
	if n.Existed {
		return result(noteOut{Note: viewNote(n), Existed: true, RequestID: c.requestID},
			fmt.Sprintf("Already there: the same %s note %s on %s was added at %s; nothing written.", n.Kind, n.ID, n.Target, n.Time.UTC().Format(time.RFC3339)))
	}
	return result(noteOut{Note: viewNote(n), RequestID: c.requestID},
		fmt.Sprintf("Added %s note %s on %s.", n.Kind, n.ID, n.Target))
}
