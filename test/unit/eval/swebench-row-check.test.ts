import { describe, expect, it } from "vitest";
import { formatProblem, parseJsonlTasks } from "../../../src/eval/task-parse.js";
import { judgeTask } from "../../../src/eval/validate-tasks.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import { swebenchRunReport } from "../../../src/eval/swebench-report.js";
import { attempt, runInfo } from "./fixtures.js";

const ROW = {
  instance_id: "owner__proj-1",
  repo: "owner/proj",
  base_commit: "0123456789abcdef0123456789abcdef01234567",
  problem_statement: "add() subtracts",
  FAIL_TO_PASS: '["tests/test_a.py::test_add"]',
  PASS_TO_PASS: "[]",
  test_patch:
    "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1 +1 @@\n-x\n+y\n",
  patch: "",
  version: "1.0",
};

/** The row without one field. */
const without = (field: keyof typeof ROW) =>
  Object.fromEntries(Object.entries(ROW).filter(([k]) => k !== field));

const problems = (row: Record<string, unknown>) =>
  parseJsonlTasks(JSON.stringify(row), "rows.jsonl").problems.map(formatProblem);

describe("SWE-bench rows", () => {
  it("a whole row is a task", () => {
    const parsed = parseJsonlTasks(JSON.stringify(ROW), "rows.jsonl");
    expect(parsed.problems).toEqual([]);
    expect(parsed.tasks[0]!.task).toMatchObject({
      id: "owner__proj-1",
      fail_to_pass: ["tests/test_a.py::test_add"],
    });
  });

  it("refuses a row without base_commit or FAIL_TO_PASS, naming the field and why", () => {
    expect(problems(without("base_commit"))).toEqual([
      "rows.jsonl:1: base_commit: is required (the commit the task starts from)",
    ]);
    expect(problems(without("FAIL_TO_PASS"))).toEqual([
      "rows.jsonl:1: FAIL_TO_PASS: is required (the tests the fix must make pass, as JSON text of a list)",
    ]);
    expect(problems({ ...ROW, FAIL_TO_PASS: "[]" })).toEqual([
      "rows.jsonl:1: FAIL_TO_PASS: is an empty list: the task would be resolved with no fix at all; name the tests the fix makes pass",
    ]);
  });

  it("names the row's own fields in a problem, not drydock's", () => {
    expect(problems(without("problem_statement"))).toEqual(["rows.jsonl:1: problem_statement: is required"]);
    expect(problems({ ...ROW, instance_id: "../x" })[0]).toMatch(/^rows\.jsonl:1: instance_id: /);
    expect(problems({ ...ROW, FAIL_TO_PASS: "[1" })[0]).toMatch(/^rows\.jsonl:1: FAIL_TO_PASS: /);
    expect(problems(without("test_patch"))[0]).toMatch(
      /^rows\.jsonl:1: test_patch \(.*--swebench-test-cmd\): is required$/,
    );
  });
});

describe("judgeTask", () => {
  it("calls a task that resolves without a fix invalid, whatever grades it", () => {
    const noF2p = attempt("t", "resolved", {
      tests: {
        timed_out: false,
        grade: {
          resolved: true,
          by: "test_names",
          reason: "PASS_TO_PASS 3/3 pass",
          fail_to_pass: { passed: [], failed: [], missing: [] },
          pass_to_pass: { passed: ["a", "b", "c"], failed: [], missing: [] },
        },
      },
    });
    const verdict = judgeTask("t", noF2p, attempt("t", "resolved"));
    expect(verdict.valid).toBe(false);
    expect(verdict.problems).toEqual([
      "resolved without a fix (no FAIL_TO_PASS test to fail): the task grades nothing",
    ]);
  });

  it("names the integrity flag when the gold patch passes its tests but changes a runner file", () => {
    const base = attempt("t", "unresolved", {
      tests: {
        timed_out: false,
        grade: { resolved: false, by: "exit_code", reason: "test_cmd exited 1" },
      },
    });
    const gold = attempt("t", "unresolved", {
      tests: { timed_out: false, grade: { resolved: true, by: "exit_code", reason: "test_cmd exited 0" } },
      integrity: {
        test_files_restored: [],
        outside_editable_files: [],
        runner_files_restored: ["setup.cfg"],
        flags: ["runner_files_restored"],
        reason: "the agent changed the test runner's files (setup.cfg); they were put back before the tests",
      },
    });
    expect(judgeTask("t", base, gold).problems).toEqual([
      "with the gold patch: flagged: the agent changed the test runner's files (setup.cfg); they were put back before the tests (name them in editable_files if the fix must change them)",
    ]);
  });
});

describe("swebench-report.json", () => {
  it("counts a row that could not run as an error instance, not as nothing", () => {
    const results = buildResults(
      runInfo(["ok-1"], {
        invalid_tasks: [
          { source: "rows.jsonl", line: 2, field: "base_commit", message: "is required", id: "broken-2" },
          { source: "rows.jsonl", line: 3, field: "(json)", message: "not valid JSON" },
        ],
      }),
      [attempt("ok-1", "resolved")],
    );
    const report = swebenchRunReport(results);
    expect(report).toMatchObject({
      total_instances: 2,
      resolved_ids: ["ok-1"],
      error_ids: ["broken-2"],
      error_instances: 1,
    });
  });
});
