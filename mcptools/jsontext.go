package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
)

// refuseBadText checks one JSON-RPC message before mcp-go decodes it: encoding/json
// would silently turn invalid UTF-8 and lone surrogate escapes ("\ud800") into U+FFFD,
// and a model's text must be refused instead, naming the field (graph.CheckJSONText).
// refused is false when every string is text. Otherwise resp is what to answer, nil
// for a notification (which has nobody to answer):
//
//   - a tools/call whose arguments hold the bad string: an isError tool result naming
//     it ("arguments.why is not valid UTF-8; send text as UTF-8"), which a model reads
//     and can correct, as the MCP spec asks for input errors;
//   - any other bad string under params: -32602 invalid params naming it (the path
//     within params: "clientInfo.name", "uri");
//   - elsewhere (the method, the id): -32600 invalid request. A bad id cannot be
//     echoed, so the answer's id is null.
//
// The error's data carries devgraph's code and the field.
func refuseBadText(msg []byte) (resp any, refused bool) {
	fault, bad := graph.FindJSONTextFault(msg)
	if !bad {
		return nil, false
	}
	field := fault.Path
	var base struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber() // an id echoes as sent
	if dec.Decode(&base) != nil {
		// Not one JSON-RPC object (a batch, a bare value): answer as for garbage.
		refusal := fault.Refusal(field)
		return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
			Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, refusal.Message, map[string]any{"code": refusal.Code, "field": refusal.Field})}, true
	}
	var id any
	if field != "id" && len(base.ID) > 0 {
		d := json.NewDecoder(bytes.NewReader(base.ID))
		d.UseNumber()
		_ = d.Decode(&id)
	}
	if id == nil && field != "id" || base.Method == "" && field != "method" {
		return nil, true // a notification, or a response to us: nothing to answer
	}
	code := mcp.INVALID_REQUEST
	if f, ok := strings.CutPrefix(field, "params."); ok {
		field, code = f, mcp.INVALID_PARAMS
	}
	refusal := fault.Refusal(field)
	if code == mcp.INVALID_PARAMS && base.Method == string(mcp.MethodToolsCall) && (field == "arguments" || strings.HasPrefix(field, "arguments.") || strings.HasPrefix(field, "arguments[")) {
		return mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Result: mcp.NewToolResultError(refusal.Message)}, true
	}
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
		Error: mcp.NewJSONRPCErrorDetails(code, refusal.Message, map[string]any{"code": refusal.Code, "field": refusal.Field})}, true
}

// refuseBadTextHTTP puts refuseBadText in front of the streamable HTTP transport: a
// POST whose body holds a bad string is answered here and never reaches mcp-go. A
// request gets its JSON-RPC answer with status 200, as any other answer to it; input
// with no request to answer (a notification, a bad id, not one JSON-RPC object) gets 400
// with an error whose id is null (the transport's rule for input a server does not
// accept).
func refuseBadTextHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			status, msg := http.StatusBadRequest, "could not read the request body"
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				status, msg = http.StatusRequestEntityTooLarge, "the request body is too large; send smaller messages"
			}
			writeRPC(w, status, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
				Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, msg, nil)})
			return
		}
		resp, refused := refuseBadText(body)
		if !refused {
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
			return
		}
		if resp == nil {
			fault, _ := graph.FindJSONTextFault(body)
			refusal := fault.Refusal(fault.Path)
			resp = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
				Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, refusal.Message, map[string]any{"code": refusal.Code, "field": refusal.Field})}
		}
		status := http.StatusOK
		if e, ok := resp.(mcp.JSONRPCError); ok && e.ID.IsNil() {
			status = http.StatusBadRequest // no request to answer: the input is refused
		}
		writeRPC(w, status, resp)
	})
}

func writeRPC(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
