package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// raiseNoFile makes sure this process may hold n more file descriptors.
func raiseNoFile(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < n {
		t.Fatalf("this test needs %d file descriptors; the hard limit is %d (%v): raise it (ulimit -Hn)", n, lim.Max, err)
	}
}

// TestProcess_IdleConnections: 1,000 TCP connections to a `serve --http` child, half of
// them silent and half stopped in the middle of a header, do not stop a real client
// from being served on /graphql and /mcp. With --mcp-max-sessions 1 a second MCP client
// is refused with the cap's message while the first one goes on.
func TestProcess_IdleConnections(t *testing.T) {
	t.Parallel()
	const idle = 1000
	raiseNoFile(t, idle+200)
	env := procEnv(t)
	r := newTestRig(t)
	srv := startServe(t, env, append([]string{"--db", t.TempDir() + "/idle.db", "--http", "127.0.0.1:0", "--mcp-max-sessions", "1"}, r.flags()...)...)
	url := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")
	base := strings.TrimSuffix(url, "/graphql")
	addr := strings.TrimPrefix(base, "http://")

	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < idle; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		if i%2 == 1 {
			io.WriteString(c, "POST /graphql HTTP/1.1\r\nHost: "+addr+"\r\nContent-Le")
		}
		conns = append(conns, c)
	}

	// A real client is served, within a generous liveness bound.
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Post(url, "application/json", strings.NewReader(`{"query":"{ identities { totalCount } }"}`))
	if err != nil {
		t.Fatalf("GraphQL beside %d idle connections: %v", idle, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "totalCount") {
		t.Fatalf("GraphQL beside %d idle connections: %s %s", idle, resp.Status, b)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var clients []*client.Client
	mcpClient := func(name string) (*client.Client, error) {
		c, err := client.NewStreamableHttpClient(base + "/mcp")
		if err != nil {
			return nil, err
		}
		clients = append(clients, c)
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = "2025-11-25"
		init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
		_, err = c.Initialize(ctx, init)
		return c, err
	}
	first, err := mcpClient("idle-test")
	if err != nil {
		t.Fatalf("MCP initialize beside %d idle connections: %v", idle, err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "graph_unbound"
	res, err := first.CallTool(ctx, call)
	if err != nil || res.IsError {
		t.Fatalf("MCP graph_unbound beside %d idle connections: %v %+v", idle, err, res)
	}

	// The session cap: a second client is refused and says why; the first goes on.
	if _, err := mcpClient("second"); err == nil || !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("a second MCP session past --mcp-max-sessions 1: %v", err)
	}
	if res, err := first.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("the first session after the refusal: %v %+v", err, res)
	}
	for _, c := range clients {
		c.Close()
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}
