package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// eventAt decodes the header of the event stored under seq (nil when absent).
func eventAt(tx *bolt.Tx, seq uint64) (*m.EventHeader, error) {
	v := tx.Bucket(m.BucketEvents).Get(m.U64(seq))
	if v == nil {
		return nil, nil
	}
	h, err := m.DecodeEventHeader(seq, v)
	if err != nil {
		return nil, damaged(seq, err)
	}
	return h, nil
}

// damaged reports an unreadable changelog record as something a person can act on.
func damaged(seq uint64, err error) error {
	return &graph.Error{Code: graph.EINVALID, Message: fmt.Sprintf("changelog event %d is damaged (%v); run devgraph changelog verify and restore from a backup", seq, err)}
}

// lastEvent finds the newest event about target with the given action (nil when none).
func lastEvent(tx *bolt.Tx, target, action string) (*graph.Event, error) {
	var out *graph.Event
	err := eachTargetEvent(tx, target, math.MaxUint64, func(h *m.EventHeader) (bool, error) {
		if h.Action != action {
			return true, nil
		}
		e, err := h.Body()
		out = e
		return false, err
	})
	return out, err
}

// eachTargetEvent walks target's events newest first, below seq `below`, until fn says stop.
func eachTargetEvent(tx *bolt.Tx, target string, below uint64, fn func(*m.EventHeader) (bool, error)) error {
	p := prefixKey(target)
	c := tx.Bucket(m.BucketEvTarget).Cursor()
	k, _ := c.Seek(append(append([]byte(nil), p...), m.U64(below)...))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, p) && len(k) == len(p)+8; k, _ = c.Prev() {
		seq := m.ReadU64(k[len(p):])
		h, err := eventAt(tx, seq)
		if err != nil {
			return err
		}
		if h == nil {
			return nil // pruned: everything older is gone too
		}
		more, err := fn(h)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// FindEvents returns events newest first with the cursor of the next page. The cursor is
// the seq of the last event returned; Since stops the walk at the first older event
// (events are written in time order).
func (db *DB) FindEvents(ctx context.Context, f graph.EventFilter) ([]*graph.Event, string, error) {
	first := graph.ClampFirst(f.First)
	below := uint64(math.MaxUint64)
	if f.After != "" {
		n, err := strconv.ParseUint(strings.TrimPrefix(f.After, "event:"), 10, 64)
		if err != nil {
			return nil, "", graph.FieldErrorf(graph.EINVALID, "after", "cursor %q is not one this listing gave out; pass the next cursor of the previous page", f.After)
		}
		below = n
	}
	for field, g := range map[string]string{"actor": f.Actor, "action": f.Action} {
		if _, err := path.Match(g, ""); err != nil {
			return nil, "", graph.FieldErrorf(graph.EINVALID, field, "%s glob %q is malformed; use * and ? as in mcp:* or hint.*", field, g)
		}
	}
	out := []*graph.Event{}
	var next string
	err := db.view(ctx, func(tx *bolt.Tx) error {
		n := 0
		keep := func(h *m.EventHeader) (bool, error) {
			n++
			if n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
			}
			if !f.Since.IsZero() && h.Time.Before(f.Since) {
				return false, nil
			}
			if !f.Until.IsZero() && h.Time.After(f.Until) {
				return true, nil
			}
			if f.Actor != "" {
				ok, _ := path.Match(f.Actor, h.Actor)
				if !ok && db.opts.Fleet {
					// On a fleet actors carry their host: cli:alice is cli:alice@ any host.
					ok, _ = path.Match(f.Actor+"@*", h.Actor)
				}
				if !ok {
					return true, nil
				}
			}
			if f.Action != "" {
				if ok, _ := path.Match(f.Action, h.Action); !ok {
					return true, nil
				}
			}
			if len(out) == first {
				next = strconv.FormatUint(out[len(out)-1].Seq, 10)
				return false, nil
			}
			e, err := h.Body()
			if err != nil {
				return false, damaged(h.Seq, err)
			}
			out = append(out, e)
			return true, nil
		}
		if f.Target != "" {
			target := f.Target
			if graph.KindOf(target) == graph.KindDevice && db.opts.Fleet {
				if full, err := db.resolve(tx, target); err == nil {
					target = full // a bare device id on a fleet: this host's
				}
			}
			if graph.KindOf(target) == "" && target != graph.ChangelogTarget {
				if full, err := db.resolve(tx, target); err == nil {
					target = full
				} else {
					target = graph.IdentityID(target) // may be deleted: its events remain
				}
			}
			return eachTargetEvent(tx, target, below, keep)
		}
		c := tx.Bucket(m.BucketEvents).Cursor()
		k, _ := c.Seek(m.U64(below))
		var v []byte
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil; k, v = c.Prev() {
			h, err := m.DecodeEventHeader(m.ReadU64(k), v)
			if err != nil {
				return damaged(m.ReadU64(k), err)
			}
			more, err := keep(h)
			if err != nil || !more {
				return err
			}
		}
		return nil
	})
	return out, next, err
}

