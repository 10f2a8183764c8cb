/**
 * SWE-bench parity, checked with SWE-bench's own code: a run of SWE-bench rows with resolved,
 * unresolved, empty, timed-out, errored, unanswered and invalid instances (and a skipped
 * PASS_TO_PASS test, and test commands with pytest's `-v`) is graded by drydock; its task folders
 * then go to the swebench package's make_run_report (pinned, installed into a cache by
 * scripts/install-swebench.sh, which the test command runs), and every key of SWE-bench's run
 * report must equal drydock's swebench-report.json; each report.json's tests and verdict must be
 * what SWE-bench's get_eval_tests_report makes of the same test statuses, and what SWE-bench's
 * get_eval_report writes from the same test log (read by its parse_log_pytest, which reads no `-v`
 * line). `--grading strict` keeps drydock's stricter choices.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { git } from "../helpers/repos.js";

const execFileAsync = promisify(execFile);
const VENV = process.env.DRYDOCK_SWEBENCH_DIR ?? join(homedir(), ".cache", "drydock", "swebench-5.0.2");
const cli = join(process.cwd(), "dist", "cli", "main.js");
const fixtures = join(process.cwd(), "test", "fixtures", "swebench");
const script = join(process.cwd(), "test", "fixtures", "swebench-harness", "swebench_report.py");
const MODEL = "org/parity-model";

let work: string;

function drydock(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    [cli, ...args, "--image", inject("sandboxImage"), "--concurrency", "2"],
    {
      cwd: work,
      env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr })));
}

const readJson = (...parts: string[]) => JSON.parse(readFileSync(join(work, ...parts), "utf8"));

/** A test file the test patch adds, whose one test is skipped on every platform. */
const SKIPPED_TEST_FILE = [
  "diff --git a/test_extra.py b/test_extra.py",
  "new file mode 100644",
  "--- /dev/null",
  "+++ b/test_extra.py",
  "@@ -0,0 +1,5 @@",
  "+import pytest",
  "+",
  '+@pytest.mark.skip(reason="not on this platform")',
  "+def test_platform():",
  "+    pass",
  "",
].join("\n");

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-swebench-parity-"));
  mkdirSync(join(work, "clones"));
  git(work, "clone", "-q", join(fixtures, "six.bundle"), join("clones", "benjaminp__six"));
  const six = JSON.parse(readFileSync(join(fixtures, "rows.jsonl"), "utf8").split("\n")[0]!) as Record<
    string,
    string
  >;
  const pred = (kind: string) =>
    JSON.parse(readFileSync(join(fixtures, `predictions-${kind}.jsonl`), "utf8").split("\n")[0]!) as Record<
      string,
      string
    >;
  const gold = pred("gold").model_patch!;
  const rows = [
    { ...six, instance_id: "six-resolved" },
    // Its PASS_TO_PASS holds a test the runner skips, named only by pytest's -v line (its -rA
    // summary says `SKIPPED [1] test_extra.py:3`): SWE-bench's parser reads no -v line, so the test
    // is missing and the instance unresolved.
    {
      ...six,
      instance_id: "six-skipped",
      test_patch: six.test_patch + SKIPPED_TEST_FILE,
      PASS_TO_PASS: JSON.stringify([...JSON.parse(six.PASS_TO_PASS!), "test_extra.py::test_platform"]),
      test_cmd: "python -m pytest -v -rA test_six.py test_extra.py",
    },
    { ...six, instance_id: "six-unresolved" },
    // The gold patch under `pytest -v` without -rA: every result is on a -v line, so SWE-bench
    // finds none (its report: the patch did not apply, not resolved).
    { ...six, instance_id: "six-verbose", test_cmd: "python -m pytest -v test_six.py" },
    { ...six, instance_id: "six-empty" },
    { ...six, instance_id: "six-timeout", test_cmd: "sleep 600" },
    { ...six, instance_id: "six-noapply" },
    { ...six, instance_id: "six-unanswered" },
    // Rows that cannot run (no clone of their repository): answered, and not.
    { ...six, instance_id: "nowhere-answered", repo: "nobody/nowhere" },
    { ...six, instance_id: "nowhere-unanswered", repo: "nobody/nowhere" },
  ];
  const predictions = [
    { instance_id: "six-resolved", model_patch: gold },
    { instance_id: "six-skipped", model_patch: gold },
    { instance_id: "six-unresolved", model_patch: pred("wrong").model_patch },
    { instance_id: "six-verbose", model_patch: gold },
    { instance_id: "six-empty", model_patch: "" },
    { instance_id: "six-timeout", model_patch: gold },
    {
      instance_id: "six-noapply",
      model_patch: "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n",
    },
    { instance_id: "nowhere-answered", model_patch: gold },
  ].map((p) => ({ ...p, model_name_or_path: MODEL }));
  const lines = (items: object[]) => items.map((r) => JSON.stringify(r)).join("\n") + "\n";
  writeFileSync(join(work, "rows.jsonl"), lines(rows));
  writeFileSync(join(work, "preds.jsonl"), lines(predictions));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const evalArgs = (out: string, ...more: string[]) => [
  "eval",
  "rows.jsonl",
  "--agent",
  "patch",
  "--patches",
  "preds.jsonl",
  "--repos",
  "clones",
  "--test-timeout",
  "20",
  "--run-id",
  "parity",
  "--out",
  out,
  ...more,
];

