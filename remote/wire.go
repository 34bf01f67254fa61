package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/devgraph/devgraph/graph"
)

// Caller is the first JSON value of every POST body on the socket, on a line of its own:
// who is calling and why. It travels in the body because the message is free text (a
// two-line "why", any UTF-8) that an HTTP header cannot carry. Empty fields are left
// out; a caller naming no actor acts as cli:<the peer's user>.
type Caller struct {
	Actor     string `json:"actor,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Message   string `json:"message,omitempty"`
}

// callerLine encodes c as the line that starts a request body. Text json.Marshal would
// silently replace (invalid UTF-8) is refused instead, naming the field.
func callerLine(c Caller) ([]byte, error) {
	if err := graph.CheckValueText(c); err != nil {
		return nil, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode the caller: %w", err)
	}
	return append(b, '\n'), nil
}

// readCaller decodes the Caller line at the start of r's body and leaves r.Body holding
// the rest. Its text is checked before decoding (graph.CheckJSONText), so a message that
// is not valid UTF-8 is refused, never replaced.
func readCaller(r *http.Request) (Caller, error) {
	body := r.Body
	dec := json.NewDecoder(io.LimitReader(body, maxArgs))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	// The caller line ends with a newline, which is not part of what follows: a raw
	// stream (Import's export lines) starts after it, so its line 1 is line 1 and its
	// size is its own.
	rest, _ := io.ReadAll(dec.Buffered())
	if err == nil && len(rest) == 0 {
		var b [1]byte
		n, _ := io.ReadFull(body, b[:])
		rest = b[:n]
	}
	if err == nil {
		rest = bytes.TrimPrefix(rest, []byte("\n"))
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(rest), body), body}
	if err != nil {
		return Caller{}, graph.Errorf(graph.EINVALID, "the request body does not start with the caller line {\"actor\",\"request_id\",\"message\"}: %v", err)
	}
	if err := graph.CheckJSONText(raw); err != nil {
		return Caller{}, err
	}
	var c Caller
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return Caller{}, graph.Errorf(graph.EINVALID, "malformed caller line (%v): a request body starts with {\"actor\",\"request_id\",\"message\"}; is the devgraph CLI an older version than the server?", err)
	}
	if len(c.RequestID) > maxRequestIDBytes {
		return Caller{}, graph.FieldErrorf(graph.EINVALID, "request_id", "request_id is %d bytes; the limit is %d (leave it out and the server makes one)", len(c.RequestID), maxRequestIDBytes)
	}
	if c.RequestID != "" && strings.ContainsFunc(c.RequestID, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) {
		return Caller{}, graph.FieldErrorf(graph.EINVALID, "request_id", "request_id %q holds a space or a control character; it is one word, such as a uuid (leave it out and the server makes one)", c.RequestID)
	}
	return c, nil
}

// maxRequestIDBytes bounds a request id a caller names: it is stored on every event of
// the request.
const maxRequestIDBytes = 128

// wireError is the error body: {"error":{"code","message","field","steps"}}. The steps
// travel as data, so the CLI words them as commands (graph.Step).
type wireError struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Field   string       `json:"field,omitempty"`
	Steps   []graph.Step `json:"steps,omitempty"`
}

type errorBody struct {
	Error *wireError `json:"error"`
}

// frame is one line of a streaming answer.
type frame struct {
	Data     []byte          `json:"data,omitempty"`
	Progress json.RawMessage `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *wireError      `json:"error,omitempty"`
}

// Ping is what GET /rpc/ping answers: who is serving.
type Ping struct {
	PID     int    `json:"pid"`
	DB      string `json:"db,omitempty"`
	Version string `json:"version,omitempty"`
	// ReadOnly is true when the server refuses every change (--read-only).
	ReadOnly bool `json:"read_only,omitempty"`
	// LeaseLoss is set while a fleet host's cluster lease is lost (it is claiming its
	// name again).
	LeaseLoss *graph.LeaseLoss `json:"lease_loss,omitempty"`
}

