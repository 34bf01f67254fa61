package http

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/devgraph/devgraph/graph"
)

//go:embed assets/graphiql.html assets/devgraph.js assets/graphiql.min.js assets/graphiql.min.css assets/react.production.min.js assets/react-dom.production.min.js assets/NOTICE
var assets embed.FS

// CodeForbidden is the code of a refusal: a request from elsewhere, without a valid
// token, or a mutation this endpoint does not run. The other codes are graph's.
const CodeForbidden = "FORBIDDEN"

// graphqlHandler serves GraphQL over HTTP (POST application/json, GET for queries) and
// GraphiQL for a browser, handing each request to the executor.
type graphqlHandler struct {
	exec     graph.GraphQLExecutor
	maxBody  int64
	readOnly bool
}

const graphqlResponseJSON = "application/json; charset=utf-8"

// bodyReadTimeout bounds how long reading one request body may take.
const bodyReadTimeout = 30 * time.Second

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", graphqlResponseJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// refusal is a GraphQL response with one error and no data: {"errors":[{"message",
// "extensions":{"code"}}]}, the shape of every refusal on /graphql.
type refusal struct {
	Errors []refusalError `json:"errors"`
}

type refusalError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

// MarshalJSON escapes HTML like every GraphQL response the executor writes.
func (r refusal) MarshalJSON() ([]byte, error) {
	type plain refusal
	return json.Marshal(plain(r))
}

func newRefusal(code, format string, args ...any) refusal {
	return refusal{Errors: []refusalError{{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}}}
}

func writeErr(w http.ResponseWriter, status int, code, format string, args ...any) {
	writeJSON(w, status, newRefusal(code, format, args...))
}

// writeFieldErr answers err's code and message with extensions.field naming the input.
func writeFieldErr(w http.ResponseWriter, status int, err error) {
	r := newRefusal(graph.ErrorCode(err), "%s", graph.ErrorMessage(err))
	if f := graph.ErrorField(err); f != "" {
		r.Errors[0].Extensions["field"] = f
	}
	writeJSON(w, status, r)
}

func (h *graphqlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req graph.GraphQLRequest
	m := graph.GraphQLReadWrite
	switch r.Method {
	case http.MethodPost:
		ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "application/json" {
			writeErr(w, http.StatusUnsupportedMediaType, graph.EINVALID, "POST /graphql takes Content-Type: application/json with a body like {\"query\": \"…\", \"variables\": {…}}")
			return
		}
		// A client that trickles its body must not hold a connection for ever.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		if err != nil {
			writeErr(w, http.StatusBadRequest, graph.EINVALID, "could not read the request body")
			return
		}
		if int64(len(body)) > h.maxBody {
			writeErr(w, http.StatusRequestEntityTooLarge, graph.ELIMIT, "the request body is larger than %d bytes; send a smaller query or fewer variables", h.maxBody)
			return
		}
		// Before decoding: encoding/json would replace invalid UTF-8 and lone surrogate
		// escapes with U+FFFD. The refusal names the field ("variables.message").
		if err := graph.CheckJSONText(body); err != nil {
			writeFieldErr(w, http.StatusBadRequest, err)
			return
		}
		if err := decodeRequest(body, &req); err != nil {
			writeErr(w, http.StatusBadRequest, graph.EINVALID, "%s", err)
			return
		}
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		if q.Get("query") == "" && acceptsHTML(r) {
			graphiql(w, r)
			return
		}
		for _, name := range []string{"query", "operationName"} {
			if err := graph.ValidateText(name, q.Get(name), 0, 0); err != nil {
				writeFieldErr(w, http.StatusBadRequest, err)
				return
			}
		}
		req.Query = q.Get("query")
		req.OperationName = q.Get("operationName")
		if v := q.Get("variables"); v != "" {
			if f, bad := graph.FindJSONTextFault([]byte(v)); bad {
				writeFieldErr(w, http.StatusBadRequest, f.RefusalIn("variables"))
				return
			}
			if err := json.Unmarshal([]byte(v), &req.Variables); err != nil {
				writeErr(w, http.StatusBadRequest, graph.EINVALID, "variables is not a JSON object: %s", jsonProblem(err))
				return
			}
		}
		m = graph.GraphQLGet
	default:
		w.Header().Set("Allow", "GET, POST")
		writeErr(w, http.StatusMethodNotAllowed, graph.EINVALID, "/graphql takes GET (queries) or POST (application/json)")
		return
	}
	if h.readOnly && m == graph.GraphQLReadWrite {
		m = graph.GraphQLReadOnlyServer // queries, and robotStop: stopping is always allowed
	}
	resp, fail := h.exec.ExecuteGraphQL(r.Context(), req, m)
	if fail == graph.GraphQLForbidden && m == graph.GraphQLReadOnlyServer {
		resp = newRefusal(CodeForbidden, "this server is read-only (--read-only): mutations other than robotStop are refused and nothing was changed; send queries, or use a server started without --read-only")
	}
	status := http.StatusOK
	switch fail {
	case graph.GraphQLBadRequest:
		status = http.StatusBadRequest
	case graph.GraphQLWrongMethod:
		w.Header().Set("Allow", "POST")
		status = http.StatusMethodNotAllowed
	case graph.GraphQLForbidden:
		status = http.StatusForbidden
	}
	writeJSON(w, status, resp)
}

