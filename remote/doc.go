// Package remote serves a graph.Service over a local unix socket and dials it back, so
// the CLI's verbs run unchanged whether they open the database themselves or a running
// `devgraph serve` holds it.
//
// The wire is plain HTTP/1.1 on the socket:
//
//	GET  /rpc/ping              → {"pid":…, "db":…, "version":…}
//	POST /rpc/<Method>          the caller line, then a JSON object of the method's arguments
//	                            → 200 and the JSON result, or
//	                            → 4xx/5xx and {"error":{"code","message","field"}}
//
// Streaming methods (Backup, Export, Import, RobotNavigate) answer 200 with
// application/x-ndjson frames, one JSON object a line, ending in exactly one result or
// error frame:
//
//	{"data":"<base64>"}          bytes of a Backup or Export
//	{"progress":{…}}             graph.NavProgress, or {"records":n} while importing
//	{"result":…}                 the method's result
//	{"error":{…}}                the method's error
//
// Import sends the raw export stream after the caller line; POST /rpc/Import?max_size=N
// carries the caller's import --max-size, under which the server spools that stream.
//
// Every POST body starts with the caller line, {"actor","request_id","message"} (Caller;
// empty fields left out): the caller's actor, request id and change message travel in
// the body, where a "why" of several lines fits. Text that is not valid UTF-8 (raw
// bytes, lone surrogate escapes) or holds a NUL is refused with its JSON path as the
// field ("message", "add[1]"), never replaced: the client checks before it encodes
// (graph.CheckValueText) and the server before it decodes (graph.CheckJSONText).
//
// Only the same user can connect (the socket is mode 0600 and Listen checks every peer's
// uid with SO_PEERCRED, refusing others). The server accepts only cli:<the peer's own user> and mcp:<client name> as the
// actor a caller names (at most 128 bytes, else 400): http: actors are recorded only by
// the server that checked the token, discovery: and robot: only by the server itself; a
// caller naming none is recorded as cli:<the peer's user>, and may prune the changelog. The
// client, in turn, checks that the server's process runs as our own user (SO_PEERCRED,
// DialSocket) before it sends anything.
//
// Errors keep their graph code, message and field across the wire, so a caller branches
// on graph.ErrorCode exactly as it would in-process. Internal errors are logged by the
// server and arrive as the generic internal message.
//
// POST /watch (Client.Watch) follows the changelog for `changelog --follow` and `devices
// --watch`: after the caller line a WatchRequest (a graph.EventFilter and the size of the
// first page), answered with NDJSON frames — {"event":…} for each event of the first page,
// oldest first, then {"live":true}, then {"event":…} for each matching event as its write
// commits, until the caller hangs up; {"error":…} ends it. The server subscribes to the
// store's change notifications before it reads the first page, so nothing is missed or
// sent twice between the two.
//
// SocketServer serves the socket of a running `devgraph serve`: /rpc/ (NewHandler), POST
// /graphql for `devgraph query` (a graph.GraphQLExecutor), and POST /mcp-stdio, an HTTP
// upgrade after which the connection carries MCP's stdio protocol, so a second `serve`
// on the same database relays its stdin and stdout to the first (RelayStdio). It is
// handed its handlers and knows neither GraphQL nor MCP; Close ends relayed sessions and
// waits for every handler.
package remote
