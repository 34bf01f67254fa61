package store

import (
	"bytes"
	"context"
	"fmt"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// hintBody is the before/after of hint.* events.
type hintBody struct {
	Kind     graph.FingerprintKind `json:"kind"`
	Value    string                `json:"value"`
	Identity string                `json:"identity,omitempty"` // hint.move: the holder
}

// holders returns the identity ids holding f, from the hint index.
func holders(tx *bolt.Tx, f graph.Fingerprint) []string {
	var out []string
	p := prefixKey(string(f.Kind), f.Value)
	c := tx.Bucket(m.BucketHints).Cursor()
	for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
		out = append(out, string(k[len(p):]))
	}
	return out
}

// addHints adds hints to id (the caller saves id). A unit hint held elsewhere is ECONFLICT
// unless move; with collect (dry runs) conflicts are returned instead of failing.
func (w *wtx) addHints(id *graph.Identity, fps []graph.Fingerprint, move, collect bool) (moved []graph.Fingerprint, conflicts []string, err error) {
	for _, f := range fps {
		if graph.ContainsFingerprint(id.Hints, f) {
			return nil, nil, graph.FieldErrorf(graph.EINVALID, "hints", "%s already holds hint %s (duplicate); nothing to add", id.ID, f)
		}
		var from string
		if f.Class() == graph.ClassUnit {
			for _, h := range holders(w.tx, f) {
				if h == id.ID {
					continue
				}
				if !move {
					msg := "hint " + f.String() + " is held by " + h + "; a unit fingerprint belongs to one identity: remove it there, merge the identities, or move it here"
					if collect {
						conflicts = append(conflicts, msg)
						continue
					}
					return nil, nil, graph.FieldErrorf(graph.ECONFLICT, "hints", "%s", msg).Next(
						graph.Step{Do: graph.StepShow, ID: h}, graph.PassStep("move", "true"))
				}
				holder, err := getIdentity(w.tx, slugOf(h))
				if err != nil {
					return nil, nil, err
				}
				if holder != nil {
					holder.Hints = removeFP(holder.Hints, f)
					holder.UpdatedAt = w.now
					if err := w.putIdentity(holder); err != nil {
						return nil, nil, err
					}
				}
				if err := w.delete(m.BucketHints, joinKey(string(f.Kind), f.Value, h)); err != nil {
					return nil, nil, err
				}
				from = h
			}
		}
		id.Hints = append(id.Hints, f)
		if err := w.put(m.BucketHints, joinKey(string(f.Kind), f.Value, id.ID), nil); err != nil {
			return nil, nil, err
		}
		if from != "" {
			moved = append(moved, f)
			err = w.emit(graph.ActHintMove, id.ID, hintBody{f.Kind, f.Value, from}, hintBody{f.Kind, f.Value, id.ID}, from)
		} else {
			err = w.emit(graph.ActHintAdd, id.ID, nil, hintBody{Kind: f.Kind, Value: f.Value})
		}
		if err != nil {
			return nil, nil, err
		}
	}
	graph.SortFingerprints(id.Hints)
	id.UpdatedAt = w.now
	return moved, conflicts, nil
}

func removeFP(fps []graph.Fingerprint, f graph.Fingerprint) []graph.Fingerprint {
	out := fps[:0:0]
	for _, x := range fps {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

func (w *wtx) removeHint(id *graph.Identity, f graph.Fingerprint) error {
	id.Hints = removeFP(id.Hints, f)
	id.UpdatedAt = w.now
	if err := w.delete(m.BucketHints, joinKey(string(f.Kind), f.Value, id.ID)); err != nil {
		return err
	}
	return w.emit(graph.ActHintRemove, id.ID, hintBody{Kind: f.Kind, Value: f.Value}, nil)
}

// callHints checks and normalises the hints one call names (graph.NormalizeHints: at
// most graph.MaxHintsPerCall, none twice), and at least one, before its transaction begins.
func callHints(fps []graph.Fingerprint) ([]graph.Fingerprint, error) {
	hints, err := graph.NormalizeHints(fps)
	if err != nil {
		return nil, err
	}
	if len(hints) == 0 {
		return nil, graph.FieldErrorf(graph.EINVALID, "hints", "no hints given; pass at least one kind=value")
	}
	return hints, nil
}

func (db *DB) AddHints(ctx context.Context, text string, fps []graph.Fingerprint, move bool) (*graph.Identity, error) {
	hints, err := callHints(fps)
	if err != nil {
		return nil, err
	}
	var out *graph.Identity
	_, err = db.update(ctx, func(w *wtx) error {
		id, err := w.mustIdentity(text)
		if err != nil {
			return err
		}
		if _, _, err := w.addHints(id, hints, move, false); err != nil {
			return err
		}
		out = id
		return w.putIdentity(id)
	})
	return out, err
}

func (db *DB) RemoveHints(ctx context.Context, text string, fps []graph.Fingerprint) (*graph.Identity, error) {
	hints, err := callHints(fps)
	if err != nil {
		return nil, err
	}
	var out *graph.Identity
	_, err = db.update(ctx, func(w *wtx) error {
		id, err := w.mustIdentity(text)
		if err != nil {
			return err
		}
		for _, f := range hints {
			if !graph.ContainsFingerprint(id.Hints, f) {
				return graph.FieldErrorf(graph.ENOTFOUND, "hints", "%s has no hint %s; %s", id.ID, f, hintsHeld(id.Hints))
			}
			if err := w.removeHint(id, f); err != nil {
				return err
			}
		}
		out = id
		return w.putIdentity(id)
	})
	return out, err
}

func (db *DB) FindHintHolders(ctx context.Context, fps []graph.Fingerprint) (map[graph.Fingerprint][]string, error) {
	out := make(map[graph.Fingerprint][]string, len(fps))
	err := db.view(ctx, func(tx *bolt.Tx) error {
		for _, f := range fps {
			if _, ok := out[f]; ok {
				continue
			}
			out[f] = holders(tx, f)
		}
		return nil
	})
	return out, err
}

// hintsHeld names an identity's hints for an error line: none, or the first ten and how
// many more.
func hintsHeld(hints []graph.Fingerprint) string {
	const shown = 10
	switch {
	case len(hints) == 0:
		return "it has no hints"
	case len(hints) <= shown:
		return "its hints are: " + graph.FormatFingerprints(hints)
	}
	return fmt.Sprintf("its hints are: %s and %d more", graph.FormatFingerprints(hints[:shown]), len(hints)-shown)
}