describe("SWE-bench grading, as the swebench package itself reports it", () => {
  it("make_run_report over drydock's task folders gives drydock's swebench-report.json, key by key", async () => {
    const python = join(VENV, "bin", "python");
    expect(
      existsSync(python),
      `${python} is missing: run bash scripts/install-swebench.sh (npm test runs it)`,
    ).toBe(true);
    const run = await drydock(...evalArgs("parity"));
    // Exit 2: two rows could not run (no clone); the others did.
    expect(run.code, run.stderr).toBe(2);
    const statuses = Object.fromEntries(
      (readJson("parity", "results.json").tasks as Array<{ id: string; status: string }>).map((t) => [
        t.id,
        t.status,
      ]),
    );
    expect(statuses).toEqual({
      "six-resolved": "resolved",
      "six-skipped": "unresolved",
      "six-unresolved": "unresolved",
      "six-verbose": "unresolved",
      "six-empty": "unresolved",
      "six-timeout": "timeout",
      "six-noapply": "agent_error",
      "six-unanswered": "incomplete",
    });
    // The empty patch was not run (no box, no tests), as SWE-bench skips it.
    const empty = readJson("parity", "tasks", "six-empty", "result.json");
    expect(empty).toMatchObject({ grading: "swebench", prediction: "empty", duration_ms: 0 });
    expect(empty.tests).toBeUndefined();
    // A timed-out task, an empty patch and a patch that does not apply have no report.json.
    for (const id of ["six-empty", "six-timeout", "six-noapply", "six-unanswered"]) {
      expect(existsSync(join(work, "parity", "tasks", id, "report.json")), id).toBe(false);
    }

    const { stdout } = await execFileAsync(
      python,
      [script, join(work, "parity"), join(work, "rows.jsonl"), join(work, "preds.jsonl"), work],
      { timeout: 120_000 },
    );
    const swebench = JSON.parse(stdout) as {
      run_report: Record<string, unknown>;
      grades: Record<string, { tests_status: unknown; resolved: boolean }>;
      log_reports: Record<string, Record<string, unknown>>;
    };
    const ours = readJson("parity", "swebench-report.json") as Record<string, unknown>;
    for (const key of Object.keys(swebench.run_report)) {
      expect(ours[key], key).toEqual(swebench.run_report[key]);
    }
    // The run holds every kind of instance the comparison is about.
    expect(swebench.run_report).toMatchObject({
      total_instances: 10,
      submitted_instances: 8,
      resolved_ids: ["six-resolved"],
      unresolved_ids: ["six-skipped", "six-unresolved", "six-verbose"],
      empty_patch_ids: ["six-empty"],
      error_ids: ["nowhere-answered", "six-noapply", "six-timeout"],
      incomplete_ids: ["nowhere-unanswered", "six-unanswered"],
      ambiguous_failure_ids: ["six-timeout"],
      failure_reasons: { "six-timeout": "tests_timed_out" },
    });
    // Each report.json: the tests and the verdict SWE-bench's grading gives the same statuses.
    const graded = ["six-resolved", "six-skipped", "six-unresolved", "six-verbose"];
    expect(Object.keys(swebench.grades).sort()).toEqual(graded);
    for (const [id, grade] of Object.entries(swebench.grades)) {
      const report = readJson("parity", "tasks", id, "report.json")[id];
      if (grade.tests_status !== undefined && report.tests_status !== undefined)
        expect(report.tests_status, id).toEqual(grade.tests_status);
      expect(report.resolved, id).toBe(grade.resolved);
    }
    // SWE-bench's own report.json from the same test log, key by key: its parser reads no -v line.
    expect(Object.keys(swebench.log_reports).sort()).toEqual(graded);
    for (const [id, theirs] of Object.entries(swebench.log_reports)) {
      expect(readJson("parity", "tasks", id, "report.json")[id], id).toEqual(theirs);
    }
    expect(swebench.log_reports["six-skipped"]).toMatchObject({
      resolved: false,
      tests_status: { PASS_TO_PASS: { failure: ["test_extra.py::test_platform"] } },
    });
    expect(swebench.log_reports["six-verbose"]).toMatchObject({
      patch_successfully_applied: false,
      resolved: false,
    });
    expect(
      readJson("parity", "tasks", "six-skipped", "result.json").tests.grade.pass_to_pass.missing,
    ).toEqual(["test_extra.py::test_platform"]);
  });

  it("--grading strict: a skipped test does not pass, the empty patch is graded, a timed-out task has report.json", async () => {
    const run = await drydock(...evalArgs("strict", "--grading", "strict"));
    expect(run.code, run.stderr).toBe(2);
    expect(readJson("strict", "run.json").grading).toBe("strict");
    const result = (id: string) => readJson("strict", "tasks", id, "result.json");
    expect(result("six-skipped")).toMatchObject({ status: "unresolved", grading: "strict" });
    expect(result("six-skipped").tests.grade.pass_to_pass.failed).toEqual(["test_extra.py::test_platform"]);
    expect(result("six-empty").tests).toBeDefined();
    expect(existsSync(join(work, "strict", "tasks", "six-timeout", "report.json"))).toBe(true);
    const report = readJson("strict", "swebench-report.json");
    // strict reads pytest's -v lines too.
    expect(report.resolved_ids).toEqual(["six-resolved", "six-verbose"]);
    expect(report.empty_patch_ids).toEqual(["six-empty"]);
    // Resuming that --out under the default grading is another setting: refused.
    const again = await drydock(...evalArgs("strict"));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /--out: .*strict holds a run with other settings \(grading "strict" vs unset/,
    );
    const flag = await drydock(...evalArgs("bad", "--grading", "lenient"));
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--grading: "lenient" is not a mode; use swebench .* or strict/);
  });
});
