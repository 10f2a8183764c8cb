// A stand-in for a model-driven agent in the eval benches: it waits, as an agent waits on its
// model, then applies the task's gold patch in its box through drydock's MCP endpoint, as the
// `patch` agent would. Run by `drydock eval --agent command`:
//
//   node bench/lib/sleep-patch-agent.mjs PREDICTIONS.jsonl SECONDS
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [predictions, seconds] = process.argv.slice(2);
const id = process.env.DRYDOCK_TASK_ID;
const prediction = readFileSync(predictions, "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line))
  .find((p) => p.instance_id === id);
if (!prediction) throw new Error(`${join(predictions)}: no prediction for ${id}`);

await new Promise((resolve) => setTimeout(resolve, Number(seconds) * 1000));
const client = new Client({ name: "sleep-patch-agent", version: "1" });
await client.connect(
  new StreamableHTTPClientTransport(new URL(process.env.DRYDOCK_MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.DRYDOCK_MCP_TOKEN}` } },
  }),
);
const patch = Buffer.from(prediction.model_patch).toString("base64");
const r = await client.callTool({
  name: "bash",
  arguments: { command: `cd /workspace && printf %s '${patch}' | base64 -d | git apply -` },
});
await client.close();
if (r.structuredContent.exit_code !== 0) {
  process.stderr.write(`git apply failed: ${JSON.stringify(r.structuredContent)}\n`);
  process.exit(5);
}
