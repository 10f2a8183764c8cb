/**
 * Grading on real projects' history (test/fixtures/swebench, made by scripts/make-eval-fixtures.sh
 * from bug-fix commits of six, graded by pytest, and more-itertools, graded by unittest): gold
 * predictions resolve; empty, wrong and test-cheating ones do not; the same tasks given as drydock
 * task rows and as SWE-bench rows with predictions files give the same results; SWE-bench's report
 * shapes are written; a missing prediction is not an empty one; a changed prediction is graded
 * again on resume; `eval validate` flags a task whose FAIL_TO_PASS test already passes.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { git } from "../helpers/repos.js";

const cli = join(process.cwd(), "dist", "cli", "main.js");
const fixtures = join(process.cwd(), "test", "fixtures", "swebench");
const KINDS = ["gold", "empty", "wrong", "cheat"] as const;
const SIX = "benjaminp__six-fixture";
const MIT = "more-itertools__more-itertools-fixture";

let work: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function drydock(...args: string[]): Promise<Run> {
  // Every run gets the test image and two boxes at a time; merge and compare start no box.
  const extra =
    args[1] === "merge" || args[1] === "compare"
      ? []
      : ["--image", inject("sandboxImage"), "--concurrency", "2"];
  const child = spawn(process.execPath, [cli, ...args, ...extra], {
    cwd: work,
    env: { ...process.env, DRYDOCK_STATE_DIR: join(work, "state") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

const readJson = (...parts: string[]) => JSON.parse(readFileSync(join(work, ...parts), "utf8"));

/** task id → status of its attempt. */
function statuses(out: string): Record<string, string> {
  const results = readJson(out, "results.json") as { tasks: Array<{ id: string; status: string }> };
  return Object.fromEntries(results.tasks.map((t) => [t.id, t.status]));
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "drydock-eval-swebench-"));
  mkdirSync(join(work, "clones"));
  git(work, "clone", "-q", join(fixtures, "six.bundle"), join("clones", "benjaminp__six"));
  git(
    work,
    "clone",
    "-q",
    join(fixtures, "more-itertools.bundle"),
    join("clones", "more-itertools__more-itertools"),
  );
  copyFileSync(join(fixtures, "tasks.jsonl"), join(work, "tasks.jsonl"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("eval on real projects' bug fixes, as drydock tasks and as SWE-bench rows", () => {
  it("drydock tasks: gold resolves; empty, wrong and the test-editing cheat do not", async () => {
    const run = await drydock("eval", "tasks.jsonl", "--agent", "patch", "--out", "tasks-out");
    expect(run.code, run.stderr).toBe(0);
    expect(statuses("tasks-out")).toEqual({
      "six-gold": "resolved",
      "six-empty": "unresolved",
      "six-wrong": "unresolved",
      "six-cheat": "unresolved",
      "more-itertools-gold": "resolved",
      "more-itertools-empty": "unresolved",
      "more-itertools-wrong": "unresolved",
      "more-itertools-cheat": "unresolved",
    });
    const cheat = readJson("tasks-out", "tasks", "six-cheat", "result.json");
    expect(cheat.integrity.test_files_restored).toEqual(["test_six.py"]);
    // unittest (Python 3.11 names) counts each test once: 666 tests ran, not 1332.
    const mit = readJson("tasks-out", "tasks", "more-itertools-gold", "result.json");
    const ran = /Ran (\d+) tests/.exec(
      readFileSync(join(work, "tasks-out", "tasks", "more-itertools-gold", "test_output.txt"), "utf8"),
    );
    expect(mit.tests.grade.tests_found).toBe(Number(ran![1]));
  });

  it("eval --shard K/N in two parts, then eval merge: the same results as the unsharded run", async () => {
    // Four of the eight tasks, two of each project and each outcome: the unsharded run's verdicts
    // on them are the ones to match (a shard runs the same code on fewer tasks).
    const picked = ["six-gold", "six-wrong", "more-itertools-gold", "more-itertools-cheat"];
    writeFileSync(
      join(work, "shard-tasks.jsonl"),
      readFileSync(join(work, "tasks.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line && picked.includes((JSON.parse(line) as { id: string }).id))
        .join("\n") + "\n",
    );
    const unsharded = Object.fromEntries(picked.map((id) => [id, statuses("tasks-out")[id]]));
    for (const k of [1, 2]) {
      const run = await drydock(
        "eval",
        "shard-tasks.jsonl",
        "--agent",
        "patch",
        "--shard",
        `${k}/2`,
        "--run-id",
        "sharded",
        "--out",
        `shard-${k}`,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(Object.keys(statuses(`shard-${k}`))).toHaveLength(2);
    }
    const merge = await drydock("eval", "merge", "shard-2", "shard-1", "--out", "merged");
    expect(merge.code, merge.stderr).toBe(0);
    expect(statuses("merged")).toEqual(unsharded);
    // In the task file's order, with every report.
    expect(Object.keys(statuses("merged"))).toEqual(picked);
    expect(readJson("merged", "swebench-report.json").run_id).toBe("sharded");
    expect(readFileSync(join(work, "merged", "junit.xml"), "utf8")).toContain('<testsuite name="six-gold"');
    const alone = await drydock("eval", "merge", "shard-1", "--out", "merged-1");
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/shard\(s\) 2 of 2 not given/);
    // A merge never mixes into a run already there, unless told to replace it.
    const again = await drydock("eval", "merge", "shard-1", "shard-2", "--out", "tasks-out");
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /--out: .*tasks-out already holds \d+ entries .*pass --force to replace what it holds/,
    );
    const replaced = await drydock("eval", "merge", "shard-1", "shard-2", "--out", "merged", "--force");
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(statuses("merged")).toEqual(unsharded);
    // The CI gate on the merged run: every report is written, and the exit status says the rate.
    const rate = Object.values(unsharded).filter((s) => s === "resolved").length / picked.length;
    const gated = await drydock(
      "eval",
      "merge",
      "shard-1",
      "shard-2",
      "--out",
      "merged",
      "--force",
      "--fail-under",
      "100%",
    );
    expect(gated.code, gated.stderr).toBe(rate < 1 ? 1 : 0);
    expect(gated.stderr).toMatch(
      rate < 1 ? /under --fail-under 100%: exit 1/ : /at or above --fail-under 100%/,
    );
    expect(statuses("merged")).toEqual(unsharded);
    // Resuming a finished run under other settings would keep its results under a new label.
    const other = await drydock(
      "eval",
      "shard-tasks.jsonl",
      "--agent",
      "patch",
      "--shard",
      "1/2",
      "--run-id",
      "sharded",
      "--test-timeout",
      "77",
      "--out",
      "shard-1",
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /--out: .*shard-1 holds a run with other settings \(default_test_timeout_s unset vs 77, as there vs now\).*--force/,
    );
  });

  it("SWE-bench rows and predictions files give the same results, and SWE-bench's report", async () => {
    const expected: Record<(typeof KINDS)[number], Record<string, string>> = {
      gold: { [SIX]: "resolved", [MIT]: "resolved" },
      empty: { [SIX]: "unresolved", [MIT]: "unresolved" },
      wrong: { [SIX]: "unresolved", [MIT]: "unresolved" },
      cheat: { [SIX]: "unresolved", [MIT]: "unresolved" },
    };
    for (const kind of KINDS) {
      const out = `rows-${kind}`;
      const run = await drydock(
        "eval",
        join(fixtures, "rows.jsonl"),
        "--agent",
        "patch",
        "--patches",
        join(fixtures, `predictions-${kind}.jsonl`),
        "--repos",
        "clones",
        "--out",
        out,
        "--run-id",
        `fixture-${kind}`,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(statuses(out), kind).toEqual(expected[kind]);
      // Same verdicts as the drydock task rows of the same kind.
      const asTasks = statuses("tasks-out");
      expect(asTasks[`six-${kind}`]).toBe(expected[kind][SIX]);
      expect(asTasks[`more-itertools-${kind}`]).toBe(expected[kind][MIT]);
      const report = readJson(out, "swebench-report.json");
      expect(report).toMatchObject({ schema_version: 2, total_instances: 2, run_id: `fixture-${kind}` });
      expect(report.model_name_or_path).toBe(`fixture-${kind}`);
      if (kind === "gold") expect(report.resolved_ids).toEqual([SIX, MIT]);
      else if (kind === "empty") expect(report.empty_patch_ids).toEqual([SIX, MIT]);
      else expect(report.unresolved_ids).toEqual([SIX, MIT]);
      const runJson = readJson(out, "run.json");
      expect(runJson.patches).toMatchObject({
        path: join(fixtures, `predictions-${kind}.jsonl`),
        kind: "file",
        predictions: 2,
      });
    }
    const instance = readJson("rows-gold", "tasks", SIX, "report.json");
    expect(instance[SIX]).toMatchObject({
      resolved: true,
      patch_successfully_applied: true,
      tests_status: { FAIL_TO_PASS: { success: ["test_six.py::test_assertNotRegex"], failure: [] } },
    });
  });

  it("junit.xml names each graded test, so CI shows which one failed", () => {
    const xml = readFileSync(join(work, "rows-wrong", "junit.xml"), "utf8");
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
    const six = (
      doc.testsuites.testsuite as Array<{ name: string; testcase: Array<Record<string, unknown>> }>
    ).find((s) => s.name === SIX)!;
    const failed = six.testcase.filter((c) => c.failure).map((c) => c.name);
    expect(failed).toEqual(["test_six.py::test_assertNotRegex"]);
    expect(six.testcase).toHaveLength(4);
  });

  it("a task the predictions do not answer is missing (incomplete), not an empty patch", async () => {
    const partial = join(work, "partial.jsonl");
    // The first gold prediction, and one for an instance the rows do not hold (a typo).
    writeFileSync(
      partial,
      readFileSync(join(fixtures, "predictions-gold.jsonl"), "utf8").split("\n")[0] +
        '\n{"instance_id":"benjaminp__six-fixtrue","model_patch":"","model_name_or_path":"m"}\n',
    );
    const run = await drydock(
      "eval",
      join(fixtures, "rows.jsonl"),
      "--agent",
      "patch",
      "--patches",
      partial,
      "--repos",
      "clones",
      "--out",
      "partial-out",
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /warning: 1 prediction\(s\) in .*partial\.jsonl answer no task of .*: benjaminp__six-fixtrue/,
    );
    const missing = readJson("partial-out", "tasks", MIT, "result.json");
    expect(missing).toMatchObject({ status: "incomplete", prediction: "missing", phase: "start" });
    expect(missing.error).toMatch(
      /no prediction: .*partial\.jsonl has no instance_id more-itertools__more-itertools-fixture/,
    );
    const report = readJson("partial-out", "swebench-report.json");
    expect(report).toMatchObject({
      incomplete_ids: [MIT],
      resolved_ids: [SIX],
      empty_patch_ids: [],
      submitted_instances: 1,
    });
  });

  it("resuming with changed predictions grades them again instead of keeping the old results", async () => {
    const out = "resume-out";
    // The wrong predictions, under the gold ones' model: the same model's new answers.
    const revised = join(work, "revised.jsonl");
    writeFileSync(
      revised,
      readFileSync(join(fixtures, "predictions-wrong.jsonl"), "utf8").replace(
        /fixture-wrong/g,
        "fixture-gold",
      ),
    );
    const args = (predictions: string) => [
      "eval",
      join(fixtures, "rows.jsonl"),
      "--agent",
      "patch",
      "--patches",
      predictions,
      "--repos",
      "clones",
      "--out",
      out,
    ];
    expect((await drydock(...args(join(fixtures, "predictions-gold.jsonl")))).code).toBe(0);
    expect(statuses(out)).toEqual({ [SIX]: "resolved", [MIT]: "resolved" });
    const again = await drydock(...args(revised));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/prediction\) changed since its last result; running it again/);
    expect(statuses(out)).toEqual({ [SIX]: "unresolved", [MIT]: "unresolved" });
    const same = await drydock(...args(revised));
    expect(same.stderr).toMatch(/2 attempt\(s\) were already finished/);
    // Another model's predictions into the same --out are another run: refused, naming both.
    const other = await drydock(...args(join(fixtures, "predictions-wrong.jsonl")));
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(
      /--out: .*resume-out holds a run of the predictions of "fixture-gold", and .*predictions-wrong\.jsonl holds those of "fixture-wrong"; .*Choose another --out for "fixture-wrong", or pass --force/,
    );
    expect(statuses(out)).toEqual({ [SIX]: "unresolved", [MIT]: "unresolved" });
    const forced = await drydock(...args(join(fixtures, "predictions-wrong.jsonl")), "--force");
    expect(forced.code, forced.stderr).toBe(0);
    expect(readJson(out, "run.json").model).toBe("fixture-wrong");
  });

  it("--instance-ids and --task take tasks by id in eval, eval validate and eval compare; an unknown id is named", async () => {
    const args = (...more: string[]) => [
      "eval",
      join(fixtures, "rows.jsonl"),
      "--agent",
      "patch",
      "--patches",
      join(fixtures, "predictions-gold.jsonl"),
      "--repos",
      "clones",
      ...more,
    ];
    const one = await drydock(...args("--instance-ids", SIX, "--out", "ids-out"));
    expect(one.code, one.stderr).toBe(0);
    expect(statuses("ids-out")).toEqual({ [SIX]: "resolved" });
    expect(readJson("ids-out", "run.json").instance_ids).toEqual([SIX]);
    // As SWE-bench with --instance_ids: one instance run, every prediction counted as submitted.
    expect(readJson("ids-out", "swebench-report.json")).toMatchObject({
      total_instances: 1,
      resolved_ids: [SIX],
      submitted_instances: 2,
      submitted_ids: [SIX, MIT],
    });
    const unknown = await drydock(...args("--task", "six-nope", "--task", SIX, "--out", "ids-none"));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--instance-ids: no task has the id six-nope in .*rows\.jsonl/);

    const validate = await drydock(
      "eval",
      "validate",
      join(fixtures, "rows.jsonl"),
      "--repos",
      "clones",
      "--task",
      MIT,
      "--out",
      "ids-validate",
      "--json",
    );
    expect(validate.code, validate.stderr).toBe(0);
    expect((JSON.parse(validate.stdout) as { tasks: Array<{ id: string }> }).tasks.map((t) => t.id)).toEqual([
      MIT,
    ]);

    const compare = await drydock(
      "eval",
      "compare",
      "rows-gold",
      "rows-wrong",
      "--json",
      "--instance-ids",
      MIT,
    );
    expect(compare.code, compare.stderr).toBe(0);
    const comparison = JSON.parse(compare.stdout) as {
      broken: Array<{ id: string }>;
      before: { tasks: number };
    };
    expect(comparison.broken.map((c) => c.id)).toEqual([MIT]);
    expect(comparison.before.tasks).toBe(1);
    const typo = await drydock("eval", "compare", "rows-gold", "rows-wrong", "--task", "mit-nope");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--instance-ids: no task has the id mit-nope in rows-gold or rows-wrong/);
  });

  it("eval validate passes the real tasks and flags one whose FAIL_TO_PASS test already passes", async () => {
    const rows = readFileSync(join(fixtures, "rows.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const broken = {
      ...rows[0],
      instance_id: "six-already-passing",
      FAIL_TO_PASS: JSON.stringify(["test_six.py::test_assertRegex"]),
    };
    const file = join(work, "validate.jsonl");
    writeFileSync(file, [...rows, broken].map((r) => JSON.stringify(r)).join("\n") + "\n");
    const run = await drydock(
      "eval",
      "validate",
      file,
      "--repos",
      "clones",
      "--out",
      "validate-out",
      "--json",
    );
    expect(run.code, run.stderr).toBe(1);
    const validation = JSON.parse(run.stdout) as {
      tasks: Array<{ id: string; valid: boolean; problems: string[] }>;
    };
    const byId = Object.fromEntries(validation.tasks.map((t) => [t.id, t]));
    expect(byId[SIX]).toMatchObject({ valid: true, problems: [] });
    expect(byId[MIT]).toMatchObject({ valid: true, problems: [] });
    expect(byId["six-already-passing"]!.valid).toBe(false);
    expect(byId["six-already-passing"]!.problems.join("\n")).toMatch(
      /FAIL_TO_PASS already pass without a fix: test_six\.py::test_assertRegex/,
    );
    expect(readJson("validate-out", "validation.json").invalid).toBe(1);
  });
});
