/**
 * Registers ToolDefinitions on an MCP server. This is the one place where a tool's result becomes
 * `content` (JSON text, what older clients parse) plus `structuredContent`, and where any thrown
 * error becomes an `isError` result with a message that says what to do next.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { AnyToolDefinition, ToolContext, ToolServices } from "../tools/tool.js";
import { describeError } from "../util/errors.js";
import { logger } from "../util/log.js";

const log = logger("server");

export type Redact = (text: string) => string;

interface CallExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (notification: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

export function registerTools(
  server: McpServer,
  tools: AnyToolDefinition[],
  clientId: string,
  services: ToolServices,
  redact: Redact = (t) => t,
): void {
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: tool.annotations,
      },
      // The SDK has validated the arguments against inputSchema before this runs.
      async (args: Record<string, unknown>, extra: CallExtra) => {
        const token = extra._meta?.progressToken;
        let step = 0;
        const ctx: ToolContext = {
          clientId,
          signal: extra.signal,
          services,
          progress: (message, progress, total) => {
            if (token === undefined) return;
            step++;
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: progress ?? step, total, message: redact(message) },
              })
              .catch(() => undefined);
          },
        };
        const started = Date.now();
        try {
          const result = await tool.run(args, ctx);
          log.debug(`${tool.name} ok in ${Date.now() - started} ms`);
          const text = redact(JSON.stringify(result));
          return { content: [{ type: "text" as const, text }], structuredContent: JSON.parse(text) };
        } catch (error) {
          const message = redact(describeError(error));
          log.debug(`${tool.name} failed in ${Date.now() - started} ms: ${message}`);
          return { isError: true, content: [{ type: "text" as const, text: message }] };
        }
      },
    );
  }
}
