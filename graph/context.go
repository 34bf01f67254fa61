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
