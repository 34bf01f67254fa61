package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/store"
)

// crashServerRounds is how many times TestCrash_Server kills the server: 5, or
// $DEVGRAPH_CRASH_ROUNDS (`make chaos` runs 100, CI 20; the same knob store's
// TestCrash_SIGKILL reads).
func crashServerRounds(t *testing.T) int {
	v := os.Getenv("DEVGRAPH_CRASH_ROUNDS")
	if v == "" {
		return 5
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("DEVGRAPH_CRASH_ROUNDS=%q: want a positive number", v)
	}
	return n
}

// crashSeed is the seed of the kill moments: $DEVGRAPH_CRASH_SEED replays a logged run.
func crashSeed(t *testing.T) uint64 {
	v := os.Getenv("DEVGRAPH_CRASH_SEED")
	if v == "" {
		return uint64(time.Now().UnixNano())
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("DEVGRAPH_CRASH_SEED=%q: want a number", v)
	}
	return n
}

// The interfaces a crash test writer speaks.
const (
	ifMCPLegacy = "mcp/2025-11-25" // streamable HTTP, initialize and Mcp-Session-Id
	ifMCPModern = "mcp/2026-07-28" // streamable HTTP, no initialize, no session
	ifGraphQL   = "graphql"        // POST /graphql mutations
	ifCLI       = "cli"            // devgraph child processes through the server's socket
)

var crashInterfaces = []string{ifMCPLegacy, ifMCPModern, ifGraphQL, ifCLI}

// crashOp is one write. Its marker is unique in the whole run and is the write's message
// ("why"), so exactly one changelog event carries it; a note's body and a tag's value are
// the marker too.
type crashOp struct {
	kind   string // create, note, tag
	slug   string // the writer's identity this round
	marker string
}

func (o crashOp) tag() string { return "crash:" + o.marker }

// crashWriter writes over one interface to one server.
type crashWriter struct {
	iface   string
	name    string // e.g. ml0: interface and number
	http    *http.Client
	gqlURL  string
	mcpURL  string
	env     []string
	db      string
	session string // 2025-11-25: the Mcp-Session-Id of this round's server
	nextID  int
}

