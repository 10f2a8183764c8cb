import { describe, expect, it } from "vitest";
import { diffStat } from "../../../src/eval/attempt-result.js";
import { buildResults, environmentImagesOf } from "../../../src/eval/results-summary.js";
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
  it("sums each image's build time and counts its attempts, in the order first used", () => {
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
});
