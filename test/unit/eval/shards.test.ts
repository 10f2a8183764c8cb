import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeRunInfo } from "../../../src/eval/results-dir.js";
import { mergeShards, parseShard, shardOf, taskSetKey } from "../../../src/eval/shards.js";
import { runInfo } from "./fixtures.js";

describe("shards", () => {
  it("parses K/N and refuses anything else, naming the flag and the form", () => {
    expect(parseShard("2/4")).toEqual({ index: 2, count: 4 });
    for (const bad of ["0/4", "5/4", "2", "a/b", "1/0", "-1/2"]) {
      expect(() => parseShard(bad)).toThrow(
        /^--shard: .* is not K\/N with 1 ≤ K ≤ N; write e\.g\. --shard 2\/4/,
      );
    }
  });

  it("splits a task list into N parts that cover it exactly once, in file order", () => {
    const tasks = Array.from({ length: 11 }, (_, i) => `t${i}`);
    const parts = [1, 2, 3].map((index) => shardOf(tasks, { index, count: 3 }));
    expect(parts[0]).toEqual(["t0", "t3", "t6", "t9"]);
    expect(parts.flat().sort()).toEqual([...tasks].sort());
    expect(shardOf(tasks, { index: 1, count: 1 })).toEqual(tasks);
  });

  it("keys a task set by its ids and task hashes", () => {
    const a = [
      { id: "x", hash: "1" },
      { id: "y", hash: "2" },
    ];
    expect(taskSetKey(a)).toBe(taskSetKey([...a]));
    expect(taskSetKey(a)).not.toBe(
      taskSetKey([
        { id: "x", hash: "1" },
        { id: "y", hash: "3" },
      ]),
    );
  });
});

describe("mergeShards refuses what is not one run", () => {
  const work = mkdtempSync(join(tmpdir(), "drydock-shards-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const shard = async (name: string, index: number, extra: Record<string, unknown> = {}) => {
    const dir = join(work, name);
    await writeRunInfo(
      dir,
      runInfo([`t${index}`], { shard: { index, count: 2, task_set: "abc" }, ...extra }),
    );
    return dir;
  };

  it("refuses shards of another task file, other settings, the same shard twice, or a missing shard", async () => {
    const one = await shard("one", 1);
    const two = await shard("two", 2);
    const other = await shard("other", 2, { shard: { index: 2, count: 2, task_set: "zzz" } });
    const attempts = await shard("attempts", 2, { attempts: 3 });
    await expect(mergeShards([one, other], join(work, "m1"))).rejects.toThrow(/ran another task file/);
    await expect(mergeShards([one, attempts], join(work, "m2"))).rejects.toThrow(
      /ran with attempts 3, .* with 1/,
    );
    await expect(mergeShards([one, one], join(work, "m3"))).rejects.toThrow(/are the same shard/);
    await expect(mergeShards([one], join(work, "m4"))).rejects.toThrow(/shard\(s\) 2 of 2 not given/);
    const merged = await mergeShards([two, one], join(work, "m5"));
    expect(merged.run.tasks.map((t) => t.id)).toEqual(["t1", "t2"]);
    expect(merged.run.shard).toBeUndefined();
    expect(merged.run.merged_shards?.map((s) => s.index)).toEqual([1, 2]);
  });
});