var zeroHash [32]byte

// VerifyChangelog walks the chain from the checkpoint (or the start) to the head and names
// the first event that is missing, altered or out of place, and a cut-off tail.
func (db *DB) VerifyChangelog(ctx context.Context) (*graph.VerifyReport, error) {
	r := &graph.VerifyReport{}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		meta := tx.Bucket(m.BucketMeta)
		head, hasHead := m.DecodeHead(meta.Get(m.KeyHead))
		cp, hasCP := m.DecodeHead(meta.Get(m.KeyCheckpoint))
		prev := zeroHash
		expect := uint64(1)
		if hasCP {
			prev, expect = cp.Hash, cp.Seq+1
			r.Checkpoint = fmt.Sprintf("%d:%s", cp.Seq, hex.EncodeToString(cp.Hash[:]))
		}
		r.FirstSeq = expect
		broken := func(seq uint64, id, problem string) {
			if r.Problem == "" {
				r.BrokenSeq, r.BrokenID, r.Problem = seq, id, problem
			}
		}
		c := tx.Bucket(m.BucketEvents).Cursor()
		var lastSeq uint64
		var lastHash [32]byte
		if hasCP {
			lastSeq, lastHash = cp.Seq, cp.Hash
		}
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if r.Checked%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			seq := m.ReadU64(k)
			if len(k) != 8 {
				broken(0, "", fmt.Sprintf("a record with a malformed key %x sits in the changelog", k))
				break
			}
			if seq != expect {
				if seq < expect {
					broken(seq, "", fmt.Sprintf("event %d is older than the checkpoint %d but still stored", seq, expect-1))
				} else {
					broken(expect, "", fmt.Sprintf("event %d is missing (the next stored event is %d)", expect, seq))
				}
				break
			}
			h, err := m.DecodeEventHeader(seq, v)
			if err != nil {
				broken(seq, "", fmt.Sprintf("event %d cannot be decoded: %v", seq, err))
				break
			}
			e, err := h.Body()
			if err != nil {
				broken(seq, h.ID, fmt.Sprintf("event %d (%s) cannot be decoded: %v", seq, h.ID, err))
				break
			}
			r.Checked++
			if e.PrevHash != hex.EncodeToString(prev[:]) {
				broken(seq, e.ID, fmt.Sprintf("event %d (%s) does not link to the event before it: prev_hash %.12s…, expected %.12s…", seq, e.ID, e.PrevHash, hex.EncodeToString(prev[:])))
				break
			}
			sum := graph.ChainHash(prev, e)
			if hex.EncodeToString(sum[:]) != e.Hash {
				broken(seq, e.ID, fmt.Sprintf("event %d (%s, %s on %s) was altered: its content no longer matches its hash", seq, e.ID, e.Action, e.Target))
				break
			}
			prev, lastSeq, lastHash = sum, seq, sum
			expect++
		}
		r.HeadSeq, r.HeadHash = lastSeq, hex.EncodeToString(lastHash[:])
		if r.Problem == "" {
			switch {
			case !hasHead && lastSeq > 0 && lastSeq != cp.Seq:
				broken(lastSeq, "", "the file's head record is missing: the chain's end cannot be confirmed")
			case hasHead && head.Seq > lastSeq:
				broken(lastSeq+1, "", fmt.Sprintf("the changelog was cut off: the head says it ends at event %d but the last stored event is %d (events %d–%d are missing)", head.Seq, lastSeq, lastSeq+1, head.Seq))
			case hasHead && head.Seq < lastSeq:
				broken(head.Seq+1, "", fmt.Sprintf("events after the head (%d) were added outside devgraph: the last stored event is %d", head.Seq, lastSeq))
			case hasHead && head.Hash != lastHash:
				broken(lastSeq, "", fmt.Sprintf("the head's hash does not match event %d's", lastSeq))
			}
		}
		if hasCP {
			p, err := lastPrune(tx)
			if err != nil {
				broken(0, "", graph.ErrorMessage(err))
			} else if p != nil {
				r.PrunedBy = p
				if p.LastSeq != cp.Seq || p.Checkpoint != hex.EncodeToString(cp.Hash[:]) {
					broken(cp.Seq, "", fmt.Sprintf("the checkpoint (event %d) is not the one the last prune recorded (event %d, %s at seq %d): events were cut outside devgraph", cp.Seq, p.LastSeq, p.Actor, p.EventSeq))
				}
			}
		}
		r.OK = r.Problem == ""
		if hasHead {
			r.HeadSeq, r.HeadHash = head.Seq, hex.EncodeToString(head.Hash[:])
		}
		return nil
	})
	return r, err
}

