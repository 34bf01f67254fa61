package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

func noteLocal(id string) string { return strings.TrimPrefix(id, "note:") }

func getNote(tx *bolt.Tx, local string) (*graph.Note, error) {
	return getRecord[graph.Note](tx, m.BucketNotes, local, "note")
}

// noteIDs lists the note ids on target, oldest first.
func noteIDs(tx *bolt.Tx, target string) []string {
	var out []string
	p := prefixKey(target)
	c := tx.Bucket(m.BucketNotesBy).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		out = append(out, "note:"+string(k[len(p):]))
	}
	return out
}

// notesOf returns target's notes newest first, optionally of one kind, at most max (0: all).
func notesOf(tx *bolt.Tx, target, kind string, max int) ([]*graph.Note, error) {
	ids := noteIDs(tx, target)
	out := make([]*graph.Note, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		n, err := getNote(tx, noteLocal(ids[i]))
		if err != nil {
			return nil, err
		}
		if n == nil || (kind != "" && n.Kind != kind) {
			continue
		}
		out = append(out, n)
		if max > 0 && len(out) == max {
			break
		}
	}
	return out, nil
}

// ownerOf returns the identity a node belongs to, for indexing its events under it too.
func ownerOf(tx *bolt.Tx, node string) string {
	if graph.KindOf(node) == graph.KindDevice {
		if d, _ := getDevice(tx, strings.TrimPrefix(node, "device:")); d != nil {
			return d.IdentityID
		}
	}
	return ""
}

// putNote stores n and returns its record, which is also its changelog body.
func (w *wtx) putNote(n *graph.Note) (json.RawMessage, error) {
	b, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	return b, w.put(m.BucketNotes, []byte(noteLocal(n.ID)), b)
}

func (w *wtx) deleteNote(id string) error {
	n, err := getNote(w.tx, noteLocal(id))
	if err != nil {
		return err
	}
	if n == nil {
		return graph.Errorf(graph.ENOTFOUND, "%s not found", id).Next(graph.ListStep(graph.ListNotes, ""))
	}
	if err := w.delete(m.BucketNotes, []byte(noteLocal(id))); err != nil {
		return err
	}
	if err := w.delete(m.BucketNotesBy, joinKey(n.Target, noteLocal(id))); err != nil {
		return err
	}
	w.count(m.CountNotes, -1)
	return w.emit(graph.ActNoteDelete, n.ID, n, nil, n.Target, ownerOf(w.tx, n.Target))
}

// restoreNote puts back a note deleted with its identity (same id, author and time), on
// target, recording note.add. A note whose id exists again is left alone.
func (w *wtx) restoreNote(n *graph.Note, target string) error {
	if n == nil || graph.KindOf(n.ID) != graph.KindNote {
		return nil
	}
	if w.b(m.BucketNotes).Get([]byte(noteLocal(n.ID))) != nil {
		return nil
	}
	c := *n
	c.Target = target
	rec, err := w.putNote(&c)
	if err != nil {
		return err
	}
	if err := w.put(m.BucketNotesBy, joinKey(target, noteLocal(c.ID)), nil); err != nil {
		return err
	}
	w.count(m.CountNotes, 1)
	return w.emit(graph.ActNoteAdd, c.ID, nil, rec, target, ownerOf(w.tx, target))
}

func (w *wtx) moveNote(id, target string) error {
	n, err := getNote(w.tx, noteLocal(id))
	if err != nil || n == nil {
		return err
	}
	before, _ := json.Marshal(n)
	if err := w.delete(m.BucketNotesBy, joinKey(n.Target, noteLocal(id))); err != nil {
		return err
	}
	old := n.Target
	n.Target = target
	rec, err := w.putNote(n)
	if err != nil {
		return err
	}
	if err := w.put(m.BucketNotesBy, joinKey(target, noteLocal(id)), nil); err != nil {
		return err
	}
	return w.emit(graph.ActNoteMove, n.ID, json.RawMessage(before), rec, old, target)
}

// AddNote checks the note's kind and body before its transaction begins.
func (db *DB) AddNote(ctx context.Context, c graph.NoteCreate) (*graph.Note, error) {
	kind := strings.ToLower(strings.TrimSpace(c.Kind))
	if kind == "" {
		kind = "info"
	}
	if !contains(graph.NoteKinds, kind) {
		return nil, graph.FieldErrorf(graph.EINVALID, "kind", "note kind %.40q: want one of %s", c.Kind, strings.Join(graph.NoteKinds, ", "))
	}
	if err := graph.ValidateText("body", c.Body, 1, graph.MaxNoteLen); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Body) == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "body", "body is blank; write the note's text")
	}
	var out *graph.Note
	_, err := db.update(ctx, func(w *wtx) error {
		target, err := w.db.resolve(w.tx, c.Target, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		ids := noteIDs(w.tx, target)
		if n, err := w.repeatedNote(ids, kind, c.Body); err != nil || n != nil {
			out = n
			return err
		}
		if held := len(ids); held >= graph.MaxNotesPerNode {
			return graph.FieldErrorf(graph.ELIMIT, "target", "%s already has %d notes, the most a node may hold (%d); delete old ones first", target, held, graph.MaxNotesPerNode).Next(
				graph.Step{Do: graph.StepDelNote, ID: target})
		}
		n := &graph.Note{ID: graph.NewNoteID(), Target: target, Kind: kind, Body: c.Body, Author: w.actor, Time: w.now}
		rec, err := w.putNote(n)
		if err != nil {
			return err
		}
		if err := w.put(m.BucketNotesBy, joinKey(target, noteLocal(n.ID)), nil); err != nil {
			return err
		}
		w.count(m.CountNotes, 1)
		out = n
		return w.emit(graph.ActNoteAdd, n.ID, nil, rec, target, ownerOf(w.tx, target))
	})
	return out, err
}

