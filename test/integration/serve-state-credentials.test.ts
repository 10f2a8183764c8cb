/**
 * Two `drydock serve --http` on one state directory (the default for every user): the first keeps
 * `http-token` and `live-key`; the second writes its own beside them and says where, so neither
 * rewrites the other's and every printed command keeps working. When the first stops, the next
 * server takes the plain names again.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempRepo } from "../helpers/repos.js";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";

const state = mkdtempSync(join(tmpdir(), "drydock-two-servers-"));
const servers: SpawnedHttpServer[] = [];
afterAll(async () => {
  for (const s of servers) await stopServer(s.child);
  rmSync(state, { recursive: true, force: true });
});

/** The status of an MCP initialize request with this bearer token. */
async function status(url: string, token: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

const read = (name: string) => readFileSync(join(state, name), "utf8").trim();

describe("two HTTP servers on one state directory", () => {
  it("each keeps credentials of its own, says where, and neither's token stops working", async () => {
    using repo = tempRepo({ "a.txt": "a\n" });
    const env = { ...process.env, DRYDOCK_STATE_DIR: state };
    const first = await spawnHttpServer({ repo: repo.path, env });
    servers.push(first);
    const firstToken = read("http-token");
    const firstKey = read("live-key");
    const second = await spawnHttpServer({ repo: repo.path, env });
    servers.push(second);
    const port = new URL(second.url).port;
    expect(read("http-token")).toBe(firstToken);
    expect(read("live-key")).toBe(firstKey);
    const secondToken = read(`http-token.${port}`);
    expect(secondToken).not.toBe(firstToken);
    expect(existsSync(join(state, `live-key.${port}`))).toBe(true);
    expect(await status(first.url, firstToken)).toBe(200);
    expect(await status(second.url, secondToken)).toBe(200);
    expect(await status(second.url, firstToken)).toBe(401);

    // The second's own files go with it; once the first stops, a new server takes the plain names.
    await stopServer(second.child);
    expect(existsSync(join(state, `http-token.${port}`))).toBe(false);
    await stopServer(first.child);
    const third = await spawnHttpServer({ repo: repo.path, env });
    servers.push(third);
    expect(read("http-token")).not.toBe(firstToken);
    expect(await status(third.url, read("http-token"))).toBe(200);
  });
});
