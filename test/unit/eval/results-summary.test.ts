import { describe, expect, it } from "vitest";
import { diffStat } from "../../../src/eval/attempt-result.js";
import { buildResults, environmentImagesOf, passAtKOfTask } from "../../../src/eval/results-summary.js";
import { attempt, runInfo } from "./fixtures.js";

describe("buildResults", () => {
  it("sums up tasks, statuses, time, tokens and cost; unfinished tasks are not_run", () => {
    const results = buildResults(runInfo(["a", "b", "c", "d"]), [
      attempt("a", "resolved"),
      attempt("b", "unresolved"),
      attempt("c", "timeout", { error: "slow" }),
      attempt("gone", "resolved"),
    ]);
    expect(results.summary).toMatchObject({
      tasks: 4,
      resolved: 1,
      resolved_rate: 0.25,
      statuses: { resolved: 1, unresolved: 1, timeout: 1, not_run: 1, agent_error: 0 },
      attempts_planned: 4,
      attempts_finished: 3,
      duration_ms: 6000,
      wall_ms: 60_000,
      tokens: { input: 300, output: 30 },
      cost_usd: 0.03,
      llm_requests: 3,
    });
    expect(results.tasks.map((t) => [t.id, t.status])).toEqual([
      ["a", "resolved"],
      ["b", "unresolved"],
      ["c", "timeout"],
      ["d", "not_run"],
    ]);
  });

  it("resolves a task when any attempt resolved (pass@k) and reports pass@1 over attempts", () => {
    const results = buildResults(runInfo(["a", "b"], { attempts: 3 }), [
      attempt("a", "unresolved", { attempt: 1 }),
      attempt("a", "resolved", { attempt: 2 }),
      attempt("a", "unresolved", { attempt: 3 }),
      attempt("b", "unresolved", { attempt: 1 }),
      attempt("b", "agent_error", { attempt: 2 }),
      attempt("b", "resolved", { attempt: 4 }),
    ]);
    expect(results.tasks[0]).toMatchObject({
      resolved: true,
      status: "resolved",
      resolved_attempts: 1,
      attempts_finished: 3,
    });
    expect(results.tasks[1]).toMatchObject({ resolved: false, status: "agent_error", attempts_finished: 2 });
    expect(results.summary).toMatchObject({
      resolved: 1,
      attempts_planned: 6,
      attempts_finished: 5,
      pass_at_1: 0.2,
    });
  });

  it("estimates pass@k without bias for each k, over the tasks with k attempts finished", () => {
    // Three tasks of three attempts: 3, 1 and 0 resolved; a fourth with one finished attempt.
    const results = buildResults(runInfo(["a", "b", "c", "d"], { attempts: 3 }), [
      ...[1, 2, 3].map((n) => attempt("a", "resolved", { attempt: n })),
      attempt("b", "unresolved", { attempt: 1 }),
      attempt("b", "resolved", { attempt: 2 }),
      attempt("b", "unresolved", { attempt: 3 }),
      ...[1, 2, 3].map((n) => attempt("c", "unresolved", { attempt: n })),
      attempt("d", "resolved", { attempt: 1 }),
    ]);
    // By hand: pass@1 = mean of c/n; pass@2 = mean of 1 - C(n-c,2)/C(3,2) = (1, 1 - 1/3, 0) for a,
    // b, c; pass@3 = (1, 1, 0). d counts only for k = 1.
    expect(results.summary.pass_at_k).toEqual({
      "1": { value: Math.round(((1 + 1 / 3 + 0 + 1) / 4) * 1e4) / 1e4, tasks: 4 },
      "2": { value: Math.round(((1 + 2 / 3 + 0) / 3) * 1e4) / 1e4, tasks: 3 },
      "3": { value: Math.round((2 / 3) * 1e4) / 1e4, tasks: 3 },
    });
    expect(results.summary.pass_at_k["1"]!.value).toBe(0.5833);
    expect(results.summary.pass_at_k["2"]!.value).toBe(0.5556);
    expect(results.summary.pass_at_k["3"]!.value).toBe(0.6667);
  });

  it("computes one task's pass@k as 1 - C(n-c,k)/C(n,k), and refuses k above n", () => {
    // C(8,3)/C(10,3) = 56/120.
    expect(passAtKOfTask(10, 2, 3)).toBeCloseTo(1 - 56 / 120, 12);
    expect(passAtKOfTask(10, 0, 5)).toBe(0);
    expect(passAtKOfTask(10, 6, 5)).toBe(1);
    expect(passAtKOfTask(200, 1, 1)).toBeCloseTo(1 / 200, 12);
    expect(() => passAtKOfTask(2, 1, 3)).toThrow(/pass@3 needs at least 3 attempts/);
  });

  it("gives zero rates for an empty run", () => {
    expect(buildResults(runInfo([]), []).summary).toMatchObject({ tasks: 0, resolved_rate: 0, pass_at_1: 0 });
  });
});

describe("diffStat", () => {
  it("counts files and changed lines, not the file headers", () => {
    const diff =
      "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-old\n+new\n+more\ndiff --git a/y b/y\n";
    expect(diffStat(diff)).toEqual({ files: 2, insertions: 2, deletions: 1 });
    expect(diffStat("")).toEqual({ files: 0, insertions: 0, deletions: 0 });
  });
});

describe("environmentImagesOf", () => {
  it("gives each image's build time and counts its attempts, in the order first used", () => {
    expect(
      environmentImagesOf([
        attempt("b", "resolved", {
          started_at: "2026-01-01T00:00:05.000Z",
          environment_image: "drydock-env:a",
          environment_build_ms: 0,
        }),
        attempt("a", "resolved", {
          started_at: "2026-01-01T00:00:01.000Z",
          environment_image: "drydock-env:a",
          environment_build_ms: 4000,
        }),
        attempt("c", "box_error", { started_at: "2026-01-01T00:00:02.000Z" }),
        attempt("d", "resolved", {
          started_at: "2026-01-01T00:00:03.000Z",
          environment_image: "own:1",
          environment_build_ms: 0,
        }),
      ]),
    ).toEqual([
      { image: "drydock-env:a", build_ms: 4000, attempts: 2 },
      { image: "own:1", build_ms: 0, attempts: 1 },
    ]);
  });

  it("takes attempts that waited on one build as one build: the longest wait, not the sum", () => {
    const waited = (id: string, ms: number) =>
      attempt(id, "resolved", {
        started_at: "2026-01-01T00:00:01.000Z",
        environment_image: "drydock-env:a",
        environment_build_ms: ms,
      });
    expect(environmentImagesOf([waited("a", 31_600), waited("b", 31_400), waited("c", 0)])).toEqual([
      { image: "drydock-env:a", build_ms: 31_600, attempts: 3 },
    ]);
  });
});
