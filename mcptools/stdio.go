package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/devgraph/devgraph/graph"
)

// maxStdioLine bounds one JSON-RPC message on stdin.
const maxStdioLine = 16 << 20

// maxInFlight bounds the requests served at once on stdio; beyond it reading pauses.
// It is far above anything a client sends at once, and no request holds a slot that
// another needs: robot_stop is answered while navigations block.
const maxInFlight = 1024

// maxInFlightBytes bounds the request lines held at once on stdio, a line being held
// until its answer is written: a client sending 16 MiB requests without reading the
// answers would otherwise have up to 1,024 of them (16 GiB) held. Counted in whole
// MiB, so lines under one are not counted (maxInFlight bounds those, under 1 GiB).
const maxInFlightBytes = 256 << 20

const inFlightUnit = 1 << 20

var stdioSessions atomic.Int64

// ServeStdio speaks MCP over newline-delimited JSON-RPC on in/out until in reaches
// EOF or ctx is cancelled, and returns (nil on EOF). Only protocol goes to out; logs go
// to the logger.
//
// On EOF it stops reading, cancels navigations at once (their robots stop) and gives
// the other requests still running up to stdioGrace to finish and write their
// responses (`printf '<initialize>\n<initialized>\n<tools/call>\n' | devgraph serve`
// gets its answer); then it cancels what is left. When ctx is cancelled it cancels
// every request at once.
//
// Every request is served on its own goroutine: mcp-go's stdio server runs tool calls
// on a fixed worker pool (5 by default), where long robot_navigate calls would make
// robot_stop wait in the queue. Notifications (notifications/cancelled included) are
// handled in order as they arrive, and so is initialize: no later request of the
// session runs before the client's name is known.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	sess := &stdioSession{
		id:    fmt.Sprintf("stdio-%d", stdioSessions.Add(1)),
		notes: make(chan mcp.JSONRPCNotification, 256),
	}
	if err := s.mcp.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.WithoutCancel(ctx), sess.id)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ctx = s.mcp.WithContext(ctx, sess)
	// Requests that run until stopped (navigations, listen streams) run on a context
	// that also ends with the input.
	motionCtx, stopMotion := context.WithCancel(ctx)
	defer stopMotion()

	w := &lineWriter{w: out, broken: func() {
		s.log.Info("stdio: the client no longer reads the output (broken pipe); ending the session")
		cancel()
	}}
	var wg sync.WaitGroup

	// Notifications queued by the server (progress, resource updates, logs).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case n := <-sess.notes:
				if done, ok := notesBarrier(n); ok {
					close(done) // every notification queued before it is written
					continue
				}
				if err := w.write(n); err != nil {
					s.log.Debug("stdio: write notification", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	lines := make(chan stdioLine)
	readErr := make(chan error, 1)
	readerDone := make(chan struct{})
	go func() {
		// A Read blocked when ctx ends is interrupted by stopReading at the end.
		defer close(readerDone)
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(r)
			tooLong := errors.Is(err, errLineTooLong)
			if tooLong {
				err = nil
			}
			if len(line) > 0 || tooLong {
				select {
				case lines <- stdioLine{b: line, tooLong: tooLong}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	budget := maxInFlightBytes
	if s.testInFlightBytes > 0 {
		budget = s.testInFlightBytes
	}
	l := &stdioLoop{w: w, notes: sess.notes, slots: make(chan struct{}, maxInFlight),
		mib:     make(chan struct{}, max(1, budget/inFlightUnit)),
		pool:    &workers{next: make(chan func()), done: ctx.Done()},
		cancels: &requestCancels{m: map[string]*context.CancelFunc{}}}
	var result error
	eof := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop // the caller ended the session: not an error
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				eof = true
			} else {
				result = fmt.Errorf("read stdin: %w", err)
			}
			break loop
		case line := <-lines:
			s.stdioMessage(ctx, motionCtx, line, l)
		}
	}
	stopMotion()
	if eof {
		// The client said all it will say; let its last calls finish and answer.
		inFlight := make(chan struct{})
		go func() { l.reqs.Wait(); close(inFlight) }()
		select {
		case <-inFlight:
		case <-ctx.Done():
		case <-time.After(stdioGrace):
			s.log.Warn("stdio: requests still running after the input ended; cancelling them", "grace", stdioGrace)
		}
	}
	cancel()
	// Requests see their context end and finish (a navigation brings its robot to
	// rest). A reader that stopped reading could leave a response write blocked
	// forever, so the wait is bounded: the session ends regardless.
	finished := make(chan struct{})
	go func() { l.reqs.Wait(); wg.Wait(); l.pool.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(stdioDrain):
		s.log.Warn("stdio: requests still running at the end of the session; not waiting for them")
	}
	s.stopReading(in, readerDone)
	return result
}

// stopReading ends the goroutine reading in: when the session ended with the input still
// open (ctx ended first), a Read may be blocked in it, so the read is interrupted — by a
// read deadline where in has one (pipes, sockets, a terminal's stdin), else by closing
// in — and the goroutine waited for (bounded: a Read nothing can interrupt is left to end
// at the next line or EOF, and logged).
func (s *Server) stopReading(in io.Reader, done <-chan struct{}) {
	select {
	case <-done:
		return // EOF or a read error ended it already
	default:
	}
	interrupted := false
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		interrupted = d.SetReadDeadline(time.Now()) == nil
	}
	if c, ok := in.(io.Closer); ok && !interrupted {
		c.Close()
	}
	select {
	case <-done:
	case <-time.After(stdioDrain):
		s.log.Warn("stdio: the input's reader could not be interrupted; it ends at the next line or EOF")
	}
}

