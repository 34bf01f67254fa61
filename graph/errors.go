package graph

import (
	"errors"
	"fmt"
)

// Error codes a caller can branch on. The edges translate them: GraphQL puts them in
// extensions.code, MCP turns the user-fixable ones into isError results, the CLI prints
// the message and exits 1.
const (
	EINVALID     = "INVALID"     // the input is malformed; the message says which field and the expected form
	ENOTFOUND    = "NOT_FOUND"   // the named thing does not exist; the message suggests the closest one
	ECONFLICT    = "CONFLICT"    // the change collides with existing state (taken slug, unit hint held elsewhere)
	ELOCKED      = "LOCKED"      // the database is held by another process
	ELIMIT       = "LIMIT"       // a size, depth, rate or time limit was hit
	EUNAVAILABLE = "UNAVAILABLE" // a source, robot or server is not reachable right now
	EFORBIDDEN   = "FORBIDDEN"   // the caller may not do this (pruning over HTTP without a prune token); the message says who may
	EINTERNAL    = "INTERNAL"    // a fault of devgraph itself; never shown raw
)

// Error is a devgraph error with a code and a message a person or a model can act on.
type Error struct {
	Code    string // one of the E* constants
	Message string // one line, actionable
	Field   string // the offending input field, when there is one
	Steps   []Step // what to do next, in no interface's words (see Step); each edge renders them
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldErrorf returns an EINVALID-style *Error that names the offending field.
func FieldErrorf(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for any
// other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or a generic
// message for internal errors, which are logged and never shown raw.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error; see the server log"
}

// ErrorField returns the field named by the first *Error in err's chain, if any.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}
