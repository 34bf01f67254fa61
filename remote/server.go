package remote

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/devgraph/devgraph/graph"
)

// Options configure NewHandler.
type Options struct {
	// Logger receives internal errors, which callers only see as the generic message.
	// Nil discards them.
	Logger *slog.Logger
	// DB and Version are reported by GET /rpc/ping.
	DB      string
	Version string
	// ReadOnly refuses every method that changes the graph or moves a robot (EINVALID),
	// except stopping a robot, which is always allowed.
	ReadOnly bool
	// LeaseLoss, when set (a fleet's front end), says in GET /rpc/ping whether this host's
	// cluster lease is lost.
	LeaseLoss func() *graph.LeaseLoss
}

// maxArgs bounds a request's JSON arguments (imports stream and are not bounded).
const maxArgs = 8 << 20

type handler struct {
	svc    graph.Service
	opts   Options
	routes map[string]http.HandlerFunc
}

// NewHandler returns an http.Handler answering every graph.Service method under /rpc/
// (see the package comment for the wire format). Serve it only on a listener from
// Listen, which admits same-user peers alone, with ConnContext as the server's
// ConnContext: a caller naming no actor acts as cli:<its user>, and a named actor must
// be one of the contract's forms (else 400).
func NewHandler(svc graph.Service, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &handler{svc: svc, opts: opts, routes: make(map[string]http.HandlerFunc, len(methods))}
	for _, m := range methods {
		h.routes[m.name] = m.serve(h)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/rpc/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name == "ping" {
		p := Ping{PID: os.Getpid(), DB: h.opts.DB, Version: h.opts.Version, ReadOnly: h.opts.ReadOnly}
		if h.opts.LeaseLoss != nil {
			p.LeaseLoss = h.opts.LeaseLoss()
		}
		writeJSON(w, http.StatusOK, p)
		return
	}
	fn, ok := h.routes[name]
	if !ok {
		h.writeError(w, graph.Errorf(graph.ENOTFOUND, "unknown method %q; this server may be a different devgraph version", name))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.writeError(w, graph.Errorf(graph.EINVALID, "use POST for /rpc/%s", name))
		return
	}
	if m := methodByName[name]; h.opts.ReadOnly && m.write != "" && !alwaysAllowed[name] {
		h.writeError(w, graph.Errorf(graph.EINVALID, "this server is read-only (--read-only): %s is refused; ask its owner or use a server without --read-only", m.write))
		return
	}
	ctx, err := CallerContext(r)
	if err != nil {
		h.writeError(w, err)
		return
	}
	fn(w, r.WithContext(ctx))
}

func (h *handler) writeError(w http.ResponseWriter, err error) {
	if graph.ErrorCode(err) == graph.EINTERNAL {
		h.opts.Logger.Error("remote call failed", "err", err)
	}
	writeJSON(w, statusOf(graph.ErrorCode(err)), errorBody{Error: toWire(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// decodeArgs decodes the method's arguments, the rest of the body after the caller
// line, refusing text that is not valid UTF-8 (CheckJSONText: encoding/json would
// silently replace it) with the JSON path of the bad string as the field.
func decodeArgs(r *http.Request, dst any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxArgs+1))
	if err != nil {
		return graph.Errorf(graph.EINVALID, "could not read the arguments: %v", err)
	}
	if len(b) > maxArgs {
		return graph.Errorf(graph.ELIMIT, "the arguments are larger than %d MiB; send less at a time", maxArgs>>20)
	}
	if err := graph.CheckJSONText(b); err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return graph.Errorf(graph.EINVALID, "malformed arguments: %v", err)
	}
	return nil
}

// stream writes NDJSON frames; safe for concurrent use by a progress callback.
type stream struct {
	mu  sync.Mutex
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
	h   *handler
}

func newStream(h *handler, w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	return &stream{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w), h: h}
}

func (s *stream) frame(f frame) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.enc.Encode(f); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *stream) progress(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		_ = s.frame(frame{Progress: b})
	}
}

func (s *stream) end(res any, err error) {
	if err != nil {
		if graph.ErrorCode(err) == graph.EINTERNAL {
			s.h.opts.Logger.Error("remote call failed", "err", err)
		}
		_ = s.frame(frame{Error: toWire(err)})
		return
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		_ = s.frame(frame{Error: toWire(merr)})
		return
	}
	_ = s.frame(frame{Result: b})
}

// Write sends bytes as data frames (Backup and Export write into the stream).
func (s *stream) Write(p []byte) (int, error) {
	const chunk = 64 << 10
	for off := 0; off < len(p); off += chunk {
		end := min(off+chunk, len(p))
		if err := s.frame(frame{Data: p[off:end]}); err != nil {
			return off, err
		}
	}
	return len(p), nil
}
