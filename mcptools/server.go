package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/query"
	"github.com/devgraph/devgraph/search"
)

// Options configure a Server.
type Options struct {
	// ReadOnly leaves out every tool that writes to the graph or moves a robot
	// (robot_parameters stays, reading only; robot_stop stays: stopping is always
	// allowed).
	ReadOnly bool
	// Writable, when set, says whether the graph takes writes right now (a fleet's front
	// end is read-only while the cluster is mid-upgrade): while it does not, the tools are
	// those of ReadOnly, and sessions are told (notifications/tools/list_changed) each
	// time that changes.
	Writable graph.WriteState
	// Toolsets chooses the tools offered: "graph" (reading), "edit" (writing), "robots".
	// Nil offers graph and edit, and the robot tools once any robot is stored (sessions
	// then get notifications/tools/list_changed); naming "robots" offers them always.
	Toolsets []string
	// Exec runs graph_query and serves devgraph://schema. Without it graph_query
	// answers that GraphQL is not available on this server.
	Exec *query.Executor
	// Finder answers graph_find's name search: the index GraphQL find uses, so both rank
	// alike. Required.
	Finder graph.Finder
	// Devices reads stored device records for graph_find's device hits (ref, presence,
	// binding, tags): the store, as the name index reads it. Nil reads them through the
	// service's device views, which also take a snapshot and match each device.
	Devices graph.DeviceReader
	// Hosts says which hosts of a fleet are live, so graph_find marks a device whose
	// host is offline; nil on one machine (every device's host is this one).
	Hosts graph.HostStatus
	// Notifier tells the server about committed changes, which become
	// notifications/resources/updated for subscribers.
	Notifier graph.Notifier
	// RobotEvents subscribes to robot state changes (fn gets the robot's ref).
	RobotEvents func(fn func(ref string)) (cancel func())
	// Logger receives the server's logs (never stdout). Default: discard.
	Logger *slog.Logger
	// Version is reported as serverInfo.version.
	Version string
	// MaxPage caps every listing's page size (default 100).
	MaxPage int
	// NotifyInterval is how often coalesced resource notifications are sent
	// (default 100 ms).
	NotifyInterval time.Duration
	// MaxHTTPSessions caps the MCP sessions open at once over HTTP (default
	// DefaultMaxHTTPSessions; negative: no cap); an initialize past it is refused.
	MaxHTTPSessions int
}

// DefaultMaxPage is the page cap when Options.MaxPage is 0.
const DefaultMaxPage = 100

// Server is devgraph's MCP server: the tools, resources and prompts over one
// graph.Service, served on stdio and streamable HTTP.
type Server struct {
	svc  graph.Service
	opts Options
	log  *slog.Logger
	mcp  *server.MCPServer

	tools []*toolDef
	// holdable names the tools whose answers are made while their commit runs.
	holdable map[string]bool

	robotsMu    sync.Mutex
	robotsShown bool // the robot tools are registered
	robotsAuto  bool // they appear once a robot is stored
	blocked     bool // Options.Writable says no writes now: the read-only tools are offered (under robotsMu)

	subs     *subscriptions
	sessions *sessionCap // the HTTP session cap (sessions.go)

	httpMu      sync.Mutex
	http        *server.StreamableHTTPServer
	httpHandler http.Handler

	closeOnce sync.Once
	cancels   []func()
	done      chan struct{}
	loops     sync.WaitGroup // the flush loop; Close waits for it

	changesMu     sync.Mutex
	changesCancel func() // the current subscription to committed changes

	readyOnce sync.Once // the first request waits for the sources' first reading (ready.go)

	// testInitDelay slows initialize down in tests, to show that later requests of the
	// session wait for it.
	testInitDelay time.Duration
	// testInFlightBytes, when set, replaces maxInFlightBytes (tests of the bound).
	testInFlightBytes int
}

