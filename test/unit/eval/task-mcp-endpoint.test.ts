import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskMcpEndpoint } from "../../../src/eval/task-mcp-endpoint.js";
import type { Session, SessionInfo } from "../../../src/session/session.js";
import { noEgressReport } from "../../../src/gateway/egress-tally.js";
import { TaskStackStore } from "../../../src/tasks/task-stack-store.js";

/** Enough of a session for the tools that only read its description. */
function fakeSession(id: string): Session {
  const info: SessionInfo = {
    session_id: id,
    repo: "/w/repo",
    base_commit: "0".repeat(40),
    image: "drydock-sandbox:test",
    box: "c0ffee",
    created_at: "2026-01-01T00:00:00.000Z",
    limits: {
      network: "none",
      memoryMB: 2048,
      cpus: 1,
      pidsLimit: 256,
      workspaceMB: 1024,
      tmpMB: 512,
      command_timeout_s: 120,
      max_output_bytes: 100_000,
    },
    egress: noEgressReport(),
  };
  return { id, info: () => info } as unknown as Session;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "agent", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe("TaskMcpEndpoint", () => {
  let endpoint: TaskMcpEndpoint;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "drydock-stacks-"));
    endpoint = await TaskMcpEndpoint.start({ stacks: new TaskStackStore({ dir }) });
  });
  afterAll(async () => {
    await endpoint?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives each token exactly its own session, without the tools that create, destroy or apply", async () => {
    const a = endpoint.grant(fakeSession("aaaaaaaaaaaa"));
    const b = endpoint.grant(fakeSession("bbbbbbbbbbbb"));
    expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connect(a.url, a.token);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("bash");
      expect(names).toContain("session_diff");
      for (const hidden of ["session_create", "session_destroy", "session_apply"])
        expect(names).not.toContain(hidden);
      const listed = (await client.callTool({ name: "session_list", arguments: {} })).structuredContent as {
        sessions: Array<{ session_id: string }>;
      };
      expect(listed.sessions.map((s) => s.session_id)).toEqual(["aaaaaaaaaaaa"]);
      const other = await client.callTool({ name: "session_diff", arguments: { session_id: b.sessionId } });
      expect(other.isError).toBe(true);
      expect((other.content as Array<{ text: string }>)[0]!.text).toMatch(
        /session bbbbbbbbbbbb not found; this endpoint serves only session aaaaaaaaaaaa/,
      );
      const stack = await client.callTool({
        name: "create_new_task",
        arguments: { title: "fix the bug", body: "in add()" },
      });
      expect(stack.isError, JSON.stringify(stack.content)).toBeFalsy();
    } finally {
      await client.close();
      await a.revoke();
      await b.revoke();
    }
  });

  it("refuses a wrong token, a revoked token and a browser's Origin", async () => {
    const grant = endpoint.grant(fakeSession("cccccccccccc"));
    await expect(connect(grant.url, "wrong")).rejects.toThrow(/401|unauthorized/i);
    await grant.revoke();
    await expect(connect(grant.url, grant.token)).rejects.toThrow(/401|unauthorized/i);
    const fresh = endpoint.grant(fakeSession("dddddddddddd"));
    const response = await fetch(fresh.url, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${fresh.token}`,
        Origin: "http://evil.example",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(response.status).toBe(403);
    await fresh.revoke();
  });
});
