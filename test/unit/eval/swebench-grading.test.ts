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

// Lines as SWE-bench's parse_log_pytest reads them: a status word first.
const output = [
  "PASSED tests/t.py::test_fixed",
  "PASSED tests/t.py::test_kept",
  "SKIPPED tests/t.py::test_platform",
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

describe("reading pytest's output as SWE-bench 5.0.2 does", () => {
  // `pytest -v -rA` on a run where test_platform is skipped: its -v line names it, the -rA summary
  // does not (pytest sums skips up as `SKIPPED [1] file:line: reason`).
  const verbose = [
    "tests/t.py::test_fixed PASSED                                            [ 33%]",
    "tests/t.py::test_kept PASSED                                             [ 66%]",
    "tests/t.py::test_platform SKIPPED (not on this platform)                 [100%]",
    "",
    "=========================== short test summary info ============================",
    "PASSED tests/t.py::test_fixed",
    "PASSED tests/t.py::test_kept",
    "SKIPPED [1] tests/t.py:9: not on this platform",
    "========================= 2 passed, 1 skipped in 0.02s =========================",
  ].join("\n");

  it("swebench: a -v line names nothing, so the skipped PASS_TO_PASS test is missing and the task unresolved", () => {
    const grade = gradeTests(task, { exitCode: 0, output: verbose }, "swebench");
    expect(grade).toMatchObject({
      resolved: false,
      fail_to_pass: { passed: ["tests/t.py::test_fixed"] },
      pass_to_pass: { passed: ["tests/t.py::test_kept"], missing: ["tests/t.py::test_platform"] },
      tests_found: 2,
    });
    expect(grade.pass_to_pass?.skipped).toBeUndefined();
  });

  it("strict: reads the -v lines too (and a skip still does not pass)", () => {
    const grade = gradeTests(task, { exitCode: 0, output: verbose }, "strict");
    expect(grade).toMatchObject({
      resolved: false,
      pass_to_pass: { failed: ["tests/t.py::test_platform"], missing: [] },
      tests_found: 3,
    });
  });

  it("swebench: -v alone names no test at all", () => {
    const vOnly = verbose.split("\n").slice(0, 3).join("\n");
    const grade = gradeTests(task, { exitCode: 0, output: vOnly }, "swebench");
    expect(grade).toMatchObject({ resolved: false, tests_found: 0 });
    expect(grade.reason).toMatch(/no test results recognised as SWE-bench reads them \(pytest -rA, not -v/);
  });

  it("swebench: a name is the line's second word, a later line wins, XPASS is not read", () => {
    const out = [
      "FAILED tests/t.py::test_p[a b] - AssertionError: x",
      "PASSED tests/t.py::test_p[a b]",
      "XPASS tests/t.py::test_x reason",
      "PASSEDx tests/t.py::test_odd",
      "ERROR tests/t.py::test_e - boom",
      "XFAIL tests/t.py::test_xf - reason",
    ].join("\n");
    const grade = gradeTests(
      {
        fail_to_pass: ["tests/t.py::test_p[a", "tests/t.py::test_xf"],
        pass_to_pass: ["tests/t.py::test_x", "tests/t.py::test_e", "tests/t.py::test_odd"],
      },
      { exitCode: 1, output: out },
      "swebench",
    );
    expect(grade.fail_to_pass).toEqual({
      passed: ["tests/t.py::test_p[a", "tests/t.py::test_xf"],
      failed: [],
      missing: [],
    });
    expect(grade.pass_to_pass).toMatchObject({
      failed: ["tests/t.py::test_e"],
      missing: ["tests/t.py::test_x", "tests/t.py::test_odd"],
    });
  });

  it("swebench: a parameter the dataset cut short is found by its prefix when every match agrees", () => {
    const out = [
      "PASSED tests/t.py::test_g[log(photon",
      "PASSED tests/t.py::test_h[x-1]",
      "FAILED tests/t.py::test_h[x-2]",
    ].join("\n");
    const grade = gradeTests(
      { fail_to_pass: ["tests/t.py::test_g[log", "tests/t.py::test_h[x"] },
      { exitCode: 1, output: out },
      "swebench",
    );
    expect(grade.fail_to_pass).toEqual({
      passed: ["tests/t.py::test_g[log"],
      failed: [],
      missing: ["tests/t.py::test_h[x"],
    });
    // strict looks names up exactly.
    expect(
      gradeTests({ fail_to_pass: ["tests/t.py::test_g[log"] }, { exitCode: 1, output: out }, "strict")
        .fail_to_pass?.missing,
    ).toEqual(["tests/t.py::test_g[log"]);
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
      attempt("f-missing", "incomplete", { grading: "swebench", prediction: "missing" }),
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

describe("SWE-bench's cross-check of the log against the exit status", () => {
  const task = { fail_to_pass: ["t.py::test_a"] };
  const output = "PASSED t.py::test_a";

  it("swebench: a non-zero exit with no failure in the output is not resolved, and report.json says so", () => {
    const grade = gradeTests(task, { exitCode: 3, output }, "swebench");
    expect(grade).toMatchObject({ resolved: false, log_rejected: true });
    expect(grade.reason).toMatch(/test_cmd exited 3 while its output reports no failure/);
    const results = buildResults(runInfo(["x"]), [
      attempt("x", "unresolved", {
        grading: "swebench",
        prediction: "given",
        tests: { exit_code: 3, timed_out: false, grade },
      }),
    ]);
    expect(swebenchInstanceReport(results.tasks[0]!)?.x).toMatchObject({
      patch_successfully_applied: false,
      resolved: false,
    });
  });

  it("not when the output names a failure, nor under strict grading", () => {
    expect(
      gradeTests(task, { exitCode: 1, output: `${output}\nFAILED t.py::test_b` }, "swebench").log_rejected,
    ).toBeUndefined();
    expect(gradeTests(task, { exitCode: 3, output }, "strict")).toMatchObject({ resolved: true });
  });
});
