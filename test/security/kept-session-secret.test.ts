/**
 * A kept session (`serve --keep-sessions`) that no client holds, after a restart or after its
 * client went away, is taken up with its secret, never with its id alone: ids show in logs,
 * listings and replies. Another client naming it, with no secret or a wrong one, gets the answer
 * an unknown id gets; the creator, with the secret session_create gave it, continues the session.
 * The host keeps only the secret's hash; the audit log never holds it.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_SESSION, LABEL_STATE } from "../../src/engine/labels.js";
import { failure, ok } from "../helpers/mcp-client.js";
import { spawnHttpServer, stopServer, type SpawnedHttpServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

describe("resuming a kept session takes its secret", () => {
  let repo: TempRepo;
  let state: string;
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const servers: SpawnedHttpServer[] = [];
  const clients: Client[] = [];

  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    for (const server of servers) await stopServer(server.child);
    // Kept boxes outlive their server by design: this test's state directory holds only its own.
    const engine = await testEngine();
    for (const box of await engine.listBoxes(LABEL_STATE, state)) await engine.remove(box.id);
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  async function serve(): Promise<SpawnedHttpServer> {
    const server = await spawnHttpServer({
      repo: repo.path,
      env: { ...process.env, DRYDOCK_STATE_DIR: state, DRYDOCK_TOKEN: token },
      args: ["--keep-sessions", "--pool", "0"],
    });
    servers.push(server);
    return server;
  }

  async function connect(server: SpawnedHttpServer): Promise<{ client: Client; leave(): Promise<void> }> {
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "kept-secret", version: "1" });
    await client.connect(transport);
    clients.push(client);
    return {
      client,
      // Ends the MCP session, as a client that goes away does: the server releases its sessions.
      leave: async () => {
        await transport.terminateSession();
        await client.close();
      },
    };
  }

  it("refuses another client naming it by id or with a wrong secret, like an unknown id; its creator resumes it", async () => {
    const first = await serve();
    const { client: a } = await connect(first);
    const created = ok(await a.callTool({ name: "session_create", arguments: {} }));
    const id = created.session_id as string;
    const secret = created.session_secret as string;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    ok(await a.callTool({ name: "bash", arguments: { session_id: id, command: "echo mine > mine.txt" } }));
    ok(
      await a.callTool({
        name: "create_new_task",
        arguments: { session_id: id, title: "a's plan", body: "a's notes" },
      }),
    );
    expect(JSON.stringify(ok(await a.callTool({ name: "session_list", arguments: {} })))).not.toContain(
      secret,
    );
    await stopServer(first.child);

    const second = await serve();
    const { client: b } = await connect(second);
    const unknown = "0123456789ab";
    const asUnknown = (message: string) => message.replaceAll(id, unknown);
    const bothWays = async (name: string, args: Record<string, unknown>) => {
      const theirs = failure(await b.callTool({ name, arguments: { ...args, session_id: id } }));
      const none = failure(await b.callTool({ name, arguments: { ...args, session_id: unknown } }));
      expect(asUnknown(theirs), name).toBe(none);
    };
    await bothWays("bash", { command: "cat mine.txt" });
    await bothWays("session_diff", {});
    await bothWays("session_destroy", {});
    await bothWays("session_resume", { session_secret: "not-the-secret" });
    await bothWays("session_resume", {
      session_secret: secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A"),
    });
    const stack = failure(await b.callTool({ name: "get_current_task", arguments: { session_id: id } }));
    expect(stack).toMatch(new RegExp(`session ${id} not found`));
    expect(stack).not.toContain("a's plan");
    expect(ok(await b.callTool({ name: "session_list", arguments: {} })).sessions).toEqual([]);
    expect(
      (await (await testEngine()).listBoxes(LABEL_SESSION, id)).length,
      "the box is left as it was",
    ).toBe(1);

    // The creator, on a new connection, with the secret.
    const again = await connect(second);
    const resumed = ok(
      await again.client.callTool({
        name: "session_resume",
        arguments: { session_id: id, session_secret: secret },
      }),
    );
    expect(resumed.session_id).toBe(id);
    expect(resumed).not.toHaveProperty("session_secret");
    const read = ok(
      await again.client.callTool({ name: "bash", arguments: { session_id: id, command: "cat mine.txt" } }),
    );
    expect(read.stdout).toBe("mine\n");
    const task = ok(await again.client.callTool({ name: "get_current_task", arguments: { session_id: id } }));
    expect(JSON.stringify(task)).toContain("a's plan");
    // Held now: even the secret does not hand it to another client.
    await bothWays("session_resume", { session_secret: secret });

    // Its client goes away while this server keeps sessions: released, and again only the secret takes it up.
    await again.leave();
    await bothWays("bash", { command: "cat mine.txt" });
    const third = await connect(second);
    ok(
      await third.client.callTool({
        name: "session_resume",
        arguments: { session_id: id, session_secret: secret },
      }),
    );
    expect(
      ok(
        await third.client.callTool({ name: "bash", arguments: { session_id: id, command: "cat mine.txt" } }),
      ).stdout,
    ).toBe("mine\n");

    // The host keeps the secret's hash, never the secret; the log says it was not logged.
    const record = readFileSync(join(state, "sessions", `${id}.json`), "utf8");
    expect(record).not.toContain(secret);
    expect(JSON.parse(record)).toMatchObject({
      secret_sha256: createHash("sha256").update(secret).digest("hex"),
    });
    const log = readFileSync(join(state, "audit", `${id}.jsonl`), "utf8");
    expect(log).toContain('"session_resume"');
    expect(log).not.toContain(secret);
    ok(await third.client.callTool({ name: "session_destroy", arguments: { session_id: id } }));
  });
});