// New builds the server: it registers the tools (fewer in read-only mode), resources
// and prompts, and subscribes to opts.Notifier and opts.RobotEvents. Close releases
// those subscriptions.
func New(svc graph.Service, opts Options) (*Server, error) {
	if svc == nil {
		return nil, errors.New("mcptools: nil service")
	}
	if opts.Finder == nil {
		return nil, errors.New("mcptools: nil Options.Finder (graph_find's name index)")
	}
	if opts.Devices == nil {
		opts.Devices = search.ServiceNames(svc)
	}
	if opts.MaxPage <= 0 {
		opts.MaxPage = DefaultMaxPage
	}
	if opts.MaxPage > graph.MaxPageSize {
		opts.MaxPage = graph.MaxPageSize
	}
	if err := checkToolsets(opts.Toolsets); err != nil {
		return nil, err
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.NotifyInterval <= 0 {
		opts.NotifyInterval = 100 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{svc: svc, opts: opts, log: log, done: make(chan struct{})}
	s.subs = newSubscriptions(s)

	hooks := &server.Hooks{}
	s.subs.install(hooks)
	s.installNotFound(hooks)
	s.installReady(hooks)
	if opts.MaxHTTPSessions == 0 {
		opts.MaxHTTPSessions = DefaultMaxHTTPSessions
	}
	if opts.MaxHTTPSessions > 0 {
		s.sessions = &sessionCap{max: opts.MaxHTTPSessions, log: log, open: map[string]struct{}{}}
		s.sessions.install(hooks)
	}
	// The client's own name goes to the HTTP access log for every request (initialize
	// carries it; later requests have it from the session or their _meta).
	hooks.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any) {
		if method != mcp.MethodInitialize {
			graph.SetClientName(ctx, clientName(ctx))
		}
	})
	hooks.AddBeforeInitialize(func(ctx context.Context, _ any, req *mcp.InitializeRequest) {
		graph.SetClientName(ctx, cleanClientName(req.Params.ClientInfo.Name))
		if d := s.testInitDelay; d > 0 {
			time.Sleep(d)
		}
	})

	s.mcp = server.NewMCPServer("devgraph", opts.Version,
		server.WithTitle("devgraph — the hardware graph"),
		server.WithInstructions(instructions),
		server.WithToolCapabilities(true), // the robot tools appear when a robot does
		server.WithResourceCapabilities(true, false),
		server.WithPromptCapabilities(false),
		server.WithCompletions(),
		server.WithResourceCompletionProvider(completer{s}),
		server.WithPromptCompletionProvider(completer{s}),
		server.WithLogging(),
		server.WithRecovery(),
		// Every structured result is checked against its tool's output schema: a result
		// that breaks the contract becomes an error instead of misleading a client.
		server.WithOutputSchemaValidation(),
		server.WithResourceRecovery(),
		server.WithHooks(hooks),
		// mcp-go logs every request at Info; only its warnings reach our log.
		server.WithLogger(slog.New(minLevel{log.Handler(), slog.LevelWarn})),
		server.WithPaginationLimit(200),
	)

	s.tools = append(s.graphTools(), s.robotTools()...)
	s.holdable = map[string]bool{}
	for _, t := range s.tools {
		// The edit tools' only effect is their writes: their answers may be made while
		// those commit (answerWhenDurable). A robot tool's may not: it moves a robot.
		s.holdable[t.name] = t.set == toolsetEdit
	}
	if opts.Writable != nil {
		s.blocked = opts.Writable.ReadOnly() != ""
	}
	s.mcp.AddTools(s.serverTools(toolsetGraph, toolsetEdit)...) // no session exists yet: nobody to notify
	switch {
	case hasToolset(opts.Toolsets, toolsetRobots):
		s.showRobots()
	case opts.Toolsets == nil:
		s.robotsAuto = true
		s.checkRobots(context.Background())
	}
	s.addResources()
	s.addPrompts()

	if opts.Notifier != nil {
		s.listenChanges(opts.Notifier)
	}
	if opts.Writable != nil && !opts.ReadOnly {
		s.cancels = append(s.cancels, opts.Writable.OnReadOnly(s.writeStateChanged))
		s.writeStateChanged() // a change before the subscription
	}
	if opts.RobotEvents != nil {
		s.cancels = append(s.cancels, opts.RobotEvents(func(ref string) {
			s.subs.onRobot(ref)
			s.robotSeen()
		}))
	}
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		s.subs.run(s.done, opts.NotifyInterval)
	}()
	return s, nil
}

// instructions say once what every tool shares, so no description repeats it.
const instructions = `devgraph keeps a graph of the hardware around you: devices as the sources see them, stable identities for them, tags, notes, relations (how things are wired) and an audit changelog.
Ids: identity:<slug> (or the bare slug); a device by its ref (usb:3-3.2, alsa:card:PCH, robot:scout) or device:<key>; note:<uuid>; tag:<ns>:<value>; client:<source>:<name> (applications); rel:<uuid> (declared relation), obs:<hash> (observed). Ids are case-insensitive (a device also by any ref it had, a robot by its bare name); an unknown one is answered with the closest id when there is one.
Tags are namespace:value (role:synth); call graph_suggest_tags first and reuse its terms.
Every write takes why: an optional reason, recorded as the change's changelog message.
Listings page: pass next_cursor back as cursor; limit sets the page size. dry_run: true, where offered, reports what would change and writes nothing. Results are compact; detail: true, where offered, adds raw attrs and full records.
Start with graph_find or graph_unbound; graph_browse shows a node and its neighbours; graph_query runs any GraphQL read (schema: resource devgraph://schema).
Robots: name one by its identity or its ref (robot:scout); robot_status lists them. Arm before driving; robot_stop always works.`

