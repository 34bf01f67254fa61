package graph

import (
	"context"
	"time"
)

// Note is a message on an identity, device or robot.
type Note struct {
	ID     string    `json:"id"` // note:<uuidv7>
	Target string    `json:"target"`
	Kind   string    `json:"kind"` // info, success, warning, danger
	Body   string    `json:"body"` // markdown ≤ 16 KiB
	Author string    `json:"author"`
	Time   time.Time `json:"time"`
	// Existed: AddNote found this identical note (same target, kind, body and author)
	// added within NoteRepeatWindow and wrote nothing. Never stored.
	Existed bool `json:"existed,omitempty"`
}

// NoteRepeatWindow is how long an identical note counts as a retry of the first: adding
// it again within the window returns the first and writes nothing.
const NoteRepeatWindow = 10 * time.Minute

// NoteRepeatScan is how many of a target's newest notes a repeat is looked for among.
const NoteRepeatScan = 64

// NoteKinds are the valid note kinds.
var NoteKinds = []string{"info", "success", "warning", "danger"}

// NoteCreate is the input to add a note.
type NoteCreate struct {
	Target string `json:"target"`
	Kind   string `json:"kind,omitempty"` // default info
	Body   string `json:"body"`
}

// NoteFilter selects notes, newest first.
type NoteFilter struct {
	Target string `json:"target,omitempty"`
	Kind   string `json:"kind,omitempty"`
	First  int    `json:"first,omitempty"`
	After  string `json:"after,omitempty"`
}

// NoteService keeps notes on identities, devices and robots.
type NoteService interface {
	// AddNote adds a note on an existing target; ENOTFOUND for an unknown target, EINVALID
	// for an unknown kind or an oversize or invalid body. The same note (target, kind, body
	// and author) again within NoteRepeatWindow returns the first with Existed set and
	// writes nothing.
	AddNote(ctx context.Context, n NoteCreate) (*Note, error)
	// FindNoteByID finds one note by id ("note:<uuid>" or the bare uuid); ENOTFOUND with
	// the closest note id when it does not exist.
	FindNoteByID(ctx context.Context, id string) (*Note, error)
	// FindNotes returns notes newest first, a page at a time, with the total and the next
	// cursor. An unknown target is ENOTFOUND.
	FindNotes(ctx context.Context, f NoteFilter) (notes []*Note, total int, next string, err error)
	// DeleteNote deletes a note (note.delete records its body); ENOTFOUND when missing.
	DeleteNote(ctx context.Context, id string) error
}
