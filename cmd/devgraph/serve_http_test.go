package main

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/devgraph/devgraph/internal/testcert"
)

// TestServe_HTTPFlags: the TLS pair, --allowed-host and --log-format are checked before
// anything opens: a half pair or a flag without --http is bad usage (exit 2), a pair
// that cannot be used is exit 1 naming the files.
func TestServe_HTTPFlags(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	db := "--db=" + t.TempDir() + "/x.db"
	cert, key, _ := testcert.Write(t)
	c.fail(2, "--tls-cert and --tls-key go together", "serve", "--http", "127.0.0.1:0", "--tls-cert", cert, db)
	c.fail(2, "--tls-cert and --tls-key go together", "serve", "--http", "127.0.0.1:0", "--tls-key", key, db)
	c.fail(2, "go with --http", "serve", "--tls-cert", cert, "--tls-key", key, db)
	c.fail(2, "go with --http", "serve", "--allowed-host", "studio.lan", db)
	c.fail(2, "--allowed-host takes a host name", "serve", "--http", "127.0.0.1:0", "--allowed-host", "http://studio.lan/", db)
	c.fail(2, "--log-format is text or json", "serve", "--log-format", "xml", db)
	c.fail(1, "cannot use the TLS certificate", "serve", "--http", "127.0.0.1:0", "--tls-cert", key, "--tls-key", cert, db)
	if _, err := os.Stat(db[len("--db="):]); err == nil {
		t.Error("a refused serve created the database")
	}
}

// TestProcess_ServeHTTPS: `serve --http 127.0.0.1:0 --tls-cert --tls-key --token-file
// --log-format json` serves the web page and GraphQL over HTTPS; the token file is
// enforced on loopback (a tokenless request is 401, /healthz stays open); each request
// is one JSON access-log line at info with method, path, actor, status and duration.
func TestProcess_ServeHTTPS(t *testing.T) {
	t.Parallel()
	env := procEnv(t)
	dir := t.TempDir()
	cert, key, pool := testcert.Write(t)
	tokens := filepath.Join(dir, "tokens")
	const token = "serve-https-0123456789abcdef"
	if err := os.WriteFile(tokens, []byte("desk "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, env, "--db", filepath.Join(dir, "x.db"), "--demo", "--poll", "0", "--http", "127.0.0.1:0",
		"--tls-cert", cert, "--tls-key", key, "--token-file", tokens, "--log-format", "json", "--allowed-host", "studio.lan")
	page := strings.TrimPrefix(srv.waitLine("Web page: "), "Web page: ")
	if !strings.HasPrefix(page, "https://127.0.0.1:") {
		t.Fatalf("web page at %q, want https://127.0.0.1:…", page)
	}
	base := strings.TrimSuffix(page, "/")
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, auth, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, srv.log())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := do("GET", "/healthz", "", ""); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	q := `{"query":"mutation { createIdentity(name: \"Desk Lamp\") { id } }"}`
	if code, body := do("POST", "/graphql", "", q); code != 401 {
		t.Errorf("tokenless loopback request with a token file: %d %s", code, body)
	}
	if code, body := do("POST", "/graphql", token, q); code != 200 || strings.Contains(body, `"errors"`) {
		t.Errorf("with the token: %d %s", code, body)
	}
	if code, body := do("GET", "/", token, ""); code != 200 || !strings.Contains(body, `data-actor="http:desk"`) {
		t.Errorf("the web page with the token: %d %.200s", code, body)
	}
	if code, _ := do("GET", "/", "", ""); code != http.StatusSeeOther {
		t.Errorf("the web page without a login: %d, want 303 to /login", code)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, srv.log())
	}
	out, _, code := runBin(t, env, "changelog", "--db", filepath.Join(dir, "x.db"), "--action", "identity.create", "--json")
	if code != 0 || !strings.Contains(out, `"actor": "http:desk"`) {
		t.Errorf("identity.create over HTTPS: exit %d %s", code, out)
	}
	var access []map[string]any
	for _, l := range strings.Split(srv.log(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "http" {
			access = append(access, m)
		}
	}
	if len(access) != 5 {
		t.Fatalf("JSON access-log lines=%d, want 5:\n%s", len(access), srv.log())
	}
	for _, m := range access {
		for _, k := range []string{"method", "path", "actor", "status", "duration"} {
			if _, ok := m[k]; !ok || m["level"] != "INFO" {
				t.Errorf("access line %v lacks %s or is not at info", m, k)
			}
		}
	}
	if access[2]["actor"] != "http:desk" || access[2]["path"] != "/graphql" || access[2]["status"] != float64(200) {
		t.Errorf("the token's request: %v", access[2])
	}
	if access[1]["status"] != float64(401) {
		t.Errorf("the tokenless request: %v", access[1])
	}
}
