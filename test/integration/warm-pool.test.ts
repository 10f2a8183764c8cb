import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LABEL_OWNER, LABEL_POOL, LABEL_SESSION } from "../../src/engine/labels.js";
import type { Session } from "../../src/session/session.js";
import { SessionManager } from "../../src/session/session-manager.js";
import type { WarmPoolOptions } from "../../src/session/warm-pool.js";
import { tempRepo } from "../helpers/repos.js";
import { sandboxImage, testEngine, testSession } from "../helpers/sessions.js";

const cli = join(process.cwd(), "dist/cli/main.js");

/** A manager with a pool that is full before the test body runs; every box is removed after it. */
async function withPool(
  pool: Omit<WarmPoolOptions, "profile">,
  body: (manager: SessionManager) => Promise<void>,
): Promise<void> {
  const manager = await SessionManager.start(await testEngine(), {
    pool: { ...pool, profile: { image: sandboxImage() } },
  });
  try {
    await manager.pool!.full();
    await body(manager);
  } finally {
    await manager.closeAll();
  }
}

/** What a box looks like from inside, with the parts that name the box itself left out. */
async function insideView(session: Session): Promise<string> {
  const script = [
    "id",
    "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
    "ulimit -n -u",
    "grep -E ' /(workspace|tmp|home/agent|run/drydock) ' /proc/mounts | sed -E 's/[0-9a-f]{12}/ID/g' | sort",
    "ls /sys/class/net",
    "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max 2>/dev/null",
    "cd /workspace && find . -path ./.git -prune -o -printf '%P %m %s %u\\n' | sort",
    "git status --porcelain; git log --format=%H",
    "ls -A /tmp ~",
    // One process listing, taken while no pipeline forks: the shell, the box's init and first process.
    "ps -eo user,comm --no-headers > /tmp/.ps; grep -v -x -E '\\S+ +ps' /tmp/.ps | sort; rm /tmp/.ps",
    "env | grep -v -E '^(HOSTNAME|_|DRYDOCK_COMMAND)=' | sort", // DRYDOCK_COMMAND is each command's own token
  ].join("; echo ---; ");
  return (await session.bash(script)).output;
}

function hostConfigOf(info: { HostConfig: unknown }, sessionId: string): string {
  return JSON.stringify(info.HostConfig).replaceAll(sessionId, "ID");
}

async function poolBoxesOwnedBy(pid: number): Promise<string[]> {
  const boxes = await (await testEngine()).listBoxes(LABEL_POOL);
  return boxes.filter((b) => b.labels[LABEL_OWNER]?.split("/")[1] === String(pid)).map((b) => b.id);
}

function serve(repo: string, state: string, pool: number): ChildProcess {
  const child = spawn(
    process.execPath,
    [cli, "serve", "--repo", repo, "--image", sandboxImage(), "--pool", String(pool)],
    { stdio: ["pipe", "ignore", "ignore"], env: { ...process.env, DRYDOCK_STATE_DIR: state } },
  );
  return child;
}

