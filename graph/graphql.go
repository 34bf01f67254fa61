package graph

import "context"

// GraphQLRequest is one GraphQL request as a transport received it.
type GraphQLRequest struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables,omitempty"`
	OperationName string         `json:"operationName,omitempty"`
}

// GraphQLMode says which operations a transport lets a request run.
type GraphQLMode int

const (
	GraphQLReadWrite GraphQLMode = iota // queries and mutations
	GraphQLReadOnly                     // queries only: a mutation is refused (GraphQLForbidden)
	GraphQLGet                          // queries only, over GET: a mutation is refused (GraphQLWrongMethod)
	// GraphQLReadOnlyServer is a --read-only server's mode: queries, and a mutation only
	// when it does nothing but stop robots (robotStop): stopping is always allowed. Any
	// other mutation is refused (GraphQLForbidden).
	GraphQLReadOnlyServer
)

// GraphQLFailure says why a request did not run, so a transport can pick its status code.
type GraphQLFailure int

const (
	GraphQLOK          GraphQLFailure = iota // it ran (data may still carry field errors)
	GraphQLBadRequest                        // parse, validation or a limit refused it before execution
	GraphQLWrongMethod                       // a mutation in GraphQLGet mode
	GraphQLForbidden                         // a mutation in GraphQLReadOnly mode (or other than robotStop in GraphQLReadOnlyServer)
	GraphQLNotStarted                        // it could not start (out of time before it began, the store unavailable)
)

// GraphQLExecutor runs GraphQL for a transport (query.Executor implements it), so the
// transports (http, remote) carry requests without knowing GraphQL.
type GraphQLExecutor interface {
	// ExecuteGraphQL runs req under mode and returns the response, JSON-encodable as
	// {"data": …, "errors": […]}, and why it did not run, if it did not. The actor and
	// request id recorded on changes come from ctx (WithActor, WithRequestID).
	ExecuteGraphQL(ctx context.Context, req GraphQLRequest, mode GraphQLMode) (response any, failure GraphQLFailure)
	// MaxRequestBytes is the largest request body worth reading: the document and
	// variables limits plus room for the JSON around them.
	MaxRequestBytes() int64
}
