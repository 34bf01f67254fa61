package identity

import (
	"context"

	"github.com/devgraph/devgraph/graph"
)

func notYet() error { return graph.Errorf(graph.EINTERNAL, "not implemented yet") }

func (s *Service) Relate(ctx context.Context, c graph.RelationCreate) (*graph.RelationChange, error) {
	return nil, notYet()
}

func (s *Service) UpdateRelation(ctx context.Context, id string, u graph.RelationUpdate) (*graph.RelationChange, error) {
	return nil, notYet()
}

func (s *Service) Unrelate(ctx context.Context, r graph.RelationRemove) (*graph.RelationChange, error) {
	return nil, notYet()
}

func (s *Service) FindRelationByID(ctx context.Context, id string) (*graph.Relation, error) {
	return nil, notYet()
}

func (s *Service) FindRelations(ctx context.Context, f graph.RelationFilter) ([]*graph.Relation, int, string, error) {
	return nil, 0, "", notYet()
}

func (s *Service) RelationTypes(ctx context.Context) ([]graph.RelationTypeCount, error) {
	return nil, notYet()
}

func (s *Service) Clients(ctx context.Context) ([]*graph.Client, error) { return nil, notYet() }

func (s *Service) Client(ctx context.Context, id string) (*graph.Client, error) {
	return nil, notYet()
}

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
