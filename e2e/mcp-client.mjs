// An agent's journey through devgraph, driven by the official MCP TypeScript SDK — a
// client no one on this project wrote. The SDK validates every structured result
// against the tool's output schema.
//
//   node mcp-client.mjs stdio <devgraph binary> <db path>
//   node mcp-client.mjs http  <http://127.0.0.1:PORT/mcp> [bearer token]
//
// Prints one JSON object with what it saw; exits 1 with a message on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, ...rest] = process.argv.slice(2);

function fail(msg) {
  process.stderr.write(`mcp-client: ${msg}\n`);
  process.exit(1);
}

let transport;
if (mode === "stdio") {
  const [bin, db] = rest;
  transport = new StdioClientTransport({ command: bin, args: ["serve", "--demo", "--db", db], stderr: "inherit" });
} else if (mode === "http") {
  const opts = rest[1] ? { requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } } } : undefined;
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), opts);
} else {
  fail("usage: mcp-client.mjs stdio BIN DB | http URL [TOKEN]");
}

const client = new Client({ name: "e2e-ts-sdk", version: "1.0.0" });
await client.connect(transport);

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) fail(`${name} ${JSON.stringify(args)}: ${res.content?.[0]?.text}`);
  if (!res.structuredContent) fail(`${name}: no structured content`);
  return res.structuredContent;
}

const out = { protocolVersion: transport.protocolVersion ?? null, server: client.getServerVersion() };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

const unbound = await call("graph_unbound", {});
out.unbound = unbound.devices.map((d) => d.ref);
const found = await call("graph_find", { text: "jdxi", kind: "device" });
out.found = found.results.map((r) => r.ref);
const ref = found.results[0]?.ref;
if (!ref) fail("graph_find found no JD-Xi");

const bound = await call("graph_bind", { ref, new_name: "Roland JD-Xi", why: "e2e" });
out.bound = { identity: bound.identity.id, created: bound.created, request_id: bound.request_id };
const tagged = await call("graph_tag", { target: bound.identity.id, add: ["role:synth", "location:studio"] });
out.tags = tagged.tags;
const noted = await call("graph_note", { target: bound.identity.id, body: "Bound by the e2e test", kind: "success" });
out.note = noted.note.id;

const q = await call("graph_query", {
  query: "query($id: ID!) { identity(id: $id) { id name tags { name } } }",
  variables: { id: bound.identity.id },
});
out.query = q.data.identity;

const log = await call("graph_changelog", { target: bound.identity.id, limit: 50 });
out.changelog = log.events.map((e) => ({ action: e.action, actor: e.actor, request_id: e.request_id }));

// A mistake a model makes: the error is a result the model can read, not a crash.
const bad = await client.callTool({ name: "graph_bind", arguments: {} });
out.badBind = { isError: bad.isError === true, text: bad.content?.[0]?.text ?? "" };

// Relations: cable the KeyStep to the JD-Xi, trace the signal to the DAW, find the
// robot base's way to its USB controller. The SDK checks each result against the
// tool's output schema.
const keystep = (await call("graph_find", { text: "keystep", kind: "device" })).results[0]?.ref;
if (!keystep) fail("graph_find found no KeyStep");
await call("graph_bind", { ref: keystep, new_name: "KeyStep", slug: "keystep" });

// Honest writes: the same bind again is a no-op; binding the KeyStep to the JD-Xi's
// identity contradicts its model, refused with how to force it (forced here as a dry run,
// so the journey below keeps its bindings).
const rebound = await call("graph_bind", { ref, new_name: "Roland JD-Xi" });
const contra = await client.callTool({ name: "graph_bind", arguments: { ref: keystep, identity: bound.identity.id } });
const forced = await call("graph_bind", { ref: keystep, identity: bound.identity.id, force: true, dry_run: true });
out.honest = {
  alreadyBound: rebound.already_bound === true, retryEvents: rebound.events,
  contradiction: { isError: contra.isError === true, text: contra.content?.[0]?.text ?? "" },
  forcedConflicts: forced.conflicts ?? [],
};
const cable = {
  op: "add", from: "keystep", from_port: "MIDI OUT", type: "cable",
  to: bound.identity.id, to_port: "MIDI IN", attrs: { kind: "midi-din" },
};
const rel = await call("graph_relate", cable);
out.relate = { id: rel.relation.id, action: rel.action, events: rel.events };
const again = await call("graph_relate", cable);
out.relateAgain = { id: again.relation.id, action: again.action, existed: again.existed, events: again.events };
const trace = await call("graph_trace", { from: "keystep" });
out.trace = { lines: trace.lines, ends: trace.ends, hops: trace.hops.map((h) => ({ type: h.type, observed: h.observed, to: h.to })) };
const base = (await call("graph_find", { text: "FT232R", kind: "device" })).results[0]?.ref;
if (!base) fail("graph_find found no robot base");
const path = await call("graph_trace", { from: base, to: "usb:usb3" });
out.path = { found: path.found, types: path.hops.map((h) => h.type), lines: path.lines };
const types = await call("graph_suggest_tags", { namespace: "relation" });
out.relationTypes = types.relation_types.map((t) => t.type);
const badRelate = await client.callTool({ name: "graph_relate", arguments: { ...cable, type: "cabel" } });
out.badRelate = { isError: badRelate.isError === true, text: badRelate.content?.[0]?.text ?? "" };

const schema = await client.readResource({ uri: "devgraph://schema" });
out.schemaHasQuery = schema.contents[0].text.includes("type Query");

await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
