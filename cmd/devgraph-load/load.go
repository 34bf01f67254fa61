package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loader sends the phases' requests to one server.
type loader struct {
	base string
	ids  []string
	conc int
	http *http.Client
}

func newLoader(base string, ids []string, conc int) *loader {
	tr := &http.Transport{MaxIdleConns: conc * 2, MaxIdleConnsPerHost: conc * 2, IdleConnTimeout: 30 * time.Second}
	return &loader{base: base, ids: ids, conc: conc, http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

func (l *loader) close() { l.http.CloseIdleConnections() }

// worker is one concurrent client's state within a phase.
type worker struct {
	n    int // worker number
	rng  *rand.Rand
	done int    // requests this worker has sent in the phase
	id   string // identity the write mix is working on
	page string // identities: the cursor to resume after
	mcp  *mcpSession
}

// phase is one row of the table: do sends request k of the phase.
type phase struct {
	name  string
	start func(ctx context.Context, w *worker) error // optional, not timed
	stop  func(w *worker)                            // optional
	do    func(ctx context.Context, w *worker) error
}

func (l *loader) randomID(w *worker) string { return l.ids[w.rng.IntN(len(l.ids))] }

// fragment is a piece of a fixture name: a maker, a kind or digits.
func fragment(w *worker) string {
	switch w.rng.IntN(3) {
	case 0:
		m := makers[w.rng.IntN(len(makers))]
		return strings.ToLower(m[:3+w.rng.IntN(len(m)-2)])
	case 1:
		return strings.ToLower(kinds[w.rng.IntN(len(kinds))])
	default:
		return fmt.Sprintf("%04d", w.rng.IntN(10000))
	}
}

func (l *loader) phases() []phase {
	return []phase{
		{name: "identity", do: func(ctx context.Context, w *worker) error {
			_, err := l.graphql(ctx, `query($id: ID!){ identity(id: $id){ name hints { kind value } tags { name } notes(first: 5){ nodes { kind body } } } }`,
				map[string]any{"id": l.randomID(w)})
			return err
		}},
		{name: "identities(first:100)", do: func(ctx context.Context, w *worker) error {
			var vars map[string]any
			if w.page != "" {
				vars = map[string]any{"after": w.page}
			}
			data, err := l.graphql(ctx, `query($after: String){ identities(first: 100, after: $after){ nodes { id name tags { name } } pageInfo { endCursor hasNextPage } } }`, vars)
			if err != nil {
				return err
			}
			var d struct {
				Identities struct {
					Nodes    []json.RawMessage
					PageInfo struct {
						EndCursor   string
						HasNextPage bool
					}
				}
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return err
			}
			if len(d.Identities.Nodes) == 0 {
				return fmt.Errorf("identities: empty page")
			}
			w.page = ""
			if d.Identities.PageInfo.HasNextPage {
				w.page = d.Identities.PageInfo.EndCursor // walk the pages; start over at the end
			}
			return nil
		}},
		{name: "find(text)", do: func(ctx context.Context, w *worker) error {
			_, err := l.graphql(ctx, `query($t: String){ find(text: $t, first: 20){ totalCount edges { cursor kind name score matched node { id } } pageInfo { hasNextPage } } }`, map[string]any{"t": fragment(w)})
			return err
		}},
		{name: "writes(tag+/tag-/note)", do: func(ctx context.Context, w *worker) error {
			// Each worker cycles add tag, remove it, add a note on an identity of its own
			// choosing; its own tag keeps workers from undoing each other.
			tag := fmt.Sprintf("load:worker-%d", w.n)
			var q string
			switch w.done % 3 {
			case 0:
				w.id = l.randomID(w)
				q = `mutation($id: ID!, $t: String!){ tag(target: $id, add: [$t], message: "load"){ targetId } }`
			case 1:
				q = `mutation($id: ID!, $t: String!){ tag(target: $id, remove: [$t], message: "load"){ targetId } }`
			default:
				q = `mutation($id: ID!, $t: String!){ addNote(target: $id, body: $t, kind: "info"){ id } }`
				tag = fmt.Sprintf("Load test note from worker %d.", w.n)
			}
			_, err := l.graphql(ctx, q, map[string]any{"id": w.id, "t": tag})
			return err
		}},
		{name: "mcp graph_find", start: func(ctx context.Context, w *worker) error {
			w.mcp = &mcpSession{l: l}
			return w.mcp.open(ctx)
		}, stop: func(w *worker) {
			if w.mcp != nil {
				w.mcp.close()
			}
		}, do: func(ctx context.Context, w *worker) error {
			_, err := w.mcp.callTool(ctx, "graph_find", map[string]any{"text": fragment(w), "kind": "identity", "limit": 20})
			return err
		}},
	}
}

// result is one phase's figures.
type result struct {
	name     string
	requests int
	rate     float64
	lat      []time.Duration // sorted
	errors   int64
	firstErr error
}

func (r *result) pct(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := (len(r.lat)*p + 99) / 100
	return r.lat[max(i-1, 0)]
}

// runPhase runs p on l.conc workers until d has passed or maxReq requests were sent.
func (l *loader) runPhase(ctx context.Context, p phase, d time.Duration, maxReq int) *result {
	r := &result{name: p.name}
	var (
		next     atomic.Int64
		errs     atomic.Int64
		errOnce  sync.Once
		wg       sync.WaitGroup
		lats     = make([][]time.Duration, l.conc)
		workers  = make([]*worker, l.conc)
		setupErr = make([]error, l.conc)
	)
	fail := func(err error) {
		errs.Add(1)
		errOnce.Do(func() { r.firstErr = err })
	}
	for i := range workers {
		workers[i] = &worker{n: i, rng: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))}
		if p.start != nil {
			setupErr[i] = p.start(ctx, workers[i])
		}
	}
	start := time.Now()
	deadline := start.Add(d)
	for i, w := range workers {
		if setupErr[i] != nil {
			fail(fmt.Errorf("worker %d setup: %w", i, setupErr[i]))
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) && next.Add(1) <= int64(maxReq) {
				t0 := time.Now()
				err := p.do(ctx, w)
				lats[i] = append(lats[i], time.Since(t0))
				w.done++
				if err != nil {
					fail(err)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if p.stop != nil {
		for _, w := range workers {
			p.stop(w)
		}
	}
	for _, ls := range lats {
		r.lat = append(r.lat, ls...)
	}
	slices.Sort(r.lat)
	r.requests = len(r.lat)
	r.rate = float64(r.requests) / elapsed.Seconds()
	r.errors = errs.Load()
	return r
}

// post sends body to path and returns the response (the caller closes its body).
func (l *loader) post(ctx context.Context, path string, body any, hdr map[string]string) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return l.http.Do(req)
}

// graphql runs one GraphQL request and returns its data; GraphQL errors are errors.
func (l *loader) graphql(ctx context.Context, q string, vars map[string]any) (json.RawMessage, error) {
	resp, err := l.post(ctx, "/graphql", map[string]any{"query": q, "variables": vars}, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("graphql: HTTP %d: %.200s", resp.StatusCode, body)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("graphql: %s", out.Errors[0].Message)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("graphql: HTTP %d", resp.StatusCode)
	}
	return out.Data, nil
}

// mcpSession is one MCP client over streamable HTTP, in raw JSON-RPC.
type mcpSession struct {
	l       *loader
	session string // Mcp-Session-Id
	version string // negotiated protocol version
	nextID  int
}

func (s *mcpSession) open(ctx context.Context) error {
	res, err := s.rpc(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "devgraph-load", "version": "1"},
	})
	if err != nil {
		return err
	}
	var init struct{ ProtocolVersion string }
	if err := json.Unmarshal(res, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	s.version = init.ProtocolVersion
	resp, err := s.l.post(ctx, "/mcp", map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, s.headers())
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notifications/initialized: HTTP %d", resp.StatusCode)
	}
	return nil
}

