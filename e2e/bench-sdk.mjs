// Times graph_find and graph_note through the official MCP TypeScript SDK over stdio,
// against devgraph or the reference MCP memory server (search_nodes and
// add_observations), with the same client and the same names. Driven by
// BenchmarkSDK_FindNote (sdk_bench_test.go).
//
//   node bench-sdk.mjs devgraph|memory N ITERS -- COMMAND [ARGS...]
//
// Prints {"find_p50":ms,"find_p99":ms,"note_p50":ms,"note_p99":ms}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [mode, nArg, itersArg, sep, command, ...args] = process.argv.slice(2);
if (!["devgraph", "memory"].includes(mode) || sep !== "--" || !command) {
  process.stderr.write("usage: bench-sdk.mjs devgraph|memory N ITERS -- COMMAND [ARGS...]\n");
  process.exit(2);
}
const n = Number(nArg), iters = Number(itersArg);
const makers = ["Roland", "Korg", "Yamaha", "Moog", "Arturia", "Novation", "Elektron", "Behringer"];
const kinds = ["Synth", "Drum Machine", "Sampler", "Controller", "Interface", "Mixer"];
const name = (i) => `${makers[i % 8]} ${kinds[i % 6]} ${String(i).padStart(6, "0")}`;
const slug = (s) => s.toLowerCase().replaceAll(" ", "-");

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "bench-sdk", version: "1.0.0" });
await client.connect(transport);

async function call(tool, a) {
  const res = await client.callTool({ name: tool, arguments: a });
  if (res.isError) {
    process.stderr.write(`${tool}: ${res.content?.[0]?.text}\n`);
    process.exit(1);
  }
  return res;
}
const find = (i) => mode === "devgraph"
  ? call("graph_find", { text: name(i), limit: 10 })
  : call("search_nodes", { query: name(i) });
const note = (i, j) => mode === "devgraph"
  ? call("graph_note", { target: `identity:${slug(name(i))}`, body: `bench note ${j} ${Date.now()}` })
  : call("add_observations", { observations: [{ entityName: name(i), contents: [`bench note ${j} ${Date.now()}`] }] });

async function time(fn) {
  const lat = [];
  for (let j = 0; j < iters; j++) {
    const t0 = process.hrtime.bigint();
    await fn(j);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  lat.sort((a, b) => a - b);
  return [lat[Math.floor(lat.length / 2)], lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))]];
}

for (let j = 0; j < 5; j++) await find((j * 7919) % n); // warm up
const [fp50, fp99] = await time((j) => find((j * 7919) % n));
const [np50, np99] = await time((j) => note((j * 104729) % n, j));
await client.close();
process.stdout.write(JSON.stringify({ find_p50: fp50, find_p99: fp99, note_p50: np50, note_p99: np99 }) + "\n");
