package store

import (
	"bytes"
	"context"
	"sort"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// tagBody is the before/after of tag.* events.
type tagBody struct {
	Tag string `json:"tag"`
}

// addTags adds normalised tags to a node's tag list (the caller saves the node), indexing
// them and writing tag.add for each new one. Linear in the tags held and added.
func (w *wtx) addTags(node string, tags *[]string, add []string) error {
	if len(add) == 0 {
		return nil
	}
	held := make(map[string]bool, len(*tags)+len(add))
	for _, t := range *tags {
		held[t] = true
	}
	for _, t := range add {
		if held[t] {
			continue
		}
		held[t] = true
		*tags = append(*tags, t)
		if err := w.put(m.BucketTags, joinKey(t, node), nil); err != nil {
			return err
		}
		if err := w.bumpTag(t, 1); err != nil {
			return err
		}
		if err := w.emit(graph.ActTagAdd, node, nil, tagBody{t}); err != nil {
			return err
		}
	}
	sort.Strings(*tags)
	return nil
}

// removeTags removes normalised tags from a node's tag list, writing tag.remove for each
// one it held. Linear in the tags held and removed.
func (w *wtx) removeTags(node string, tags *[]string, remove []string) error {
	if len(remove) == 0 {
		return nil
	}
	held := make(map[string]bool, len(*tags))
	for _, t := range *tags {
		held[t] = true
	}
	gone := make(map[string]bool, len(remove))
	for _, t := range remove {
		if !held[t] || gone[t] {
			continue
		}
		gone[t] = true
		if err := w.delete(m.BucketTags, joinKey(t, node)); err != nil {
			return err
		}
		if err := w.bumpTag(t, -1); err != nil {
			return err
		}
		if err := w.emit(graph.ActTagRemove, node, tagBody{t}, nil); err != nil {
			return err
		}
	}
	if len(gone) > 0 {
		kept := (*tags)[:0:0]
		for _, t := range *tags {
			if !gone[t] {
				kept = append(kept, t)
			}
		}
		*tags = kept
	}
	return nil
}

func (w *wtx) bumpTag(t string, d int64) error {
	if w.tagDelta != nil {
		w.tagDelta[t] += d
		return nil
	}
	n := int64(m.ReadU64(w.b(m.BucketTagCounts).Get([]byte(t)))) + d
	if n <= 0 {
		return w.delete(m.BucketTagCounts, []byte(t))
	}
	return w.put(m.BucketTagCounts, []byte(t), m.U64(uint64(n)))
}

func (w *wtx) indexTags(node string, tags []string) error {
	for _, t := range tags {
		if err := w.put(m.BucketTags, joinKey(t, node), nil); err != nil {
			return err
		}
		if err := w.bumpTag(t, 1); err != nil {
			return err
		}
	}
	return nil
}

// UpdateTags checks and normalises the change (graph.NormalizeTagOps: the per-call caps,
// linear de-duplication) before its transaction begins, so an oversized call never holds
// the writer.
func (db *DB) UpdateTags(ctx context.Context, target string, add, remove []string) ([]string, error) {
	adds, rems, err := graph.NormalizeTagOps(add, remove)
	if err != nil {
		return nil, err
	}
	var out []string
	_, err = db.update(ctx, func(w *wtx) error {
		full, err := w.db.resolve(w.tx, target, graph.KindIdentity, graph.KindDevice)
		if err != nil {
			return err
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
