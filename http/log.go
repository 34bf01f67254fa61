package http

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// accessLog writes one line per request at info (method, path, actor, the client's own
// name when it gave one, status, duration, request id) and counts the requests in flight, so Server.Close can wait for them.
type accessLog struct {
	log      *slog.Logger
	next     http.Handler
	inFlight sync.WaitGroup
}

// record is what the guard learns about a request, for its log line.
type record struct {
	actor, requestID string

	mu     sync.Mutex
	client string // the name the client gave itself (MCP's clientInfo), when it gave one
}

// setClient is the request's graph.WithClientNameSink.
func (r *record) setClient(name string) {
	r.mu.Lock()
	r.client = name
	r.mu.Unlock()
}

func (r *record) clientName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.client
}

type recordKey struct{}

// recordFrom returns the request's log record; outside accessLog, a throwaway one.
func recordFrom(r *http.Request) *record {
	if rec, ok := r.Context().Value(recordKey{}).(*record); ok {
		return rec
	}
	return &record{}
}

func (a *accessLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.inFlight.Add(1)
	defer a.inFlight.Done()
	start := time.Now()
	rec := &record{}
	sw := &statusWriter{ResponseWriter: w}
	ctx, answered := graph.WithAnswerHook(context.WithValue(r.Context(), recordKey{}, rec))
	defer answered() // the handler has written its answer (or panicked): what waited for it runs
	a.next.ServeHTTP(sw, r.WithContext(ctx))
	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("actor", rec.actor)}
	if c := rec.clientName(); c != "" {
		attrs = append(attrs, slog.String("client", c))
	}
	attrs = append(attrs, slog.Int("status", status),
		slog.Duration("duration", time.Since(start)), slog.String("request_id", rec.requestID))
	a.log.LogAttrs(r.Context(), slog.LevelInfo, "http", attrs...)
}

func (a *accessLog) wait() { a.inFlight.Wait() }

// statusWriter remembers the status written. It passes Flush on (MCP streams events)
// and unwraps for http.ResponseController (deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
