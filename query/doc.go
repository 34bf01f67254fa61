// Package query serves the device graph as GraphQL (github.com/graphql-go/graphql v0.8.1)
// over a graph.Service. It knows no transport: the Executor is a graph.GraphQLExecutor,
// which the http package (GraphQL over HTTP, GraphiQL) and remote (the socket's
// `devgraph query`) are handed by cmd.
//
// # Executor
//
// New builds the schema (see Executor.SDL, also in testdata/schema.graphql) and returns an
// Executor. Execute runs one Request; readOnly refuses mutations (MCP's graph_query). The
// actor and request id recorded on changes ride in the context (graph.WithActor,
// graph.WithRequestID); a mutation's optional message argument becomes the changelog's
// "why" (graph.WithMessage).
//
// Every document is checked before graphql-go sees it, because graphql-go has no limits of
// its own and overflows its stack — a crash recover() cannot catch — on fragments that
// spread each other in a cycle:
//
//   - the raw text: size, token count and bracket nesting (the parser is recursive);
//   - the parsed document: fragment count, fragment cycles (iteratively), and the depth,
//     field count and alias count of each operation with fragments expanded by memoised
//     counting, so exponential fan-out costs linear time;
//   - per request: complexity (fields weighted by first, else 10 per list; a traversal by
//     its bounds, see Relations) and variable size.
//
// Parsing, the checks and validation run once per distinct document text (an LRU cache);
// a rejected document is cached with its error. Each request runs under a deadline.
// graphql-go returns when its context ends but leaves resolvers running, so the executor
// hands it a context that never ends, resolvers stop themselves on the request's deadline
// (a LIMIT error), and Execute returns — releasing what the request holds — only after
// graphql-go has finished.
//
// A query reads one snapshot: when the service is a graph.ReadViewer the executor opens
// one read view for the whole query and releases it after graphql-go has finished. A
// document selecting live fields (devices, device, unbound, match, sources, robots, robot,
// the relation and traversal fields, which read observed relations, or node/find at the
// root) refreshes live state (the service's Observe) before the view opens, never inside
// it. Mutations run without a view: a write waiting on a read
// transaction its own request holds would never finish.
//
// Errors have the standard shape with extensions.code: graph's codes (INVALID, NOT_FOUND,
// CONFLICT, LIMIT, UNAVAILABLE, INTERNAL) and FORBIDDEN for a mutation where only queries
// run. Messages come from graph.ErrorMessage; internal errors are logged, never shown.
//
// # Schema
//
// Node (identity, device, note, tag, relation, client) is the interface behind node(id) and
// every link to "a node". 64-bit numbers (seq, byte counts) are the Int64 scalar, sent as decimal strings;
// times are RFC 3339 (Time); free-form JSON is JSON.
//
// Lists that can grow are connections (XConnection{edges{cursor node} nodes pageInfo
// totalCount}) with first and after: the root identities, devices, robots, tags, notes,
// changelog, unbound and find, and a node's notes and changelog and a tag's nodes. Every
// one pages through one helper (pageList over page), so they behave alike: cursors are
// opaque and any edge's cursor can be resumed from; first: 0 reads only totalCount;
// totalCount is null only where counting is not cheap (a filtered changelog). Lists the
// service returns whole (robots, tags, unbound, find) page by offset over that one read.
// find's edges (FindEdge) carry the hit beside its node: kind, name, score, matched.
// find ranks at most graph.MaxPageSize hits, so its totalCount is capped there.
//
// first has one rule everywhere: absent, the field's default (find 20, others
// graph.DefaultPageSize); 0..Limits.MaxPageSize, that many; below 0 or above the cap, an
// INVALID error naming the range (never silently cut, so a client asking for more than it
// gets is told; pageInfo.hasNextPage and endCursor say how to read on).
//
// These stay plain lists, because each is a small value list fixed by the node it hangs
// on and paging it would only add ceremony: an identity's hints and tags, a device's
// fingerprints, aliases, sources and tags, the root sources (one per hardware source), a
// match's candidates and explanation, a robot's detected objects and geofence, a bind's
// hints and conflicts, a tag payload's tags. An identity's devices also stay a list: they
// are the few incarnations of one physical thing (read with a cap of graph.MaxPageSize);
// devices(filter: {identity: …}) pages them when needed.
//
// # Relations
//
// Relation (rel:<uuid> declared, obs:<hash> observed) and Client (client:<source>:<name>,
// live only) are Nodes. Identity, Device, Robot and Client carry relations(direction,
// type, first, after) — a connection of the node's vertex's relations, declared first (by
// id) then observed, totalCount counting both — and neighbors(depth, types, direction).
// The root has relation(id), relations(filter), relationTypes, path, trace and subgraph;
// the mutations relate, updateRelation and unrelate return a RelationChange (action add,
// update, remove, or none for a repeated add). Validation is the service's (graph's
// relation_validate and Validate*Options), so every interface refuses the same input with
// the same words; query only refuses what the service would read differently (a typed
// depth or maxDepth of 0, which the service takes as "the default").
//
// Traversal results are ready to draw: Subgraph{nodes edges}, where nodes are vertices (a
// bound identity and its present devices are one) and each SubgraphEdge names its ends by
// vertex (from, to) beside the nodes the relation hangs off (fromId, toId). PathResult and
// TraceResult list hops; every traversal says truncated, truncatedBy and visited.
//
// A traversal costs by its bounds in the complexity check: its selection counts once per
// vertex it may return (neighbors and subgraph MaxNeighborsVertices scaled by depth over
// MaxNeighborsDepth, the whole-graph subgraph and trace their vertex caps, path maxDepth+1)
// plus one per 10 vertices it may visit (path: MaxPathVisited scaled by maxDepth), so a
// deep neighbors under a page of 100 identities is refused before it runs.
//
// # find
//
// find runs on a graph.Finder: Options.Finder, the same index MCP graph_find uses, or
// else a search.Finder over the service (an in-memory name index that follows the
// changelog, so a find right after a write sees it).
//
// # Transports
//
// ExecuteGraphQL runs a request in a graph.GraphQLMode (read-write, read-only, or GET's
// queries-only) and says why it did not run (graph.GraphQLFailure), so a transport picks
// its status code (GraphQLNotStarted: it could not start, out of time before it began or
// the store unavailable); MaxRequestBytes bounds the body a transport reads. ParseVar
// parses `devgraph query --var k=v`.
//
// # Field order
//
// A Response marshals with each object's fields in the order the query selected them
// (encode.go, the spec's CollectFields), so every transport that encodes it — HTTP, the
// socket, devgraph query, MCP graph_query — answers in query order. Where an inline
// fragment or a spread decides by the object's runtime type, the executor runs the
// document with __typename asked under a hidden alias in those selection sets; the encoder
// reads it, never writes it, and Response.Data never holds it.
package query
