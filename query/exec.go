package query

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"
	"github.com/graphql-go/graphql/language/parser"
	"github.com/graphql-go/graphql/language/source"

	"github.com/devgraph/devgraph/graph"
	"github.com/devgraph/devgraph/search"
)

// Options configure an Executor.
type Options struct {
	Limits Limits       // zero fields take DefaultLimits
	Logger *slog.Logger // internal errors go here (default: discarded)
	// Finder serves find; nil builds a search.Finder over the service (give the one
	// graph_find uses, so both rank alike from one index).
	Finder graph.Finder
	// Hosts serves the root field hosts on a fleet; nil (one machine) answers it empty.
	Hosts graph.FleetHosts
}

// Request is one GraphQL request.
type Request = graph.GraphQLRequest

// Executor runs GraphQL requests against a graph.Service. It is safe for concurrent use.
type Executor struct {
	schema graphql.Schema
	b      *builder
	limits Limits
	log    *slog.Logger
	cache  *docCache

	sdlOnce sync.Once
	sdl     string // printed on first use: a server's start does not wait for it
}

// New builds the schema over svc.
func New(svc graph.Service, opts Options) (*Executor, error) {
	if svc == nil {
		return nil, errors.New("query: nil service")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	l := opts.Limits.withDefaults()
	e := &Executor{limits: l, log: log, cache: newDocCache(l.CacheEntries)}
	finder := opts.Finder
	if finder == nil {
		finder = search.NewFinder(search.ServiceNames(svc))
	}
	e.b = &builder{svc: svc, finder: finder, hosts: opts.Hosts, rep: errorReporter{log: log}, limits: l}
	schema, err := newSchema(e.b)
	if err != nil {
		return nil, fmt.Errorf("query: build schema: %w", err)
	}
	e.schema = schema
	return e, nil
}

// Close releases nothing today; it is kept so callers can treat the executor like the
// other long-lived parts.
func (e *Executor) Close() error { return nil }

// SDL returns the schema in GraphQL schema definition language.
func (e *Executor) SDL() string {
	e.sdlOnce.Do(func() { e.sdl = printSDL(&e.schema) })
	return e.sdl
}

// Limits returns the limits in force (defaults filled).
func (e *Executor) Limits() Limits { return e.limits }

// Finder returns the name index find uses.
func (e *Executor) Finder() graph.Finder { return e.b.finder }

// Execute runs one request. readOnly refuses mutations (FORBIDDEN). The actor and request
// id recorded on changes come from ctx (graph.WithActor, graph.WithRequestID).
func (e *Executor) Execute(ctx context.Context, req Request, readOnly bool) *Response {
	m := graph.GraphQLReadWrite
	if readOnly {
		m = graph.GraphQLReadOnly
	}
	resp, _ := e.execute(ctx, req, m)
	return resp
}

// ExecuteGraphQL runs one request for a transport (graph.GraphQLExecutor): the response
// is a *Response.
func (e *Executor) ExecuteGraphQL(ctx context.Context, req graph.GraphQLRequest, m graph.GraphQLMode) (any, graph.GraphQLFailure) {
	return e.execute(ctx, req, m)
}

// MaxRequestBytes is the document limit plus the variables limit plus 4 KiB for the JSON
// around them.
func (e *Executor) MaxRequestBytes() int64 {
	return int64(e.limits.MaxDocumentBytes+e.limits.MaxVariablesBytes) + 4096
}

func (e *Executor) execute(ctx context.Context, req Request, m graph.GraphQLMode) (*Response, graph.GraphQLFailure) {
	if req.Query == "" {
		return errResponse(graph.EINVALID, "the request has no query; send {\"query\": \"{ stats { identities } }\"}"), graph.GraphQLBadRequest
	}
	if n := varsSize(req.Variables, 0); n > e.limits.MaxVariablesBytes {
		return errResponse(graph.ELIMIT, "the variables are about %d bytes; the limit is %d", n, e.limits.MaxVariablesBytes), graph.GraphQLBadRequest
	}
	ent := e.prepare(req.Query)
	if ent.resp != nil {
		return ent.resp, graph.GraphQLBadRequest
	}
	op, err := pickOperation(ent.doc, req.OperationName)
	if err != nil {
		return errResponse(graph.EINVALID, "%s", err), graph.GraphQLBadRequest
	}
	switch op.Operation {
	case ast.OperationTypeMutation:
		switch m {
		case graph.GraphQLGet:
			return errResponse(CodeForbidden, "mutations are not allowed over GET; send them with POST (Content-Type: application/json)"), graph.GraphQLWrongMethod
		case graph.GraphQLReadOnly:
			return errResponse(CodeForbidden, "this endpoint is read-only: it runs queries, not mutations; use the tools that change the graph (graph_bind, graph_tag, graph_note, graph_relate…)"), graph.GraphQLForbidden
		case graph.GraphQLReadOnlyServer:
			if !onlyStopsRobots(op, ent.doc) {
				return errResponse(CodeForbidden, "this server is read-only (--read-only): it runs queries and robotStop (stopping is always allowed), not other mutations; nothing was changed"), graph.GraphQLForbidden
			}
		}
	case ast.OperationTypeSubscription:
		return errResponse(graph.EINVALID, "subscriptions are not supported; poll with a query"), graph.GraphQLBadRequest
	}
	if c := complexity(&e.schema, ent.doc, op, req.Variables, e.limits); c > e.limits.MaxComplexity {
		return errResponse(graph.ELIMIT, "the query's complexity is %d (fields weighted by first and list sizes); the limit is %d. Ask for smaller pages (first) or fewer nested lists", c, e.limits.MaxComplexity), graph.GraphQLBadRequest
	}

	timeout := e.limits.Timeout
	if op.Operation == ast.OperationTypeMutation {
		timeout = e.limits.MutationTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A query reads one snapshot: one read view for all its resolvers, released only
	// after graphql-go's executor has finished (Execute below returns only then). Live
	// state is refreshed before the view opens, never inside it. Mutations hold no view:
	// their writes would wait on it.
	if op.Operation == ast.OperationTypeQuery {
		vctx, release, err := e.beginRead(runCtx, ent.live)
		if err != nil {
			if runCtx.Err() != nil {
				return errResponse(graph.ELIMIT, "the query ran out of time before it started (limit %v)", timeout), graph.GraphQLNotStarted
			}
			e.log.ErrorContext(ctx, "graphql read view", "request_id", graph.RequestIDFrom(ctx), "err", err)
			return errResponse(graph.ErrorCode(err), "%s", graph.ErrorMessage(err)), graph.GraphQLNotStarted
		}
		defer release()
		runCtx = vctx
	}
	st := &reqState{runCtx: runCtx}
	// graphql-go returns at once when its context ends but leaves the resolvers running;
	// give it a context that never ends so Execute returns only after the executor has
	// finished (resolvers stop themselves on runCtx), and only then release the request.
	execCtx := context.WithValue(context.WithoutCancel(runCtx), stateKey{}, st)
	opName := req.OperationName
	res := graphql.Execute(graphql.ExecuteParams{
		Schema:        e.schema,
		AST:           ent.execDoc,
		OperationName: opName,
		Args:          req.Variables,
		Context:       execCtx,
	})
	out := &Response{executed: true}
	if res.Data != nil {
		out.Data = res.Data
		o := order{schema: &e.schema, frags: docFragments(ent.doc), op: op, vars: req.Variables, hidden: ent.execDoc != ent.doc}
		if b, err := o.encodeData(res.Data); err != nil {
			e.log.ErrorContext(ctx, "graphql encode", "request_id", graph.RequestIDFrom(ctx), "err", err)
		} else {
			out.dataJSON = b
		}
		if ent.execDoc != ent.doc {
			stripTypeKeys(res.Data)
		}
	}
	// Errors without a path come before execution (variables that do not fit their types).
	beforeExec := res.Data == nil && len(res.Errors) > 0
	for _, fe := range res.Errors {
		if len(fe.Path) > 0 {
			beforeExec = false
		}
	}
	out.Errors = e.convertErrors(ctx, res.Errors, beforeExec)
	if beforeExec {
		out.executed = false
		return out, graph.GraphQLBadRequest
	}
	return out, graph.GraphQLOK
}

func (e *Executor) convertErrors(ctx context.Context, errs []gqlerrors.FormattedError, beforeExec bool) []Error {
	if len(errs) == 0 {
		return nil
	}
	out := make([]Error, 0, len(errs))
	for _, fe := range errs {
		ge := Error{Message: fe.Message, Path: fe.Path}
		for _, l := range fe.Locations {
			ge.Locations = append(ge.Locations, Location{Line: l.Line, Column: l.Column})
		}
		ge.Extensions = fe.Extensions
		if ge.Extensions == nil || ge.Extensions["code"] == nil {
			code := graph.EINVALID
			if !beforeExec {
				code = graph.EINTERNAL
				e.log.ErrorContext(ctx, "graphql execution error", "request_id", graph.RequestIDFrom(ctx), "err", fe.Message, "path", fe.Path)
			}
			ge.Extensions = map[string]any{"code": code}
		}
		out = append(out, ge)
	}
	return out
}

func docFragments(doc *ast.Document) map[string]*ast.FragmentDefinition {
	m := map[string]*ast.FragmentDefinition{}
	for _, d := range doc.Definitions {
		if f, ok := d.(*ast.FragmentDefinition); ok && f.Name != nil {
			m[f.Name.Value] = f
		}
	}
	return m
}

func pickOperation(doc *ast.Document, name string) (*ast.OperationDefinition, error) {
	var found []*ast.OperationDefinition
	for _, d := range doc.Definitions {
		if op, ok := d.(*ast.OperationDefinition); ok {
			if name == "" || (op.Name != nil && op.Name.Value == name) {
				found = append(found, op)
			}
		}
	}
	switch {
	case len(found) == 0 && name != "":
		return nil, fmt.Errorf("no operation named %q in the document; set operationName to one of its operations", name)
	case len(found) == 0:
		return nil, errors.New("the document has no operation; send a query such as { stats { identities } }")
	case len(found) > 1:
		return nil, errors.New("the document has several operations; set operationName to the one to run")
	}
	return found[0], nil
}

// varsSize estimates the JSON size of variables without encoding them.
func varsSize(v any, depth int) int {
	if depth > 64 {
		return 1 << 30
	}
	switch x := v.(type) {
	case nil:
		return 4
	case string:
		return len(x) + 2
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + varsSize(e, depth+1)
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + varsSize(e, depth+1)
		}
		return n
	default:
		return 8
	}
}

// cached is a prepared document: parsed, checked and validated, or the response that
// rejected it.
type cached struct {
	key string
	doc *ast.Document
	// execDoc is doc with the runtime-type keys the encoder needs (addTypeKeys); the
	// executor runs it, everything else reads doc.
	execDoc *ast.Document
	resp    *Response
	live    bool // it touches live state (touchesLive)
}

// observer is the live refresh a service may offer (identity.Service.Observe).
type observer interface {
	Observe(ctx context.Context) (*graph.Snapshot, error)
}

// beginRead opens the request's read view when the service offers one, refreshing live
// state first when live is set. Without a graph.ReadViewer it returns ctx and a no-op.
func (e *Executor) beginRead(ctx context.Context, live bool) (context.Context, func(), error) {
	rv, ok := e.b.svc.(graph.ReadViewer)
	if !ok {
		return ctx, func() {}, nil
	}
	if o, ok := e.b.svc.(observer); ok && live {
		if _, err := o.Observe(ctx); err != nil && ctx.Err() == nil {
			// Reads still run on what the store holds; the next poll catches up.
			e.log.WarnContext(ctx, "graphql live refresh", "request_id", graph.RequestIDFrom(ctx), "err", err)
		}
	}
	return rv.BeginRead(ctx)
}

// liveFields are the fields whose resolvers read live hardware or robots (devices with
// their matches, sources, robots, observed relations and clients); root-level node and
// find may return devices and clients too.
var liveFields = map[string]bool{
	"devices": true, "device": true, "unbound": true, "match": true, "sources": true,
	"robots": true, "robot": true,
	// observed relations and clients are live too
	"relation": true, "relations": true, "neighbors": true, "path": true, "trace": true, "subgraph": true,
}

// touchesLive reports whether any operation or fragment of doc selects a live field, so
// the executor refreshes live state before opening the query's read view.
func touchesLive(doc *ast.Document) bool {
	var walk func(ss *ast.SelectionSet, root bool) bool
	walk = func(ss *ast.SelectionSet, root bool) bool {
		if ss == nil {
			return false
		}
		for _, sel := range ss.Selections {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Name != nil && (liveFields[x.Name.Value] || root && (x.Name.Value == "node" || x.Name.Value == "find")) {
					return true
				}
				if walk(x.SelectionSet, false) {
					return true
				}
			case *ast.InlineFragment:
				if walk(x.SelectionSet, root) {
					return true
				}
			case *ast.FragmentSpread:
				// the fragment's own fields are walked below; at the root it may hold node
				if root {
					return true
				}
			}
		}
		return false
	}
	for _, d := range doc.Definitions {
		switch def := d.(type) {
		case *ast.OperationDefinition:
			if walk(def.SelectionSet, true) {
				return true
			}
		case *ast.FragmentDefinition:
			if walk(def.SelectionSet, false) {
				return true
			}
		}
	}
	return false
}

