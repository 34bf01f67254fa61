package store

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
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

func (w *wtx) putNote(n *graph.Note) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return w.put(m.BucketNotes, []byte(noteLocal(n.ID)), b)
}

func (w *wtx) deleteNote(id string) error {
	n, err := getNote(w.tx, noteLocal(id))
	if err != nil {
		return err
	}
	if n == nil {
		return graph.Errorf(graph.ENOTFOUND, "%s not found; list notes with devgraph show <target> or graph_browse", id)
	}
	if err := w.b(m.BucketNotes).Delete([]byte(noteLocal(id))); err != nil {
		return err
	}
	if err := w.b(m.BucketNotesBy).Delete(joinKey(n.Target, noteLocal(id))); err != nil {
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
	if err := w.putNote(&c); err != nil {
		return err
	}
	if err := w.b(m.BucketNotesBy).Put(joinKey(target, noteLocal(c.ID)), nil); err != nil {
		return err
	}
	w.count(m.CountNotes, 1)
	return w.emit(graph.ActNoteAdd, c.ID, nil, &c, target, ownerOf(w.tx, target))
}

func (w *wtx) moveNote(id, target string) error {
	n, err := getNote(w.tx, noteLocal(id))
	if err != nil || n == nil {
		return err
	}
	before, _ := json.Marshal(n)
	if err := w.b(m.BucketNotesBy).Delete(joinKey(n.Target, noteLocal(id))); err != nil {
		return err
	}
	old := n.Target
	n.Target = target
	if err := w.putNote(n); err != nil {
		return err
	}
	if err := w.b(m.BucketNotesBy).Put(joinKey(target, noteLocal(id)), nil); err != nil {
		return err
	}
	return w.emit(graph.ActNoteMove, n.ID, json.RawMessage(before), n, old, target)
}

func (db *DB) AddNote(ctx context.Context, c graph.NoteCreate) (*graph.Note, error) {
	var out *graph.Note
	_, err := db.update(ctx, func(w *wtx) error {
		target, err := resolve(w.tx, c.Target, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		kind := strings.ToLower(strings.TrimSpace(c.Kind))
		if kind == "" {
			kind = "info"
		}
		if !contains(graph.NoteKinds, kind) {
			return graph.FieldErrorf(graph.EINVALID, "kind", "note kind %q: want one of %s", c.Kind, strings.Join(graph.NoteKinds, ", "))
		}
		if err := graph.ValidateText("body", c.Body, 1, graph.MaxNoteLen); err != nil {
			return err
		}
		if strings.TrimSpace(c.Body) == "" {
			return graph.FieldErrorf(graph.EINVALID, "body", "body is blank; write the note's text")
		}
		n := &graph.Note{ID: graph.NewNoteID(), Target: target, Kind: kind, Body: c.Body, Author: w.actor, Time: w.now}
		if err := w.putNote(n); err != nil {
			return err
		}
		if err := w.b(m.BucketNotesBy).Put(joinKey(target, noteLocal(n.ID)), nil); err != nil {
			return err
		}
		w.count(m.CountNotes, 1)
		out = n
		return w.emit(graph.ActNoteAdd, n.ID, nil, n, target, ownerOf(w.tx, target))
	})
	return out, err
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
			target, err := resolve(tx, f.Target)
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

// ---- tags -----------------------------------------------------------------------------

func (db *DB) UpdateTags(ctx context.Context, target string, add, remove []string) ([]string, error) {
	var out []string
	_, err := db.update(ctx, func(w *wtx) error {
		full, err := resolve(w.tx, target, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
		}
		adds, err := normalizeTags(add)
		if err != nil {
			return err
		}
		rems, err := normalizeTags(remove)
		if err != nil {
			return err
		}
		for _, t := range adds {
			if contains(rems, t) {
				return graph.FieldErrorf(graph.EINVALID, "tags", "tag %s is both added and removed; give it once", t)
			}
		}
		switch graph.KindOf(full) {
		case graph.KindIdentity:
			id, err := getIdentity(w.tx, slugOf(full))
			if err != nil {
				return err
			}
			n := len(w.r.events)
			if err := w.removeTags(full, &id.Tags, rems); err != nil {
				return err
			}
			if err := w.addTags(full, &id.Tags, adds); err != nil {
				return err
			}
			out = id.Tags
			if len(w.r.events) == n {
				return nil // nothing changed
			}
			id.UpdatedAt = w.now
			return w.putIdentity(id)
		default:
			d, err := getDevice(w.tx, strings.TrimPrefix(full, "device:"))
			if err != nil {
				return err
			}
			if d.Tags == nil {
				d.Tags = []string{}
			}
			if err := w.removeTags(full, &d.Tags, rems); err != nil {
				return err
			}
			if err := w.addTags(full, &d.Tags, adds); err != nil {
				return err
			}
			out = d.Tags
			return w.putDevice(d)
		}
	})
	return out, err
}

func (db *DB) FindTags(ctx context.Context, f graph.TagFilter) ([]graph.TagCount, error) {
	counts := map[string]int{}
	ns := strings.ToLower(strings.TrimSpace(f.Namespace))
	err := db.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(m.BucketTagCounts).Cursor()
		var p []byte
		if ns != "" {
			p = []byte(ns + ":")
		}
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			counts[string(k)] = int(m.ReadU64(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	seeded := map[string]bool{}
	for _, t := range graph.SeedTags {
		seeded[t] = true
		if !f.InUse && (ns == "" || strings.HasPrefix(t, ns+":")) {
			if _, ok := counts[t]; !ok {
				counts[t] = 0
			}
		}
	}
	out := make([]graph.TagCount, 0, len(counts))
	for t, n := range counts {
		out = append(out, graph.TagCount{Tag: t, Count: n, Seeded: seeded[t]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out, nil
}

func (db *DB) FindTagged(ctx context.Context, tag string, first int, after string) ([]string, int, string, error) {
	first = graph.ClampFirst(first)
	t, err := graph.NormalizeTag(strings.TrimPrefix(tag, "tag:"))
	if err != nil {
		return nil, 0, "", err
	}
	out := []string{}
	var total int
	var next string
	err = db.view(ctx, func(tx *bolt.Tx) error {
		total = int(m.ReadU64(tx.Bucket(m.BucketTagCounts).Get([]byte(t))))
		p := prefixKey(t)
		c := tx.Bucket(m.BucketTags).Cursor()
		k, _ := c.Seek(p)
		if after != "" {
			k, _ = c.Seek(joinKey(t, after))
			if k != nil && string(k[len(p):]) == after {
				k, _ = c.Next()
			}
		}
		for ; k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			if len(out) == first {
				next = out[len(out)-1]
				break
			}
			out = append(out, string(k[len(p):]))
		}
		return nil
	})
	return out, total, next, err
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
