package graph

import (
	"context"

	"github.com/google/uuid"
)

type ctxKey int

const (
	actorKey ctxKey = iota
	requestIDKey
	messageKey
	authActorKey
	pruneKey
	clientNameKey
	hostedActorKey
	answerKey
	commitKey
)

// WithActor returns a context carrying the actor recorded on every change made with it:
// "cli:<os user>", "mcp:<client>", "http:<token>", "discovery:<source>", "robot:<id>".
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey, actor)
}

// ActorFrom returns the context's actor, or "unknown".
func ActorFrom(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey).(string); ok && a != "" {
		return a
	}
	return "unknown"
}

// WithAuthenticatedActor is WithActor for an actor a transport established from a
// credential (a bearer token's name, "http:<token>"): layers above keep it rather than
// put a name the client chose for itself (an MCP clientInfo) in its place.
func WithAuthenticatedActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(WithActor(ctx, actor), authActorKey, actor)
}

// ActorAuthenticated reports whether ctx's actor was set by WithAuthenticatedActor (and
// not replaced since).
func ActorAuthenticated(ctx context.Context) bool {
	a, ok := ctx.Value(authActorKey).(string)
	return ok && a != "" && a == ActorFrom(ctx)
}

// WithActorOfHost returns a context whose actor acted from another host of a fleet: a
// robot command routed here from host carries its caller's actor, and a fleet store
// records it qualified with that host ("mcp:agent@b") instead of with its own. Only the
// fleet's routing of commands between hosts sets it; an actor set by WithActor is always
// qualified with the store's own host, so no caller can pass for one on another host.
func WithActorOfHost(ctx context.Context, actor, host string) context.Context {
	q := ActorAt(actor, host)
	return context.WithValue(WithActor(ctx, q), hostedActorKey, q)
}

// HostedActor returns ctx's actor when WithActorOfHost set it (and it was not replaced
// since): already qualified with the host it acted from.
func HostedActor(ctx context.Context) (string, bool) {
	a, ok := ctx.Value(hostedActorKey).(string)
	if !ok || a == "" || a != ActorFrom(ctx) {
		return "", false
	}
	return a, true
}

// WithPrunePermission returns a context allowed to prune the changelog. Only callers
// trusted with the audit trail get it: the CLI on the file, the socket (the same OS user)
// and, over HTTP, a token whose line in the token file is marked prune.
func WithPrunePermission(ctx context.Context) context.Context {
	return context.WithValue(ctx, pruneKey, true)
}

// MayPrune reports whether ctx carries WithPrunePermission.
func MayPrune(ctx context.Context) bool {
	ok, _ := ctx.Value(pruneKey).(bool)
	return ok
}

// WithClientNameSink returns a context whose SetClientName calls sink: a transport learns
// the name a client gives itself (an MCP client's clientInfo) for its access log.
func WithClientNameSink(ctx context.Context, sink func(name string)) context.Context {
	return context.WithValue(ctx, clientNameKey, sink)
}

// SetClientName tells the transport the name the client gave itself; without a sink on
// ctx it does nothing. The name is for logs, never the actor of an authenticated request.
func SetClientName(ctx context.Context, name string) {
	if sink, ok := ctx.Value(clientNameKey).(func(string)); ok && sink != nil {
		sink(name)
	}
}

// WithRequestID returns a context carrying the request id shared by every changelog
// event one request writes.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestIDFrom returns the context's request id, or "" when none was set (the store then
// gives each write its own).
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// WithMessage returns a context carrying the optional "why" recorded on the changelog
// events written with it.
func WithMessage(ctx context.Context, msg string) context.Context {
	return context.WithValue(ctx, messageKey, msg)
}

// MessageFrom returns the context's change message, or "".
func MessageFrom(ctx context.Context) string {
	m, _ := ctx.Value(messageKey).(string)
	return m
}

// NewUUIDv7 returns a new time-ordered UUID string.
func NewUUIDv7() string {
	u, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return u.String()
}

// NewRequestID returns a fresh request id.
func NewRequestID() string { return NewUUIDv7() }