// Argument objects, one per distinct signature.
type (
	argNone struct{}
	argID   struct {
		ID string `json:"id"`
	}
	argResolve struct {
		Text  string       `json:"text"`
		Kinds []graph.Kind `json:"kinds,omitempty"`
	}
	argFindIdentity struct {
		ID   string              `json:"id"`
		With graph.IdentityParts `json:"with"`
	}
	argRename struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	argUpdate struct {
		ID     string               `json:"id"`
		Update graph.IdentityUpdate `json:"update"`
	}
	argMerge struct {
		From string `json:"from"`
		Into string `json:"into"`
	}
	argHints struct {
		ID           string              `json:"id"`
		Fingerprints []graph.Fingerprint `json:"fingerprints"`
		Move         bool                `json:"move,omitempty"`
	}
	argFingerprints struct {
		Fingerprints []graph.Fingerprint `json:"fingerprints"`
	}
	argTags struct {
		Target string   `json:"target"`
		Add    []string `json:"add,omitempty"`
		Remove []string `json:"remove,omitempty"`
	}
	argTagged struct {
		Tag   string `json:"tag"`
		First int    `json:"first,omitempty"`
		After string `json:"after,omitempty"`
	}
	argPrune struct {
		Before time.Time `json:"before"`
	}
	argRobot struct {
		Robot string `json:"robot"`
	}
	argNavigate struct {
		Robot string     `json:"robot"`
		Goal  graph.Goal `json:"goal"`
	}
	argGrasp struct {
		Robot  string `json:"robot"`
		Object string `json:"object"`
	}
	argParams struct {
		Robot  string                  `json:"robot"`
		Update graph.RobotParamsUpdate `json:"update"`
	}
	argRelationUpdate struct {
		ID     string               `json:"id"`
		Update graph.RelationUpdate `json:"update"`
	}
	argNeighbors struct {
		Node    string                `json:"node"`
		Options graph.NeighborOptions `json:"options"`
	}
	argPath struct {
		From    string            `json:"from"`
		To      string            `json:"to"`
		Options graph.PathOptions `json:"options"`
	}
	argTrace struct {
		From    string             `json:"from"`
		Options graph.TraceOptions `json:"options"`
	}
)

// Results with more than one value.
type (
	pageIdentities struct {
		Items []*graph.Identity `json:"items"`
		Total int               `json:"total"`
		Next  string            `json:"next,omitempty"`
	}
	pageNotes struct {
		Items []*graph.Note `json:"items"`
		Total int           `json:"total"`
		Next  string        `json:"next,omitempty"`
	}
	pageDeviceViews struct {
		Items []*graph.DeviceView `json:"items"`
		Total int                 `json:"total"`
		Next  string              `json:"next,omitempty"`
	}
	pageRelations struct {
		Items []*graph.Relation `json:"items"`
		Total int               `json:"total"`
		Next  string            `json:"next,omitempty"`
	}
	pageIDs struct {
		Items []string `json:"items"`
		Total int      `json:"total"`
		Next  string   `json:"next,omitempty"`
	}
	pageEvents struct {
		Items []*graph.Event `json:"items"`
		Next  string         `json:"next,omitempty"`
	}
	holder struct {
		Fingerprint graph.Fingerprint `json:"fingerprint"`
		Holders     []string          `json:"holders"`
	}
	countResult struct {
		N int64 `json:"n"`
	}
	problemsResult struct {
		Problems []string `json:"problems"`
	}
	importProgress struct {
		Records int `json:"records"`         // records written so far
		Total   int `json:"total,omitempty"` // records in the import
	}
)

func statusOf(code string) int {
	switch code {
	case graph.EINVALID:
		return http.StatusBadRequest
	case graph.ENOTFOUND:
		return http.StatusNotFound
	case graph.ECONFLICT:
		return http.StatusConflict
	case graph.ELOCKED:
		return http.StatusLocked
	case graph.ELIMIT:
		return http.StatusTooManyRequests
	case graph.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func toWire(err error) *wireError {
	return &wireError{Code: graph.ErrorCode(err), Message: graph.ErrorMessage(err), Field: graph.ErrorField(err), Steps: graph.ErrorSteps(err)}
}

func (e *wireError) toGraph() *graph.Error {
	code := e.Code
	if code == "" {
		code = graph.EINTERNAL
	}
	return &graph.Error{Code: code, Message: e.Message, Field: e.Field, Steps: e.Steps}
}
