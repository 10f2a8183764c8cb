/**
 * A warm pool under bursts of sessions: every session of a burst gets a pool box (an idle one, or
 * the one being made that will be ready first, never a cold box started beside it), and the pool
 * grows to the burst's size for the next one. How far it may grow (admission) is tested in
 * test/security/warm-pool-growth-bound.test.ts; a drydock closed or killed while it grows in
 * test/faults/warm-pool-growth-shutdown.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { BoxEngine } from "../../src/engine/box-engine.js";
import { LABEL_POOL, LABEL_SESSION } from "../../src/engine/labels.js";
import type { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine } from "../helpers/sessions.js";

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

  it("shrinks back to its base once no burst has asked for a while, removing the boxes it grew", async () => {
    using repo = tempRepo();
    const image = sandboxImage();
    const engine = await testEngine();
    const manager = await SessionManager.start(engine, {
      pool: { size: 1, maxSize: 3, demandWindowMs: 20_000, profile: { image } },
    });
    try {
      await manager.pool!.full();
      const burst: Session[] = [];
      for (let i = 0; i < 3; i++) burst.push(await manager.create({ repo: repo.path, image }));
      for (const s of burst) await manager.destroy(s.id);
      await manager.pool!.full();
      expect(manager.pool!.idleCount).toBe(3);
      const grown = manager.pool!.idleIds();
      await expect.poll(() => manager.pool!.idleCount, { timeout: 60_000, interval: 250 }).toBe(1);
      const [kept] = manager.pool!.idleIds();
      for (const id of grown.filter((id) => id !== kept)) {
        await expect.poll(async () => (await engine.listBoxes(LABEL_SESSION, id)).length).toBe(0);
      }
    } finally {
      await manager.closeAll();
    }
  });
});
