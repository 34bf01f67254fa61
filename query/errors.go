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
}

func (e *resolverError) Error() string { return e.msg }

func (e *resolverError) Extensions() map[string]any {
	ext := map[string]any{"code": e.code}
	if e.field != "" {
		ext["field"] = e.field
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
	return &resolverError{code: code, field: camelField(graph.ErrorField(err)), msg: graphqlVocabulary(graph.ErrorMessage(err))}
}

// cliWords are the CLI verbs, flags and MCP tools the service's shared messages name, each
// with the GraphQL field or argument that takes the same step: a GraphQL caller is told
// what to query, not what to type in a shell or which tool a model calls.
var cliWords = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile("`?devgraph relations --types`?"), "`relationTypes`"},
	{regexp.MustCompile(`--new-type \(new_type: true\)|--new-type`), "newType: true"},
	{regexp.MustCompile("`?devgraph relation update (rel:[0-9a-f-]+)`?"), "`updateRelation(id: \"$1\", …)`"},
	{regexp.MustCompile("`?devgraph unrelate (rel:[0-9a-f-]+)`?"), "`unrelate(id: \"$1\")`"},
	{regexp.MustCompile("`?devgraph unrelate`?"), "`unrelate`"},
	{regexp.MustCompile("`devgraph relations NODE` or graph_browse"), "`relations(filter: {node: …})`"},
	{regexp.MustCompile("run `?devgraph relations`? on a device"), "query a device's `relations`"},
	{regexp.MustCompile("list them with `?devgraph relations`? ([^ ;,)`]+)`?"), "list them with `relations(filter: {node: \"$1\"})`"},
	{regexp.MustCompile("`devgraph tag`"), "the `tag` mutation"},
	{regexp.MustCompile("`devgraph identities` or graph_find"), "`identities` or `find`"},
	{regexp.MustCompile("`devgraph (devices --all|devices)` or graph_find"), "`devices` or `find`"},
	{regexp.MustCompile(`^max_depth (-?[0-9]+): want 1-([0-9]+) hops \(leave it out for [0-9]+\)`), "maxDepth $1: want 1-$2 hops (omit it for $2)"},
	{regexp.MustCompile(`^(from|to)_port is`), "${1}Port is"},
}

// graphqlVocabulary rewrites a shared message into GraphQL terms.
func graphqlVocabulary(msg string) string {
	for _, w := range cliWords {
		msg = w.re.ReplaceAllString(msg, w.with)
	}
	return msg
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
