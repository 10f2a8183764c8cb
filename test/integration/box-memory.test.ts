/**
 * The memory a box uses, as admission counts it: read from its cgroup on this host, or asked of
 * the engine's stats API (a remote engine); both see files written to the box's tmpfs, and both
 * see them go.
 */
import { describe, expect, it } from "vitest";
import { boxMemory } from "../../src/engine/box-memory.js";
import { Engine } from "../../src/engine/engine.js";
import { tempRepo } from "../helpers/repos.js";
import { testSession } from "../helpers/sessions.js";

describe("boxMemory", () => {
  it("counts a box's tmpfs files, from its cgroup and from the engine alike, and their removal", async () => {
    using repo = tempRepo();
    await using session = await testSession(repo.path, { memoryMB: 512 });
    const id = session.box.id;
    const engine = session.box.engine as Engine;
    expect(engine).toBeInstanceOf(Engine);
    const measure = async () => ({
      cgroup: (await boxMemory(engine, [id])).get(id)!,
      engine: (await boxMemory(engine, [id], { cgroupRoot: "/nonexistent" })).get(id)!,
    });
    await session.bash("head -c 80000000 /dev/zero > /workspace/fill");
    const full = await measure();
    for (const m of [full.cgroup, full.engine]) {
      expect(m.usedMiB).toBeGreaterThan(76);
      expect(m.limitMiB).toBe(512);
    }
    expect(Math.abs(full.cgroup.usedMiB - full.engine.usedMiB)).toBeLessThan(10);
    await session.bash("rm /workspace/fill");
    const emptied = await measure();
    for (const m of [emptied.cgroup, emptied.engine])
      expect(m.usedMiB).toBeLessThan(full.cgroup.usedMiB - 70);
    expect(await boxMemory(engine, ["0".repeat(64)])).toEqual(new Map());
  });
});
