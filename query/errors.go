package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/devgraph/devgraph/graph"
)

// CodeForbidden marks an operation this endpoint does not run (a mutation in read-only mode
// or over GET). The other codes are graph's (INVALID, NOT_FOUND, CONFLICT, LIMIT, …).
const CodeForbidden = "FORBIDDEN"

// Error is one GraphQL error in the standard response shape. Extensions always carries
// "code"; "field" names the offending input when there is one.
type Error struct {
	Message    string         `json:"message"`
	Locations  []Location     `json:"locations,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions"`
}

// Location is a line and column in the document.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Response is a GraphQL response: JSON-marshalable as {"data": …, "errors": […]}. Data is
// absent when the request failed before execution (parse, validation, limits).
type Response struct {
	Data   any     `json:"data,omitempty"`
	Errors []Error `json:"errors,omitempty"`
	// executed is false when the request never reached execution.
	executed bool
	// dataJSON is Data as the encoder wrote it, fields in query order (encode.go).
	dataJSON json.RawMessage
}

// MarshalJSON writes "data" (null when execution nulled it) whenever the request was
// executed, and leaves it out when the request failed before execution, as the spec asks.
// Data's fields come in the order the query selected them (encode.go); the errors
// follow, as the spec's examples place them.
func (r *Response) MarshalJSON() ([]byte, error) {
	type wire struct {
		Data   any     `json:"data"`
		Errors []Error `json:"errors,omitempty"`
	}
	type noData struct {
		Errors []Error `json:"errors,omitempty"`
	}
	if r.dataJSON != nil {
		return json.Marshal(wire{Data: r.dataJSON, Errors: r.Errors})
	}
	if r.executed || r.Data != nil {
		return json.Marshal(wire{Data: r.Data, Errors: r.Errors})
	}
	return json.Marshal(noData{Errors: r.Errors})
}

// Executed reports whether the request reached execution (data may still be partial).
func (r *Response) Executed() bool { return r.executed }

func errResponse(code, format string, args ...any) *Response {
	return &Response{Errors: []Error{newError(code, "", fmt.Sprintf(format, args...))}}
}

func newError(code, field, msg string) Error {
	ext := map[string]any{"code": code}
	if field != "" {
		ext["field"] = field
	}
	return Error{Message: msg, Extensions: ext}
}

// resolverError is what resolvers return: graphql-go copies its Extensions into the
// formatted error.
type resolverError struct {
	code, field, msg string
	next             []map[string]any // extensions.next: the advised fields with their arguments
}

func (e *resolverError) Error() string { return e.msg }

func (e *resolverError) Extensions() map[string]any {
	ext := map[string]any{"code": e.code}
	if e.field != "" {
		ext["field"] = e.field
	}
	if len(e.next) > 0 {
		ext["next"] = e.next
	}
	return ext
}

// errorReporter logs internal errors; they reach the caller only as a generic message.
type errorReporter struct{ log *slog.Logger }

// wrap turns a service error into a resolver error: graph errors keep their code and
// message; anything else is logged and shown as INTERNAL.
func (r errorReporter) wrap(ctx context.Context, where string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &resolverError{code: graph.ELIMIT, msg: "the request ran out of time; ask for less (smaller first, fewer fields) or narrow the filter"}
	}
	code := graph.ErrorCode(err)
	if code == graph.EINTERNAL {
		r.log.ErrorContext(ctx, "graphql resolver failed", "field", where, "request_id", graph.RequestIDFrom(ctx), "err", err)
	}
	msg, next := graphqlAdvice(spellField(graph.ErrorField(err), graph.ErrorMessage(err)), graph.ErrorSteps(err))
	return &resolverError{code: code, field: camelField(graph.ErrorField(err)), msg: msg, next: next}
}

// spellField writes the field a message names the way GraphQL spells it (max_depth →
// maxDepth): the problem is the service's, the argument's name is this interface's.
func spellField(field, msg string) string {
	if !strings.Contains(field, "_") {
		return msg
	}
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_.\[-])` + regexp.QuoteMeta(field) + `\b`)
	return re.ReplaceAllString(msg, "${1}"+camelField(field))
}

// camelField names a service error's field as GraphQL spells its arguments: the service
// says from_port, max_depth, new_name; the schema fromPort, maxDepth, newName.
func camelField(f string) string {
	if !strings.Contains(f, "_") {
		return f
	}
	parts := strings.Split(f, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func invalidArg(field, format string, args ...any) error {
	return &resolverError{code: graph.EINVALID, field: field, msg: fmt.Sprintf(format, args...)}
}