// TestCrash_Server is the crash test through the real server: a `devgraph serve --http`
// child holds the file; writers over MCP in both protocol eras (streamable HTTP), GraphQL
// over HTTP and the CLI through the socket write concurrently, each recording the writes
// that were acknowledged; the server is SIGKILLed at a random moment (seeded, logged:
// DEVGRAPH_CRASH_SEED replays it), and on the same file `devgraph changelog verify`
// passes, bbolt's consistency check passes, every acknowledged write is there exactly
// once, no write is there twice, and each write is whole (its record iff its event).
// Then the server is started again on it, and the next round begins. Rounds: 5, or
// $DEVGRAPH_CRASH_ROUNDS.
func TestCrash_Server(t *testing.T) {
	t.Parallel()
	rounds := crashServerRounds(t)
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("seed %d (DEVGRAPH_CRASH_SEED=%d replays the kill moments), %d rounds", seed, seed, rounds)

	env := procEnv(t)
	rig := newTestRig(t)
	db := filepath.Join(t.TempDir(), "crash.db")
	serveArgs := append([]string{"--db", db, "--http", "127.0.0.1:0", "--poll", "1s"}, rig.flags()...)

	var all []crashOp                  // every write attempted, acknowledged or not
	acked := map[string]crashOp{}      // by marker
	ackedBy := map[string]int{}        // interface → acknowledged writes
	inFlightAtKill := map[string]int{} // interface → rounds with a write of it in flight at the kill
	cut := map[string]int{}            // interface → writes the kill cut off (not acknowledged)
	cutKept := map[string]int{}        // … of which committed before the server died
	for round := 0; round < rounds; round++ {
		srv := startServe(t, env, serveArgs...)
		srv.waitLine("socket: ") // the CLI writers go through it
		gql := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")
		mcpURL := strings.TrimPrefix(srv.waitLine("MCP: "), "MCP: ")

		// Three writers per interface; each creates its own identity, then alternates
		// notes and tags on it.
		var writers []*crashWriter
		for _, iface := range crashInterfaces {
			for n := 0; n < 3; n++ {
				w := &crashWriter{iface: iface, name: fmt.Sprintf("%s%d", crashShort(iface), n),
					http: &http.Client{Timeout: 30 * time.Second}, gqlURL: gql, mcpURL: mcpURL, env: env, db: db}
				if iface == ifMCPLegacy {
					if err := w.initialize(); err != nil {
						t.Fatalf("round %d: %s initialize: %v\n%s", round, w.name, err, srv.log())
					}
				}
				writers = append(writers, w)
			}
		}

		killAt := 1 + rng.IntN(90) // acknowledged writes this round before the kill
		jitter := rng.IntN(3000)   // then this many microseconds more
		var ackCount atomic.Int64
		reached := make(chan struct{})
		var reachedOnce sync.Once
		stop := make(chan struct{})
		inFlight := make([]atomic.Bool, len(writers))
		var killed atomic.Bool
		type result struct {
			tried []crashOp
			acked []crashOp
			errs  []string // failures while the server was up: none expected
		}
		results := make([]result, len(writers))
		var wg sync.WaitGroup
		for wi, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := &results[wi]
				slug := fmt.Sprintf("c%03d-%s", round, w.name)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					op := crashOp{kind: "tag", slug: slug, marker: fmt.Sprintf("%s-%04d", slug, i)}
					switch {
					case i == 0:
						op.kind = "create"
					case i%2 == 1:
						op.kind = "note"
					}
					res.tried = append(res.tried, op)
					inFlight[wi].Store(true)
					err := w.write(op)
					inFlight[wi].Store(false)
					if err != nil {
						// Whatever a write cut by the kill says (the wording is each
						// interface's), it is not acknowledged; a failure before the
						// kill is a bug.
						if !killed.Load() {
							res.errs = append(res.errs, err.Error())
						}
						if i == 0 { // no identity to write on
							return
						}
						continue
					}
					res.acked = append(res.acked, op)
					if ackCount.Add(1) >= int64(killAt) {
						reachedOnce.Do(func() { close(reached) })
					}
				}
			}()
		}
		select {
		case <-reached:
		case <-time.After(60 * time.Second):
			t.Fatalf("round %d: only %d writes acknowledged in a minute\n%s", round, ackCount.Load(), srv.log())
		}
		time.Sleep(time.Duration(jitter) * time.Microsecond)
		flying := map[string]bool{}
		for wi := range writers {
			if inFlight[wi].Load() {
				flying[writers[wi].iface] = true
			}
		}
		killed.Store(true)
		srv.cmd.Process.Signal(syscall.SIGKILL)
		close(stop)
		if err := srv.wait(); err == nil {
			t.Fatalf("round %d: the server exited cleanly; SIGKILL did not reach it", round)
		}
		wg.Wait()

		n := 0
		for wi, w := range writers {
			r := results[wi]
			all = append(all, r.tried...)
			for _, op := range r.acked {
				acked[op.marker] = op
				ackedBy[w.iface]++
			}
			n += len(r.acked)
			for _, e := range r.errs {
				t.Errorf("round %d: %s: a write failed while the server was up: %s", round, w.name, e)
			}
		}
		var fl []string
		for _, iface := range crashInterfaces {
			if flying[iface] {
				inFlightAtKill[iface]++
				fl = append(fl, iface)
			}
		}
		t.Logf("round %d: killed after %d acknowledged writes (+%dµs), %d acknowledged in all, in flight at the kill: %v",
			round, killAt, jitter, n, fl)
		if t.Failed() {
			return
		}
		written := checkCrashFile(t, env, db, round, all, acked)
		if t.Failed() {
			return
		}
		for wi, w := range writers {
			for _, op := range results[wi].tried {
				if _, ok := acked[op.marker]; !ok {
					cut[w.iface]++
					if written[op.marker] {
						cutKept[w.iface]++
					}
				}
			}
		}
	}

	// Started once more on the file, the server serves what was written.
	srv := startServe(t, env, serveArgs...)
	gql := strings.TrimPrefix(srv.waitLine("GraphiQL: "), "GraphiQL: ")
	w := &crashWriter{http: &http.Client{Timeout: 30 * time.Second}, gqlURL: gql}
	var q struct {
		Identities struct {
			TotalCount int `json:"totalCount"`
		} `json:"identities"`
	}
	if err := w.graphql(`{ identities { totalCount } }`, &q); err != nil {
		t.Fatalf("query after the last restart: %v", err)
	}
	creates := 0
	for _, op := range acked {
		if op.kind == "create" {
			creates++
		}
	}
	if q.Identities.TotalCount < creates {
		t.Errorf("after the last restart the server has %d identities; %d were acknowledged", q.Identities.TotalCount, creates)
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.wait(); err != nil {
		t.Errorf("serve ended with %v:\n%s", err, srv.log())
	}
	if err := store.CheckFile(db); err != nil {
		t.Errorf("consistency after a clean stop: %v", err)
	}
	var by, fly []string
	for _, iface := range crashInterfaces {
		by = append(by, fmt.Sprintf("%s %d", iface, ackedBy[iface]))
		fly = append(fly, fmt.Sprintf("%s %d (%d writes cut, %d of them committed)", iface, inFlightAtKill[iface], cut[iface], cutKept[iface]))
	}
	t.Logf("%d rounds (seed %d): %d writes tried, %d acknowledged and found exactly once (%s), none duplicated; "+
		"kills with a write in flight, per interface: %s", rounds, seed, len(all), len(acked), strings.Join(by, ", "), strings.Join(fly, ", "))
}