// repeatedNote finds, among the newest of ids (a target's notes, oldest first), a note
// the caller wrote with this kind and body within graph.NoteRepeatWindow: a retried add.
// Notes are uuidv7, so the newest come last; the body is compared only when the rest match.
// A record is decoded only when it may hold this body (mayHold).
func (w *wtx) repeatedNote(ids []string, kind, body string) (*graph.Note, error) {
	quoted := plainQuoted(body)
	notes := w.b(m.BucketNotes)
	for i, seen := len(ids)-1, 0; i >= 0 && seen < graph.NoteRepeatScan; i, seen = i-1, seen+1 {
		local := noteLocal(ids[i])
		rec := notes.Get([]byte(local))
		if quoted != nil && !mayHold(rec, quoted) {
			continue
		}
		n, err := decodeRecord[graph.Note](w.tx, rec, local, "note")
		if err != nil {
			return nil, err
		}
		if n == nil || n.Author != w.actor || n.Kind != kind || len(n.Body) != len(body) {
			continue
		}
		if age := w.now.Sub(n.Time); age < 0 || age >= graph.NoteRepeatWindow {
			continue
		}
		if n.Body == body {
			n.Existed = true
			return n, nil
		}
	}
	return nil, nil
}

// plainQuoted is s between double quotes when no JSON encoder escapes any of its bytes
// (no quote, backslash or control byte), else nil.
func plainQuoted(s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return nil
		}
	}
	return append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"')
}

// mayHold says whether the JSON record rec may have the string quoted (plainQuoted) as
// a value. Without a backslash no string in rec is escaped, so each appears verbatim.
func mayHold(rec, quoted []byte) bool {
	return bytes.IndexByte(rec, '\\') >= 0 || bytes.Contains(rec, quoted)
}

// FindNoteByID reads one note by its key (the notes bucket is keyed by the note's uuid).
func (db *DB) FindNoteByID(ctx context.Context, id string) (*graph.Note, error) {
	t := strings.TrimSpace(id)
	if t == "" {
		return nil, graph.FieldErrorf(graph.EINVALID, "id", "no note id given; want note:<uuid>")
	}
	if graph.KindOf(t) == "" {
		t = "note:" + t
	}
	if graph.KindOf(t) != graph.KindNote {
		return nil, graph.FieldErrorf(graph.EINVALID, "id", "%q is not a note id; want note:<uuid>", id)
	}
	if err := graph.ValidateText("id", t, 1, 1024); err != nil {
		return nil, err
	}
	var out *graph.Note
	err := db.view(ctx, func(tx *bolt.Tx) error {
		n, err := getNote(tx, noteLocal(t))
		if err != nil {
			return err
		}
		if n == nil {
			return notFound(t, graph.KindNote, noteLocal(t))
		}
		out = n
		return nil
	})
	return out, err
}

func (db *DB) DeleteNote(ctx context.Context, id string) error {
	_, err := db.update(ctx, func(w *wtx) error {
		if graph.KindOf(id) == "" {
			id = "note:" + id
		}
		if graph.KindOf(id) != graph.KindNote {
			return graph.FieldErrorf(graph.EINVALID, "id", "%q is not a note id; want note:<uuid>", id)
		}
		return w.deleteNote(id)
	})
	return err
}

// FindNotes pages notes newest first: of one target (resolved) or of every node.
func (db *DB) FindNotes(ctx context.Context, f graph.NoteFilter) ([]*graph.Note, int, string, error) {
	first := graph.ClampFirst(f.First)
	after := noteLocal(f.After)
	out := []*graph.Note{}
	var total int
	var next string
	err := db.view(ctx, func(tx *bolt.Tx) error {
		if f.Target != "" {
			target, err := db.resolve(tx, f.Target)
			if err != nil {
				return err
			}
			all, err := notesOf(tx, target, f.Kind, 0)
			if err != nil {
				return err
			}
			total = len(all)
			for _, n := range all {
				if after != "" && noteLocal(n.ID) >= after {
					continue
				}
				if len(out) == first {
					next = out[len(out)-1].ID
					break
				}
				out = append(out, n)
			}
			return nil
		}
		if f.Kind == "" {
			total = int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountNotes)))
		}
		c := tx.Bucket(m.BucketNotes).Cursor()
		k, v := c.Last()
		if after != "" {
			if k2, _ := c.Seek([]byte(after)); k2 == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			var n graph.Note
			if err := json.Unmarshal(v, &n); err != nil {
				return internal("decode note", err)
			}
			if f.Kind != "" && n.Kind != f.Kind {
				continue
			}
			if len(out) == first {
				next = out[len(out)-1].ID
				if f.Kind == "" {
					break
				}
				total++
				continue
			}
			out = append(out, &n)
		}
		if f.Kind != "" {
			total += len(out)
		}
		return nil
	})
	return out, total, next, err
}
