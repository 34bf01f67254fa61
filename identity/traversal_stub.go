//go:build !traverse

package identity

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

func notYet() error { return graph.Errorf(graph.EINTERNAL, "not implemented yet") }

func (s *Service) Neighbors(ctx context.Context, node string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	return nil, notYet()
}

func (s *Service) Path(ctx context.Context, from, to string, o graph.PathOptions) (*graph.PathResult, error) {
	return nil, notYet()
}

func (s *Service) Trace(ctx context.Context, from string, o graph.TraceOptions) (*graph.TraceResult, error) {
	return nil, notYet()
}

func (s *Service) Subgraph(ctx context.Context, around string, o graph.NeighborOptions) (*graph.Subgraph, error) {
	return nil, notYet()
}
