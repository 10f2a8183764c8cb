import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { expect } from "vitest";
import { DrydockServer, type DrydockServerConfig } from "../../src/server/drydock-server.js";
import { sandboxImage } from "./sessions.js";

export interface ToolReply {
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The object of a successful reply (structuredContent; the text is written for a model). */
export function ok(result: unknown): Record<string, unknown> {
  const r = result as ToolReply;
  expect(r.isError, r.content[0]?.text).toBeFalsy();
  expect(typeof r.content[0]?.text).toBe("string");
  expect(r.structuredContent).toBeDefined();
  return r.structuredContent!;
}

/** The message of an error reply. */
export function failure(result: unknown): string {
  const r = result as ToolReply;
  expect(r.isError, r.content[0]?.text).toBe(true);
  return r.content[0]!.text;
}

export interface InMemoryDrydock extends AsyncDisposable {
  server: DrydockServer;
  /** A client connected as `clientId` (default "test"); the first one is made at start. */
  client: Client;
  connect(clientId: string): Promise<Client>;
  stateDir: string;
}

/**
 * A real drydock server (real engine, real boxes) with clients joined over the in-memory transport.
 * Disposing it closes the clients and removes every box the server made.
 */
export async function inMemoryDrydock(
  config: Partial<DrydockServerConfig> & { repo: string },
): Promise<InMemoryDrydock> {
  const stateDir = mkdtempSync(join(tmpdir(), "drydock-state-"));
  const server = await DrydockServer.start({
    image: sandboxImage(),
    tasksDir: join(stateDir, "tasks"),
    // Tests are the operator here; the default would depend on the machine's memory.
    maxSessions: 32,
    // Every tool, whatever the default set: tests here reach tools beyond it.
    tools: ["all"],
    ...config,
  });
  const clients: Client[] = [];
  const connect = async (clientId: string): Promise<Client> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connectClient(clientId).connect(serverSide);
    const client = new Client({ name: clientId, version: "1" });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const client = await connect("test");
  return {
    server,
    client,
    connect,
    stateDir,
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await server.shutdown();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