describe("the warm pool", () => {
  it("gives a box indistinguishable from a cold one: same limits, user, network and a clean workspace", async () => {
    using repo = tempRepo({ "src/app.py": "x = 1\n", "README.md": "hi\n" });
    repo.write("untracked.txt", "new\n");
    const engine = await testEngine();
    await withPool({ size: 1 }, async (manager) => {
      const warm = await manager.create({ repo: repo.path, image: sandboxImage() });
      await using cold = await testSession(repo.path);
      expect(warm.warm).toBe(true);
      expect(cold.warm).toBe(false);

      const [w, c] = await Promise.all([engine.inspect(warm.box.id), engine.inspect(cold.box.id)]);
      expect(hostConfigOf(w, warm.id)).toBe(hostConfigOf(c, cold.id));
      for (const key of ["User", "Env", "Cmd", "Image", "WorkingDir", "Entrypoint"] as const) {
        expect(w.Config[key]).toEqual(c.Config[key]);
      }
      expect(w.HostConfig.NetworkMode).toBe("none");
      expect(w.Config.Labels[LABEL_POOL]).toBe("warm");
      expect(w.Config.Labels[LABEL_SESSION]).toBe(warm.id);
      expect(w.Name).toBe(`/drydock-${warm.id}`);
      expect(w.Config.Labels[LABEL_OWNER]).toBe(c.Config.Labels[LABEL_OWNER]);

      const [inWarm, inCold] = await Promise.all([insideView(warm), insideView(cold)]);
      expect(inWarm).toContain("uid=1000");
      expect(inWarm).toContain("untracked.txt");
      expect(inWarm).toBe(inCold);
      expect(warm.info().limits).toEqual(cold.info().limits);
      expect(warm.dirty).toBe(true);
      expect(await warm.diff()).toBe("");
    });
  });

  it("never hands one box to two sessions, even when sessions start at once", async () => {
    using repo = tempRepo();
    await withPool({ size: 2 }, async (manager) => {
      const pooled = manager.pool!.idleIds();
      expect(pooled).toHaveLength(2);
      const sessions = await Promise.all(
        Array.from({ length: 5 }, () => manager.create({ repo: repo.path, image: sandboxImage() })),
      );
      // The idle boxes go to the first two; the others wait for the boxes being made or start cold.
      const warm = sessions.filter((s) => s.warm);
      expect(warm.map((s) => s.id)).toEqual(expect.arrayContaining(pooled));
      expect(new Set(sessions.map((s) => s.box.id)).size).toBe(5);
      expect(new Set(sessions.map((s) => s.id)).size).toBe(5);
      await sessions[0]!.bash("echo mine > only-here.txt");
      for (const s of sessions.slice(1)) {
        expect((await s.bash("ls only-here.txt 2>&1; true")).output).toMatch(/No such file/);
      }
      // The pool refills with new boxes, never with one a session holds.
      await manager.pool!.full();
      for (const id of manager.pool!.idleIds()) expect(sessions.map((s) => s.id)).not.toContain(id);
    });
  });

  it("starts making a taken box's replacement only once the session is handed out", async () => {
    using repo = tempRepo();
    const engine = await testEngine();
    // The real engine, watched: when the pool asks it for a box.
    const creates: number[] = [];
    const watched = new Proxy(engine, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        if (key !== "createBox") return value.bind(target);
        return (...args: unknown[]) => {
          creates.push(performance.now());
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const manager = await SessionManager.start(watched, {
      pool: { size: 1, profile: { image: sandboxImage() } },
    });
    try {
      await manager.pool!.full();
      creates.length = 0;
      const session = await manager.create({ repo: repo.path, image: sandboxImage() });
      const handedOut = performance.now();
      expect(session.warm).toBe(true);
      expect(creates).toEqual([]);
      await manager.pool!.full();
      expect(creates).toHaveLength(1);
      expect(creates[0]).toBeGreaterThanOrEqual(handedOut);
    } finally {
      await manager.closeAll();
    }
  });

  it("starts sessions cold when the pool cannot serve their options, and keeps its boxes for those it can", async () => {
    using repo = tempRepo({ "v.txt": "1\n" });
    const first = repo.commit("first");
    repo.write("v.txt", "2\n");
    repo.commit("second");
    await withPool({ size: 1 }, async (manager) => {
      const [idle] = manager.pool!.idleIds();
      const image = sandboxImage();
      const small = await manager.create({ repo: repo.path, image, memoryMB: 512 });
      const withEnv = await manager.create({ repo: repo.path, image, env: { A: "1" } });
      const limited = await manager.create({ repo: repo.path, image, pidsLimit: 64 });
      for (const s of [small, withEnv, limited]) expect(s.warm).toBe(false);
      expect(small.info().limits.memoryMB).toBe(512);
      expect(manager.pool!.idleIds()).toEqual([idle]);
      const onRef = await manager.create({ repo: repo.path, image, ref: first });
      expect(onRef.warm).toBe(true);
      expect(onRef.id).toBe(idle);
      expect((await onRef.bash("cat v.txt; git rev-parse HEAD")).output).toBe(`1\n${first}\n`);
    });
  });

  it("replaces a box idle past its time to live", async () => {
    const engine = await testEngine();
    await withPool({ size: 1, ttlMs: 1_500 }, async (manager) => {
      const [first] = manager.pool!.idleIds();
      await expect
        .poll(() => manager.pool!.idleIds()[0] ?? first, { timeout: 30_000, interval: 200 })
        .not.toBe(first);
      await expect.poll(async () => (await engine.listBoxes(LABEL_SESSION, first)).length).toBe(0);
      await manager.pool!.full();
      expect(manager.pool!.idleCount).toBe(1);
    });
  });

  it("leaves no pooled box after the next start when drydock serve --pool 2 is SIGKILLed", async () => {
    using repo = tempRepo();
    const state = mkdtempSync(join(tmpdir(), "drydock-state-"));
    const engine = await testEngine();
    const first = serve(repo.path, state, 2);
    let next: ChildProcess | undefined;
    try {
      await expect
        .poll(() => poolBoxesOwnedBy(first.pid!), { timeout: 60_000, interval: 250 })
        .toHaveLength(2);
      const boxes = await poolBoxesOwnedBy(first.pid!);
      const sessions = await Promise.all(
        boxes.map(async (id) => (await engine.inspect(id)).Config.Labels[LABEL_SESSION]!),
      );
      for (const id of sessions) expect(existsSync(join(state, "run", id))).toBe(true);
      first.kill("SIGKILL");
      await new Promise((r) => first.once("exit", r));
      expect(await poolBoxesOwnedBy(first.pid!)).toHaveLength(2);

      next = serve(repo.path, state, 0);
      await expect.poll(() => poolBoxesOwnedBy(first.pid!), { timeout: 60_000 }).toHaveLength(0);
      for (const id of boxes) expect(await engine.isRunning(id)).toBe(false);
      // Each box goes first, then its gateway directory: a moment apart on a busy machine.
      await expect
        .poll(() => sessions.filter((id) => existsSync(join(state, "run", id))), { timeout: 10_000 })
        .toEqual([]);
    } finally {
      first.kill("SIGKILL");
      next?.stdin?.end();
      if (next && next.exitCode === null) await new Promise((r) => next!.once("exit", r));
      for (const id of await poolBoxesOwnedBy(first.pid!)) await engine.remove(id);
      rmSync(state, { recursive: true, force: true });
    }
  });
});
