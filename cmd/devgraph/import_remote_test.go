package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/remote"
)

// committingImport stands for a server whose import had the whole stream and was
// committing when its client went away: it finishes anyway.
type committingImport struct {
	graph.Service
	gotAll chan struct{}
}

func (s *committingImport) Import(ctx context.Context, r io.Reader, _ func(int, int)) (*graph.ImportStats, error) {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	close(s.gotAll)
	<-ctx.Done() // the client left; bbolt's commit cannot be stopped
	return &graph.ImportStats{Records: 1}, nil
}

// An import interrupted after a server had all of it may have landed: the CLI must not
// say "nothing was imported" then (it did, while the server committed 60,000 identities).
func TestImport_InterruptedAfterServerHadItAll(t *testing.T) {
	dir, err := os.MkdirTemp("", "dgi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "dg.db")
	ln, err := remote.Listen(remote.SocketPath(db))
	if err != nil {
		t.Fatal(err)
	}
	svc := &committingImport{gotAll: make(chan struct{})}
	hs := &http.Server{Handler: remote.NewHandler(svc, remote.Options{DB: db, Version: Version}), ConnContext: remote.ConnContext}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); ln.Close() })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-svc.gotAll; cancel() }()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(`{"type":"header","format":"devgraph","version":3}` + "\n"), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := e.run(ctx, []string{"import", "-", "--db", db})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	if msg := errb.String(); strings.Contains(msg, "nothing was imported") || !strings.Contains(msg, "changelog") {
		t.Fatalf("stderr %q; want no claim that nothing was imported, and where to look", msg)
	}
}
