// A small, real MCP server that plays an aider MCP server badly or well, for the AiderBridge tests.
// Run it over stdio:  node test/helpers/fake-mcp-server.mjs --mode success
// or start it over Streamable HTTP in-process with startHttpFakeServer().
//
// Modes change what `aider_ai_code` does: success, text_only, success_false, error_key, is_error,
// malformed, slow, progress, crash. `list_models`, `whoami` and `echo` behave the same in every mode.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export const fakeModels = ["fake/alpha-coder", "fake/beta-coder", "other/gamma"];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const json = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] });

function fakeDiff(files) {
  return files
    .map((file) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-old\n+new\n`)
    .join("");
}

/** Builds the fake server for one connection. */
export function buildFakeServer(mode) {
  const server = new McpServer({ name: "fake-aider", version: "1.0.0" });

  server.registerTool(
    "aider_ai_code",
    {
      description: "Pretends to run aider.",
      inputSchema: {
        ai_coding_prompt: z.string(),
        relative_editable_files: z.array(z.string()).optional(),
        relative_readonly_files: z.array(z.string()).optional(),
        model: z.string().optional(),
      },
    },
    async (args, extra) => {
      const files = args.relative_editable_files ?? [];
      const reply = { success: true, diff: fakeDiff(files) };
      switch (mode) {
        case "text_only":
          return json(reply);
        case "success_false":
          return json({ success: false, diff: "SEARCH block did not match src/app.ts" });
        case "error_key":
          return json({ error: "model fake/none is not available" });
        case "is_error":
          return {
            isError: true,
            content: [{ type: "text", text: "relative_editable_files: ../etc/passwd is outside /workspace" }],
          };
        case "malformed":
          return { content: [{ type: "text", text: "aider says hello, not JSON" }] };
        case "slow":
          await sleep(10_000);
          return json(reply);
        case "progress": {
          const token = extra._meta?.progressToken;
          for (let step = 1; step <= 8; step++) {
            await sleep(150);
            if (token !== undefined) {
              await extra.sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: step, total: 8, message: `aider line ${step}` },
              });
            }
          }
          // The SDK client drops a progress notification that arrives in the same read as the reply.
          await sleep(50);
          return json(reply);
        }
        case "crash":
          process.stderr.write("fake server: crashing on purpose\n");
          process.exit(3);
          break;
        default:
          return {
            ...json(reply),
            structuredContent: { ...reply, model: "fake/alpha-coder", editable_files: files, cost_usd: 0.01 },
          };
      }
    },
  );

  server.registerTool(
    "list_models",
    { description: "Lists fake models.", inputSchema: { substring: z.string().optional() } },
    async ({ substring }) => {
      const needle = (substring ?? "").toLowerCase();
      return json({ models: fakeModels.filter((m) => m.toLowerCase().includes(needle)) });
    },
  );

  server.registerTool("whoami", { description: "Returns the server's process id." }, async () =>
    json({ pid: process.pid }),
  );

  server.registerTool(
    "echo",
    { description: "Returns its arguments.", inputSchema: { value: z.unknown().optional() } },
    async (args) => ({ ...json({ echoed: args }), structuredContent: { echoed: args, via: "structured" } }),
  );

  return server;
}

/**
 * Starts the fake over Streamable HTTP on a loopback port (0 = any free one). Requests without
 * `Authorization: Bearer <token>` get 401 when a token is set; an unknown session id gets 404.
 */
export async function startHttpFakeServer({ mode = "success", token, port = 0 } = {}) {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (sessionId !== undefined && transport === undefined) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    if (transport === undefined) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
        onsessionclosed: (id) => sessions.delete(id),
      });
      await buildFakeServer(mode).connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => http.listen(port, "127.0.0.1", resolve));
  const address = http.address();
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    port: address.port,
    sessionCount: () => sessions.size,
    close: async () => {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      sessions.clear();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(() => resolve()));
    },
  };
}

async function main() {
  const flag = process.argv.indexOf("--mode");
  const mode = flag >= 0 ? process.argv[flag + 1] : (process.env.FAKE_MCP_MODE ?? "success");
  process.stderr.write(`fake server: mode ${mode}, pid ${process.pid}\n`);
  // Exit when the client goes away, even while a slow call is still sleeping.
  process.stdin.on("end", () => process.exit(0));
  await buildFakeServer(mode).connect(new StdioServerTransport());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
