package mcptools

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/identity"
	"github.com/devgraph/devgraph/search"
	"github.com/devgraph/devgraph/store"
	"github.com/devgraph/devgraph/store/storetest"
)

// TestHTTP_SessionCap: with MaxHTTPSessions 2, two clients hold sessions; a third
// initialize is refused with a JSON-RPC error (503) that says what to do, through a real
// mcp-go client too; the open sessions keep working, a stdio session does not count,
// and once a client ends its session a new one is admitted.
func TestHTTP_SessionCap(t *testing.T) {
	db := storetest.MustOpen(t, store.Options{NoSync: true})
	live, _ := demoLive(t, false)
	svc := identity.New(db, live, nil)
	svc.PollInterval = 0
	if err := svc.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	srv, err := New(svc, Options{Finder: search.NewFinder(db), Devices: db, Version: "test", MaxHTTPSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	post := func(session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cap-test","version":"1"}}}`
	open := func() string {
		t.Helper()
		resp, body := post("", initialize)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: %s %s", resp.Status, body)
		}
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return id
	}

	// A stdio session on the same server does not count.
	stdio := startRaw(t, srv)
	stdio.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stdio","version":"1"}}}`)
	stdio.reply(1)

	first, _ := open(), open()
	if n := srv.sessions.count(); n != 2 {
		t.Fatalf("%d HTTP sessions counted, want 2", n)
	}
	resp, body := post("", initialize)
	var refusal struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &refusal); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third initialize: %s %q", resp.Status, body)
	}
	if refusal.ID != 1 || refusal.Error.Code != -32000 || !strings.Contains(refusal.Error.Message, "too many MCP sessions") ||
		!strings.Contains(refusal.Error.Message, "--mcp-max-sessions") {
		t.Errorf("refusal %+v, want a JSON-RPC error naming the cap and the flag", refusal)
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("the refusal minted a session id")
	}

	// A real client sees the message.
	c, err := client.NewStreamableHttpClient(ts.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcp.Implementation{Name: "refused", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err == nil || !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("mcp-go client's initialize past the cap: %v", err)
	}

	// The open sessions work; ending one admits a new one.
	if resp, body := post(first, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, "graph_find") {
		t.Errorf("tools/list on an open session: %s %.200s", resp.Status, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", first)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if n := srv.sessions.count(); n != 1 {
		t.Fatalf("%d HTTP sessions counted after DELETE, want 1", n)
	}
	open()
}
