/**
 * A warm pool under bursts of sessions: every session of a burst gets a pool box (an idle one, or
 * the one being made that will be ready first, never a cold box started beside it), the pool grows
 * to the burst's size for the next one, never past what admission says fits, and a drydock closed
 * or killed while it grows leaves no box.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import type { BoxEngine } from "../../src/engine/box-engine.js";
import { LABEL_OWNER, LABEL_POOL, LABEL_STATE, currentOwner, formatOwner } from "../../src/engine/labels.js";
import type { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { addLogSink } from "../../src/util/log.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist/cli/main.js");

/** The real engine, watched: the boxes asked of it, in order. */
async function watchedEngine(): Promise<{ engine: BoxEngine; creates: Array<Promise<string>> }> {
  const engine = await testEngine();
  const creates: Array<Promise<string>> = [];
  const watched = new Proxy(engine, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key !== "createBox") return value.bind(target);
      return (...args: unknown[]) => {
        const made = (value as (...a: unknown[]) => Promise<string>).apply(target, args);
        creates.push(made);
        return made;
      };
    },
  });
  return { engine: watched, creates };
}

/** Boxes of this process (every box the in-process server made: sessions and pool). */
async function ownBoxes(): Promise<number> {
  const boxes = await (await testEngine()).listBoxes(LABEL_OWNER, formatOwner(currentOwner()));
  return boxes.length;
}

/** Samples ownBoxes() until stopped; returns the largest count seen. */
function watchBoxCount(): { stop: () => Promise<number> } {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      max = Math.max(max, await ownBoxes());
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      max = Math.max(max, await ownBoxes());
      return max;
    },
  };
}

let state: string | undefined;
afterEach(() => {
  if (!state) return;
  const ids = stateBoxes(state, true);
  if (ids.length) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore" });
  rmSync(state, { recursive: true, force: true });
  state = undefined;
});

/** Boxes of a state directory, by its label: running ones, or all. */
function stateBoxes(dir: string, all = false): string[] {
  const out = execFileSync(
    "docker",
    ["ps", ...(all ? ["-a"] : []), "-q", "--filter", `label=${LABEL_STATE}=${dir}`],
    { encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean);
}

/**
 * `drydock serve --pool 1 --pool-max 6` over stdio, after a burst of six sessions (made and
 * removed) so that its pool grows; resolves once the log says a box past the base is being made.
 */
async function serveGrowing(repo: string): Promise<{ client: Client; pid: number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "drydock-state-"));
  state = dir;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "serve", "--repo", repo, "--image", sandboxImage(), "--pool", "1", "--pool-max", "6"],
    env: { ...process.env, DRYDOCK_STATE_DIR: dir } as Record<string, string>,
    stderr: "pipe",
  });
  let log = "";
  transport.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  const client = new Client({ name: "burst", version: "1" });
  await client.connect(transport);
  for (let i = 0; i < 6; i++) {
    const made = ok(await client.callTool({ name: "session_create", arguments: {} }));
    ok(await client.callTool({ name: "session_destroy", arguments: { session_id: made.session_id } }));
  }
  await expect.poll(() => log, { timeout: 60_000, interval: 100 }).toMatch(/so it makes one more/);
  return { client, pid: transport.pid!, dir };
}

