package store

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/devgraph/devgraph/graph"
	m "github.com/devgraph/devgraph/migrations"

	bolt "go.etcd.io/bbolt"
)

func (db *DB) FindRobotRecords(ctx context.Context) ([]*graph.RobotRecord, error) {
	out := []*graph.RobotRecord{}
	err := db.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(m.BucketRobots).ForEach(func(k, v []byte) error {
			var r struct {
				graph.RobotRecord
				Battery *float64 `json:"battery"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return internal("decode robot "+string(k), err)
			}
			r.RobotRecord.Battery = 100 // saved before the battery was kept: runs started full
			if r.Battery != nil {
				r.RobotRecord.Battery = *r.Battery
			}
			if db.opts.Fleet {
				// The robots this host drives, named as its sources name them.
				h, ref := graph.SplitHost(r.Ref)
				if h != db.host {
					return nil
				}
				r.RobotRecord.Ref = ref
			}
			out = append(out, &r.RobotRecord)
			return nil
		})
	})
	return out, err
}

func (db *DB) SaveRobot(ctx context.Context, rec *graph.RobotRecord, action string, before, after any) error {
	if rec == nil || rec.Ref == "" {
		return graph.FieldErrorf(graph.EINVALID, "ref", "robot record without a ref")
	}
	if action != "" && !strings.HasPrefix(action, "robot.") {
		return graph.FieldErrorf(graph.EINVALID, "action", "robot action %q: want robot.*", action)
	}
	if rec.Host == "" || db.opts.Fleet {
		cp := *rec
		if cp.Host == "" {
			cp.Host = db.host // the robots this process drives are attached here
		}
		if db.opts.Fleet {
			cp.Ref = graph.QualifyHost(cp.Host, cp.Ref) // as its device's ref: studio-a/robot:scout
		}
		rec = &cp
	}
	_, err := db.update(ctx, func(w *wtx) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := w.put(m.BucketRobots, []byte(rec.Ref), b); err != nil {
			return err
		}
		if action == "" {
			return nil
		}
		target := graph.DeviceID(graph.QualifyHost(hostIf(db.opts.Fleet, rec.Host), "robot:"+rec.Serial))
		if k := w.b(m.BucketRefs).Get([]byte(rec.Ref)); k != nil {
			target = graph.DeviceID(string(k))
		}
		return w.emit(action, target, before, after, ownerOf(w.tx, target))
	})
	return err
}

// hostIf is host on a fleet, else "" (a file's keys carry no host).
func hostIf(fleet bool, host string) string {
	if fleet {
		return host
	}
	return ""
}
