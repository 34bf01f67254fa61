package remote

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/devgraph/devgraph/graph"
)

// StdioServer serves one MCP session over a byte stream until in ends or ctx is
// cancelled (mcptools.Server does).
type StdioServer interface {
	ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error
}

// SocketServer serves everything a running `devgraph serve` offers on its socket:
//
//	/rpc/…       the graph's methods for the CLI (RPC, from NewHandler)
//	/graphql     POST: one GraphQL request for `devgraph query`
//	/mcp-stdio   POST: an HTTP upgrade to a relayed stdio MCP session (RelayStdio)
//
// It is handed its handlers; each left nil is not served. Only same-user peers reach it
// (Listen), so there is no Host/Origin guard: the actor comes from the caller, as on
// every socket call.
type SocketServer struct {
	Path    string                // the socket (SocketPath)
	RPC     http.Handler          // /rpc/
	GraphQL graph.GraphQLExecutor // /graphql
	// MCP returns the server for a relayed session; readOnly asks for one without the
	// tools that write or move a robot.
	MCP      func(readOnly bool) (StdioServer, error)
	ReadOnly bool         // refuse GraphQL mutations
	Logger   *slog.Logger // nil discards

	ln       net.Listener
	hs       *http.Server
	log      *slog.Logger
	ctx      context.Context // ends relayed sessions on Close
	cancel   context.CancelFunc
	served   chan struct{}  // closed when Serve returns
	inFlight sync.WaitGroup // every handler, relayed sessions included
	once     sync.Once
}

// Open listens on Path and serves in the background.
func (s *SocketServer) Open() error {
	s.log = s.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	ln, err := Listen(s.Path)
	if err != nil {
		return err
	}
	if RemovedStale(ln) {
		s.log.Info("removed a stale socket left by a server that did not shut down cleanly", "socket", s.Path)
	}
	mux := http.NewServeMux()
	if s.RPC != nil {
		mux.Handle("/rpc/", s.RPC)
	}
	if s.GraphQL != nil {
		mux.Handle("/graphql", graphQLHandler(s.GraphQL, s.ReadOnly))
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.MCP != nil {
		mux.Handle("/mcp-stdio", &relayHandler{ctx: s.ctx, mcp: s.MCP, log: s.log})
	}
	s.ln = ln
	s.hs = &http.Server{
		Handler:           s.track(mux),
		ConnContext:       ConnContext,
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		s.hs.Serve(ln)
	}()
	return nil
}

// track counts the handlers running, so Close can wait for them: a relayed session's
// connection is hijacked and no longer the http.Server's to wait for.
func (s *SocketServer) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Done()
		next.ServeHTTP(w, r)
	})
}

// Close ends relayed sessions, lets quick calls finish for half a second, then closes
// what is left (a navigation streaming its progress is cancelled by its connection
// closing, which stops the robot), removes the socket and waits for every handler. It is
// safe to call twice.
func (s *SocketServer) Close() error {
	if s.hs == nil {
		return nil
	}
	var err error
	s.once.Do(func() {
		s.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if s.hs.Shutdown(ctx) != nil {
			s.hs.Close()
		}
		err = s.ln.Close()
		<-s.served
		s.inFlight.Wait()
	})
	return err
}

// graphQLHandler answers POST /graphql on the socket for `devgraph query`.
func graphQLHandler(exec graph.GraphQLExecutor, readOnly bool) http.Handler {
	mode := graph.GraphQLReadWrite
	if readOnly {
		mode = graph.GraphQLReadOnlyServer // queries, and robotStop: stopping is always allowed
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "use POST", http.StatusMethodNotAllowed)
			return
		}
		// The caller line comes first; the GraphQL request is the rest of the body.
		ctx, err := CallerContext(r)
		if err != nil {
			graphQLRefusal(w, err)
			return
		}
		var req graph.GraphQLRequest
		body, err := io.ReadAll(io.LimitReader(r.Body, exec.MaxRequestBytes()+1))
		switch {
		case err != nil:
			err = graph.Errorf(graph.EINVALID, "could not read the request: %v", err)
		case int64(len(body)) > exec.MaxRequestBytes():
			err = graph.Errorf(graph.ELIMIT, "the request is larger than %d bytes; send a smaller query or fewer variables", exec.MaxRequestBytes())
		default:
			// Checked before decoding: encoding/json would replace invalid UTF-8.
			err = graph.CheckJSONText(body)
		}
		if err == nil {
			if derr := json.Unmarshal(body, &req); derr != nil {
				err = graph.Errorf(graph.EINVALID, "malformed request body: %v", derr)
			}
		}
		if err != nil {
			graphQLRefusal(w, err)
			return
		}
		resp, _ := exec.ExecuteGraphQL(ctx, req, mode)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
}

// graphQLRefusal answers 400 with a GraphQL error carrying err's code and field.
func graphQLRefusal(w http.ResponseWriter, err error) {
	ext := map[string]any{"code": graph.ErrorCode(err)}
	if f := graph.ErrorField(err); f != "" {
		ext["field"] = f
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"message": graph.ErrorMessage(err), "extensions": ext}}})
}