// listenChanges subscribes to committed changes. When the store drops the subscription
// (this server fell too far behind its writes; graph.Notifier), the subscribers are told:
// every resource a session watches is reported updated at the next flush, so each client
// re-reads what it shows, and the server subscribes again.
func (s *Server) listenChanges(n graph.Notifier) {
	s.changesMu.Lock()
	defer s.changesMu.Unlock()
	select {
	case <-s.done:
		return // closed meanwhile
	default:
	}
	s.changesCancel = n.Subscribe(func(evs []*graph.Event) {
		if evs != nil {
			s.subs.onEvents(evs)
			for _, ev := range evs {
				if strings.HasPrefix(ev.Target, "device:robot:") || strings.HasPrefix(ev.Action, "robot.") {
					s.robotSeen()
					break
				}
			}
			return
		}
		s.log.Warn("mcp: fell behind the store's changes; telling every subscriber its resources changed and subscribing again")
		s.subs.markAll()
		s.listenChanges(n)
	})
}

// MCPServer exposes the underlying mcp-go server (for in-process clients in tests and
// tools that embed devgraph).
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// Close stops notifications and releases the subscriptions made by New. Safe to call
// twice.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		for _, c := range s.cancels {
			c()
		}
		s.changesMu.Lock() // a dropped subscription cannot subscribe again past this
		if s.changesCancel != nil {
			s.changesCancel()
			s.changesCancel = nil
		}
		close(s.done)
		s.changesMu.Unlock()
		s.loops.Wait()
		s.httpMu.Lock()
		h := s.http
		s.httpMu.Unlock()
		if h != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			h.Shutdown(ctx) // closes the sessions and stops the idle-session sweeper
		}
	})
	return nil
}

// HTTPHandler returns the streamable HTTP transport (both protocol eras; legacy
// sessions are kept in memory and expire after 30 idle minutes). Mount it at /mcp.
func (s *Server) HTTPHandler() http.Handler {
	s.httpMu.Lock()
	defer s.httpMu.Unlock()
	if s.httpHandler == nil {
		s.http = server.NewStreamableHTTPServer(s.mcp,
			server.WithStateful(true),
			server.WithSessionIdleTTL(30*time.Minute),
			server.WithStreamableHTTPLogger(s.log),
			server.WithHeartbeatInterval(30*time.Second),
			server.WithHTTPContextFunc(markHTTP),
		)
		var h http.Handler = s.http
		if s.sessions != nil {
			h = s.sessions.limit(h)
		}
		// mcp-go reads whole bodies into memory; bound them. Text that is not valid
		// UTF-8 is refused before mcp-go decodes (and would replace) it.
		s.httpHandler = http.MaxBytesHandler(refuseBadTextHTTP(h), maxHTTPBody)
	}
	return s.httpHandler
}

// maxHTTPBody bounds one POST to /mcp.
const maxHTTPBody = 8 << 20

// ToolNames lists the registered tools, sorted.
func (s *Server) ToolNames() []string {
	var names []string
	for name := range s.mcp.ListTools() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// toolDef is one tool: its definition, arguments and handler.
type toolDef struct {
	name        string
	title       string
	desc        string
	params      []param
	out         func() json.RawMessage // the output schema, encoded (typedSchema)
	set         string                 // its toolset: graph, edit or robots
	write       bool                   // writes the graph or moves a robot: left out in read-only mode
	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool
	handler     func(ctx context.Context, c *call) (*mcp.CallToolResult, error)
	// readOnlyVariant replaces the tool in read-only mode instead of removing it.
	readOnlyVariant *toolDef
}

func (t *toolDef) tool() mcp.Tool {
	return mcp.Tool{
		Name:        t.name,
		Title:       t.title,
		Description: t.desc,
		InputSchema: inputSchema(t.params),
		// Encoded: mcp-go's result check would encode a structured schema again on every
		// call (its outputSchemaJSONFor); tools/list writes the same bytes either way.
		RawOutputSchema: t.out(),
		Annotations: mcp.ToolAnnotation{
			Title:           t.title,
			ReadOnlyHint:    mcp.ToBoolPtr(t.readOnly),
			DestructiveHint: mcp.ToBoolPtr(t.destructive),
			IdempotentHint:  mcp.ToBoolPtr(t.idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(t.openWorld),
		},
	}
}

// call is one tool call with its checked arguments.
type call struct {
	args
	req       mcp.CallToolRequest
	actor     string
	requestID string
}

// wrap checks the arguments, sets the actor and request id, and turns errors into
// isError results (user-fixable) or protocol errors (faults).
func (s *Server) wrap(t *toolDef) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := checkArgs(t.name, t.params, req.Params.Arguments)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		c := &call{args: a, req: req, actor: actorFor(ctx), requestID: graph.NewRequestID()}
		ctx = graph.WithActor(ctx, c.actor)
		ctx = graph.WithRequestID(ctx, c.requestID)
		if msg := c.str("why"); msg != "" {
			ctx = graph.WithMessage(ctx, msg)
		}
		res, err := t.handler(ctx, c)
		if err != nil {
			return s.toolError(t.name, c, err)
		}
		setHeldFailure(ctx, func(err error) (*mcp.CallToolResult, error) { return s.toolError(t.name, c, err) })
		return res, nil
	}
}

