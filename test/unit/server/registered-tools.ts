import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { expect } from "vitest";
import { registerTools, type ListingOptions, type Redact } from "../../../src/server/register-tools.js";
import { aiderTools } from "../../../src/tools/aider/aider-tools.js";
import { allTools } from "../../../src/tools/all-tools.js";
import type { AnyToolDefinition, ToolServices } from "../../../src/tools/tool.js";

/** Every tool `drydock serve` has, in its order. */
export const everyTool = allTools(aiderTools);

/**
 * The SDK's real client joined to tools registered the way the server registers them; dispose it
 * to close. Nothing reaches a box unless a test hands in services that do.
 */
export async function toolClient(
  tools: AnyToolDefinition[] = everyTool,
  services: Partial<ToolServices> = {},
  listing: ListingOptions = {},
  redact?: Redact,
): Promise<Client & AsyncDisposable> {
  const server = new McpServer({ name: "under-test", version: "0.0.0" });
  registerTools(server, tools, "c", services as ToolServices, redact, listing);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test-client", version: "0.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** The text of a reply that must be an error. */
export function errorText(result: unknown): string {
  const reply = result as { isError?: boolean; content: Array<{ type: string; text: string }> };
  expect(reply.isError, reply.content[0]?.text).toBe(true);
  return reply.content[0]!.text;
}