// stdioGrace is how long requests still running when the input ends may take to finish
// before they are cancelled.
const stdioGrace = 5 * time.Second

// stdioDrain bounds how long ServeStdio waits for cancelled requests to return.
const stdioDrain = 3 * time.Second

// readLine reads one line. A line over maxStdioLine is skipped to its end and reported
// as errLineTooLong with its first oversizeHead bytes, where its id may be (oversizeID).
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	over := false
	for {
		chunk, isPrefix, err := r.ReadLine()
		switch {
		case over:
		case len(buf)+len(chunk) <= maxStdioLine:
			buf = append(buf, chunk...)
		default:
			over = true
			head := make([]byte, 0, oversizeHead)
			head = append(head, buf[:min(len(buf), oversizeHead)]...)
			buf = append(head, chunk[:min(len(chunk), oversizeHead-len(head))]...)
		}
		if over && (err != nil || !isPrefix) {
			return buf, errLineTooLong
		}
		if err != nil {
			return buf, err
		}
		if !isPrefix {
			return buf, nil
		}
	}
}

var errLineTooLong = errors.New("line too long")

// oversizeHead is how much of an oversize line is kept, to find its id in.
const oversizeHead = 4 << 10

// stdioLine is a line read, or when tooLong the head of one over maxStdioLine.
type stdioLine struct {
	b       []byte
	tooLong bool
}

// oversizeID is the id of the request whose line begins with head, when head has it
// whole among the members before the first one it cuts short (clients write the id
// before the params); else null. An id is whole when a comma or the object's end follows
// it within head (a number cut short would read as another number); a second id member
// makes it null, as the line's last one is the id.
func oversizeID(head []byte) mcp.RequestId {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return mcp.NewRequestId(nil)
	}
	var found any
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil || !delimitedAt(head, dec.InputOffset()) {
			break
		}
		if key != "id" {
			continue
		}
		var id any
		if found != nil || json.Unmarshal(v, &id) != nil {
			return mcp.NewRequestId(nil)
		}
		switch id.(type) {
		case string, float64:
			found = id
		default:
			return mcp.NewRequestId(nil)
		}
	}
	return mcp.NewRequestId(found)
}

// delimitedAt says whether a comma or a closing brace follows offset in b (after spaces).
func delimitedAt(b []byte, offset int64) bool {
	for _, c := range b[min(int(offset), len(b)):] {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case ',', '}':
			return true
		}
		return false
	}
	return false
}

// motionTools are the tools that move a robot for as long as they run: when the input
// ends they are cancelled at once (the robot stops) rather than given a grace period,
// as is a subscriptions/listen stream, which never ends by itself (its closing result
// is written).
var motionTools = map[string]bool{"robot_navigate": true}

