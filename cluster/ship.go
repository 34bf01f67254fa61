package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// shipper writes records into the cluster for Load and Migrate: in Txns of at most batch
// operations and under NeedRequestBytes, each made only while guard holds (the caller's
// marker is there, nobody else writes), the last of which (finish) makes the result the
// graph. It counts the Txns made.
type shipper struct {
	ctx   context.Context
	cli   *clientv3.Client
	guard []clientv3.Cmp
	batch int
	// failed is the caller's error for a Txn about what that etcd did not take (err), or
	// whose guard failed (err nil).
	failed func(what string, err error) error
	// shipped, when set, is called after each Txn of records with how many records were
	// shipped so far; its error stops the shipping (progress lines, tests that stop one).
	shipped func(done int) error

	txns, done, size int
	ops              []clientv3.Op
}

// txn makes one Txn of ops if cmps hold, within 30 s.
func (s *shipper) txn(what string, cmps []clientv3.Cmp, ops []clientv3.Op) error {
	tctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	resp, err := s.cli.Txn(tctx).If(cmps...).Then(ops...).Commit()
	cancel()
	if err != nil {
		return s.failed(what, err)
	}
	if !resp.Succeeded {
		return s.failed(what, nil)
	}
	s.txns++
	return nil
}

// add queues one record's put or delete, shipping what is queued first when op would
// not fit beside it.
func (s *shipper) add(op clientv3.Op) error {
	n := len(op.KeyBytes()) + len(op.ValueBytes()) + 16
	if len(s.ops) == s.batch || s.size+n > NeedRequestBytes-64<<10 {
		if err := s.flush(); err != nil {
			return err
		}
	}
	s.ops = append(s.ops, op)
	s.size += n
	s.done++
	return nil
}

// flush ships what is queued in one guarded Txn.
func (s *shipper) flush() error {
	if len(s.ops) == 0 {
		return nil
	}
	err := s.txn(fmt.Sprintf("records %d..%d", s.done-len(s.ops)+1, s.done), s.guard, s.ops)
	s.ops, s.size = s.ops[:0], 0
	if err == nil && s.shipped != nil {
		err = s.shipped(s.done)
	}
	return err
}

// finish ships what is queued, then the Txn that ends the shipping: P/schema set to
// version, P/txn moved and markerKey removed, under the guard. An answer lost on the
// way may hide that commit, so when it fails P/schema and the marker are read again, and
// made says from them whether it was made after all.
func (s *shipper) finish(what string, t *Target, version, markerKey string, made func(schema schemaState, marker *mvccpb.KeyValue) bool) error {
	if err := s.flush(); err != nil {
		return err
	}
	last := []clientv3.Op{clientv3.OpPut(t.key("schema"), version), clientv3.OpPut(t.key("txn"), uuid.NewString()), clientv3.OpDelete(markerKey)}
	err := s.txn(what, s.guard, last)
	if err == nil {
		return nil
	}
	if schema, marker, rerr := readSchema(s.ctx, s.cli, t, markerKey); rerr != nil || !made(schema, marker) {
		return err
	}
	s.txns++
	return nil
}
