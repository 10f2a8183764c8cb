import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BaseCounts, baseCountKey } from "../../../src/eval/base-count-cache.js";
import { baseCountLog } from "../../../src/eval/base-test-count.js";

const parts = {
  repo: "/r",
  ref: "abc",
  tree: "t1",
  testPatch: "p",
  testCmd: "pytest",
  setup: "pip install .",
  image: "sha256:1",
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "drydock-base-counts-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the key of a task's base", () => {
  it("changes with each part it depends on", () => {
    const key = baseCountKey(parts);
    expect(baseCountKey({ ...parts })).toBe(key);
    for (const change of [
      { repo: "/s" },
      { ref: "abd" },
      { tree: "t2" },
      { testPatch: "q" },
      { testCmd: "pytest -x" },
      { setup: undefined },
      { image: "sha256:2" },
    ]) {
      expect(baseCountKey({ ...parts, ...change }), JSON.stringify(change)).not.toBe(key);
    }
  });
});

describe("counts taken once per base", () => {
  it("one count for every attempt of a run, those that come while it runs waiting for it", async () => {
    const counts = new BaseCounts("run-1");
    let runs = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const take = async () => {
      runs++;
      await gate;
      return { count: 9 };
    };
    const first = counts.get("k", "t#1", take);
    const second = counts.get("k", "t#2", take);
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(runs).toBe(1);
    expect(a).toEqual({
      count: { count: 9 },
      origin: "counted by this attempt; kept for the task's other attempts",
    });
    expect(b.count).toEqual({ count: 9 });
    expect(b.origin).toMatch(/^counted by attempt t#1 of this run at \S+; not run again$/);
    const third = await counts.get("k", "t#3", take);
    expect(runs).toBe(1);
    expect(third.count).toEqual({ count: 9 });
  });

  it("kept for later runs in the directory, and said so", async () => {
    let runs = 0;
    const take = async () => {
      runs++;
      return { count: 4 };
    };
    const first = await new BaseCounts("run-1", dir).get("k", "t#1", take);
    expect(first.origin).toBe("counted by this attempt; kept for the task's other attempts and later runs");
    const later = await new BaseCounts("run-2", dir).get("k", "t#1", take);
    expect(runs).toBe(1);
    expect(later.count).toEqual({ count: 4 });
    expect(later.origin).toMatch(/^counted by attempt t#1 of run run-1 at \S+; not run again$/);
    expect(baseCountLog(later.count, later.origin)).toMatch(
      /^\$ \(drydock's count: the task's tests without the agent's diff, on a clock of their own; the graded run follows\): 4 result\(s\) \[counted by attempt t#1 of run run-1 at /,
    );
  });

  it("a count that timed out is kept for the run, not for later runs; a failed one for neither", async () => {
    const timedOut = async () => ({ note: "did not finish", timedOut: true });
    const counts = new BaseCounts("run-1", dir);
    await counts.get("k", "t#1", timedOut);
    expect(readdirSync(dir)).toEqual([]);
    expect((await counts.get("k", "t#2", async () => ({ count: 1 }))).count).toEqual({
      note: "did not finish",
      timedOut: true,
    });

    let runs = 0;
    const failing = async () => {
      runs++;
      throw new Error("stopped");
    };
    await expect(counts.get("f", "t#1", failing)).rejects.toThrow("stopped");
    const again = await counts.get("f", "t#2", async () => ({ count: 2 }));
    expect(runs).toBe(1);
    expect(again.count).toEqual({ count: 2 });
  });

  it("a count that timed out can be forgotten to be taken again; one that finished cannot", async () => {
    const counts = new BaseCounts("run-1", dir);
    await counts.get("k", "t#1", async () => ({ note: "did not finish", timedOut: true }));
    await counts.forgetTimedOut("k");
    const again = await counts.get("k", "t#1", async () => ({ count: 4 }));
    expect(again.count).toEqual({ count: 4 });
    expect(again.origin).toMatch(/^counted by this attempt/);
    await counts.forgetTimedOut("k");
    expect((await counts.get("k", "t#2", async () => ({ count: 9 }))).count).toEqual({ count: 4 });
  });

  it("an attempt that waited on a count that failed takes it itself", async () => {
    const counts = new BaseCounts("run-1");
    let fail: (e: Error) => void = () => undefined;
    const first = counts.get("k", "t#1", () => new Promise((_, reject) => (fail = reject)));
    const second = counts.get("k", "t#2", async () => ({ count: 5 }));
    fail(new Error("box died"));
    await expect(first).rejects.toThrow("box died");
    expect((await second).count).toEqual({ count: 5 });
  });
});