func crashShort(iface string) string {
	switch iface {
	case ifMCPLegacy:
		return "ml"
	case ifMCPModern:
		return "mm"
	case ifGraphQL:
		return "gq"
	}
	return "cl"
}

// checkCrashFile checks the file after a kill, with no server running: the CLI's
// changelog verify, bbolt's consistency check, then every write of every round so far.
// It returns the markers of the writes found.
func checkCrashFile(t *testing.T, env []string, db string, round int, all []crashOp, acked map[string]crashOp) map[string]bool {
	t.Helper()
	if out, errs, code := runBin(t, env, "changelog", "verify", "--db", db); code != 0 || !strings.HasPrefix(out, "changelog ok") {
		t.Fatalf("round %d: devgraph changelog verify: exit %d\n%s%s", round, code, out, errs)
	}
	if err := store.CheckFile(db); err != nil {
		t.Fatalf("round %d: consistency check: %v", round, err)
	}
	st, err := store.Open(db, store.Options{Host: testHost, Timeout: 5 * time.Second, NoBackup: true})
	if err != nil {
		t.Fatalf("round %d: open after the kill: %v", round, err)
	}
	defer st.Close()
	ctx := context.Background()
	if r, err := st.VerifyChangelog(ctx); err != nil || !r.OK {
		t.Fatalf("round %d: verify: %+v %v", round, r, err)
	}

	// The events carrying each marker as their message.
	events := map[string][]*graph.Event{}
	f := graph.EventFilter{First: graph.MaxPageSize}
	for {
		evs, next, err := st.FindEvents(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Message != "" {
				events[e.Message] = append(events[e.Message], e)
			}
		}
		if next == "" {
			break
		}
		f.After = next
	}
	wantAction := map[string]string{"create": graph.ActIdentityCreate, "note": graph.ActNoteAdd, "tag": graph.ActTagAdd}

	// Each writer's identity, read once.
	ids := map[string]*graph.Identity{}
	identity := func(slug string) *graph.Identity {
		if id, ok := ids[slug]; ok {
			return id
		}
		id, err := st.FindIdentityByID(ctx, "identity:"+slug, graph.IdentityParts{Notes: true})
		if err != nil && graph.ErrorCode(err) != graph.ENOTFOUND {
			t.Fatalf("round %d: read %s: %v", round, slug, err)
		}
		ids[slug] = id
		return id
	}
	notes := func(id *graph.Identity, body string) int {
		n := 0
		for _, nt := range id.Notes {
			if nt.Body == body {
				n++
			}
		}
		return n
	}
	lost, dup, half := 0, 0, 0
	for _, op := range all {
		evs := events[op.marker]
		_, isAcked := acked[op.marker]
		switch {
		case len(evs) > 1:
			dup++
			t.Errorf("round %d: %s %s (%s) has %d events", round, op.kind, op.marker, ackWord(isAcked), len(evs))
		case len(evs) == 0 && isAcked:
			lost++
			t.Errorf("round %d: acknowledged %s %s lost", round, op.kind, op.marker)
		case len(evs) == 1 && evs[0].Action != wantAction[op.kind]:
			t.Errorf("round %d: %s %s recorded as %s", round, op.kind, op.marker, evs[0].Action)
		}
		// The record is there exactly when its event is.
		written := len(evs) > 0
		id := identity(op.slug)
		var have int
		switch op.kind {
		case "create":
			if id != nil {
				have = 1
			}
		case "note":
			if id != nil {
				have = notes(id, op.marker)
			}
		case "tag":
			if id != nil && contains(id.Tags, op.tag()) {
				have = 1
			}
		}
		if (have > 0) != written || have > 1 {
			half++
			t.Errorf("round %d: %s %s (%s): %d records, %d events", round, op.kind, op.marker, ackWord(isAcked), have, len(evs))
		}
	}
	if lost+dup+half > 0 {
		t.Fatalf("round %d: %d lost, %d duplicated, %d half-written", round, lost, dup, half)
	}
	written := map[string]bool{}
	for m := range events {
		written[m] = true
	}
	return written
}

func ackWord(acked bool) string {
	if acked {
		return "acknowledged"
	}
	return "not acknowledged"
}

