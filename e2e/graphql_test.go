package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeWithGraphQLHTTP finds Node and the graphql-http package installed by `npm ci
// --prefix e2e` (CI=true: their absence fails).
func nodeWithGraphQLHTTP(tb testing.TB) string {
	tb.Helper()
	node := nodeAndSDK(tb)
	pkg := filepath.Join(repoRoot(tb), "e2e", "node_modules", "graphql-http", "package.json")
	if _, err := os.Stat(pkg); err != nil {
		msg := "graphql-http is not installed (run `npm ci --prefix e2e`): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return node
}

// auditResult is one line of graphql-audit.mjs's report.
type auditResult struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// TestGraphQL_HTTPAudit runs the official GraphQL-over-HTTP audit suite (npm graphql-http,
// serverAudits) against the real `devgraph serve --demo --http`: every MUST and every
// SHOULD audit passes; the MAY results are logged.
func TestGraphQL_HTTPAudit(t *testing.T) {
	node := nodeWithGraphQLHTTP(t)
	bin := devgraphBinary(t)
	srv := startHTTPServe(t, bin, filepath.Join(t.TempDir(), "audit.db"), "--demo")
	defer srv.stop(t)
	gqlURL := strings.TrimSuffix(srv.mcpURL, "/mcp") + "/graphql"

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "graphql-audit.mjs", gqlURL)
	cmd.Dir = filepath.Join(repoRoot(t), "e2e")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node graphql-audit.mjs: %v\n%s", err, tail(stderr.String(), 4000))
	}
	var results []auditResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("audit report: %v\n%s", err, out)
	}
	passed := map[string][2]int{}
	for _, r := range results {
		level, _, _ := strings.Cut(r.Name, " ")
		p := passed[level]
		p[1]++
		if r.Status == "ok" {
			p[0]++
		} else if level == "MUST" || level == "SHOULD" {
			t.Errorf("%s %s: %s", r.ID, r.Name, r.Reason)
		} else {
			t.Logf("MAY audit not met: %s %s: %s", r.ID, r.Name, r.Reason)
		}
		passed[level] = p
	}
	if passed["MUST"][1] == 0 || passed["SHOULD"][1] == 0 {
		t.Fatalf("the suite ran no MUST or no SHOULD audits: %s", out)
	}
	for _, level := range []string{"MUST", "SHOULD", "MAY"} {
		t.Logf("%s: %d of %d audits pass", level, passed[level][0], passed[level][1])
	}
}

// TestGraphQL_FieldOrder sends a query selecting fields out of alphabetical order to the
// real server over HTTP, through `devgraph query` beside it (the socket) and through
// `devgraph query` opening the file, and checks the byte order of each answer.
func TestGraphQL_FieldOrder(t *testing.T) {
	bin := devgraphBinary(t)
	db := filepath.Join(t.TempDir(), "order.db")
	srv := startHTTPServe(t, bin, db, "--demo")
	const doc = `{ stats { relations identities devices } devices(first: 2) { totalCount nodes { present ref ...n } } }
fragment n on Device { name id }`
	order := []string{`"stats"`, `"relations"`, `"identities"`, `"devices"`, `"devices"`, `"totalCount"`, `"nodes"`, `"present"`, `"ref"`, `"name"`, `"id"`}
	check := func(via string, b []byte) {
		t.Helper()
		s := string(b)
		at := 0
		for _, p := range order {
			i := strings.Index(s[at:], p)
			if i < 0 {
				t.Fatalf("%s: %s is not after byte %d of %s", via, p, at, s)
			}
			at += i + len(p)
		}
	}

	body, _ := json.Marshal(map[string]string{"query": doc})
	for _, accept := range []string{"application/json", "application/graphql-response+json"} {
		req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(srv.mcpURL, "/mcp")+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), accept) {
			t.Fatalf("POST /graphql (%s): %d %s %s", accept, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		check("HTTP "+accept, b)
	}
	query := func(via string) {
		t.Helper()
		out, err := exec.Command(bin, "query", "--db", db, doc).Output()
		if err != nil {
			t.Fatalf("devgraph query (%s): %v\n%s", via, err, out)
		}
		check("devgraph query ("+via+")", out)
	}
	query("socket")
	srv.stop(t)
	query("file")
}
