import { describe, expect, it } from "vitest";
import { compareRuns, formatComparison, isRegression } from "../../../src/eval/compare-runs.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { attempt, runInfo } from "./fixtures.js";

describe("compareRuns", () => {
  const before = buildResults(runInfo(["fix", "break", "same", "differ", "old"]), [
    attempt("fix", "unresolved"),
    attempt("break", "resolved"),
    attempt("same", "resolved"),
    attempt("differ", "unresolved"),
    attempt("old", "resolved"),
  ]);
  const after = buildResults(
    runInfo(["fix", "break", "same", "differ", "new"], {
      run_id: "nightly-2",
      agent: "aider",
      agent_version: "0.86.2",
      model: "openai/gpt-4.1",
    }),
    [
      attempt("fix", "resolved"),
      attempt("break", "agent_error"),
      attempt("same", "resolved"),
      attempt("differ", "timeout"),
      attempt("new", "resolved"),
    ],
  );
  const c = compareRuns(before, after);

  it("sorts tasks into fixed, broken, failing differently and unchanged", () => {
    expect(c.fixed).toEqual([{ id: "fix", before: "unresolved", after: "resolved" }]);
    expect(c.broken).toEqual([{ id: "break", before: "resolved", after: "agent_error" }]);
    expect(c.changed).toEqual([{ id: "differ", before: "unresolved", after: "timeout" }]);
    expect(c.same).toBe(1);
    expect(c.only_before).toEqual(["old"]);
    expect(c.only_after).toEqual(["new"]);
  });

  it("prints the rates and each change", () => {
    const text = formatComparison(c, { before: "runs/a", after: "runs/b" });
    expect(text).toContain("A runs/a: run 20260101-000000-ab12 (patch): 3/5 resolved (60.0%)");
    expect(text).toContain("B runs/b: run nightly-2 (aider 0.86.2, openai/gpt-4.1): 3/5 resolved (60.0%)");
    expect(text).toContain("fixed in B (1):\n  fix  unresolved → resolved");
    expect(text).toContain("broken in B (1):\n  break  resolved → agent_error");
    expect(text).toContain("only in B (1): new");
  });

  it("counts a task resolved in A and missing from B as a regression, as a broken one is", () => {
    expect(c.resolved_only_before).toEqual(["old"]);
    expect(formatComparison(c, { before: "a", after: "b" })).toContain(
      "resolved in A, missing from B (1): old",
    );
    expect(isRegression(c)).toBe(true);
    const onlyMissing = compareRuns(
      buildResults(runInfo(["kept", "lost"]), [attempt("kept", "resolved"), attempt("lost", "resolved")]),
      buildResults(runInfo(["kept"]), [attempt("kept", "resolved")]),
    );
    expect(onlyMissing.broken).toEqual([]);
    expect(isRegression(onlyMissing)).toBe(true);
    const none = compareRuns(
      buildResults(runInfo(["kept", "lost"]), [attempt("kept", "resolved"), attempt("lost", "unresolved")]),
      buildResults(runInfo(["kept"]), [attempt("kept", "resolved")]),
    );
    expect(isRegression(none)).toBe(false);
  });
});
