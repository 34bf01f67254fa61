// Issue 13's behaviours seen by the official MCP TypeScript SDK over stdio, one scenario
// per run:
//
//   node mcp-issue13.mjs <scenario> <devgraph binary> <db path> [serve flags…]
//
// Prints one JSON object with what it saw; exits 1 with a message on the first failure.
// Scenarios:
//   protocol  -32002 for unknown resources, completions, the parameters resource
//   readonly  robot_stop is offered and works under --read-only; writes are not offered
//   robots    robot tools appear, with notifications/tools/list_changed, once robots are
//             stored: IMPORT (an env var naming an export holding robots) is imported
//             through the running server's socket while the client watches
//   list      the tools offered (with --tools …)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { execFileSync } from "node:child_process";

const [scenario, bin, db, ...flags] = process.argv.slice(2);

function fail(msg) {
  process.stderr.write(`mcp-issue13 ${scenario}: ${msg}\n`);
  process.exit(1);
}

const transport = new StdioClientTransport({ command: bin, args: ["serve", "--db", db, ...flags], stderr: "inherit" });
const client = new Client({ name: "e2e-issue13", version: "1.0.0" });
let toolsChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { toolsChanged++; });
await client.connect(transport);

async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  return { isError: !!res.isError, text: res.content?.[0]?.text ?? "", structured: res.structuredContent ?? null };
}

async function ok(name, args) {
  const r = await call(name, args);
  if (r.isError) fail(`${name} ${JSON.stringify(args)}: ${r.text}`);
  return r.structured;
}

async function readError(uri) {
  try {
    await client.readResource({ uri });
  } catch (e) {
    return { code: e.code, message: e.message };
  }
  fail(`read ${uri} succeeded; want resource not found`);
}

async function complete(ref, name, value) {
  const r = await client.complete({ ref, argument: { name, value } });
  return r.completion.values;
}

const out = { scenario };
const toolNames = async () => (await client.listTools()).tools.map((t) => t.name).sort();

switch (scenario) {
  case "protocol": {
    out.unknownNode = await readError("devgraph://node/identity:nobody");
    out.unknownRobot = await readError("devgraph://robot/robot:ghost/state");
    const p = await client.readResource({ uri: "devgraph://robot/robot:scout/parameters" });
    out.parameters = JSON.parse(p.contents[0].text);
    out.completeNode = await complete({ type: "ref/resource", uri: "devgraph://node/{+id}" }, "id", "usb:3-3");
    out.completeRobot = await complete({ type: "ref/resource", uri: "devgraph://robot/{+id}/state" }, "id", "robot:");
    out.completeSince = await complete({ type: "ref/prompt", name: "review_changes" }, "since", "2");
    out.completeBindRef = await complete({ type: "ref/prompt", name: "bind_new_device" }, "ref", "usb:3-3");
    break;
  }
  case "readonly": {
    out.tools = await toolNames();
    out.stop = await ok("robot_stop", { robot: "scout" });
    break;
  }
  case "list": {
    out.tools = await toolNames();
    break;
  }
  case "robots": {
    out.before = await toolNames();
    execFileSync(bin, ["import", process.env.IMPORT, "--db", db], { stdio: ["ignore", "ignore", "inherit"] });
    for (let i = 0; i < 100 && toolsChanged === 0; i++) await new Promise((r) => setTimeout(r, 50));
    out.after = await toolNames();
    break;
  }
  default:
    fail(`unknown scenario ${scenario}`);
}
out.toolsChanged = toolsChanged;
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
