package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// postGraphQL sends one GraphQL request to url and returns the status and decoded body.
func postGraphQL(t *testing.T, url, q string) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": q})
	return postJSON(t, url, string(b), nil)
}

// postJSON POSTs the JSON body to url with header added and returns the status and
// decoded body.
func postJSON(t *testing.T, url, body string, header http.Header) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("POST %s: %s %q is not JSON", url, resp.Status, raw)
	}
	return resp.StatusCode, m
}

// `serve --read-only --http` refuses GraphQL mutations over HTTP with a clear error
// and writes nothing; queries still run.
func TestServe_ReadOnlyHTTP(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "ro.db")
	srv := startServe(t, env, "--db", db, "--read-only", "--http", "127.0.0.1:0", "--poll", "0")
	url := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")

	status, body := postGraphQL(t, url, `mutation { createIdentity(name: "Sneaky") { id } }`)
	if status != http.StatusForbidden {
		t.Errorf("mutation on a read-only server: status %d, want 403: %v", status, body)
	}
	errs, _ := body["errors"].([]any)
	if len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["message"].(string), "read-only (--read-only)") {
		t.Errorf("mutation on a read-only server: %v, want one error saying the server is read-only", body)
	}
	if body["data"] != nil {
		t.Errorf("a refused mutation carries data: %v", body["data"])
	}
	status, body = postGraphQL(t, url, `{ identities { totalCount } }`)
	if status != http.StatusOK {
		t.Fatalf("query on a read-only server: %d %v", status, body)
	}
	n := body["data"].(map[string]any)["identities"].(map[string]any)["totalCount"]
	if n != float64(0) {
		t.Errorf("a read-only server holds %v identities after a refused create", n)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}

// The guard's refusals on /mcp come as JSON-RPC error objects with the HTTP status kept;
// /graphql keeps GraphQL's error shape.
func TestServe_MCPGuardErrorsAreJSONRPC(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "guard.db")
	srv := startServe(t, env, "--db", db, "--http", "127.0.0.1:0", "--poll", "0")
	mcpURL := strings.TrimPrefix(srv.waitLine("MCP: "), "MCP: ")
	gqlURL := strings.TrimSuffix(mcpURL, "/mcp") + "/graphql"
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	send := func(url, origin, body string) (int, map[string]any) {
		return postJSON(t, url, body, http.Header{"Accept": {"application/json, text/event-stream"}, "Origin": {origin}})
	}
	status, body := send(mcpURL, "http://evil.example", init)
	if status != http.StatusForbidden {
		t.Errorf("cross-origin /mcp: status %d, want 403", status)
	}
	e, _ := body["error"].(map[string]any)
	if body["jsonrpc"] != "2.0" || body["id"] != nil || e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "cross-origin") {
		t.Errorf("cross-origin /mcp answered %v; want a JSON-RPC error (code -32600, id null) saying cross-origin", body)
	}
	if _, ok := body["errors"]; ok {
		t.Errorf("/mcp refusal in GraphQL's shape: %v", body)
	}
	status, body = send(gqlURL, "http://evil.example", `{"query":"{ stats { identities } }"}`)
	if errs, _ := body["errors"].([]any); status != http.StatusForbidden || len(errs) != 1 {
		t.Errorf("cross-origin /graphql: %d %v; want 403 in GraphQL's error shape", status, body)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}

// Stopping a robot is always allowed: a --read-only server runs GraphQL robotStop (alone
// in its mutation) over HTTP and `devgraph robot stop` through its socket, and still
// refuses every other mutation and robot command.
func TestServe_ReadOnlyStopsRobots(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	db := filepath.Join(t.TempDir(), "ro-robots.db")
	srv := startServe(t, env, "--demo", "--db", db, "--read-only", "--http", "127.0.0.1:0")
	url := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")

	status, body := postGraphQL(t, url, `mutation { robotStop(robot: "scout") { state armed } }`)
	if status != http.StatusOK || body["errors"] != nil {
		t.Fatalf("robotStop on a read-only server: %d %v, want it run", status, body)
	}
	st := body["data"].(map[string]any)["robotStop"].(map[string]any)
	if st["state"] != "stopped" || st["armed"] != false {
		t.Errorf("robotStop answered %v, want stopped and disarmed", st)
	}
	for _, q := range []string{
		`mutation { robotArm(robot: "scout") { state } }`,
		`mutation { robotStop(robot: "scout") { state } robotArm(robot: "rover") { state } }`,
	} {
		if status, body := postGraphQL(t, url, q); status != http.StatusForbidden || body["data"] != nil {
			t.Errorf("%s on a read-only server: %d %v, want 403 and no data", q, status, body)
		}
	}
	if _, stderr, code := runBin(t, env, "robot", "stop", "scout", "--db", db); code != 0 {
		t.Errorf("devgraph robot stop through a read-only server: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runBin(t, env, "robot", "arm", "scout", "--db", db); code != 1 || !strings.Contains(stderr, "read-only") {
		t.Errorf("devgraph robot arm through a read-only server: exit %d %q, want 1 saying read-only", code, stderr)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
}
