// Package http is devgraph's HTTP transport: the routes, the Host/Origin/token guard in
// front of every one, bearer tokens, GraphiQL's embedded assets and the access log. It is
// handed its handlers by cmd — a graph.GraphQLExecutor for /graphql and an http.Handler
// for /mcp — and knows neither GraphQL's executor nor JSON-RPC beyond the shape of a
// refusal.
//
// # Routes
//
// NewHandler serves POST /graphql (application/json only) and GET /graphql (queries only;
// a browser gets GraphiQL), / (the web page for people: devices, identities, the drawn
// graph, the changelog; plain JavaScript whose every write is a POST /graphql), their
// assets under /assets/ and /graphql/assets/ (embedded in the binary, cytoscape.js and
// GraphiQL vendored with their licences, see assets/NOTICE), /login and /logout,
// /healthz and /mcp. Server listens on an address, over HTTPS when given a certificate
// and key, and serves them until Close, which waits for every request.
//
// /graphql answers in the media type Accept prefers (GraphQL over HTTP):
// application/graphql-response+json, whose status says whether the request ran (400 and
// no data when it did not, 503 when it could not start), or application/json, the default,
// which answers every well-formed request with 200. A malformed request (not JSON, no
// query, non-object variables or extensions, non-string operationName) is 400 either way.
//
// # Guard
//
// Guard refuses requests whose Host or Origin is not the server's own (so a web page
// cannot write through a loopback server) and requires a bearer token unless the server
// is loopback-only without a token file (a token file is enforced on loopback too;
// /healthz, /login and the assets stay open); it puts the actor ("http:<token name>" or
// "http:local") and a fresh request id (also the X-Request-Id response header) in the request context. A token's
// actor is marked authenticated, so MCP records it rather than the client's self-chosen
// name; a token marked prune carries the permission to prune the changelog, which nothing
// else over HTTP has (loopback without a token included). Refusals come in GraphQL's
// error shape, or JSON-RPC's on /mcp. LoadTokens reads a --token-file ("name token" or
// "name token prune" per line).
//
// # Access log
//
// Every request is logged once, at info, when it ends: method, path, actor, the client's
// own name when the layer above learned one (an MCP clientInfo, graph.SetClientName),
// status, duration and request id. Tests pass a Logger at a quieter level, or none.
package http