describe("a warm pool under a burst of sessions", () => {
  it("gives every session of a back-to-back burst a pool box, then holds the burst's size for the next", async () => {
    using repo = tempRepo();
    const image = sandboxImage();
    const manager = await SessionManager.start(await testEngine(), {
      pool: { size: 1, maxSize: 4, profile: { image } },
    });
    try {
      await manager.pool!.full();
      const first: Session[] = [];
      for (let i = 0; i < 4; i++) first.push(await manager.create({ repo: repo.path, image }));
      // The first takes the idle box; each next one the box being made for the pool.
      expect(first.map((s) => s.warm)).toEqual([true, true, true, true]);
      for (const s of first) await manager.destroy(s.id);
      await manager.pool!.full();
      expect(manager.pool!.idleCount).toBe(4);
      const idle = manager.pool!.idleIds();
      const second: Session[] = [];
      for (let i = 0; i < 4; i++) second.push(await manager.create({ repo: repo.path, image }));
      // Every one of the next burst was idle, ready, when it was asked for.
      expect(second.map((s) => s.id)).toEqual(idle);
    } finally {
      await manager.closeAll();
    }
  });

  it("gives a session that finds the pool empty the box being prefilled, starting no cold one", async () => {
    using repo = tempRepo({ "a.txt": "from the host\n" });
    const image = sandboxImage();
    const { engine, creates } = await watchedEngine();
    const manager = await SessionManager.start(engine, {
      pool: { size: 1, profile: { image }, prefillRepo: repo.path },
    });
    try {
      // Straight after start the pool's one box is being made and prefilled: none is idle.
      await expect.poll(() => creates.length, { timeout: 30_000, interval: 10 }).toBe(1);
      expect(manager.pool!.idleCount).toBe(0);
      const session = await manager.create({ repo: repo.path, image });
      expect(session.warm).toBe(true);
      // Its box is the one the pool was making; no other was started for it.
      expect(session.box.id).toBe(await creates[0]);
      expect(creates).toHaveLength(1);
      const info = await (await testEngine()).inspect(session.box.id);
      expect(info.Config.Labels[LABEL_POOL]).toBe("warm");
      expect((await session.bash("cat a.txt")).output).toBe("from the host\n");
    } finally {
      await manager.closeAll();
    }
  });

  it("grows only as far as admission allows, says so in numbers, and a burst of 100 starts no box past it", async () => {
    using repo = tempRepo();
    const logs: string[] = [];
    const removeSink = addLogSink((record) => logs.push(record.message));
    await using drydock = await inMemoryDrydock({
      repo: repo.path,
      environment: false,
      maxSessions: 3,
      pool: { size: 1, maxSize: 10 },
    });
    try {
      const pool = drydock.server.manager.pool!;
      await pool.full();
      const create = () => drydock.client.callTool({ name: "session_create", arguments: {} });
      const destroy = (id: unknown) =>
        drydock.client.callTool({ name: "session_destroy", arguments: { session_id: id } });
      // Two bursts of three: six sessions asked of the pool, which would hold six.
      for (let burst = 0; burst < 2; burst++) {
        const made = [];
        for (let i = 0; i < 3; i++) made.push(ok(await create()));
        for (const m of made) ok(await destroy(m.session_id));
      }
      await pool.full();
      // 3 more sessions fit (--max-sessions 3, none held): two boxes past the base, one place left.
      expect(pool.idleCount).toBe(3);
      expect(pool.target()).toBe(6);
      expect(logs.join("\n")).toMatch(
        /it holds 2 boxes past its base, so it makes no more \(it leaves one place for a session it does not serve\): 3 more sessions fit, bound by --max-sessions/,
      );

      // An untrusted client asks for 100 at once: three are admitted, and they take the idle boxes;
      // the pool then replaces only its base, as no more sessions fit.
      const watch = watchBoxCount();
      const replies = await Promise.all(Array.from({ length: 100 }, create));
      const admitted = replies.filter((r) => !(r as { isError?: boolean }).isError);
      expect(admitted).toHaveLength(3);
      for (const r of replies.filter((r) => (r as { isError?: boolean }).isError)) {
        expect(failure(r)).toMatch(/--max-sessions 3/);
      }
      await pool.full();
      expect(await watch.stop()).toBeLessThanOrEqual(4);
      expect(pool.idleCount).toBe(1);
      expect(await ownBoxes()).toBe(4);
    } finally {
      removeSink();
    }
  });

  it("leaves no box when drydock is closed while its pool grows", async () => {
    using repo = tempRepo();
    const { client, pid, dir } = await serveGrowing(repo.path);
    expect(stateBoxes(dir).length).toBeGreaterThan(0);
    await client.close();
    await expect.poll(() => isAlive(pid), { timeout: 60_000, interval: 250 }).toBe(false);
    expect(stateBoxes(dir, true)).toEqual([]);
  });

  it("leaves no box running when drydock is killed while its pool grows, and none once the next one starts", async () => {
    using repo = tempRepo();
    const { pid, dir } = await serveGrowing(repo.path);
    process.kill(pid, "SIGKILL");
    await expect.poll(() => stateBoxes(dir), { timeout: 30_000, interval: 250 }).toEqual([]);
    // A box created but not started when the kill came is removed by the next start.
    const next = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "serve", "--repo", repo.path, "--image", sandboxImage(), "--pool", "0"],
      env: { ...process.env, DRYDOCK_STATE_DIR: dir } as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "next", version: "1" });
    await client.connect(next);
    try {
      expect(stateBoxes(dir, true)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
