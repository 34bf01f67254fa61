package cluster

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

// Head returns the cluster's revision now and the revision of its last commit (the one a
// caught-up replica holds), read linearizably: how a load run or a test knows when every
// replica has caught up, and how far idle front ends moved the cluster.
func (fe *FrontEnd) Head(ctx context.Context) (rev, commit int64, err error) {
	resp, err := fe.cli.Get(ctx, fe.target.key("txn"))
	if err != nil {
		return 0, 0, graph.Errorf(graph.EUNAVAILABLE, "etcd at %s did not answer: %v", fe.target.endpointList(), short(err))
	}
	if len(resp.Kvs) == 0 {
		return resp.Header.Revision, 0, graph.Errorf(graph.EINVALID, "the cluster at %s has no devgraph graph under %s", fe.target.endpointList(), fe.target.Prefix)
	}
	return resp.Header.Revision, resp.Kvs[0].ModRevision, nil
}