// PruneChangelog drops events older than before, leaving a checkpoint (seq and hash of the
// last dropped event) from which the rest verifies, and records the cut as a
// changelog.prune event in the same transaction. The newest event always stays. Only a
// caller trusted with the audit trail may prune (graph.MayPrune), and never with a before
// in the future, which would drop events written after the caller chose to prune.
func (db *DB) PruneChangelog(ctx context.Context, before time.Time) (int, error) {
	if !graph.MayPrune(ctx) {
		return 0, graph.Errorf(graph.EFORBIDDEN, "pruning the changelog needs a token marked prune: end its line in the server's token file with the word prune (name token prune) and restart the server, or run devgraph changelog prune on the server's machine as its user")
	}
	if before.IsZero() {
		return 0, graph.FieldErrorf(graph.EINVALID, "before", "give the time before which events are dropped, e.g. 2026-01-01 or 720h")
	}
	if now := db.now(); before.After(now) {
		return 0, graph.FieldErrorf(graph.EINVALID, "before", "before %s is in the future (now %s); a prune drops only events older than a past time, e.g. 720h ago or 2026-01-01",
			before.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	var n int
	_, err := db.update(ctx, func(w *wtx) error {
		n = 0
		events := w.b(m.BucketEvents)
		var first, last *m.EventHeader
		var dead [][]byte
		c := events.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			h, err := m.DecodeEventHeader(m.ReadU64(k), v)
			if err != nil {
				return graph.Errorf(graph.EINVALID, "the changelog is damaged at event %d; run devgraph changelog verify", m.ReadU64(k))
			}
			if !h.Time.Before(before) || h.Seq == w.head.Seq {
				break // the newest event always stays, so the head stays checkable
			}
			if first == nil {
				first = h
			}
			last = h
			dead = append(dead, append([]byte(nil), k...))
		}
		if last == nil {
			return nil
		}
		for _, k := range dead {
			if err := w.delete(m.BucketEvents, k); err != nil {
				return err
			}
		}
		var hash [32]byte
		hb, _ := hex.DecodeString(last.Hash)
		copy(hash[:], hb)
		if err := w.put(m.BucketMeta, m.KeyCheckpoint, m.EncodeHead(m.Head{Seq: last.Seq, Hash: hash})); err != nil {
			return err
		}
		// drop index entries of pruned events
		idx := w.b(m.BucketEvTarget)
		var stale [][]byte
		ic := idx.Cursor()
		for k, _ := ic.First(); k != nil; k, _ = ic.Next() {
			if len(k) >= 9 && m.ReadU64(k[len(k)-8:]) <= last.Seq {
				stale = append(stale, append([]byte(nil), k...))
			}
		}
		for _, k := range stale {
			if err := w.delete(m.BucketEvTarget, k); err != nil {
				return err
			}
		}
		n = len(dead)
		w.count(m.CountEvents, -int64(n))
		return w.emit(graph.ActChangelogPrune, graph.ChangelogTarget, nil, graph.Prune{
			FirstSeq: first.Seq, LastSeq: last.Seq, Checkpoint: hex.EncodeToString(hash[:]),
			Dropped: n, Before: before.UTC(),
		})
	})
	return n, err
}

// lastPrune reads the newest changelog.prune event (nil when none is kept).
func lastPrune(tx *bolt.Tx) (*graph.PruneReport, error) {
	e, err := lastEvent(tx, graph.ChangelogTarget, graph.ActChangelogPrune)
	if err != nil || e == nil {
		return nil, err
	}
	r := &graph.PruneReport{EventSeq: e.Seq, Actor: e.Actor, Time: e.Time}
	if err := json.Unmarshal(e.After, &r.Prune); err != nil {
		return nil, damaged(e.Seq, err)
	}
	return r, nil
}

// body marshals an event body: nil stays absent, json.RawMessage and []byte are kept.
func body(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	return json.Marshal(v)
}

// emit appends one changelog event for target, indexed under target and any related ids.
func (w *wtx) emit(action, target string, before, after any, related ...string) error {
	bb, err := body(before)
	if err != nil {
		return err
	}
	ab, err := body(after)
	if err != nil {
		return err
	}
	e := &graph.Event{
		Seq: w.head.Seq + 1, ID: graph.NewUUIDv7(), Time: w.now, Actor: w.actor, Action: action,
		Target: target, Before: bb, After: ab, Message: w.msg, RequestID: w.reqID,
	}
	return w.appendEvent(e, related...)
}

// appendEvent chains e (its Seq already set to head+1) and stores it.
func (w *wtx) appendEvent(e *graph.Event, related ...string) error {
	if e.Seq != w.head.Seq+1 {
		return fmt.Errorf("event seq %d does not follow head %d", e.Seq, w.head.Seq)
	}
	e.PrevHash = hex.EncodeToString(w.head.Hash[:])
	sum := graph.ChainHash(w.head.Hash, e)
	e.Hash = hex.EncodeToString(sum[:])
	if err := w.putEvent(e, related...); err != nil {
		return err
	}
	w.head = m.Head{Seq: e.Seq, Hash: sum}
	if w.r != nil {
		w.r.events = append(w.r.events, e)
	}
	return nil
}

func (w *wtx) putEvent(e *graph.Event, related ...string) error {
	return w.putEventAt(e, append([]string{e.Target}, related...))
}

// putEventAt stores e, indexed under each of targets (e's own target among them, or in
// its place: a qualifying import indexes an event under its targets' qualified ids).
func (w *wtx) putEventAt(e *graph.Event, targets []string) error {
	encode := m.EncodeEvent
	if w.db.version == 1 {
		encode = m.EncodeEventV1 // only fixture generation writes version-1 files
	}
	rec, err := encode(e)
	if err != nil {
		return err
	}
	key := m.U64(e.Seq)
	if err := w.put(m.BucketEvents, key, rec); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if err := w.put(m.BucketEvTarget, joinKey(t, string(key)), nil); err != nil {
			return err
		}
	}
	w.count(m.CountEvents, 1)
	return nil
}
