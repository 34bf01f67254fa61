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

// The name index's fast path (graph.NameIndex): search.Finder builds and follows its
// index from these reads instead of decoding every identity and the newest events.

var _ graph.NameIndex = (*DB)(nil)

// headSeq is the changelog head's seq in tx (0 for an empty log).
func headSeq(tx *bolt.Tx) uint64 {
	h, _ := m.DecodeHead(tx.Bucket(m.BucketMeta).Get(m.KeyHead))
	return h.Seq
}

// EachIdentityName reads the names bucket (lower(name) 0x00 slug). The ids ("identity:"
// slug) and lowercased names are cut from strings of nameChunk bytes that hold many of
// them: at 100,000 identities a few dozen allocations instead of 100,000 make a
// server's first find after start come sooner (fewer pages to fault in, fewer objects
// for the collector).
func (db *DB) EachIdentityName(ctx context.Context, size func(total int), fn func(key graph.NameKey)) (uint64, error) {
	var head uint64
	err := db.view(ctx, func(tx *bolt.Tx) error {
		head = headSeq(tx)
		size(int(m.ReadU64(tx.Bucket(m.BucketMeta).Get(m.CountIdentities))))
		var chunk strings.Builder // never grown: the strings cut from it stay as they are
		c := tx.Bucket(m.BucketNames).Cursor()
		n := 0
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			i := bytes.LastIndexByte(k, 0)
			if i < 0 {
				continue
			}
			if n++; n%8192 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if need := len("identity:") + len(k) - 1; chunk.Cap()-chunk.Len() < need {
				chunk = strings.Builder{}
				chunk.Grow(max(need, nameChunk))
			}
			start := chunk.Len()
			chunk.WriteString("identity:")
			chunk.Write(k[i+1:])
			mid := chunk.Len()
			chunk.Write(k[:i])
			s := chunk.String()
			fn(graph.NameKey{ID: s[start:mid], Lower: s[mid:]})
		}
		return nil
	})
	return head, err
}

// nameChunk is the size of the strings EachIdentityName cuts ids and names from.
const nameChunk = 64 << 10

// IdentityDisplayNames decodes only the name of each identity record.
func (db *DB) IdentityDisplayNames(ctx context.Context, ids []string) ([]string, error) {
	out := make([]string, len(ids))
	err := db.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(m.BucketIdentities)
		for i, id := range ids {
			v := b.Get([]byte(slugOf(id)))
			if v == nil {
				continue
			}
			var rec struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(v, &rec); err != nil {
				return undecodable(db.path, err)
			}
			out[i] = rec.Name
		}
		return nil
	})
	return out, err
}

// NodeTags reads the tags bucket (tag 0x00 node → nil).
func (db *DB) NodeTags(ctx context.Context) (map[string][]string, uint64, error) {
	var out map[string][]string
	var head uint64
	err := db.view(ctx, func(tx *bolt.Tx) error {
		head = headSeq(tx)
		meta := tx.Bucket(m.BucketMeta)
		out = make(map[string][]string, m.ReadU64(meta.Get(m.CountIdentities))+m.ReadU64(meta.Get(m.CountDevices)))
		tags := map[string]string{} // one string per distinct tag
		n := 0
		c := tx.Bucket(m.BucketTags).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				continue
			}
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			tag, ok := tags[string(k[:i])]
			if !ok {
				tag = string(k[:i])
				tags[tag] = tag
			}
			if t, ok := out[string(k[i+1:])]; ok {
				out[string(k[i+1:])] = append(t, tag)
			} else {
				out[string(k[i+1:])] = append(make([]string, 0, 4), tag)
			}
		}
		return nil
	})
	// Each node's tags came in key order (tag 0x00 node), which is the tags' sorted order.
	return out, head, err
}

// ChangesSince walks the events after seq by their keys, reading each one's action and
// target only.
func (db *DB) ChangesSince(ctx context.Context, seq uint64, max int) ([]graph.NodeChange, uint64, bool, error) {
	var out []graph.NodeChange
	var head uint64
	complete := true
	err := db.view(ctx, func(tx *bolt.Tx) error {
		head = headSeq(tx)
		if head <= seq {
			return nil
		}
		if head-seq > uint64(max) {
			complete = false
			return nil
		}
		c := tx.Bucket(m.BucketEvents).Cursor()
		want := seq + 1
		for k, v := c.Seek(m.U64(want)); k != nil; k, v = c.Next() {
			s := m.ReadU64(k)
			if s != want { // pruned (or a gap): the caller reads everything afresh
				complete = false
				return nil
			}
			want++
			action, target, err := m.EventActionTarget(v)
			if err != nil {
				return damaged(s, err)
			}
			out = append(out, graph.NodeChange{Seq: s, Action: string(action), Target: string(target)})
		}
		if want != head+1 {
			complete = false
		}
		return nil
	})
	if !complete {
		out = nil
	}
	return out, head, complete, err
}
