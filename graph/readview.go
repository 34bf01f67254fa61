package graph

import "context"

// ReadViewer is implemented by stores (and services over them) that can hold one read
// transaction across many calls. BeginRead returns a context carrying the view: every read
// made with it (or a context derived from it) sees the same consistent snapshot of the
// graph, whatever commits meanwhile. release ends the view; call it once every read made
// with the context has returned (it is safe to call twice). A write made with the context
// fails with EINTERNAL ("write inside a read view") instead of waiting on the view it
// would deadlock with; make writes with a context that carries no view.
//
// A context that already carries a view of the same store gets it back unchanged, with a
// release that does nothing.
type ReadViewer interface {
	BeginRead(ctx context.Context) (view context.Context, release func(), err error)
}
