package mcptools

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/devgraph/devgraph/graph"
	devhttp "github.com/devgraph/devgraph/http"
)

// syncBuffer is a bytes.Buffer the access log may write from the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dialHTTP connects an MCP client named name to url in the given era, sending headers.
func dialHTTP(t *testing.T, url string, modern bool, name string, headers map[string]string) *client.Client {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers)}
	if !modern {
		topts = append(topts, legacyGETStream())
	}
	c, err := client.NewStreamableHttpClient(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	if !modern {
		legacyProtocolOnly()(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { c.Close(); cancel() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1.0"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// Defect 5 (issue 11): an MCP write made with a bearer token was recorded as the client's
// self-chosen name (mcp:claude-desktop), so any token holder could write as any name. Now
// the token's actor (http:<token name>) is recorded, in both protocol eras, and the
// client's name goes to the access log; without a token (loopback, no token file) the
// client's name stays the actor.
func TestHTTP_TokenIsTheActor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	var logBuf syncBuffer
	ts := httptest.NewServer(devhttp.NewHandler(devhttp.Options{
		MCP:      e.srv.HTTPHandler(),
		Loopback: true,
		Tokens:   map[string]devhttp.Token{"0123456789abcdef0123": {Name: "ci"}},
		Logger:   slog.New(slog.NewTextHandler(&logBuf, nil)),
	}))
	t.Cleanup(ts.Close)
	// A token file is enforced on loopback too, so the tokenless client talks to a
	// loopback server without one.
	open := httptest.NewServer(devhttp.NewHandler(devhttp.Options{
		MCP: e.srv.HTTPHandler(), Loopback: true,
		Logger: slog.New(slog.NewTextHandler(&logBuf, nil)),
	}))
	t.Cleanup(open.Close)
	ctx := context.Background()
	if _, err := e.svc.CreateIdentity(graph.WithActor(ctx, "cli:seed"), graph.IdentityCreate{Name: "Audit Synth"}); err != nil {
		t.Fatal(err)
	}

	for _, modern := range []bool{false, true} {
		for _, c := range []struct {
			name, auth, wantActor, logActor string
		}{
			{"claude-desktop", "Bearer 0123456789abcdef0123", "http:ci", "http:ci"},
			{"loopback-client", "", "mcp:loopback-client", "http:local"},
		} {
			t.Run(modeName("http", modern)+"/"+c.wantActor, func(t *testing.T) {
				headers := map[string]string{}
				if c.auth != "" {
					headers["Authorization"] = c.auth
				}
				name := c.name
				if modern {
					name += "-modern"
				}
				want := c.wantActor
				if c.auth == "" {
					want = "mcp:" + name
				}
				url := ts.URL
				if c.auth == "" {
					url = open.URL
				}
				cl := dialHTTP(t, url+"/mcp", modern, name, headers)
				tag := "project:" + strings.ReplaceAll(c.wantActor, ":", "-")
				if modern {
					tag += "-modern"
				}
				req := mcp.CallToolRequest{}
				req.Params.Name = "graph_tag"
				req.Params.Arguments = map[string]any{"target": "identity:audit-synth", "add": []any{tag}}
				res, err := cl.CallTool(ctx, req)
				if err != nil || res.IsError {
					t.Fatalf("graph_tag: %v %v", err, res)
				}
				evs, _, err := e.svc.FindEvents(ctx, graph.EventFilter{Target: "identity:audit-synth", Action: "tag.add", First: 1})
				if err != nil || len(evs) != 1 {
					t.Fatalf("events: %v %v", evs, err)
				}
				if got := evs[0].Actor; got != want {
					t.Errorf("actor %q, want %q", got, want)
				}
				// The access log names the client whatever the actor is.
				var line string
				for _, l := range strings.Split(logBuf.String(), "\n") {
					if strings.Contains(l, "request_id="+evs[0].RequestID) || (strings.Contains(l, "path=/mcp") && strings.Contains(l, "client="+name)) {
						line = l
					}
				}
				if !strings.Contains(line, "client="+name) || !strings.Contains(line, "actor="+c.logActor+" ") {
					t.Errorf("no access-log line names client %s:\n%s", name, logBuf.String())
				}
			})
		}
	}
	// So an actor glob for MCP clients no longer finds token-authenticated writes.
	evs, _, err := e.svc.FindEvents(ctx, graph.EventFilter{Actor: "mcp:claude-desktop*"})
	if err != nil || len(evs) != 0 {
		t.Errorf("mcp:claude-desktop* finds %d events (%v): the token's writes carry its name", len(evs), err)
	}
}

// MCP has no prune (defect 6): no tool prunes, and graph_query, read-only, refuses the
// pruneChangelog mutation even for a token marked prune.
func TestServer_NoPrune(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	for _, name := range e.srv.ToolNames() {
		if strings.Contains(name, "prune") {
			t.Errorf("tool %s prunes", name)
		}
	}
	ts := httptest.NewServer(devhttp.NewHandler(devhttp.Options{
		MCP: e.srv.HTTPHandler(), Loopback: true,
		Tokens: map[string]devhttp.Token{"0123456789abcdef0123": {Name: "admin", Prune: true}},
	}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := e.svc.CreateIdentity(graph.WithActor(ctx, "cli:seed"), graph.IdentityCreate{Name: "Keep " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := e.svc.VerifyChangelog(ctx)
	cl := dialHTTP(t, ts.URL+"/mcp", true, "pruner", map[string]string{"Authorization": "Bearer 0123456789abcdef0123"})
	req := mcp.CallToolRequest{}
	req.Params.Name = "graph_query"
	req.Params.Arguments = map[string]any{"query": `mutation { pruneChangelog(before: "720h"){ dropped } }`}
	res, err := cl.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(text(res), "FORBIDDEN") {
		t.Fatalf("graph_query prune: %v %v", err, res)
	}
	after, _ := e.svc.VerifyChangelog(ctx)
	if after.FirstSeq != before.FirstSeq || after.Checkpoint != "" {
		t.Fatalf("graph_query pruned: before %+v after %+v", before, after)
	}
}