func (s *mcpSession) headers() map[string]string {
	h := map[string]string{"Accept": "application/json, text/event-stream"}
	if s.session != "" {
		h["Mcp-Session-Id"] = s.session
	}
	if s.version != "" {
		h["MCP-Protocol-Version"] = s.version
	}
	return h
}

// callTool calls a tool; a result with isError is an error.
func (s *mcpSession) callTool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	res, err := s.rpc(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var r struct {
		IsError bool
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return nil, fmt.Errorf("%s: %.200s", name, msg)
	}
	return res, nil
}

// rpc sends one request and reads its response, as JSON or from an SSE stream.
func (s *mcpSession) rpc(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	resp, err := s.l.post(ctx, "/mcp", map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}, s.headers())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.session = sid
	}
	type message struct {
		ID     *int
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	answer := func(m *message) (json.RawMessage, error) {
		if m.Error != nil {
			return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result, nil
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m message
		if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		return answer(&m)
	}
	// SSE: skip notifications until the response to id.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m message
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &m) == nil && m.ID != nil && *m.ID == id {
			return answer(&m)
		}
	}
	return nil, fmt.Errorf("%s: the event stream ended without a response (%v)", method, sc.Err())
}

// close ends the session (DELETE /mcp), best effort.
func (s *mcpSession) close() {
	if s.session == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.l.base+"/mcp", nil)
	if err != nil {
		return
	}
	for k, v := range s.headers() {
		req.Header.Set(k, v)
	}
	if resp, err := s.l.http.Do(req); err == nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}
}
