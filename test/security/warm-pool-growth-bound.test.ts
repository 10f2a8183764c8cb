/**
 * A warm pool grows with demand only as far as admission says sessions fit, and says so in
 * numbers; an untrusted client asking for 100 sessions at once starts no box past it.
 */
import { describe, expect, it } from "vitest";
import { LABEL_OWNER, currentOwner, formatOwner } from "../../src/engine/labels.js";
import { addLogSink } from "../../src/util/log.js";
import { failure, inMemoryDrydock, ok } from "../helpers/mcp-client.js";
import { tempRepo } from "../helpers/repos.js";
import { testEngine } from "../helpers/sessions.js";

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

describe("a warm pool growing under admission", () => {
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
});