// toolError turns a handler error into what the model sees. Codes a model can act on
// become isError results carrying the message (which names the field and, for unknown
// ids, the closest match) and a next step; anything else is logged and answered with a
// protocol error that shows no internals.
func (s *Server) toolError(tool string, c *call, err error) (*mcp.CallToolResult, error) {
	code := graph.ErrorCode(err)
	switch code {
	case graph.EINTERNAL:
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return mcp.NewToolResultError(tool + ": the call was cancelled before it finished."), nil
		}
		s.log.Error("tool call failed", "tool", tool, "request_id", c.requestID, "err", err)
		return nil, fmt.Errorf("devgraph internal error in %s (request %s); the server log has the details", tool, c.requestID)
	}
	// The problem is the service's, word for word; the advice after it is the error's
	// next steps said as tool calls (advice.go).
	msg := graph.ErrorMessage(err)
	if graph.ErrorField(err) == "message" {
		// The service names the changelog message; a tool takes it as why.
		return mcp.NewToolResultError(sentences(msg, "The message is the why argument: fix or shorten it, or leave it out.")), nil
	}
	if tool == "graph_relate" || tool == "graph_trace" {
		// The service names the offending field; a model needs it in the sentence.
		if f := graph.ErrorField(err); f != "" && !namesField(msg, f) {
			msg = f + ": " + msg
		}
	}
	return mcp.NewToolResultError(sentences(msg, adviceText(tool, graph.ErrorSteps(err)))), nil
}

// namesField reports whether msg already names the argument field: it starts with it,
// quotes it, or (for a name too long to be an ordinary word, like from_port or attrs)
// contains it.
func namesField(msg, f string) bool {
	for _, sep := range []string{" ", ":", "."} {
		if strings.HasPrefix(msg, f+sep) {
			return true
		}
	}
	return strings.Contains(msg, `"`+f+`"`) || (len(f) > 4 && strings.Contains(msg, f))
}

// sentences joins a message and its next step as two sentences.
func sentences(msg, next string) string {
	if next == "" {
		return msg
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, ")") {
		msg += "."
	}
	return msg + " " + next
}

// actorFor names who makes the request. A request the transport authenticated with a
// bearer token keeps the token's actor ("http:<token name>"): a client's name is its own
// choice, so it cannot stand for a token holder. Otherwise the actor is
// "mcp:<client name>". Either way the client's name goes to the transport's access log.
func actorFor(ctx context.Context) string {
	name := clientName(ctx)
	graph.SetClientName(ctx, name)
	if graph.ActorAuthenticated(ctx) {
		return graph.ActorFrom(ctx)
	}
	return "mcp:" + name
}

// clientName is the client's self-chosen name: from the request's own _meta in the
// 2026-07-28 era, from initialize in the 2025-11-25 era, and "unknown" when the client
// gave none.
func clientName(ctx context.Context) string {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientInfo != nil {
			return cleanClientName(info.ClientInfo.Name)
		}
		return "unknown"
	}
	if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return cleanClientName(sess.GetClientInfo().Name)
	}
	return "unknown"
}

// cleanClientName keeps a client's self-chosen name usable as an actor: printable,
// no spaces or glob characters, at most 64 bytes.
func cleanClientName(name string) string {
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "?")
	}
	var b strings.Builder
	for _, r := range strings.TrimSpace(name) {
		switch {
		case unicode.IsSpace(r):
			b.WriteByte('-')
		case !unicode.IsPrint(r), r == '*', r == '?', r == '[', r == ']':
			continue
		default:
			b.WriteRune(r)
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// result renders v as the structured result with text as its short rendering. v is
// encoded once, here: the output-schema check decodes these bytes and the response
// carries them as they are (a map would be encoded twice more and decoded once), so
// what is checked is exactly what the client reads.
func result(v any, text string) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), text), nil
}

// minLevel drops records below its level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}
