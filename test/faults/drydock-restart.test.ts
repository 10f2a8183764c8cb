/**
 * drydock itself dies or is stopped: SIGKILL in the middle of a command, SIGTERM with HTTP clients
 * still connected. Nothing is left behind (no box, no gateway socket) once it has stopped or the
 * next one has started, the task stack survives, and a new session works.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Engine } from "../../src/engine/engine.js";
import { LABEL_SESSION } from "../../src/engine/labels.js";
import { pruneOrphans } from "../../src/session/orphans.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { ok } from "../helpers/mcp-client.js";
import { spawnHttpServer } from "../helpers/http-server.js";
import { tempRepo, type TempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");

async function boxesOf(sessionId: string): Promise<number> {
  return (await (await Engine.connect()).listBoxes(LABEL_SESSION, sessionId)).length;
}

/** The environment a server child runs with: no provider key, so aider uses the offline model. */
function serverEnv(state: string, extra: Record<string, string> = {}): Record<string, string> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name, value]) => value !== undefined && !/_API_KEY$|^DRYDOCK_(MODEL|LLM|.*_BASE_URL)$/.test(name),
    ),
  ) as Record<string, string>;
  return { ...base, DRYDOCK_STATE_DIR: state, ...extra };
}

describe("drydock stopped or killed", () => {
  let repo: TempRepo;
  let state: string;

  beforeAll(() => {
    repo = tempRepo({ "README.md": "hello\n" });
    state = mkdtempSync(join(tmpdir(), "drydock-state-"));
  });

  afterAll(() => {
    repo?.[Symbol.dispose]();
    rmSync(state, { recursive: true, force: true });
  });

  it("SIGKILLed mid-command: the next start removes the box and the gateway socket; the task stack survives", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--tools", "all"],
      env: serverEnv(state),
      stderr: "ignore",
    });
    const first = new Client({ name: "doomed", version: "1" });
    await first.connect(transport);
    const session = ok(await first.callTool({ name: "session_create", arguments: {} }));
    const id = session.session_id as string;
    ok(
      await first.callTool({
        name: "create_new_task",
        arguments: { title: "survive a crash", body: "notes", session_id: id },
      }),
    );
    // An aider call starts the session's gateway: its socket now sits in the state directory.
    ok(
      await first.callTool(
        {
          name: "aider_ai_code",
          arguments: {
            ai_coding_prompt: "no rule matches",
            relative_editable_files: ["README.md"],
            session_id: id,
            model: "openai/drydock-offline",
          },
        },
        undefined,
        { timeout: 170_000 },
      ),
    );
    const socket = join(state, "run", id, "gateway.sock");
    expect(existsSync(socket)).toBe(true);
    const inFlight = first
      .callTool({ name: "bash", arguments: { command: "sleep 60", session_id: id } }, undefined, {
        timeout: 90_000,
      })
      .catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (transport.pid) process.kill(transport.pid, "SIGKILL");
    expect(await inFlight).toBeInstanceOf(Error);
    expect(await boxesOf(id)).toBe(1);

    const second = new Client({ name: "after", version: "1" });
    await second.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, "serve", "--repo", repo.path, "--image", inject("sandboxImage"), "--tools", "all"],
        env: serverEnv(state),
        stderr: "ignore",
      }),
    );
    try {
      // The new server pruned at start: no box and no socket of the dead one.
      expect(await boxesOf(id)).toBe(0);
      expect(existsSync(join(state, "run", id))).toBe(false);
      const task = ok(await second.callTool({ name: "get_current_task", arguments: { session_id: id } }));
      expect(task).toMatchObject({ zen: false, task: { title: "survive a crash", body: "notes" } });
      expect(
        ok(await second.callTool({ name: "bash", arguments: { command: "cat README.md" } })).stdout,
      ).toBe("hello\n");
    } finally {
      await second.close();
    }
    await expect.poll(() => readdirSync(join(state, "run")), { timeout: 20_000 }).toEqual([]);
  });

  it("SIGTERMed over HTTP with clients connected: every box is removed before it exits", async () => {
    const token = `t-${Math.random().toString(36).slice(2)}`;
    const { child, url } = await spawnHttpServer({
      repo: repo.path,
      env: serverEnv(state, { DRYDOCK_TOKEN: token }),
    });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const client = new Client({ name: `http-${i}`, version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      for (let j = 0; j < 2; j++) {
        ids.push(ok(await client.callTool({ name: "session_create", arguments: {} })).session_id as string);
      }
    }
    for (const id of ids) expect(await boxesOf(id)).toBe(1);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
    // No wait after exit: the boxes must be gone by the time the process is.
    for (const id of ids) expect(await boxesOf(id), id).toBe(0);
    for (const id of ids) expect(existsSync(join(state, "run", id)), id).toBe(false);
  });

  it("closing the sessions waits for removals already under way (a client that left as the server stops)", async () => {
    const manager = await SessionManager.start(await testEngine());
    const sessions = await Promise.all(
      [1, 2, 3].map(() => manager.create({ repo: repo.path, image: sandboxImage() })),
    );
    // A client going away starts removing its sessions; the server stops at the same moment.
    const leaving = sessions.map((s) => manager.destroy(s.id));
    await manager.closeAll();
    for (const s of sessions) expect(await boxesOf(s.id), s.id).toBe(0);
    await Promise.all(leaving);
  });

  it("prune removes a gateway directory whose box is gone, once it is a minute old", async () => {
    const saved = process.env.DRYDOCK_STATE_DIR;
    process.env.DRYDOCK_STATE_DIR = state;
    const manager = await SessionManager.start(await testEngine());
    try {
      const live = await manager.create({ repo: repo.path, image: sandboxImage() });
      const run = join(state, "run");
      // A socket directory left by a process killed before its box existed, or whose box was removed by hand.
      const stale = join(run, "0123456789ab");
      const fresh = join(run, "ba9876543210");
      for (const dir of [stale, fresh]) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, "gateway.sock"), "");
      }
      const old = new Date(Date.now() - 5 * 60_000);
      utimesSync(stale, old, old);
      utimesSync(live.gatewayDir, old, old);
      await pruneOrphans(await testEngine());
      expect(existsSync(stale)).toBe(false);
      // Kept: one that may belong to a box being created right now, and the live session's.
      expect(existsSync(fresh)).toBe(true);
      expect(existsSync(live.gatewayDir)).toBe(true);
      rmSync(fresh, { recursive: true, force: true });
    } finally {
      await manager.closeAll();
      if (saved === undefined) delete process.env.DRYDOCK_STATE_DIR;
      else process.env.DRYDOCK_STATE_DIR = saved;
    }
  });
});