// decodeRequest reads {"query", "variables", "operationName"} strictly enough to give a
// useful message for the common mistakes.
func decodeRequest(body []byte, req *graph.GraphQLRequest) error {
	var raw struct {
		Query         *string         `json:"query"`
		Variables     json.RawMessage `json:"variables"`
		OperationName *string         `json:"operationName"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("the body is not a JSON object {\"query\": …}: %s", jsonProblem(err))
	}
	if dec.More() {
		return errors.New("the body has data after its JSON object; send exactly one {\"query\": …}")
	}
	if raw.Query == nil {
		return errors.New("the body has no \"query\"; send {\"query\": \"{ stats { identities } }\"}")
	}
	req.Query = *raw.Query
	if raw.OperationName != nil {
		req.OperationName = *raw.OperationName
	}
	if v := bytes.TrimSpace(raw.Variables); len(v) > 0 && !bytes.Equal(v, []byte("null")) {
		if err := json.Unmarshal(v, &req.Variables); err != nil {
			if p := jsonProblem(err); strings.HasSuffix(p, "is out of range") {
				return fmt.Errorf("a number in \"variables\" does not fit: %s", p)
			}
			return fmt.Errorf("\"variables\" must be a JSON object: %s", jsonProblem(err))
		}
	}
	return nil
}

func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		switch {
		case strings.HasPrefix(te.Value, "number "):
			return te.Value + " is out of range" // too big for a float64
		case te.Field == "" && strings.HasPrefix(te.Value, "a"), te.Field == "" && strings.HasPrefix(te.Value, "o"):
			return "it is an " + te.Value
		case te.Field == "":
			return "it is a " + te.Value
		}
		return fmt.Sprintf("%s has the wrong type (%s)", te.Field, te.Value)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends too early"
	}
	return "malformed JSON"
}

func acceptsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// The page and its assets come from this server only; the policy forbids anything else.
const graphiqlCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func graphiql(w http.ResponseWriter, r *http.Request) {
	page, err := assets.ReadFile("assets/graphiql.html")
	if err != nil {
		http.Error(w, "GraphiQL is not built in", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", graphiqlCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(page)
}

var assetTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".html": "text/html; charset=utf-8",
	"":      "text/plain; charset=utf-8",
}

// asset serves GraphiQL's scripts and styles and the NOTICE with their licences.
func asset(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Path)
	if name == "graphiql.html" || r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.NotFound(w, r)
		return
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", assetTypes[path.Ext(name)])
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}
