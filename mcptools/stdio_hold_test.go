package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/devgraph/devgraph/graph"
)

// holdingService checks how the stdio edge serves a write whose commit is held: its
// AddNote holds a commit (graph.HoldCommit) that ends with commitErr, noting how many
// lines the server had written when the edge waited for it; FindEvents notes whether a
// read tool was given a hold.
type holdingService struct {
	graph.Service
	out       *lineCount
	commitErr error

	mu            sync.Mutex
	noteHeld      bool
	linesAtWait   int
	waited        bool
	readCouldHold bool
}

func (h *holdingService) AddNote(ctx context.Context, c graph.NoteCreate) (*graph.Note, error) {
	n, err := h.Service.AddNote(ctx, c)
	if err != nil {
		return nil, err
	}
	held := graph.HoldCommit(ctx, func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.waited, h.linesAtWait = true, h.out.lines()
		return h.commitErr
	})
	h.mu.Lock()
	h.noteHeld = held
	h.mu.Unlock()
	return n, nil
}

func (h *holdingService) FindEvents(ctx context.Context, f graph.EventFilter) ([]*graph.Event, string, error) {
	h.mu.Lock()
	h.readCouldHold = graph.CanHoldCommit(ctx)
	h.mu.Unlock()
	return h.Service.FindEvents(ctx, f)
}

// lineCount counts the lines written through it.
type lineCount struct {
	io.Writer
	mu sync.Mutex
	n  int
}

func (l *lineCount) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.n += strings.Count(string(p), "\n")
	l.mu.Unlock()
	return l.Writer.Write(p)
}

func (l *lineCount) lines() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// TestServeStdio_AnswerWhenDurable: over stdio an edit tool's write may return before
// its commit, and the answer is written only once the commit has ended: the result when
// it went through, the tool's own error answer when it failed. A read tool gets no hold.
func TestServeStdio_AnswerWhenDurable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	if _, err := e.svc.CreateIdentity(graph.WithActor(context.Background(), "cli:alice"), graph.IdentityCreate{Name: "Korg Minilogue"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		commitErr error
		want      string // in the answer's text
		isError   bool
	}{
		{"committed", nil, "Added info note", false},
		{"failed", graph.Errorf(graph.EUNAVAILABLE, "the disk is full: nothing was written"), "the disk is full: nothing was written", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, cw := io.Pipe()
			sr, sw := io.Pipe()
			out := &lineCount{Writer: sw}
			svc := &holdingService{Service: e.svc, out: out, commitErr: tc.commitErr}
			srv, err := New(svc, Options{Finder: e.srv.opts.Finder, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			done := make(chan error, 1)
			go func() { done <- srv.ServeStdio(context.Background(), cr, out); sw.Close() }()
			t.Cleanup(func() { cw.Close(); sr.Close(); <-done })
			lines := bufio.NewReader(sr)
			call := func(id int, name, args string) map[string]any {
				t.Helper()
				go io.WriteString(cw, `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`+"\n")
				line, err := lines.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				return m
			}

			m := call(1, "graph_note", `{"action":"add","target":"korg-minilogue","body":"held `+tc.name+`"}`)
			res, _ := m["result"].(map[string]any)
			text, _ := json.Marshal(res["content"])
			if res == nil || !strings.Contains(string(text), tc.want) || (res["isError"] == true) != tc.isError {
				t.Fatalf("graph_note's answer: %v; want %q, isError %v", m, tc.want, tc.isError)
			}
			if tc.isError && res["structuredContent"] != nil {
				t.Fatalf("the failed write's answer still carries the result: %v", res)
			}
			svc.mu.Lock()
			held, waited, at := svc.noteHeld, svc.waited, svc.linesAtWait
			svc.mu.Unlock()
			if !held || !waited || at != 0 {
				t.Fatalf("graph_note: commit held %v, waited for %v with %d lines written; want held and waited for before the answer", held, waited, at)
			}

			call(2, "graph_changelog", `{}`)
			svc.mu.Lock()
			defer svc.mu.Unlock()
			if svc.readCouldHold {
				t.Fatal("graph_changelog, a read tool, was given a commit hold")
			}
		})
	}
}
