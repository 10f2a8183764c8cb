/**
 * SWE-bench grading, the default for SWE-bench rows: a skipped PASS_TO_PASS test is maintained, an empty
 * patch is not run, report.json exists exactly when SWE-bench's harness would write one, and the
 * run report has swebench 5.x's keys. `strict` keeps drydock's stricter choices.
 */
import { describe, expect, it } from "vitest";
import { gradeTests } from "../../../src/eval/grade.js";
import { buildResults } from "../../../src/eval/results-summary.js";
import {
  classifyFailure,
  swebenchInstanceReport,
  swebenchRunReport,
} from "../../../src/eval/swebench-report.js";
import { attempt, runInfo } from "./fixtures.js";

const output = [
  "tests/t.py::test_fixed PASSED",
  "tests/t.py::test_kept PASSED",
  "tests/t.py::test_platform SKIPPED",
].join("\n");
const task = {
  fail_to_pass: ["tests/t.py::test_fixed"],
  pass_to_pass: ["tests/t.py::test_kept", "tests/t.py::test_platform"],
};

describe("grading a skipped test", () => {
  it("swebench: a skipped PASS_TO_PASS test is maintained, as SWE-bench 5.x counts it", () => {
    const grade = gradeTests(task, { exitCode: 0, output }, "swebench");
    expect(grade.resolved).toBe(true);
    expect(grade.pass_to_pass).toEqual({
      passed: ["tests/t.py::test_kept", "tests/t.py::test_platform"],
      failed: [],
      missing: [],
      skipped: ["tests/t.py::test_platform"],
    });
    expect(grade.reason).toBe(
      "FAIL_TO_PASS 1/1 pass; PASS_TO_PASS 2/2 pass; 1 PASS_TO_PASS skipped (maintained, as SWE-bench grades)",
    );
  });

  it("swebench: a skipped FAIL_TO_PASS test is not resolved", () => {
    const grade = gradeTests(
      { fail_to_pass: ["tests/t.py::test_platform"] },
      { exitCode: 0, output },
      "swebench",
    );
    expect(grade).toMatchObject({ resolved: false, fail_to_pass: { failed: ["tests/t.py::test_platform"] } });
  });

  it("strict: a skipped test did not pass", () => {
    const grade = gradeTests(task, { exitCode: 0, output }, "strict");
    expect(grade.resolved).toBe(false);
    expect(grade.pass_to_pass?.failed).toEqual(["tests/t.py::test_platform"]);
    expect(gradeTests(task, { exitCode: 0, output })).toEqual(grade);
  });

  it("swebench: a name the output does not report still fails", () => {
    const grade = gradeTests(
      { fail_to_pass: ["tests/t.py::test_absent"] },
      { exitCode: 0, output },
      "swebench",
    );
    expect(grade).toMatchObject({ resolved: false, fail_to_pass: { missing: ["tests/t.py::test_absent"] } });
  });
});

const graded = (resolved: boolean) => ({
  exit_code: resolved ? 0 : 1,
  timed_out: false,
  grade: { resolved, by: "test_names" as const, reason: "" },
});