// write does op over the writer's interface; nil means the write was acknowledged.
func (w *crashWriter) write(op crashOp) error {
	switch w.iface {
	case ifGraphQL:
		var q string
		switch op.kind {
		case "create":
			q = fmt.Sprintf(`mutation { createIdentity(name: %q, slug: %q, message: %q) { id } }`, op.slug, op.slug, op.marker)
		case "note":
			q = fmt.Sprintf(`mutation { addNote(target: %q, body: %q, message: %q) { id } }`, "identity:"+op.slug, op.marker, op.marker)
		case "tag":
			q = fmt.Sprintf(`mutation { tag(target: %q, add: [%q], message: %q) { tags { id } } }`, "identity:"+op.slug, op.tag(), op.marker)
		}
		var data map[string]any
		if err := w.graphql(q, &data); err != nil {
			return err
		}
		for k, v := range data {
			if v == nil {
				return fmt.Errorf("graphql %s: null", k)
			}
		}
		return nil
	case ifMCPLegacy, ifMCPModern:
		var tool string
		var args map[string]any
		switch op.kind {
		case "create":
			tool, args = "graph_identity", map[string]any{"action": "create", "name": op.slug, "slug": op.slug, "why": op.marker}
		case "note":
			tool, args = "graph_note", map[string]any{"target": "identity:" + op.slug, "body": op.marker, "why": op.marker}
		case "tag":
			tool, args = "graph_tag", map[string]any{"target": "identity:" + op.slug, "add": []string{op.tag()}, "why": op.marker}
		}
		return w.callTool(tool, args)
	case ifCLI:
		var args []string
		switch op.kind {
		case "create":
			args = []string{"identity", "create", op.slug, "--slug", op.slug}
		case "note":
			args = []string{"note", "add", op.slug, op.marker}
		case "tag":
			args = []string{"tag", op.slug, "+" + op.tag()}
		}
		args = append(args, "-m", op.marker, "--db", w.db)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, args...)
		cmd.Env = w.env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("devgraph %s: %v: %s", strings.Join(args[:2], " "), err, strings.TrimSpace(errb.String()))
		}
		return nil
	}
	return fmt.Errorf("unknown interface %q", w.iface)
}

// graphql posts a GraphQL document and decodes its data into v; an error response is
// an error.
func (w *crashWriter) graphql(doc string, v any) error {
	body, _ := json.Marshal(map[string]string{"query": doc})
	resp, err := w.http.Post(w.gqlURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("graphql: %s %q: %v", resp.Status, b, err)
	}
	if resp.StatusCode != http.StatusOK || len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %s %s", resp.Status, b)
	}
	return json.Unmarshal(r.Data, v)
}

// initialize opens a 2025-11-25 session.
func (w *crashWriter) initialize() error {
	res, hdr, err := w.post("initialize", "", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "crash-" + w.name, "version": "1.0"},
	})
	if err != nil {
		return err
	}
	r, _ := res["result"].(map[string]any)
	if r == nil || r["protocolVersion"] != "2025-11-25" {
		return fmt.Errorf("initialize: %v, want protocol 2025-11-25", res)
	}
	if w.session = hdr.Get("Mcp-Session-Id"); w.session == "" {
		return errors.New("initialize: no Mcp-Session-Id")
	}
	_, _, err = w.post("notifications/initialized", "", nil)
	return err
}

// callTool calls an MCP tool; nil means a result that is not an error.
func (w *crashWriter) callTool(tool string, args map[string]any) error {
	params := map[string]any{"name": tool, "arguments": args}
	if w.iface == ifMCPModern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "crash-" + w.name, "version": "1.0"},
		}
	}
	res, hdr, err := w.post("tools/call", tool, params)
	if err != nil {
		return err
	}
	if w.iface == ifMCPModern && hdr.Get("Mcp-Session-Id") != "" {
		return fmt.Errorf("%s: a 2026-07-28 request was given a session", tool)
	}
	r, _ := res["result"].(map[string]any)
	if r == nil {
		return fmt.Errorf("%s: %v", tool, res)
	}
	if r["isError"] == true {
		return fmt.Errorf("%s: error result %v", tool, r["content"])
	}
	return nil
}

// post sends one JSON-RPC message to /mcp in the writer's era and returns the response
// to it (nil for a notification), from a JSON body or an event stream.
func (w *crashWriter) post(method, name string, params map[string]any) (map[string]any, http.Header, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	notify := strings.HasPrefix(method, "notifications/")
	id := 0
	if !notify {
		w.nextID++
		id = w.nextID
		msg["id"] = id
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, w.mcpURL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if w.iface == ifMCPModern {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else if method != "initialize" {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", w.session)
	}
	resp, err := w.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if notify {
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, nil, fmt.Errorf("%s: %s", method, resp.Status)
		}
		return nil, resp.Header, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, nil, fmt.Errorf("%s: %s %s", method, resp.Status, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) != nil {
				continue
			}
			if v, ok := m["id"].(float64); ok && int(v) == id {
				return m, resp.Header, nil
			}
		}
		if err := sc.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%s: the event stream ended without the response (EOF)", method)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, nil, err
	}
	return m, resp.Header, nil
}
