// What `tools/list` costs a model's context for each tool set of `drydock serve --tools`: the
// bytes of the reply and a rough token count (bytes / 4), as served by default and with
// `--output-schemas`. No engine needed: the tools are
// registered the way the server does and listed by the SDK's own client.
//
//   node bench/tool-list.mjs              prints the table (after `npm run build`)
//   node bench/tool-list.mjs --out FILE   also writes the figures as JSON to FILE
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

const { registerTools } = await import("../dist/server/register-tools.js");
const { allTools } = await import("../dist/tools/all-tools.js");
const { aiderTools } = await import("../dist/tools/aider/aider-tools.js");
const { pickTools, TOOL_SETS } = await import("../dist/tools/tool-sets.js");

async function listed(tools, outputSchemas = false) {
  const server = new McpServer({ name: "bench", version: "0" });
  registerTools(server, tools, "bench", {}, undefined, { outputSchemas });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "bench", version: "0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  const { tools: list } = await client.listTools();
  await client.close();
  return list;
}

const every = allTools(aiderTools);
const rows = [];
for (const set of Object.keys(TOOL_SETS)) {
  const list = await listed(pickTools(every, [set]));
  const bytes = Buffer.byteLength(JSON.stringify({ tools: list }));
  const withSchemas = Buffer.byteLength(
    JSON.stringify({ tools: await listed(pickTools(every, [set]), true) }),
  );
  rows.push({
    set,
    tools: list.length,
    bytes,
    approx_tokens: Math.round(bytes / 4),
    bytes_with_output_schemas: withSchemas,
  });
}

const width = Math.max(...rows.map((r) => r.set.length));
console.log(`${"set".padEnd(width)}  tools   bytes  ~tokens  with --output-schemas`);
for (const r of rows) {
  console.log(
    `${r.set.padEnd(width)}  ${String(r.tools).padStart(5)}  ${String(r.bytes).padStart(6)}  ${String(r.approx_tokens).padStart(7)}  ${String(r.bytes_with_output_schemas).padStart(8)}`,
  );
}
const out = process.argv.indexOf("--out");
if (out !== -1 && process.argv[out + 1]) {
  writeFileSync(
    process.argv[out + 1],
    JSON.stringify({ date: new Date().toISOString(), sets: rows }, null, 2) + "\n",
  );
}