describe("SWE-bench's reports under swebench grading", () => {
  const ids = ["a-resolved", "b-unresolved", "c-empty", "d-timeout", "e-noapply", "f-missing"];
  const results = buildResults(
    runInfo(ids, {
      model: "m",
      patches: { path: "/p.jsonl", kind: "file", predictions: 7 },
      invalid_tasks: [
        {
          source: "rows.jsonl",
          line: 7,
          field: "repo",
          message: "no clone",
          id: "g-invalid",
          prediction: "given",
        },
        {
          source: "rows.jsonl",
          line: 8,
          field: "repo",
          message: "no clone",
          id: "h-invalid-empty",
          prediction: "empty",
        },
        { source: "rows.jsonl", line: 9, field: "repo", message: "no clone", id: "i-invalid-unanswered" },
      ],
    }),
    [
      attempt("a-resolved", "resolved", { grading: "swebench", prediction: "given", tests: graded(true) }),
      attempt("b-unresolved", "unresolved", {
        grading: "swebench",
        prediction: "given",
        tests: graded(false),
      }),
      attempt("c-empty", "unresolved", {
        grading: "swebench",
        prediction: "empty",
        diff_stat: { files: 0, insertions: 0, deletions: 0 },
      }),
      attempt("d-timeout", "timeout", {
        grading: "swebench",
        prediction: "given",
        phase: "tests",
        tests: { timed_out: true },
      }),
      attempt("e-noapply", "agent_error", { grading: "swebench", prediction: "given" }),
      attempt("f-missing", "error", { grading: "swebench", prediction: "missing" }),
    ],
  );
  const logs = new Map([
    ["d-timeout", "collected 3 items\n\nTimeout error: 60 seconds exceeded.\n"],
    ["e-noapply", "error: patch failed\nError response from daemon: gone\n"],
  ]);

  it("counts as make_run_report does, with its failure classes", () => {
    const report = swebenchRunReport(results, logs);
    expect(report).toEqual({
      total_instances: 9,
      submitted_instances: 7,
      completed_instances: 2,
      resolved_instances: 1,
      unresolved_instances: 1,
      infra_failure_instances: 1,
      ambiguous_failure_instances: 1,
      empty_patch_instances: 2,
      error_instances: 3,
      completed_ids: ["a-resolved", "b-unresolved"],
      incomplete_ids: ["f-missing", "i-invalid-unanswered"],
      empty_patch_ids: ["c-empty", "h-invalid-empty"],
      submitted_ids: [
        "a-resolved",
        "b-unresolved",
        "c-empty",
        "d-timeout",
        "e-noapply",
        "g-invalid",
        "h-invalid-empty",
      ],
      resolved_ids: ["a-resolved"],
      unresolved_ids: ["b-unresolved"],
      infra_failure_ids: ["e-noapply"],
      ambiguous_failure_ids: ["d-timeout"],
      failure_reasons: { "d-timeout": "tests_timed_out", "e-noapply": "container_unavailable" },
      error_ids: ["d-timeout", "e-noapply", "g-invalid"],
      schema_version: 2,
      run_id: "20260101-000000-ab12",
      model_name_or_path: "m",
      integrity_flagged_ids: [],
    });
  });

  it("writes report.json only for a task whose tests gave a verdict", () => {
    const has = Object.fromEntries(results.tasks.map((t) => [t.id, swebenchInstanceReport(t) !== undefined]));
    expect(has).toEqual({
      "a-resolved": true,
      "b-unresolved": true,
      "c-empty": false,
      "d-timeout": false,
      "e-noapply": false,
      "f-missing": false,
    });
  });

  it("strict grading keeps a report.json for a timed-out task and a patch that did not apply", () => {
    const strict = buildResults(runInfo(["d", "e"]), [
      attempt("d", "timeout", { grading: "strict", prediction: "given", tests: { timed_out: true } }),
      attempt("e", "agent_error", { grading: "strict", prediction: "given" }),
    ]);
    expect(strict.tasks.map((t) => swebenchInstanceReport(t)?.[t.id]?.patch_successfully_applied)).toEqual([
      true,
      false,
    ]);
  });
});

describe("classifyFailure", () => {
  it("takes the first of SWE-bench's signatures that matches, in its order", () => {
    expect(classifyFailure("ModuleNotFoundError: x\nCould not resolve host: pypi.org")).toEqual({
      reason: "network_unreachable",
      tier: "environment",
    });
    expect(classifyFailure("line\nKilled\n")).toEqual({ reason: "out_of_memory", tier: "environment" });
    expect(classifyFailure("was Killed by a signal")).toBeUndefined();
    expect(classifyFailure("")).toBeUndefined();
  });
});