func (s *Server) stdioMessage(ctx, motionCtx context.Context, in stdioLine, l *stdioLoop) {
	var base struct {
		stdioHead
		// What the loop reads of params itself, decoded with the rest: params of another
		// shape (paramsMismatch) leave it empty, and are mcp-go's to refuse.
		Params struct {
			Name      string          `json:"name"`
			RequestID json.RawMessage `json:"requestId"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	w := l.w
	line := in.b
	if in.tooLong {
		s.stdioAnswer(ctx, l, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: oversizeID(line),
			Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, fmt.Sprintf("the message is too large (over %d MiB); send smaller messages", maxStdioLine>>20), nil)})
		return
	}
	if resp, refused := refuseBadText(line); refused {
		// Text that is not valid UTF-8 never reaches mcp-go, which would replace it.
		s.log.Info("stdio: refused a message holding text that is not valid UTF-8")
		if resp != nil {
			s.stdioAnswer(ctx, l, resp)
		}
		return
	}
	if err := json.Unmarshal(line, &base); err != nil && !paramsMismatch(line, err) {
		code, msg := mcp.PARSE_ERROR, "Parse error: each line must be one JSON-RPC message"
		if json.Valid(line) { // JSON, but not an object: an array, a number, a string
			code, msg = mcp.INVALID_REQUEST, "Invalid Request: each line must be one JSON-RPC message, a JSON object"
		}
		s.stdioAnswer(ctx, l, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
			Error: mcp.NewJSONRPCErrorDetails(code, msg, nil)})
		return
	}
	isRequest := len(base.ID) > 0 && string(base.ID) != "null" && base.Method != ""
	if isRequest && base.Method == string(mcp.MethodInitialize) {
		// initialize names the client (the actor of its changes): handle it before
		// reading on, so a tools/call sent right behind it already knows the name.
		if resp := s.mcp.HandleMessage(ctx, line); resp != nil {
			s.stdioAnswer(ctx, l, resp)
		}
		return
	}
	if !isRequest {
		if base.Method == "" {
			if len(base.Result) == 0 && len(base.Error) == 0 { // {} or null: no message at all
				s.stdioAnswer(ctx, l, mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(nil),
					Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, "Invalid Request: a JSON-RPC message needs a method (or, answering us, a result or an error)", nil)})
			}
			return // a response to something we never asked; ignore
		}
		// Notifications are handled in order, at once: notifications/cancelled must
		// reach the request it cancels without queueing behind other work. The request
		// may not have reached mcp-go yet (its worker has not started), so the loop's
		// own cancel for it is called too.
		if base.Method == string(mcp.MethodNotificationCancelled) && base.Params.RequestID != nil {
			l.cancels.cancel(base.Params.RequestID)
		}
		if resp := s.mcp.HandleMessage(ctx, line); resp != nil {
			s.stdioAnswer(ctx, l, resp)
		}
		return
	}
	hold := false
	if base.Method == string(mcp.MethodSubscriptionsListen) {
		ctx = motionCtx
	}
	if base.Method == string(mcp.MethodToolsCall) {
		if motionTools[base.Params.Name] {
			ctx = motionCtx
		}
		hold = s.holdable[base.Params.Name]
	}
	// A request that asked for progress is answered after the progress it sent: its
	// notifications go out through the session's notification writer, its answer here.
	flushNotes := l.flushNotes(len(base.Params.Meta.ProgressToken) > 0 && string(base.Params.Meta.ProgressToken) != "null")
	rctx, done := l.cancels.add(ctx, base.ID)
	started := l.spawn(ctx, len(line), func() {
		defer done()
		ctx, answered := graph.WithAnswerHook(rctx)
		defer answered() // after the answer is written (or the panic's error is)
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("stdio: panic serving request", "panic", r)
				var id any
				_ = json.Unmarshal(base.ID, &id)
				_ = w.write(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
					Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, "devgraph internal error; the server log has the details", nil)})
			}
		}()
		if hold {
			s.answerWhenDurable(ctx, line, base.ID, w, flushNotes)
			return
		}
		if resp := s.mcp.HandleMessage(ctx, line); resp != nil {
			flushNotes()
			if err := w.write(resp); err != nil {
				s.log.Debug("stdio: write response", "err", err)
			}
		}
	})
	if !started {
		done()
	}
}

// stdioLoop is what a stdio session's messages share: the output, the bound on requests
// in flight, the requests running and the workers running them, and their cancels.
type stdioLoop struct {
	w       *lineWriter
	notes   chan mcp.JSONRPCNotification // the session's, written in order by one goroutine
	slots   chan struct{}
	mib     chan struct{} // a token for each whole MiB of the request lines held
	reqs    sync.WaitGroup
	pool    *workers
	cancels *requestCancels
}

// spawn runs f on a worker once a slot of the in-flight bound is free, and room for
// held bytes more of request lines (maxInFlightBytes); false, and f not run, when ctx
// ended first.
func (l *stdioLoop) spawn(ctx context.Context, held int, f func()) bool {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	release := func(mib int) {
		for range mib {
			<-l.mib
		}
		<-l.slots
	}
	mib := min(held/inFlightUnit, cap(l.mib))
	for i := range mib {
		select {
		case l.mib <- struct{}{}:
		case <-ctx.Done():
			release(i)
			return false
		}
	}
	l.reqs.Add(1)
	l.pool.run(func() {
		defer l.reqs.Done()
		defer release(mib)
		f()
	})
	return true
}

// flushNotes returns, when wanted, a func that returns once every notification queued
// on the session before it was called has been written (or the session has ended);
// else a func that returns at once. A request's progress notifications are queued
// while it runs, so flushing before its answer keeps them ahead of it.
func (l *stdioLoop) flushNotes(wanted bool) func() {
	if !wanted {
		return func() {}
	}
	return func() {
		done := make(chan struct{})
		barrier := mcp.JSONRPCNotification{Notification: mcp.Notification{Method: notesBarrierMethod,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{notesBarrierMethod: done}}}}
		select {
		case l.notes <- barrier:
		case <-l.pool.done:
			return
		}
		select {
		case <-done:
		case <-l.pool.done:
		}
	}
}

// notesBarrierMethod marks flushNotes's barrier among a session's notifications: it is
// never written, its channel is closed when the writer reaches it.
const notesBarrierMethod = "devgraph/notes-barrier"

func notesBarrier(n mcp.JSONRPCNotification) (chan struct{}, bool) {
	if n.Method != notesBarrierMethod {
		return nil, false
	}
	done, ok := n.Params.AdditionalFields[notesBarrierMethod].(chan struct{})
	return done, ok
}

// paramsMismatch says whether err, from decoding line, is only that its params (or a
// member of them the loop reads) have another type than the loop reads: the rest of the
// message decodes (checked again without the params, as err names only the first
// mismatch), and mcp-go answers the params.
func paramsMismatch(line []byte, err error) bool {
	var t *json.UnmarshalTypeError
	if !errors.As(err, &t) || (t.Field != "params" && !strings.HasPrefix(t.Field, "params.")) {
		return false
	}
	var rest stdioHead
	return json.Unmarshal(line, &rest) == nil
}

// stdioHead is what the loop reads of a message besides its params.
type stdioHead struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// stdioAnswer writes v, one of the loop's own answers (to initialize, to a line it
// refuses), on a worker as every other answer is written: a client that stops reading
// would otherwise block the loop in the write, and neither the end of the input nor a
// signal would end the session.
func (s *Server) stdioAnswer(ctx context.Context, l *stdioLoop, v any) {
	l.spawn(ctx, 0, func() {
		if err := l.w.write(v); err != nil {
			s.log.Debug("stdio: write response", "err", err)
		}
	})
}

// answerWhenDurable serves a call of a tool that only writes the graph (the edit
// toolset) so that its answer is made while its transaction commits: the store returns
// the write's results once only bbolt's commit is left (graph.WithCommitHold), mcp-go
// checks and this encodes the answer meanwhile, and the answer is written once the
// commit is durable — or, if the commit failed, the error the tool would have answered
// in its place (heldFailure). A note is answered 25–60 µs sooner so.
func (s *Server) answerWhenDurable(ctx context.Context, line []byte, rawID json.RawMessage, w *lineWriter, flushNotes func()) {
	ctx, settle := graph.WithCommitHold(ctx)
	failure := &heldFailure{}
	ctx = context.WithValue(ctx, heldFailureKey{}, failure)
	resp := s.mcp.HandleMessage(ctx, line)
	if resp == nil {
		_ = settle()
		return
	}
	b, merr := json.Marshal(resp)
	if err := settle(); err != nil {
		if alt := failure.answer(rawID, err); alt != nil {
			resp = alt
			b, merr = json.Marshal(resp)
		}
	}
	if merr != nil {
		s.log.Debug("stdio: encode response", "err", merr)
		return
	}
	flushNotes()
	if err := w.writeLine(b); err != nil {
		s.log.Debug("stdio: write response", "err", err)
	}
}

// heldFailure answers a tool call whose held commit failed: wrap sets render, the tool's
// own rendering of an error, once the tool's handler has returned its result.
type heldFailure struct {
	render func(error) (*mcp.CallToolResult, error)
}

type heldFailureKey struct{}

// setHeldFailure tells the edge serving ctx, when it held a commit of the call, how the
// tool answers an error.
func setHeldFailure(ctx context.Context, render func(error) (*mcp.CallToolResult, error)) {
	if f, ok := ctx.Value(heldFailureKey{}).(*heldFailure); ok {
		f.render = render
	}
}

// answer is the response the call gets when its commit failed with err; nil when the
// handler answered without a result (its error is the answer already).
func (f *heldFailure) answer(rawID json.RawMessage, err error) mcp.JSONRPCMessage {
	if f.render == nil {
		return nil
	}
	var id mcp.RequestId
	_ = json.Unmarshal(rawID, &id)
	res, perr := f.render(err)
	if perr != nil {
		// As mcp-go answers a handler's error.
		return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: id,
			Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, perr.Error(), nil)}
	}
	return mcp.NewJSONRPCResultResponse(id, res)
}

// requestCancels holds a cancel for each request the loop has handed to a worker and
// not yet answered, by id: a notifications/cancelled read right behind its request
// reaches it even before mcp-go has registered the request's own cancel.
type requestCancels struct {
	mu sync.Mutex
	m  map[string]*context.CancelFunc
}

// add returns ctx for serving the request with id, which cancel(id) ends, and done,
// which forgets it and must be called once the request has been answered.
func (c *requestCancels) add(ctx context.Context, id json.RawMessage) (context.Context, func()) {
	key := requestKey(id)
	ctx, cancel := context.WithCancel(ctx)
	entry := &cancel
	c.mu.Lock()
	c.m[key] = entry // a client reusing an id while it runs cancels the newer request
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		if c.m[key] == entry {
			delete(c.m, key)
		}
		c.mu.Unlock()
		cancel()
	}
}

// cancel ends the request with id, if one is running.
func (c *requestCancels) cancel(id json.RawMessage) {
	c.mu.Lock()
	f := c.m[requestKey(id)]
	c.mu.Unlock()
	if f != nil {
		(*f)()
	}
}

// requestKey is a request id as a map key: 7 and 7.0 alike, and "7" apart from 7.
func requestKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// workers runs each request on a goroutine of its own, reusing one that has finished a
// request and waits for the next: a new goroutine starts on a small stack and grows it,
// copying, through mcp-go's and encoding/json's calls on every request (about 40 µs of
// CPU a call in a profile of graph_find); a reused one keeps its grown stack. No request
// waits for another: with no worker idle, a new one starts. Idle workers end when done
// is closed (the session's end); wg counts them.
type workers struct {
	next chan func() // unbuffered: a send succeeds only into an idle worker
	done <-chan struct{}
	wg   sync.WaitGroup
}

func (p *workers) run(f func()) {
	select {
	case p.next <- f:
	default:
		p.wg.Add(1)
		go p.loop(f)
	}
}

func (p *workers) loop(f func()) {
	defer p.wg.Done()
	for {
		f()
		select {
		case f = <-p.next:
		case <-p.done:
			return
		}
	}
}

// lineWriter writes one JSON message per line, one writer at a time. broken, if set,
// is called once when a write finds the reading end closed (EPIPE): nothing written
// after that can reach the client.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	broken func()
	once   sync.Once
}

func (l *lineWriter) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.writeLine(b)
}

// writeLine writes b, one encoded message, and its newline.
func (l *lineWriter) writeLine(b []byte) error {
	b = append(b, '\n')
	l.mu.Lock()
	_, err := l.w.Write(b)
	l.mu.Unlock()
	if err != nil && l.broken != nil && errors.Is(err, syscall.EPIPE) {
		l.once.Do(l.broken)
	}
	return err
}

// stdioSession is the one client on a stdio connection. It records client info from
// initialize (2025-11-25 era; the 2026-07-28 era brings it on every request) and the
// log level; resource subscriptions are tracked by the Server's hooks.
type stdioSession struct {
	id          string
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
	info        atomic.Value // mcp.Implementation
	caps        atomic.Value // mcp.ClientCapabilities
	level       atomic.Value // mcp.LoggingLevel
	version     atomic.Value // string
}

var (
	_ server.ClientSession              = (*stdioSession)(nil)
	_ server.SessionWithClientInfo      = (*stdioSession)(nil)
	_ server.SessionWithLogging         = (*stdioSession)(nil)
	_ server.SessionWithProtocolVersion = (*stdioSession)(nil)
)

func (s *stdioSession) SessionID() string                                   { return s.id }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *stdioSession) Initialize()                                         { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool                                   { return s.initialized.Load() }

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	v, _ := s.info.Load().(mcp.Implementation)
	return v
}
func (s *stdioSession) SetClientInfo(info mcp.Implementation) { s.info.Store(info) }
func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	v, _ := s.caps.Load().(mcp.ClientCapabilities)
	return v
}
func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps.Store(c) }
func (s *stdioSession) SetLogLevel(level mcp.LoggingLevel)             { s.level.Store(level) }
func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	v, ok := s.level.Load().(mcp.LoggingLevel)
	if !ok {
		return mcp.LoggingLevelError
	}
	return v
}
func (s *stdioSession) ProtocolVersion() string {
	v, _ := s.version.Load().(string)
	return v
}
func (s *stdioSession) SetProtocolVersion(v string) { s.version.Store(v) }
