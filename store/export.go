package store

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

// exportLine is one JSON line of an export. Type is one of header, identity, device, note,
// robot, relation, event; events carry the other targets they are indexed under in Also.
type exportLine struct {
	Type       string             `json:"type"`
	Format     string             `json:"format,omitempty"`
	Version    int                `json:"version,omitempty"`
	Exported   *time.Time         `json:"exported_at,omitempty"`
	Checkpoint *exportHead        `json:"checkpoint,omitempty"`
	Identity   *graph.Identity    `json:"identity,omitempty"`
	Device     *graph.Device      `json:"device,omitempty"`
	Note       *graph.Note        `json:"note,omitempty"`
	Robot      *graph.RobotRecord `json:"robot,omitempty"`
	Relation   *graph.Relation    `json:"relation,omitempty"`
	Event      *graph.Event       `json:"event,omitempty"`
	Also       []string           `json:"also,omitempty"`
}

type exportHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// Export writes the header, every record, then the changelog oldest first, as JSON lines,
// all from one read transaction.
func (db *DB) Export(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	err := db.view(ctx, func(tx *bolt.Tx) error {
		now := db.now().UTC()
		hdr := exportLine{Type: "header", Format: m.FormatName, Version: db.version, Exported: &now}
		if cp, ok := m.DecodeHead(tx.Bucket(m.BucketMeta).Get(m.KeyCheckpoint)); ok {
			hdr.Checkpoint = &exportHead{cp.Seq, hex.EncodeToString(cp.Hash[:])}
		}
		if err := enc.Encode(hdr); err != nil {
			return err
		}
		each := func(bucket []byte, fn func(v []byte) (exportLine, error)) error {
			c := tx.Bucket(bucket).Cursor()
			n := 0
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if n++; n%4096 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				l, err := fn(v)
				if err == nil && !utf8.Valid(v) {
					err = errNotUTF8
				}
				if err != nil { // fn only decodes what the file holds
					return damagedFile(db.path, fmt.Sprintf("is damaged: the stored %s record %q does not decode (%s)", bucket, k, firstLine(err.Error())))
				}
				if err := enc.Encode(l); err != nil {
					return err
				}
			}
			return nil
		}
		if err := each(m.BucketIdentities, func(v []byte) (exportLine, error) {
			var x graph.Identity
			return exportLine{Type: "identity", Identity: &x}, json.Unmarshal(v, &x)
		}); err != nil {
			return err
		}
		if err := each(m.BucketDevices, func(v []byte) (exportLine, error) {
			var x graph.Device
			return exportLine{Type: "device", Device: &x}, json.Unmarshal(v, &x)
		}); err != nil {
			return err
		}
		if err := each(m.BucketNotes, func(v []byte) (exportLine, error) {
			var x graph.Note
			return exportLine{Type: "note", Note: &x}, json.Unmarshal(v, &x)
		}); err != nil {
			return err
		}
		if err := each(m.BucketRobots, func(v []byte) (exportLine, error) {
			var x graph.RobotRecord
			return exportLine{Type: "robot", Robot: &x}, json.Unmarshal(v, &x)
		}); err != nil {
			return err
		}
		if tx.Bucket(m.BucketRelations) != nil {
			if err := each(m.BucketRelations, func(v []byte) (exportLine, error) {
				var x graph.Relation
				return exportLine{Type: "relation", Relation: &x}, json.Unmarshal(v, &x)
			}); err != nil {
				return err
			}
		}
		// the extra targets each event is indexed under (its own target is implied)
		also := map[uint64][]string{}
		ic := tx.Bucket(m.BucketEvTarget).Cursor()
		for k, _ := ic.First(); k != nil; k, _ = ic.Next() {
			if len(k) < 9 {
				continue
			}
			seq, target := m.ReadU64(k[len(k)-8:]), k[:len(k)-9]
			h, err := eventAt(tx, seq)
			if err != nil {
				return err
			}
			if h != nil && h.Target != string(target) {
				also[seq] = append(also[seq], string(target))
			}
		}
		c := tx.Bucket(m.BucketEvents).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			e, err := m.DecodeEvent(m.ReadU64(k), v)
			if err != nil {
				return damagedFile(db.path, "is damaged: "+err.Error())
			}
			l := exportLine{Type: "event", Event: e}
			for _, t := range also[e.Seq] {
				if t != e.Target {
					l.Also = append(l.Also, t)
				}
			}
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