// prepare parses, checks and validates a document once; later requests with the same text
// reuse the result.
func (e *Executor) prepare(q string) *cached {
	if ent := e.cache.get(q); ent != nil {
		return ent
	}
	ent := &cached{key: q}
	ent.doc, ent.resp = e.check(q)
	if ent.doc != nil {
		ent.live = touchesLive(ent.doc)
		ent.execDoc = addTypeKeys(ent.doc)
	}
	// Oversize documents are rejected before parsing and not worth a cache slot.
	if len(q) <= e.limits.MaxDocumentBytes {
		e.cache.put(ent)
	}
	return ent
}

func (e *Executor) check(q string) (doc *ast.Document, resp *Response) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("graphql document check panicked", "panic", r)
			doc, resp = nil, errResponse(graph.EINVALID, "the document could not be processed; check its syntax")
		}
	}()
	if err := scanDocument(q, e.limits); err != nil {
		var re *resolverError
		if errors.As(err, &re) {
			return nil, &Response{Errors: []Error{newError(re.code, re.field, re.msg)}}
		}
		return nil, errResponse(graph.ELIMIT, "%s", err)
	}
	body, line, col, bad := joinSurrogates(q)
	if bad {
		ge := graph.JSONTextFault{}.Refusal("query")
		r := &Response{Errors: []Error{newError(ge.Code, ge.Field, ge.Message)}}
		r.Errors[0].Locations = []Location{{Line: line, Column: col}}
		return nil, r
	}
	doc, err := parser.Parse(parser.ParseParams{Source: source.NewSource(&source.Source{Body: []byte(body), Name: "GraphQL request"})})
	if err != nil {
		fe := gqlerrors.FormatError(err)
		r := &Response{Errors: []Error{newError(graph.EINVALID, "", fe.Message)}}
		for _, l := range fe.Locations {
			r.Errors[0].Locations = append(r.Errors[0].Locations, Location{Line: l.Line, Column: l.Column})
		}
		return nil, r
	}
	if err := analyze(doc, e.limits); err != nil {
		var re *resolverError
		if errors.As(err, &re) {
			return nil, errResponse(re.code, "%s", re.msg)
		}
		return nil, errResponse(graph.ELIMIT, "%s", err)
	}
	vr := graphql.ValidateDocument(&e.schema, doc, graphql.SpecifiedRules)
	if !vr.IsValid {
		r := &Response{Errors: e.convertErrors(context.Background(), vr.Errors, true)}
		if len(r.Errors) > 20 {
			r.Errors = append(r.Errors[:20], newError(graph.EINVALID, "", fmt.Sprintf("… and %d more validation errors", len(vr.Errors)-20)))
		}
		return nil, r
	}
	return doc, nil
}

// docCache is a small LRU of prepared documents keyed by their text.
type docCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

func newDocCache(n int) *docCache {
	return &docCache{max: n, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *docCache) get(k string) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		return el.Value.(*cached)
	}
	return nil
}

func (c *docCache) put(ent *cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[ent.key]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.items[ent.key] = c.ll.PushFront(ent)
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cached).key)
	}
}

var _ graph.GraphQLExecutor = (*Executor)(nil)
