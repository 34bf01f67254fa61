package mcptools

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// eventCount counts the changelog's events by MCP clients: unchanged means no call wrote
// anything (discovery writes its own events in the background).
func eventCount(t *testing.T, svc graph.Service) int {
	t.Helper()
	evs, _, err := svc.FindEvents(context.Background(), graph.EventFilter{Actor: "mcp:*", First: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// badTextCalls are tool calls (params of tools/call, modern era) holding text that is
// not valid UTF-8, with the field the refusal must name. Raw 0xff bytes cannot be in a
// Go raw string literal, so they come from ordinary strings.
var badTextCalls = []struct{ params, field string }{
	{"{\"name\":\"graph_identity\",\"arguments\":{\"action\":\"create\",\"name\":\"JD\xff\"}," + modernMeta + "}", "arguments.name"},
	{`{"name":"graph_identity","arguments":{"action":"create","name":"Lone \ud800 surrogate"},` + modernMeta + `}`, "arguments.name"},
	{`{"name":"graph_tag","arguments":{"target":"identity:roland-jd-xi","add":["role:synth","location:studio","\ud800"]},` + modernMeta + `}`, "arguments.add[2]"},
	{`{"name":"graph_tag","arguments":{"target":"identity:roland-jd-xi","add":["role:synth"],"why":"moved\udc00"},` + modernMeta + `}`, "arguments.why"},
	{"{\"name\":\"graph_tag\",\"arguments\":{\"target\":\"identity:roland-jd-xi\",\"add\":[\"role:synth\"],\"why\":\"nul\\u0000\"}," + modernMeta + "}", "arguments.why"},
}

// Defect 7 on MCP stdio: a real stdio session refuses text that is not valid UTF-8
// (raw bytes, lone surrogate escapes) with the field named, and writes nothing;
// mcp-go alone would have decoded it as U+FFFD and stored it.
func TestServeStdio_RefusesInvalidText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	r := startRaw(t, e.srv)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_identity","arguments":{"action":"create","name":"Roland JD-Xi"},` + modernMeta + `}}`)
	if res := r.reply(1); path(res, "result", "isError") == true || res["error"] != nil {
		t.Fatalf("create: %v", res)
	}
	before := eventCount(t, e.svc)
	for i, tc := range badTextCalls {
		id := float64(10 + i)
		r.send(`{"jsonrpc":"2.0","id":` + itoa(10+i) + `,"method":"tools/call","params":` + tc.params + `}`)
		res := r.reply(id)
		msg := str(path(res, "result", "content", 0, "text"))
		if path(res, "result", "isError") != true || msg != tc.field+" is not valid UTF-8; send text as UTF-8" && msg != tc.field+" contains a NUL byte; remove it" {
			t.Errorf("%s: %v, want an isError result naming %s", tc.params, res, tc.field)
		}
	}
	// Outside a tool's arguments: a protocol error naming the field, with the id.
	r.send("{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"Agent\xc3\",\"version\":\"1\"}}}")
	res := r.reply(20)
	if path(res, "error", "code") != -32602.0 || path(res, "error", "data", "field") != "clientInfo.name" || path(res, "error", "message") != "clientInfo.name is not valid UTF-8; send text as UTF-8" {
		t.Errorf("initialize with a bad client name: %v", res)
	}
	// A bad id cannot be echoed: the answer's id is null.
	r.send(`{"jsonrpc":"2.0","id":"x\ud800","method":"tools/list"}`)
	if m := r.next(10*time.Second, "a request with a bad id"); m["id"] != nil || path(m, "error", "code") != -32600.0 || path(m, "error", "data", "field") != "id" {
		t.Errorf("bad id: %v", m)
	}
	// A notification has nobody to answer: nothing is written, and the session goes on.
	r.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":99,\"reason\":\"\xff\"}}")
	r.send(`{"jsonrpc":"2.0","id":30,"method":"tools/list","params":{` + modernMeta + `}}`)
	if m := r.next(10*time.Second, "after a bad notification"); m["id"] != 30.0 {
		t.Errorf("after a bad notification the next line is %v, want the answer to 30", m)
	}
	if got := eventCount(t, e.svc); got != before {
		t.Errorf("refused calls wrote %d events", got-before)
	}
	tags, err := e.svc.FindIdentityByID(context.Background(), "identity:roland-jd-xi", graph.IdentityParts{})
	if err != nil || len(tags.Tags) != 0 {
		t.Errorf("identity after refused calls: %+v %v", tags, err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// Defect 7 on MCP over HTTP: the same refusals before mcp-go decodes the body.
func TestHTTPHandler_RefusesInvalidText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", e.srv.HTTPHandler())
	ts := httptest.NewServer(mux)
	defer ts.Close()
	post := func(body string) (int, map[string]any) {
		t.Helper()
		var env struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal([]byte(body), &env)
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", env.Method)
		if env.Params.Name != "" {
			req.Header.Set("Mcp-Name", env.Params.Name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for _, l := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok {
					b = []byte(d)
				}
			}
		}
		json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	if st, res := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_identity","arguments":{"action":"create","name":"Roland JD-Xi"},` + modernMeta + `}}`); st != 200 || path(res, "result", "isError") == true {
		t.Fatalf("create: %d %v", st, res)
	}
	before := eventCount(t, e.svc)
	for i, tc := range badTextCalls {
		st, res := post(`{"jsonrpc":"2.0","id":` + itoa(10+i) + `,"method":"tools/call","params":` + tc.params + `}`)
		msg := str(path(res, "result", "content", 0, "text"))
		if st != 200 || res["id"] != float64(10+i) || path(res, "result", "isError") != true ||
			msg != tc.field+" is not valid UTF-8; send text as UTF-8" && msg != tc.field+" contains a NUL byte; remove it" {
			t.Errorf("%s: %d %v, want an isError result naming %s", tc.params, st, res, tc.field)
		}
	}
	st, res := post("{\"jsonrpc\":\"2.0\",\"id\":\"r-7\",\"method\":\"resources/read\",\"params\":{\"uri\":\"devgraph://node/\xff\"," + modernMeta + "}}")
	if st != 200 || res["id"] != "r-7" || path(res, "error", "code") != -32602.0 || path(res, "error", "data", "field") != "uri" {
		t.Errorf("resources/read with a bad uri: %d %v", st, res)
	}
	st, res = post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,\"reason\":\"\xff\"}}")
	if st != http.StatusBadRequest || res["id"] != nil || path(res, "error", "data", "field") != "params.reason" {
		t.Errorf("a bad notification: %d %v, want 400 naming params.reason", st, res)
	}
	if got := eventCount(t, e.svc); got != before {
		t.Errorf("refused calls wrote %d events", got-before)
	}
}

func TestRefuseBadText_PassesText(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"graph_tag","arguments":{"why":"two\nlines é 🎹 \ufffd"}}}`,
		`this is not json`, ``,
	} {
		if resp, refused := refuseBadText([]byte(msg)); refused {
			t.Errorf("%q refused: %v", msg, resp)
		}
	}
	// Not one object: answered with a null id, as garbage is.
	if resp, refused := refuseBadText([]byte("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}]")); !refused || resp == nil {
		t.Errorf("a bad batch: %v %v, want an answer", resp, refused)
	}
	// A response from the client to a request of ours has nobody to answer.
	if resp, refused := refuseBadText([]byte("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"text\":\"\xff\"}}")); !refused || resp != nil {
		t.Errorf("a bad response: %v %v, want refused with no answer", resp, refused)
	}
}
